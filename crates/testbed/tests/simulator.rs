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

/// A testbed whose workload simulator runs, and the Deployments of its `default` namespace.
async fn simulating() -> (Testbed, Api<Deployment>) {
    let bed = Testbed::builder()
        .simulate_workloads(true)
        .start()
        .await
        .unwrap();
    let api = Api::namespaced(bed.cluster().client(), "default");
    (bed, api)
}

/// Sets the image of the Deployment's container `c`.
async fn set_image(api: &Api<Deployment>, name: &str, image: &str) {
    let patch =
        json!({"spec": {"template": {"spec": {"containers": [{"name": "c", "image": image}]}}}});
    api.patch(name, &PatchParams::default(), &Patch::Strategic(patch))
        .await
        .unwrap();
}

async fn ready_generation(api: &Api<Deployment>, name: &str, generation: i64) -> Deployment {
    deployment_where(api, name, |d| {
        let status = d.status.clone().unwrap_or_default();
        status.observed_generation == Some(generation)
            && status.ready_replicas == d.spec.as_ref().and_then(|s| s.replicas)
    })
    .await
}

/// Waits (10 s at most) until the Deployment satisfies `check`.
async fn deployment_where(
    api: &Api<Deployment>,
    name: &str,
    check: impl Fn(&Deployment) -> bool,
) -> Deployment {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let d = api.get(name).await.unwrap();
        if check(&d) {
            return d;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{name} never reached the expected state: {:?}",
            d.status
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn workloads_become_ready_after_each_change() {
    let (bed, api) = simulating().await;
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
    let (_bed, api) = simulating().await;
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

/// Waits until the Deployment's status satisfies `check`.
async fn status_where(
    api: &Api<Deployment>,
    name: &str,
    check: impl Fn(&k8s_openapi::api::apps::v1::DeploymentStatus) -> bool,
) -> k8s_openapi::api::apps::v1::DeploymentStatus {
    deployment_where(api, name, |d| check(&d.status.clone().unwrap_or_default()))
        .await
        .status
        .unwrap_or_default()
}

#[tokio::test]
async fn a_rollout_to_an_image_that_never_gets_ready_keeps_the_old_pods() {
    let (bed, api) = simulating().await;
    bed.cluster().set_never_ready_image("broken:1");
    let mut web = deployment("web", json!({}));
    web.spec.as_mut().unwrap().replicas = Some(1);
    api.create(&PostParams::default(), &web).await.unwrap();
    ready_generation(&api, "web", 1).await;

    set_image(&api, "web", "broken:1").await;
    // What a real Deployment controller reports for this rollout: the one available replica
    // is the old pod, next to the new one that does not start.
    let stuck = status_where(&api, "web", |s| s.observed_generation == Some(2)).await;
    assert_eq!(
        (
            stuck.replicas,
            stuck.updated_replicas,
            stuck.ready_replicas,
            stuck.available_replicas,
            stuck.unavailable_replicas
        ),
        (Some(2), Some(1), Some(1), Some(1), Some(1))
    );
    // It stays so: the simulator has nothing more to do for it.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(api.get("web").await.unwrap().status.unwrap(), stuck);

    // Back to a good image, the rollout finishes.
    set_image(&api, "web", "nginx").await;
    let done = status_where(&api, "web", |s| s.observed_generation == Some(3)).await;
    assert_eq!(
        (
            done.replicas,
            done.updated_replicas,
            done.available_replicas,
            done.unavailable_replicas
        ),
        (Some(1), Some(1), Some(1), None)
    );
}

#[tokio::test]
async fn a_new_workload_of_an_image_that_never_gets_ready_has_no_available_pod() {
    let (bed, api) = simulating().await;
    bed.cluster().set_never_ready_image("broken:1");
    let mut web = deployment("web", json!({}));
    web.spec
        .as_mut()
        .unwrap()
        .template
        .spec
        .as_mut()
        .unwrap()
        .containers[0]
        .image = Some("broken:1".into());
    api.create(&PostParams::default(), &web).await.unwrap();
    let status = status_where(&api, "web", |s| s.observed_generation == Some(1)).await;
    assert_eq!(
        (
            status.replicas,
            status.updated_replicas,
            status.available_replicas,
            status.unavailable_replicas
        ),
        (Some(2), Some(2), None, Some(2))
    );
    let available = status
        .conditions
        .unwrap()
        .into_iter()
        .find(|c| c.type_ == "Available")
        .unwrap();
    assert_eq!(
        (available.status.as_str(), available.reason.as_deref()),
        ("False", Some("MinimumReplicasUnavailable"))
    );
}
