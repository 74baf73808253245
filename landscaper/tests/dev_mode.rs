//! Dev mode brings the whole system up: the agent registers `default`, the landscaper creates
//! its Target, and the examples are applied.

use std::time::Duration;

use kube::api::Api;
use landscaper::dev::{DevMode, Options};
use landscaper_api::constants::conditions;
use landscaper_api::core::{ConditionStatus, DeployItem, Environment, Target, find_condition};

async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
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
