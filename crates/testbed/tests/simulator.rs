//! The workload simulator: workloads become ready unless opted out.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::batch::v1::Job;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;
use std::time::Duration;
use testbed::{NEVER_READY, Testbed};

fn deployment(name: &str, annotations: serde_json::Value) -> Deployment {
    serde_json::from_value(json!({
        "metadata": {"name": name, "annotations": annotations},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}
    }))
    .unwrap()
}

async fn ready_generation(api: &Api<Deployment>, name: &str, generation: i64) -> Deployment {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let d = api.get(name).await.unwrap();
        let status = d.status.clone().unwrap_or_default();
        if status.observed_generation == Some(generation)
            && status.ready_replicas == d.spec.as_ref().and_then(|s| s.replicas)
        {
            return d;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{name} did not become ready"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn workloads_become_ready_after_each_change() {
    let bed = Testbed::builder()
        .simulate_workloads(true)
        .start()
        .await
        .unwrap();
    let api: Api<Deployment> = Api::namespaced(bed.cluster().client(), "default");
    api.create(&PostParams::default(), &deployment("web", json!({})))
        .await
        .unwrap();
    let ready = ready_generation(&api, "web", 1).await;
    let available = ready
        .status
        .unwrap()
        .conditions
        .unwrap()
        .into_iter()
        .find(|c| c.type_ == "Available")
        .unwrap();
    assert_eq!(available.status, "True");

    api.patch(
        "web",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 3}})),
    )
    .await
    .unwrap();
    let ready = ready_generation(&api, "web", 2).await;
    assert_eq!(ready.status.unwrap().ready_replicas, Some(3));

    let jobs: Api<Job> = Api::namespaced(bed.cluster().client(), "default");
    let job: Job = serde_json::from_value(json!({"metadata": {"name": "j"}, "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}})).unwrap();
    jobs.create(&PostParams::default(), &job).await.unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while jobs
        .get("j")
        .await
        .unwrap()
        .status
        .and_then(|s| s.succeeded)
        != Some(1)
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the job did not complete"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn opted_out_workloads_never_become_ready() {
    let bed = Testbed::builder()
        .simulate_workloads(true)
        .start()
        .await
        .unwrap();
    let api: Api<Deployment> = Api::namespaced(bed.cluster().client(), "default");
    api.create(
        &PostParams::default(),
        &deployment("stuck", json!({NEVER_READY: "true"})),
    )
    .await
    .unwrap();
    // A second workload created after it becomes ready, so the simulator has run past the first.
    api.create(&PostParams::default(), &deployment("fine", json!({})))
        .await
        .unwrap();
    ready_generation(&api, "fine", 1).await;
    let stuck = api.get("stuck").await.unwrap();
    assert!(stuck.status.and_then(|s| s.ready_replicas).is_none());
}

#[tokio::test]
async fn the_simulator_is_off_by_default_and_can_be_switched_on() {
    let bed = Testbed::start().await.unwrap();
    let api: Api<Deployment> = Api::namespaced(bed.cluster().client(), "default");
    api.create(&PostParams::default(), &deployment("later", json!({})))
        .await
        .unwrap();
    assert!(
        api.get("later")
            .await
            .unwrap()
            .status
            .and_then(|s| s.ready_replicas)
            .is_none()
    );
    bed.cluster().set_simulate_workloads(true);
    ready_generation(&api, "later", 1).await;
}
