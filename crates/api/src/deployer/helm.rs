//! `helm.deployer.landscaper.gardener.cloud/v1alpha1`: the helm deployer's configuration.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::managed_resource::{
    ContinuousReconcileSpec, DeletionGroupDefinition, Export, Exports, ManagedResourceStatus,
    ReadinessCheckConfiguration, UpdateStrategy,
};

/// What a helm DeployItem's `spec.config` holds.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HelmProviderConfiguration {
    /// `helm.deployer.landscaper.gardener.cloud/v1alpha1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `ProviderConfiguration`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Deprecated upstream: a kubeconfig for the target cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubeconfig: Option<String>,
    /// Readiness checks of the deployed objects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub readiness_checks: Option<ReadinessCheckConfiguration>,
    /// How changed objects are written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_strategy: Option<UpdateStrategy>,
    /// Where the chart comes from.
    pub chart: Chart,
    /// Release name.
    pub name: String,
    /// Release namespace.
    pub namespace: String,
    /// Create the release namespace when it does not exist.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub create_namespace: Option<bool>,
    /// Values for the chart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<Value>,
    /// Values exported from the rendered manifests.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exports_from_manifests: Vec<Export>,
    /// Values exported from the deployed objects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exports: Option<Exports>,
    /// Reconcile again on a schedule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continuous_reconcile: Option<ContinuousReconcileSpec>,
    /// Order of deletion on uninstall.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deletion_groups: Vec<DeletionGroupDefinition>,
    /// Order of deletion of objects dropped by an update.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deletion_groups_during_update: Vec<DeletionGroupDefinition>,
    /// Record Helm releases so helm's CLI sees them (upstream default: true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub helm_deployment: Option<bool>,
    /// Options of Helm's install, upgrade and uninstall.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub helm_deployment_config: Option<HelmDeploymentConfiguration>,
}

/// Where a chart comes from.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Chart {
    /// An OCI reference.
    #[serde(default, rename = "ref", skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// A resource of the component (deprecated upstream).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_resource: Option<Value>,
    /// A `.tgz` archive, inline or remote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archive: Option<ArchiveAccess>,
    /// A chart in a Helm repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub helm_chart_repo: Option<HelmChartRepo>,
    /// A resource reference (`cd://…`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_ref: Option<String>,
}

/// A chart archive.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ArchiveAccess {
    /// The base64-encoded `.tgz`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<String>,
    /// A URL to download the `.tgz` from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote: Option<RemoteArchiveAccess>,
}

/// A remote chart archive.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RemoteArchiveAccess {
    /// URL of the `.tgz`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// A chart in a Helm repository.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HelmChartRepo {
    /// URL of the repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub helm_chart_repo_url: Option<String>,
    /// Name of the chart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub helm_chart_name: Option<String>,
    /// Version (or semver range) of the chart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub helm_chart_version: Option<String>,
}

/// Options of Helm's operations, as free-form maps.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HelmDeploymentConfiguration {
    /// Install options (`atomic`, `timeout`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub install: Option<BTreeMap<String, Value>>,
    /// Upgrade options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upgrade: Option<BTreeMap<String, Value>>,
    /// Uninstall options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uninstall: Option<BTreeMap<String, Value>>,
}

/// What the helm deployer writes into a DeployItem's `status.providerStatus`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HelmProviderStatus {
    /// `helm.deployer.landscaper.gardener.cloud/v1alpha1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `ProviderStatus`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The objects the release consists of.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub managed_resources: Vec<ManagedResourceStatus>,
}
