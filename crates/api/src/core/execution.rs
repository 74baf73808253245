//! Execution: the deploy items an installation's blueprint rendered.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::installation::SubNamePair;
use super::shared::{
    Condition, ExecutionPhase, LastError, ObjectReference, OnDeleteConfig, TransitionTimes,
};

/// The desired state of an Execution.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "landscaper.gardener.cloud",
    version = "v1alpha1",
    kind = "Execution",
    namespaced,
    status = "ExecutionStatus",
    shortname = "exec",
    printcolumn = r#"{"name":"Phase","type":"string","jsonPath":".status.phase"}"#,
    printcolumn = r#"{"name":"ExportRef","type":"string","jsonPath":".status.exportRef.name"}"#,
    printcolumn = r#"{"name":"JobID","type":"string","priority":1,"jsonPath":".status.jobID"}"#,
    printcolumn = r#"{"name":"JobIDFinished","type":"string","priority":1,"jsonPath":".status.jobIDFinished"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct ExecutionSpec {
    /// Name of the Context of the execution.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// The deploy items to create.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deploy_items: Vec<DeployItemTemplate>,
    /// The deploy items, gzip-compressed and base64-encoded, for large executions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "byte_string")]
    pub deploy_items_compressed: Option<String>,
}

fn byte_string(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": "string", "format": "byte" })
}

/// A deploy item to create from an execution.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeployItemTemplate {
    /// Unique name of the item within the execution.
    pub name: String,
    /// Deploy item type; selects the deployer.
    #[serde(rename = "type")]
    pub type_: String,
    /// The Target the item deploys to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<ObjectReference>,
    /// Labels of the created deploy item.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<BTreeMap<String, String>>,
    /// The deployer-specific configuration.
    #[schemars(schema_with = "crate::schema::free_form_object")]
    pub config: Value,
    /// Names of items of the same execution that must succeed first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depends_on: Option<Vec<String>>,
    /// How long the deployer may take (Go duration or `none`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<crate::Duration>,
    /// Redeploy only when the item's spec changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_on_change_only: Option<bool>,
    /// What to do on deletion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_delete: Option<OnDeleteConfig>,
}

/// The observed state of an Execution.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExecutionStatus {
    /// The generation this status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Current phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<ExecutionPhase>,
    /// When the phase last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase_transition_time: Option<Time>,
    /// Conditions of the execution.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// The last error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<LastError>,
    /// The DataObject holding the collected exports.
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
    /// Milestones of the current job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transition_times: Option<TransitionTimes>,
    /// Cache of the deploy items.
    #[serde(
        default,
        rename = "deployItemCache",
        skip_serializing_if = "Option::is_none"
    )]
    pub deploy_item_cache: Option<DeployItemCache>,
}

/// Cache of an execution's deploy items.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeployItemCache {
    /// Items in use.
    #[serde(default, rename = "activeDIs", skip_serializing_if = "Vec::is_empty")]
    pub active_dis: Vec<SubNamePair>,
    /// Items no longer wanted.
    #[serde(default, rename = "orphanedDIs", skip_serializing_if = "Vec::is_empty")]
    pub orphaned_dis: Vec<String>,
}
