//! Installation: an instance of a blueprint with its imports and exports.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::shared::{
    Condition, InstallationPhase, LastError, LocalConfigMapReference, LocalSecretReference,
    ObjectReference, TransitionTimes,
};

/// The desired state of an Installation.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "landscaper.gardener.cloud",
    version = "v1alpha1",
    kind = "Installation",
    namespaced,
    status = "InstallationStatus",
    shortname = "inst",
    printcolumn = r#"{"name":"Phase","type":"string","jsonPath":".status.phase"}"#,
    printcolumn = r#"{"name":"Execution","type":"string","jsonPath":".status.executionRef.name"}"#,
    printcolumn = r#"{"name":"JobID","type":"string","priority":1,"jsonPath":".status.jobID"}"#,
    printcolumn = r#"{"name":"JobIDFinished","type":"string","priority":1,"jsonPath":".status.jobIDFinished"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct InstallationSpec {
    /// Name of the Context that holds repository and registry settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// The component descriptor the blueprint is resolved from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub component_descriptor: Option<ComponentDescriptorDefinition>,
    /// The blueprint to instantiate.
    pub blueprint: BlueprintDefinition,
    /// Data and targets imported from elsewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imports: Option<InstallationImports>,
    /// Templates computing further imports from the imported values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::free_form_object")]
    pub import_data_mappings: Option<BTreeMap<String, Value>>,
    /// Data and targets exported to others.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exports: Option<InstallationExports>,
    /// Templates computing the exports from the blueprint's exports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::free_form_object")]
    pub export_data_mappings: Option<BTreeMap<String, Value>>,
    /// Automatic reconciles after success or failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub automatic_reconcile: Option<AutomaticReconcile>,
    /// Hints that let the landscaper skip work.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optimization: Option<Optimization>,
    /// Signature verification of the component.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification: Option<Verification>,
}

/// Where a component descriptor comes from: a repository reference or inline.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ComponentDescriptorDefinition {
    /// A component version in a repository.
    #[serde(default, rename = "ref", skip_serializing_if = "Option::is_none")]
    pub reference: Option<ComponentDescriptorReference>,
    /// An inline component descriptor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::free_form_object")]
    pub inline: Option<Value>,
}

/// A component version in a repository.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ComponentDescriptorReference {
    /// The repository the component is stored in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::free_form_object")]
    pub repository_context: Option<Value>,
    /// Name of the component.
    pub component_name: String,
    /// Version of the component.
    pub version: String,
}

/// Where a blueprint comes from: a resource of the component, or inline.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BlueprintDefinition {
    /// A resource of the component descriptor.
    #[serde(default, rename = "ref", skip_serializing_if = "Option::is_none")]
    pub reference: Option<RemoteBlueprintReference>,
    /// An inline blueprint filesystem.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inline: Option<InlineBlueprint>,
}

/// A blueprint stored as a resource of the component.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RemoteBlueprintReference {
    /// Name of the resource.
    pub resource_name: String,
}

/// A blueprint given inline as a filesystem (file name to content).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InlineBlueprint {
    /// The files of the blueprint.
    #[schemars(schema_with = "crate::schema::any_json")]
    pub filesystem: Value,
}

/// The imports of an installation.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InstallationImports {
    /// Imported data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Vec<DataImport>>,
    /// Imported targets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub targets: Option<Vec<TargetImport>>,
}

/// One imported piece of data, from a DataObject, Secret or ConfigMap.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DataImport {
    /// Name of the import in the blueprint.
    pub name: String,
    /// Name of the DataObject to import.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_ref: Option<String>,
    /// Version of the data (deprecated upstream).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// A Secret key to import.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<LocalSecretReference>,
    /// A ConfigMap key to import.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_map_ref: Option<LocalConfigMapReference>,
}

/// One imported target, target list or target map.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TargetImport {
    /// Name of the import in the blueprint.
    pub name: String,
    /// Name of the Target to import.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// Names of Targets imported as a list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub targets: Option<Vec<String>>,
    /// A target list exported by another installation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_list_ref: Option<String>,
    /// Targets imported as a map from keys to target names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_map: Option<BTreeMap<String, String>>,
    /// A target map exported by another installation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_map_ref: Option<String>,
}

/// The exports of an installation.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InstallationExports {
    /// Exported data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Vec<DataExport>>,
    /// Exported targets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub targets: Option<Vec<TargetExport>>,
}

/// One exported piece of data.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DataExport {
    /// Name of the export in the blueprint.
    pub name: String,
    /// Name of the DataObject to write.
    pub data_ref: String,
}

/// One exported target.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TargetExport {
    /// Name of the export in the blueprint.
    pub name: String,
    /// Name of the Target to write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
}

/// Automatic reconciles of an installation.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AutomaticReconcile {
    /// Reconciles after success.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub succeeded_reconcile: Option<SucceededReconcile>,
    /// Retries after failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_reconcile: Option<FailedReconcile>,
}

/// Reconciles after success, by interval or cron schedule.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SucceededReconcile {
    /// Interval between reconciles (Go duration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<crate::Duration>,
    /// Cron schedule of reconciles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cron_spec: Option<String>,
}

/// Retries after failure, by interval or cron schedule, a limited number of times.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FailedReconcile {
    /// How many retries at most.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number_of_reconciles: Option<i32>,
    /// Interval between retries (Go duration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<crate::Duration>,
    /// Cron schedule of retries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cron_spec: Option<String>,
}

/// Hints that let the landscaper skip work.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Optimization {
    /// No sibling imports anything from this installation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_no_sibling_imports: Option<bool>,
    /// No sibling exports anything to this installation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_no_sibling_exports: Option<bool>,
}

/// Signature verification of the component.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Verification {
    /// Name of the signature in the Context's verification signatures.
    pub signature_name: String,
}

/// The observed state of an Installation.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InstallationStatus {
    /// The generation this status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Current phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<InstallationPhase>,
    /// When the phase last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase_transition_time: Option<Time>,
    /// Conditions of the installation.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// The last error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<LastError>,
    /// The Execution created for this installation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_ref: Option<ObjectReference>,
    /// Hash of the imports of the last job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imports_hash: Option<String>,
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
    /// Cache of sub-installations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sub_inst_cache: Option<SubInstCache>,
    /// Installations to trigger when this one finished.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dependents_to_trigger: Vec<DependentToTrigger>,
    /// State of automatic reconciles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub automatic_reconcile_status: Option<AutomaticReconcileStatus>,
}

/// Cache of the sub-installations of an installation.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubInstCache {
    /// Sub-installations in use.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub active_subs: Vec<SubNamePair>,
    /// Sub-installations no longer wanted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub orphaned_subs: Vec<String>,
}

/// A sub-object's object name and its name in the spec.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubNamePair {
    /// Name of the object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object_name: Option<String>,
    /// Name in the spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec_name: Option<String>,
}

/// An installation to trigger.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DependentToTrigger {
    /// Name of the installation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// State of automatic reconciles.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AutomaticReconcileStatus {
    /// Generation the state belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<i64>,
    /// Reconciles done so far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number_of_reconciles: Option<i32>,
    /// When the last automatic reconcile happened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_reconcile_time: Option<Time>,
    /// Whether the reconciles are retries after failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_failed: Option<bool>,
}
