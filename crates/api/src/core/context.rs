//! Context: repository, registry and configuration settings shared by installations.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::shared::{LocalObjectReference, SecretReference};
use super::top_level::{core_api_version, object_meta_schema, plain_string, top_level_kind};

/// Settings shared by the installations, executions and deploy items that name it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Context {
    /// `landscaper.gardener.cloud/v1alpha1`.
    #[serde(default = "core_api_version")]
    #[schemars(schema_with = "plain_string")]
    pub api_version: String,
    /// `Context`.
    #[serde(default = "context_kind")]
    #[schemars(schema_with = "plain_string")]
    pub kind: String,
    /// Standard object metadata.
    #[serde(default)]
    #[schemars(schema_with = "object_meta_schema")]
    pub metadata: ObjectMeta,
    /// The default repository of components.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::any_json")]
    pub repository_context: Option<Value>,
    /// Secrets with registry credentials (`.dockerconfigjson`), used to pull blueprints,
    /// component descriptors and charts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub registry_pull_secrets: Vec<LocalObjectReference>,
    /// Named configurations for extensions, e.g. helm chart repository credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::free_form_object")]
    pub configurations: Option<BTreeMap<String, Value>>,
    /// Name of a ComponentVersionOverwrites object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub component_version_overwrites: Option<String>,
    /// Named keys to verify component signatures with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification_signatures: Option<BTreeMap<String, VerificationSignature>>,
    /// The OCM configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ocm_config: Option<LocalObjectReference>,
}

fn context_kind() -> String {
    "Context".to_owned()
}

top_level_kind!(Context, kind = "Context", plural = "contexts");

/// Keys to verify a component signature with.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VerificationSignature {
    /// A Secret holding the public key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub public_key_secret_reference: Option<SecretReference>,
    /// A Secret holding the CA certificate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_certificate_secret_reference: Option<SecretReference>,
}
