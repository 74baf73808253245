//! A registered deployer reaches an environment end to end: the repository's mock
//! DeployerRegistration (its component from `examples/components`) becomes the pair's
//! Installation, whose blueprint renders a helm DeployItem; the environment's agent installs the
//! mock deployer's chart into its fenced cluster, where the testbed's kubelet mode runs it; the
//! deployer, with the pair's identity and the landscaper cluster kubeconfig the pair's Secret
//! holds, then deploys a user's item for that environment.

use std::path::PathBuf;
use std::time::Duration;

use kube::api::{Api, PostParams};
use landscaper_api::core::{
    DeployItem, DeployItemPhase, DeployerRegistration, Installation, InstallationPhase,
};
use landscaper_e2e::{LS_NAMESPACE, World, eventually_within};
use serde_json::{Value, json};

const ENVIRONMENT: &str = "edge";

/// The repository's mock registration, its local component repository named by an absolute
/// path (the example names it relative to the repository root).
fn mock_registration() -> DeployerRegistration {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let text = std::fs::read_to_string(root.join("examples/deployer-registrations/mock.yaml"))
        .expect("the example registration");
    let mut registration: Value = serde_yaml_ng::from_str(&text).expect("YAML");
    registration["spec"]["installationTemplate"]["componentDescriptor"]["ref"]["repositoryContext"]
        ["filePath"] = json!(root.join("examples/components"));
    serde_json::from_value(registration).expect("a DeployerRegistration")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registered_deployer_is_installed_into_an_environment_and_deploys_its_items() {
    let world = World::start().await;
    world.fenced_cluster().set_simulate_workloads(true);
    let landscaper = world.landscaper_cluster();
    let agent = world.agent(world.agent_settings(ENVIRONMENT)).await;
    // The agent with its embedded helm deployer, as `landscaper-agent run` runs it.
    let _agent = tokio::spawn(landscaper_agent::helm_deployer::run_with_agent(
        agent,
        2,
        std::future::pending(),
    ));
    Api::<DeployerRegistration>::all(landscaper.client())
        .create(&PostParams::default(), &mock_registration())
        .await
        .expect("registration created");

    let installations: Api<Installation> = Api::namespaced(landscaper.client(), LS_NAMESPACE);
    let pair = format!("mock-{ENVIRONMENT}");
    eventually_within(
        "the pair's Installation succeeds (its deployer is installed and ready)",
        Duration::from_secs(120),
        || async {
            let status = installations
                .get_opt(&pair)
                .await
                .expect("Installation read")
                .and_then(|i| i.status)
                .unwrap_or_default();
            if status.phase == Some(InstallationPhase::Failed) {
                panic!("the pair's job failed: {:?}", status.last_error);
            }
            status.job_id.is_some()
                && status.job_id == status.job_id_finished
                && status.phase == Some(InstallationPhase::Succeeded)
        },
    )
    .await;

    // A user's item for the environment: its Target is the environment's host Target.
    let items: Api<DeployItem> = Api::namespaced(landscaper.client(), LS_NAMESPACE);
    let item: DeployItem = serde_json::from_value(json!({
        "metadata": {"name": "user-item"},
        "spec": {
            "type": "landscaper.gardener.cloud/mock",
            "target": {"name": ENVIRONMENT, "namespace": LS_NAMESPACE},
            "config": {
                "apiVersion": "mock.deployer.landscaper.gardener.cloud/v1alpha1",
                "kind": "ProviderConfiguration",
                "phase": "Succeeded",
            },
        },
    }))
    .expect("an item");
    items
        .create(&PostParams::default(), &item)
        .await
        .expect("item created");
    items
        .patch_status(
            "user-item",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(json!({"status": {"jobID": "job-1"}})),
        )
        .await
        .expect("the item's job starts");
    eventually_within(
        "the registered deployer finishes the user's item",
        Duration::from_secs(60),
        || async {
            let status = items
                .get("user-item")
                .await
                .expect("item")
                .status
                .unwrap_or_default();
            status.job_id_finished.as_deref() == Some("job-1")
                && status.phase == Some(DeployItemPhase::Succeeded)
                && status.deployer.is_some_and(|d| d.identity == pair)
        },
    )
    .await;
}
