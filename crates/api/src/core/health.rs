//! LsHealthCheck, SyncObject, CriticalProblems, ComponentVersionOverwrites and TargetSync:
//! the landscaper's own bookkeeping kinds, typed so their manifests and CRDs stay complete.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::shared::LocalSecretReference;
use super::top_level::{core_api_version, object_meta_schema, plain_string, top_level_kind};

/// The health of the landscaper deployment, written by the landscaper itself.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LsHealthCheck {
    /// `landscaper.gardener.cloud/v1alpha1`.
    #[serde(default = "core_api_version")]
    #[schemars(schema_with = "plain_string")]
    pub api_version: String,
    /// `LsHealthCheck`.
    #[serde(default = "health_check_kind")]
    #[schemars(schema_with = "plain_string")]
    pub kind: String,
    /// Standard object metadata.
    #[serde(default)]
    #[schemars(schema_with = "object_meta_schema")]
    pub metadata: ObjectMeta,
    /// `Ok` or `Failed`.
    pub status: String,
    /// Details of the status.
    pub description: String,
    /// When the check last ran.
    pub last_update_time: Time,
}

fn health_check_kind() -> String {
    "LsHealthCheck".to_owned()
}

top_level_kind!(
    LsHealthCheck,
    kind = "LsHealthCheck",
    plural = "lshealthchecks"
);

/// Replaces component versions (or repositories) when resolving components.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ComponentVersionOverwrites {
    /// `landscaper.gardener.cloud/v1alpha1`.
    #[serde(default = "core_api_version")]
    #[schemars(schema_with = "plain_string")]
    pub api_version: String,
    /// `ComponentVersionOverwrites`.
    #[serde(default = "overwrites_kind")]
    #[schemars(schema_with = "plain_string")]
    pub kind: String,
    /// Standard object metadata.
    #[serde(default)]
    #[schemars(schema_with = "object_meta_schema")]
    pub metadata: ObjectMeta,
    /// The replacements.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overwrites: Vec<ComponentVersionOverwrite>,
}

fn overwrites_kind() -> String {
    "ComponentVersionOverwrites".to_owned()
}

top_level_kind!(
    ComponentVersionOverwrites,
    kind = "ComponentVersionOverwrites",
    plural = "componentversionoverwrites"
);

/// One replacement: a component reference and what to use instead.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ComponentVersionOverwrite {
    /// The reference to replace.
    pub source: ComponentOverwriteReference,
    /// What to use instead.
    pub substitution: ComponentOverwriteReference,
}

/// A partial component reference.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ComponentOverwriteReference {
    /// Repository of the component.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::any_json")]
    pub repository_context: Option<Value>,
    /// Name of the component.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub component_name: Option<String>,
    /// Version of the component.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// A lock object that serialises work of several landscaper pods on one object.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "landscaper.gardener.cloud",
    version = "v1alpha1",
    kind = "SyncObject",
    namespaced,
    status = "SyncObjectStatus",
    shortname = "so",
    printcolumn = r#"{"name":"PodName","type":"string","jsonPath":".spec.podName"}"#,
    printcolumn = r#"{"name":"Kind","type":"string","jsonPath":".spec.kind"}"#,
    printcolumn = r#"{"name":"Name","type":"string","jsonPath":".spec.name"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct SyncObjectSpec {
    /// The pod holding the lock.
    pub pod_name: String,
    /// Kind of the locked object.
    pub kind: String,
    /// Name of the locked object.
    pub name: String,
    /// When the lock was last renewed.
    pub last_update_time: Time,
    /// Prefix of the lock.
    pub prefix: String,
}

/// The status of a SyncObject (empty upstream).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct SyncObjectStatus {}

/// Problems that need an operator's attention.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "landscaper.gardener.cloud",
    version = "v1alpha1",
    kind = "CriticalProblems",
    plural = "criticalproblems",
    singular = "criticalproblems",
    namespaced,
    status = "CriticalProblemsStatus",
    shortname = "cps"
)]
#[serde(rename_all = "camelCase")]
pub struct CriticalProblemsSpec {
    /// The problems.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub critical_problem: Vec<CriticalProblem>,
}

/// One critical problem.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CriticalProblem {
    /// The pod that saw the problem.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_name: Option<String>,
    /// When the problem was seen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub creation_time: Option<Time>,
    /// What the problem is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// The status of CriticalProblems (empty upstream).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct CriticalProblemsStatus {}

/// Synchronises Secrets of a source namespace into Targets.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "landscaper.gardener.cloud",
    version = "v1alpha1",
    kind = "TargetSync",
    namespaced,
    status = "TargetSyncStatus",
    shortname = "tgs"
)]
#[serde(rename_all = "camelCase")]
pub struct TargetSyncSpec {
    /// Namespace the Secrets are read from.
    pub source_namespace: String,
    /// Secret with the kubeconfig of the source cluster.
    pub secret_ref: LocalSecretReference,
    /// Regular expression selecting the Secrets to synchronise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_name_expression: Option<String>,
    /// Regular expression selecting the shoots to synchronise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shoot_name_expression: Option<String>,
    /// Also create a Target for the source cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub create_target_to_source: Option<bool>,
    /// Name of the Target for the source cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_to_source_name: Option<String>,
    /// Rotation of the source cluster token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_rotation: Option<TokenRotation>,
}

/// Token rotation settings.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TokenRotation {
    /// Whether tokens are rotated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
}

/// The observed state of a TargetSync.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TargetSyncStatus {
    /// The generation this status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// When the Targets were last synchronised.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_update_time: Option<Time>,
    /// Errors of the last synchronisation.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub last_errors: Vec<String>,
    /// When the token was last rotated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_token_rotation_time: Option<Time>,
}
