//! DeployerRegistration: a deployer the landscaper installs into every environment.

use std::collections::BTreeMap;

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::installation::{
    BlueprintDefinition, ComponentDescriptorDefinition, InstallationImports,
};
use super::shared::{Condition, LastError};

/// The desired state of a DeployerRegistration.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "landscaper.gardener.cloud",
    version = "v1alpha1",
    kind = "DeployerRegistration",
    status = "DeployerRegistrationStatus",
    shortname = "deployreg",
    shortname = "deployerreg",
    shortname = "dreg",
    printcolumn = r#"{"name":"Types","type":"string","jsonPath":".spec.types"}"#,
    printcolumn = r#"{"name":"Ready","type":"string","jsonPath":".status.environmentsReady"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct DeployerRegistrationSpec {
    /// The deploy item types the deployer serves.
    pub types: Vec<String>,
    /// The Installation that installs the deployer into an environment.
    pub installation_template: DeployerInstallationTemplate,
}

/// An Installation spec without exports or context: how to install a deployer.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeployerInstallationTemplate {
    /// The component descriptor the blueprint is resolved from; an inline one is a v2
    /// descriptor, typed in the CRD as upstream's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::component_descriptor::typed_definition_schema")]
    pub component_descriptor: Option<ComponentDescriptorDefinition>,
    /// The blueprint that installs the deployer.
    pub blueprint: BlueprintDefinition,
    /// Imports of the installation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imports: Option<InstallationImports>,
    /// Templates computing further imports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::any_json_map")]
    pub import_data_mappings: Option<BTreeMap<String, Value>>,
}

/// The observed state of a DeployerRegistration.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeployerRegistrationStatus {
    /// The last error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<LastError>,
    /// The generation this status describes (our additive field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Conditions, e.g. dependency order problems (our additive field).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// Ready environments of all, as `ready/total` (our additive field, for `kubectl get`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environments_ready: Option<String>,
    /// The registration in each environment: its installation's phase and what it waits for
    /// (our additive field).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub environments: Vec<DeployerEnvironmentStatus>,
}

/// A registration in one environment: the pair `<registration>-<environment>`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeployerEnvironmentStatus {
    /// The environment.
    pub environment: String,
    /// The pair's Installation in the deployer management namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub installation: Option<String>,
    /// The phase of that Installation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// Whether the deployer is installed (its Installation Succeeded).
    #[serde(default)]
    pub ready: bool,
    /// What the pair waits for or what is wrong with it, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}
