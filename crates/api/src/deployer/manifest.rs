//! `manifest.deployer.landscaper.gardener.cloud/v1alpha2`: the manifest deployer's configuration.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::managed_resource::{
    ContinuousReconcileSpec, DeletionGroupDefinition, Exports, ManagedResourceStatus, Manifest,
    ReadinessCheckConfiguration, UpdateStrategy,
};

/// What a manifest DeployItem's `spec.config` holds.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManifestProviderConfiguration {
    /// `manifest.deployer.landscaper.gardener.cloud/v1alpha2`.
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
    /// The objects to deploy.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub manifests: Vec<Manifest>,
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
}

/// What the manifest deployer writes into a DeployItem's `status.providerStatus`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManifestProviderStatus {
    /// `manifest.deployer.landscaper.gardener.cloud/v1alpha2`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `ProviderStatus`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The deployed objects.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub managed_resources: Vec<ManagedResourceStatus>,
}
