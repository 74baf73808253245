//! The manifest deployer (`landscaper.gardener.cloud/kubernetes-manifest`,
//! `manifest.deployer.landscaper.gardener.cloud/v1alpha2`): applies manifests with policies and
//! an update strategy, waits for readiness, exports values, and re-applies on a schedule.

use crate::applier::{Applier, ApplySpec};
use crate::continuous_reconcile::Schedule;
use crate::controller::{DeployerConfig, Setup};
use crate::deployer::{Deployer, Failure, Job, Outcome};
use crate::error::Error;
use crate::rollout::Rollout;
use landscaper_api::constants::{MANIFEST_API_VERSION, deploy_item_types};
use landscaper_api::deployer::{
    Manifest, ManifestPolicy, ManifestProviderConfiguration, ManifestProviderStatus,
};
use serde_json::Value;

/// The label tying deployed objects to their DeployItem (value: the item's name).
pub const DEPLOY_ITEM_LABEL: &str = "manifest.deployer.landscaper.gardener.cloud/deployitem";
/// The field manager of the manifest deployer's writes.
pub const FIELD_MANAGER: &str = "landscaper-manifest-deployer";
const V1ALPHA1: &str = "manifest.deployer.landscaper.gardener.cloud/v1alpha1";

/// The manifest deployer.
#[derive(Debug, Clone, Default)]
pub struct ManifestDeployer;

/// A manifest deployer ready to [`crate::controller::run`], with continuous reconcile.
pub fn setup(
    ls_client: kube::Client,
    secrets_client: kube::Client,
    config: DeployerConfig,
) -> Setup<ManifestDeployer> {
    Setup::serving(
        deploy_item_types::MANIFEST,
        ManifestDeployer,
        ls_client,
        secrets_client,
        config,
    )
}

/// Reads the configuration; v1alpha1 lists bare objects, which become `manage` manifests.
fn configuration(job: &Job) -> Result<ManifestProviderConfiguration, Error> {
    let raw = job.item.spec.config.clone().unwrap_or(Value::Null);
    let mut config: ManifestProviderConfiguration = job.config()?;
    if raw.get("apiVersion").and_then(Value::as_str) == Some(V1ALPHA1) {
        config.manifests = raw
            .get("manifests")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|m| Manifest {
                policy: Some(ManifestPolicy::Manage),
                manifest: Some(m.clone()),
                ..Default::default()
            })
            .collect();
    }
    if let Some(spec) = &config.continuous_reconcile {
        Schedule::from_spec(spec).map_err(|e| {
            Error::config(
                "Reconcile",
                "InvalidProviderConfiguration",
                format!("DeployItem {} spec.config.{e}", job.item_name()),
            )
        })?;
    }
    Ok(config)
}

fn item_label(job: &Job) -> (String, String) {
    (
        DEPLOY_ITEM_LABEL.to_string(),
        job.item.metadata.name.clone().unwrap_or_default(),
    )
}

impl Deployer for ManifestDeployer {
    async fn reconcile(&self, job: &Job) -> Result<Outcome, Failure> {
        let config = configuration(job)?;
        let cluster = job.target_cluster().await?;
        let previous: ManifestProviderStatus = job.previous_provider_status();
        Rollout {
            cluster: &cluster,
            field_manager: FIELD_MANAGER,
            spec: ApplySpec {
                manifests: &config.manifests,
                previous: &previous.managed_resources,
                default_namespace: None,
                owner_label: item_label(job),
                update_strategy: config.update_strategy.unwrap_or_default(),
                deletion_groups_during_update: &config.deletion_groups_during_update,
            },
            readiness_checks: config.readiness_checks.as_ref(),
            exports: config.exports.as_ref(),
            status_api_version: MANIFEST_API_VERSION,
        }
        .run(&job.interrupt)
        .await
    }

    async fn delete(&self, job: &Job) -> Result<(), Failure> {
        let previous: ManifestProviderStatus = job.previous_provider_status();
        if previous.managed_resources.is_empty() {
            return Ok(());
        }
        // Deletion groups come from the configuration; a broken configuration must not keep
        // what was deployed alive, so it falls back to the default order.
        let groups = configuration(job)
            .map(|c| c.deletion_groups)
            .unwrap_or_default();
        let cluster = job.target_cluster().await?;
        Applier::new(cluster, FIELD_MANAGER)
            .delete(&previous.managed_resources, &groups, &job.interrupt)
            .await
            .map_err(Failure::from)
    }

    async fn abort(&self, _job: &Job) -> Result<(), Error> {
        // The applier stops between objects and every written object is already recorded
        // in the provider status, so nothing is left half-done.
        Ok(())
    }
}
