//! Dev mode brings the whole system up: the agent registers `default`, the landscaper creates
//! its Target, the examples are applied, and the helm example is deployed into the fenced
//! cluster by the agent's embedded helm deployer.

use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, ListParams};
use landscaper::dev::{DevMode, Options};
use landscaper_api::constants::conditions;
use landscaper_api::core::{
    ConditionStatus, DeployItem, DeployItemPhase, Environment, Target, find_condition,
};

async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    // Generous: the chart is rendered by a debug build on a shared machine.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(90);
    while !check().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting until {what}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn dev_mode_registers_default_and_applies_the_examples() {
    let dir = tempfile::tempdir().unwrap();
    let examples = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let options = Options {
        dir: dir.path().to_owned(),
        examples: Some(examples),
        heartbeat_period: "1s".into(),
        settings: landscaper::settings::Settings::default(),
    };
    let dev = DevMode::start(&options).await.unwrap();
    assert!(
        dev.landscaper_kubeconfig().starts_with(dir.path()) && dev.landscaper_kubeconfig().exists()
    );
    assert!(dev.fenced_kubeconfig().exists());

    let landscaper = dev.landscaper_client();
    let targets: Api<Target> = Api::namespaced(landscaper.clone(), "ls-system");
    eventually("Target ls-system/default exists", || async {
        targets.get_opt("default").await.unwrap().is_some()
    })
    .await;
    let environments: Api<Environment> = Api::all(landscaper.clone());
    eventually("the agent of default is ready", || async {
        let environment = environments.get("default").await.unwrap();
        environment
            .status
            .and_then(|s| {
                find_condition(&s.conditions, conditions::AGENT_READY)
                    .map(|c| c.status == ConditionStatus::True)
            })
            .unwrap_or(false)
    })
    .await;
    let items: Api<DeployItem> = Api::namespaced(landscaper, "ls-system");
    eventually("the helm example hello-chart succeeds", || async {
        let status = items.get("hello-chart").await.unwrap().status;
        status.and_then(|s| s.phase) == Some(DeployItemPhase::Succeeded)
    })
    .await;

    // The chart's objects, with the example's values, and its Helm release record.
    let fenced = dev.fenced_client();
    let page = Api::<ConfigMap>::namespaced(fenced.clone(), "hello")
        .get("hello")
        .await
        .unwrap()
        .data
        .unwrap()["index.html"]
        .clone();
    assert!(
        page.contains("Hello from the landscaper dev mode") && page.contains("revision 1"),
        "{page}"
    );
    let deployment = Api::<Deployment>::namespaced(fenced.clone(), "hello")
        .get("hello")
        .await
        .unwrap();
    assert_eq!(deployment.spec.unwrap().replicas, Some(1));
    let records = Api::<Secret>::namespaced(fenced, "hello")
        .list(&ListParams::default().labels("owner=helm,name=hello,status=deployed"))
        .await
        .unwrap();
    assert_eq!(records.items.len(), 1);

    let names: Vec<String> = items
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|i| i.metadata.name)
        .collect();
    assert!(
        names.contains(&"hello-configmap".to_owned()) && names.contains(&"hello-chart".to_owned()),
        "{names:?}"
    );
}
