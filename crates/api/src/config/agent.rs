//! `AgentConfiguration`: how the agent in a fenced cluster registers its environment.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::core::TargetSelector;

/// Configuration of the landscaper agent (`config.landscaper.gardener.cloud/v1alpha1`).
///
/// The upstream fields keep their names and meaning; the fields marked additive are ours.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentConfiguration {
    /// `config.landscaper.gardener.cloud/v1alpha1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `AgentConfiguration`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Turns the agent off (used when embedded in the landscaper's configuration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disable: Option<bool>,
    /// Name of the environment; unique within the landscaper cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Namespace in the host cluster where deployers are installed; empty or unset: the
    /// agent's own namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Namespace in the landscaper cluster used by the agent's deployers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub landscaper_namespace: Option<String>,
    /// Target selectors of the environment; by default targets annotated with
    /// `landscaper.gardener.cloud/environment: <name>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_selectors: Option<Vec<TargetSelector>>,
    /// OCI registry access of the embedded helm deployer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oci: Option<OciConfiguration>,
    /// Additive: path of the kubeconfig file for the landscaper cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub landscaper_cluster_kubeconfig: Option<String>,
    /// Additive: how often the agent renews its heartbeat (Go duration, default `30s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heartbeat_period: Option<crate::Duration>,
    /// Additive: namespaces of the landscaper cluster whose DeployItems the embedded helm
    /// deployer serves (their Targets, Contexts and Secrets live there too); empty or unset:
    /// `landscaperNamespace`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deploy_item_namespaces: Option<Vec<String>>,
    /// Additive: timeouts of the items the embedded helm deployer serves, as the
    /// LandscaperConfiguration's `deployItemTimeouts` (it reads `progressingDefault`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deploy_item_timeouts: Option<super::DeployItemTimeouts>,
}

/// Access to OCI registries.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OciConfiguration {
    /// Docker config files with registry credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_files: Option<Vec<String>>,
    /// Local cache of blobs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<OciCacheConfiguration>,
    /// Allow registries served over plain HTTP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_plain_http: Option<bool>,
    /// Skip TLS verification of registries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub insecure_skip_verify: Option<bool>,
}

/// A local cache of OCI blobs.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OciCacheConfiguration {
    /// Keep a copy of cached blobs in memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub use_in_memory_overlay: Option<bool>,
    /// Directory of the cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}
