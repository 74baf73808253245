//! `mock.deployer.landscaper.gardener.cloud/v1alpha1`: the mock deployer's configuration.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::managed_resource::ContinuousReconcileSpec;
use crate::core::DeployItemPhase;

/// What a mock DeployItem's `spec.config` holds: the outcome to report.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MockProviderConfiguration {
    /// `mock.deployer.landscaper.gardener.cloud/v1alpha1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `ProviderConfiguration`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Phase to report first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_phase: Option<DeployItemPhase>,
    /// Phase to end in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<DeployItemPhase>,
    /// Provider status to report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_status: Option<Value>,
    /// Exports to write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub export: Option<Value>,
    /// Reconcile again on a schedule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continuous_reconcile: Option<ContinuousReconcileSpec>,
}
