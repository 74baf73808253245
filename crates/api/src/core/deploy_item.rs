//! DeployItem: one unit of work for a deployer.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::shared::{
    Condition, DeployItemPhase, DeployerInformation, LastError, ObjectReference, OnDeleteConfig,
    TransitionTimes,
};

/// The desired state of a DeployItem.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "landscaper.gardener.cloud",
    version = "v1alpha1",
    kind = "DeployItem",
    namespaced,
    status = "DeployItemStatus",
    shortname = "di",
    printcolumn = r#"{"name":"Type","type":"string","jsonPath":".spec.type"}"#,
    printcolumn = r#"{"name":"Phase","type":"string","jsonPath":".status.phase"}"#,
    printcolumn = r#"{"name":"ExportRef","type":"string","jsonPath":".status.exportRef.name"}"#,
    printcolumn = r#"{"name":"JobID","type":"string","priority":1,"jsonPath":".status.jobID"}"#,
    printcolumn = r#"{"name":"JobIDFinished","type":"string","priority":1,"jsonPath":".status.jobIDFinished"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct DeployItemSpec {
    /// Deploy item type; selects the deployer.
    #[serde(rename = "type")]
    pub type_: String,
    /// The Target the item deploys to; also decides which deployer is responsible.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<ObjectReference>,
    /// Name of the Context of the item.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// The deployer-specific configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::free_form_object")]
    pub config: Option<Value>,
    /// How long the deployer may take (Go duration or `none`); ten minutes when empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<crate::Duration>,
    /// Redeploy only when the spec changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_on_change_only: Option<bool>,
    /// What to do on deletion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_delete: Option<OnDeleteConfig>,
}

/// The observed state of a DeployItem.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeployItemStatus {
    /// Current phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<DeployItemPhase>,
    /// The generation this status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Conditions of the item.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// The last error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<LastError>,
    /// The last errors since the job ID changed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub last_errors: Vec<LastError>,
    /// The first error since the job ID changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_error: Option<LastError>,
    /// When the reconcile of the last change started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_reconcile_time: Option<Time>,
    /// The deployer that reconciled the item.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deployer: Option<DeployerInformation>,
    /// The deployer-specific status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::free_form_object")]
    pub provider_status: Option<Value>,
    /// The Secret holding the item's exports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub export_ref: Option<ObjectReference>,
    /// ID of the current job.
    #[serde(default, rename = "jobID", skip_serializing_if = "Option::is_none")]
    pub job_id: Option<String>,
    /// ID of the last finished job.
    #[serde(
        default,
        rename = "jobIDFinished",
        skip_serializing_if = "Option::is_none"
    )]
    pub job_id_finished: Option<String>,
    /// When the job ID was set.
    #[serde(
        default,
        rename = "jobIDGenerationTime",
        skip_serializing_if = "Option::is_none"
    )]
    pub job_id_generation_time: Option<Time>,
    /// Deprecated upstream: the deployer's own phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deploy_item_phase: Option<String>,
    /// Milestones of the current job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transition_times: Option<TransitionTimes>,
}

impl DeployItemStatus {
    /// Whether a job is pending: the landscaper set a job ID that no deployer finished yet.
    pub fn has_pending_job(&self) -> bool {
        self.job_id.is_some() && self.job_id != self.job_id_finished
    }
}
