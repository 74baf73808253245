//! Target: an environment a deployer deploys to, such as a Kubernetes cluster.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::shared::SecretReference;

/// The desired state of a Target.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "landscaper.gardener.cloud",
    version = "v1alpha1",
    kind = "Target",
    namespaced,
    shortname = "tgt",
    shortname = "tg",
    printcolumn = r#"{"name":"Type","type":"string","jsonPath":".spec.type"}"#,
    printcolumn = r#"{"name":"Context","type":"string","jsonPath":".metadata.labels['data\\.landscaper\\.gardener\\.cloud\\/context']"}"#,
    printcolumn = r#"{"name":"Key","type":"string","jsonPath":".metadata.labels['data\\.landscaper\\.gardener\\.cloud\\/key']"}"#,
    printcolumn = r#"{"name":"Idx","type":"string","jsonPath":".metadata.labels['data\\.landscaper\\.gardener\\.cloud\\/index']"}"#,
    printcolumn = r#"{"name":"TMKey","type":"string","jsonPath":".metadata.labels['data\\.landscaper\\.gardener\\.cloud\\/targetmapkey']"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct TargetSpec {
    /// Type of the target, e.g. `landscaper.gardener.cloud/kubernetes-cluster`.
    #[serde(rename = "type")]
    pub type_: String,
    /// Type-specific configuration given inline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::any_json")]
    pub config: Option<Value>,
    /// Type-specific configuration read from a Secret. `namespace` is our additive field:
    /// the agent's host Target points at a Secret that stays in the fenced cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<SecretReference>,
}
