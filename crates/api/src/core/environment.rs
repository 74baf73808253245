//! Environment: a (possibly fenced) cluster that registered itself to receive deployers.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::shared::{Condition, SecretReference, TargetSelector};

/// The desired state of an Environment. Created and kept up to date by the agent.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "landscaper.gardener.cloud",
    version = "v1alpha1",
    kind = "Environment",
    status = "EnvironmentStatus",
    shortname = "env",
    printcolumn = r#"{"name":"AgentReady","type":"string","jsonPath":".status.conditions[?(@.type==\"AgentReady\")].status"}"#,
    printcolumn = r#"{"name":"TargetReady","type":"string","jsonPath":".status.conditions[?(@.type==\"TargetReady\")].status"}"#,
    printcolumn = r#"{"name":"Agent","type":"string","priority":1,"jsonPath":".status.agent.version"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct EnvironmentSpec {
    /// Template of the Target through which deployers are installed into the environment.
    pub host_target: TargetTemplate,
    /// Namespace in the host cluster where deployers are installed.
    pub namespace: String,
    /// How deployers in the environment reach the landscaper cluster.
    pub landscaper_cluster_config: ClusterRestConfig,
    /// Target selectors given to the deployers installed into the environment.
    pub target_selectors: Vec<TargetSelector>,
}

/// Template of a Target.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TargetTemplate {
    /// Type of the target.
    #[serde(rename = "type")]
    pub type_: String,
    /// Type-specific configuration given inline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::any_json")]
    pub config: Option<Value>,
    /// Type-specific configuration read from a Secret (in the host cluster for agents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<SecretReference>,
    /// Labels of the Target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<BTreeMap<String, String>>,
    /// Annotations of the Target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, String>>,
}

/// Connection settings of a Kubernetes API server, as client-go's rest config.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterRestConfig {
    /// Host (URL) of the API server.
    pub host: String,
    /// Path prefix of the API.
    pub api_path: String,
    /// Skip server certificate verification.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub insecure: Option<bool>,
    /// Server name used to verify the certificate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_name: Option<String>,
    /// PEM CA bundle, base64-encoded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "byte_string")]
    pub ca_data: Option<String>,
    /// ALPN protocols.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_protos: Option<Vec<String>>,
}

impl ClusterRestConfig {
    /// A kubeconfig (as YAML) that reaches this API server with a bearer token as `user`.
    pub fn kubeconfig_with_token(&self, user: &str, token: &str) -> String {
        let server = format!("{}{}", self.host.trim_end_matches('/'), self.api_path);
        let mut cluster = serde_json::json!({ "server": server });
        if let Some(ca) = self.ca_data.as_ref().filter(|ca| !ca.is_empty()) {
            cluster["certificate-authority-data"] = ca.clone().into();
        }
        if self.insecure == Some(true) {
            cluster["insecure-skip-tls-verify"] = true.into();
        }
        if let Some(name) = self.server_name.as_ref().filter(|name| !name.is_empty()) {
            cluster["tls-server-name"] = name.clone().into();
        }
        let kubeconfig = serde_json::json!({
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{ "name": "cluster", "cluster": cluster }],
            "users": [{ "name": user, "user": { "token": token } }],
            "contexts": [{ "name": "default", "context": { "cluster": "cluster", "user": user } }],
            "current-context": "default",
        });
        crate::yaml::to_string(&kubeconfig).unwrap_or_default()
    }
}

fn byte_string(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": "string", "format": "byte" })
}

/// The observed state of an Environment: our additive extension, unknown to upstream tooling.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EnvironmentStatus {
    /// The generation this status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Conditions: `AgentReady` (heartbeat) and the landscaper's conditions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// The agent that registered the environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentStatus>,
}

/// What the agent reports about itself.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentStatus {
    /// Version of the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// When the agent last renewed its heartbeat.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_heartbeat_time: Option<Time>,
}
