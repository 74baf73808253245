//! `LandscaperConfiguration`: how the `landscaper` binary runs.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::agent::{AgentConfiguration, OciConfiguration};

/// Configuration of the landscaper (`config.landscaper.gardener.cloud/v1alpha1`), with the
/// upstream fields this implementation reads or accepts.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LandscaperConfiguration {
    /// `config.landscaper.gardener.cloud/v1alpha1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `LandscaperConfiguration`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Settings of the controllers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controllers: Option<Controllers>,
    /// Default repository of components.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository_context: Option<Value>,
    /// Where blueprints and components are read from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registry: Option<RegistryConfiguration>,
    /// Local store of blueprints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blueprint_store: Option<BlueprintStore>,
    /// Metrics endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics: Option<MetricsConfiguration>,
    /// Whether the landscaper installs and updates its CRDs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crd_management: Option<CrdManagement>,
    /// Timeouts of deploy items.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deploy_item_timeouts: Option<DeployItemTimeouts>,
    /// Management of deployers in environments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deployer_management: Option<DeployerManagement>,
    /// Upstream's deployment settings of the landscaper itself (accepted, not used here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ls_deployments: Option<Value>,
    /// Upstream's autoscaling settings (accepted, not used here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hpa_main: Option<Value>,
    /// Upstream's switch to the OCM library (accepted, not used here).
    #[serde(default, rename = "useOCMLib", skip_serializing_if = "Option::is_none")]
    pub use_ocm_lib: Option<bool>,
}

/// Settings of the controllers.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Controllers {
    /// How often every object is reconciled even without events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_period: Option<crate::Duration>,
    /// Installation controller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub installations: Option<ControllerSettings>,
    /// Execution controller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub executions: Option<ControllerSettings>,
    /// Deploy item controller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deploy_items: Option<ControllerSettings>,
    /// Context controller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contexts: Option<ContextsController>,
}

/// Settings every controller has.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ControllerSettings {
    /// How many objects are reconciled at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workers: Option<i32>,
    /// How long to wait for the caches to fill at start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_sync_timeout: Option<crate::Duration>,
}

/// Settings of the context controller.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContextsController {
    /// How many objects are reconciled at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workers: Option<i32>,
    /// How long to wait for the caches to fill at start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_sync_timeout: Option<crate::Duration>,
    /// The default Context created in every namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<Value>,
}

/// Where blueprints and components are read from.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RegistryConfiguration {
    /// A local directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local: Option<Value>,
    /// OCI registries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oci: Option<OciConfiguration>,
}

/// Local store of blueprints.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BlueprintStore {
    /// Directory of the store.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Download blueprints every time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disable_cache: Option<bool>,
    /// How cached blueprints are indexed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_method: Option<String>,
    /// Garbage collection of the store.
    #[serde(
        default,
        rename = "GarbageCollectionConfiguration",
        skip_serializing_if = "Option::is_none"
    )]
    pub garbage_collection: Option<Value>,
}

/// Metrics endpoint.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MetricsConfiguration {
    /// Port of the metrics endpoint.
    pub port: i32,
}

/// Whether the landscaper installs and updates its CRDs.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CrdManagement {
    /// Install the CRDs at start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deploy_crd: Option<bool>,
    /// Update CRDs that exist already.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub force_update: Option<bool>,
}

/// Timeouts of deploy items: Go durations, or `none` to turn the check off.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeployItemTimeouts {
    /// How long a job may wait for a deployer to pick it up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pickup: Option<crate::Duration>,
    /// How long an abort may take.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abort: Option<crate::Duration>,
    /// The progressing timeout of items without `spec.timeout` (default `10m`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progressing_default: Option<crate::Duration>,
}

/// Management of deployers in environments.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeployerManagement {
    /// Turns deployer management off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disable: Option<bool>,
    /// Namespace in the landscaper cluster where Targets, RBAC and Installations of
    /// deployers are created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// An agent the landscaper runs for its own cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentConfiguration>,
    /// Repository of the default deployers' components.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deployer_repository_context: Option<Value>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::config_from_yaml;

    #[test]
    fn deploy_item_timeouts_take_go_durations_and_none() {
        let text = "
apiVersion: config.landscaper.gardener.cloud/v1alpha1
kind: LandscaperConfiguration
deployItemTimeouts:
  pickup: none
  abort: 30s
  progressingDefault: 2s
";
        let config: LandscaperConfiguration = config_from_yaml(text, "config.yaml").unwrap();
        let timeouts = config.deploy_item_timeouts.unwrap();
        assert!(timeouts.pickup.unwrap().is_none());
        assert_eq!(timeouts.abort.unwrap().as_std().as_secs(), 30);
        assert_eq!(timeouts.progressing_default.unwrap().as_std().as_secs(), 2);
        let text = "deployItemTimeouts: {pickup: 5m, abort: none, progressingDefault: none}";
        let config: LandscaperConfiguration = config_from_yaml(text, "config.yaml").unwrap();
        let timeouts = config.deploy_item_timeouts.unwrap();
        assert!(timeouts.abort.unwrap().is_none());
        assert!(timeouts.progressing_default.unwrap().is_none());
        let error = config_from_yaml::<LandscaperConfiguration>(
            "deployItemTimeouts: {progressingDefault: soon}",
            "c.yaml",
        )
        .unwrap_err()
        .to_string();
        assert!(error.contains("progressingDefault"), "{error}");
    }
}
