//! The deployers' own `Configuration` (`manifest.deployer…/v1alpha2`, `mock.deployer…/v1alpha1`,
//! `helm.deployer…/v1alpha1`): what upstream's deployer charts write into the config Secret a
//! deployer reads at start.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::config::{DeployItemTimeouts, OciConfiguration};
use crate::core::TargetSelector;

/// The `kind` of every deployer configuration.
pub const DEPLOYER_CONFIGURATION_KIND: &str = "Configuration";

/// Configuration of a deployer process, one type for the manifest, mock and helm deployers:
/// the fields of upstream's three `Configuration` kinds, plus ours marked additive.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeployerConfiguration {
    /// `<deployer>.deployer.landscaper.gardener.cloud/<version>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `Configuration`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The deployer's identity, written to `status.deployer.identity` of the items it serves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<String>,
    /// The Targets whose items the deployer serves; any one must match. Empty: every Target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_selector: Option<Vec<TargetSelector>>,
    /// Access to OCI registries (the helm deployer's charts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oci: Option<OciConfiguration>,
    /// Upstream's default timeout of exports (accepted, not used here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub export: Option<DeployerExportConfiguration>,
    /// Upstream's autoscaling settings (accepted, not used here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hpa: Option<DeployerHpaConfiguration>,
    /// The controller's settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller: Option<DeployerControllerConfiguration>,
    /// Written by upstream's manifest deployer chart, read by no upstream deployer (accepted,
    /// not used here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Additive: timeouts of the items the deployer serves, as the LandscaperConfiguration's
    /// `deployItemTimeouts` (it reads `progressingDefault`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deploy_item_timeouts: Option<DeployItemTimeouts>,
}

/// Upstream's `export` section of a deployer configuration.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeployerExportConfiguration {
    /// Default timeout of exports without their own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_timeout: Option<crate::Duration>,
}

/// Upstream's `hpa` section of a deployer configuration.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeployerHpaConfiguration {
    /// Most replicas of the deployer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_replicas: Option<i32>,
}

/// The `controller` section of a deployer configuration.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeployerControllerConfiguration {
    /// Items reconciled at the same time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workers: Option<u16>,
    /// Upstream's limit on the first cache sync (accepted, not used here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_sync_timeout: Option<crate::Duration>,
}
