//! DeployItems in tests: mock items, their jobs started as the Execution controller starts
//! them, and waiting for the deployer that should finish them.

use std::time::Duration;

use kube::api::{Api, Patch, PatchParams, PostParams};
use landscaper_api::constants::deploy_item_types;
use landscaper_api::core::{DeployItem, DeployItemPhase};
use serde_json::json;

use crate::eventually_within;

/// A mock DeployItem `name` whose job ends Succeeded.
pub fn mock_item(name: &str) -> DeployItem {
    serde_json::from_value(json!({
        "apiVersion": "landscaper.gardener.cloud/v1alpha1",
        "kind": "DeployItem",
        "metadata": {"name": name},
        "spec": {
            "type": deploy_item_types::MOCK,
            "config": {
                "apiVersion": "mock.deployer.landscaper.gardener.cloud/v1alpha1",
                "kind": "ProviderConfiguration",
                "phase": "Succeeded",
            },
        },
    }))
    .expect("a DeployItem")
}

/// Creates `item` through `items` and starts its job `job`.
pub async fn start_job(items: &Api<DeployItem>, item: &DeployItem, job: &str) {
    let created = items
        .create(&PostParams::default(), item)
        .await
        .expect("item created");
    let name = created.metadata.name.expect("a named item");
    items
        .patch_status(
            &name,
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"jobID": job}})),
        )
        .await
        .expect("the item's job starts");
}

/// Waits until the deployer `identity` finished job `job` of the item `name` Succeeded.
pub async fn finished_by(items: &Api<DeployItem>, name: &str, job: &str, identity: &str) {
    eventually_within(
        &format!("deployer {identity} finishes {job} of {name}"),
        Duration::from_secs(60),
        || async {
            let status = items
                .get(name)
                .await
                .expect("item")
                .status
                .unwrap_or_default();
            status.job_id_finished.as_deref() == Some(job)
                && status.phase == Some(DeployItemPhase::Succeeded)
                && status.deployer.is_some_and(|d| d.identity == identity)
        },
    )
    .await;
}
