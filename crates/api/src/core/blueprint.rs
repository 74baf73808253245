//! Blueprint: the file format (`blueprint.yaml`) describing how to install a component.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::installation::{InstallationExports, InstallationImports, Optimization};

/// A blueprint: imports, exports and the executions that produce deploy items and
/// sub-installations. Not a Kubernetes resource.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Blueprint {
    /// `landscaper.gardener.cloud/v1alpha1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `Blueprint`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The JSON schema draft the blueprint's schemas use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json_schema_version: Option<String>,
    /// Free-form annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, String>>,
    /// JSON schemas referenced by the imports and exports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_types: Option<BTreeMap<String, Value>>,
    /// What the blueprint imports.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub imports: Vec<ImportDefinition>,
    /// Templates that compute further import values.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub import_executions: Vec<TemplateExecutor>,
    /// What the blueprint exports.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exports: Vec<ExportDefinition>,
    /// Sub-installations, given inline or by file.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subinstallations: Vec<SubinstallationTemplate>,
    /// Templates that compute sub-installations.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subinstallation_executions: Vec<TemplateExecutor>,
    /// Templates that compute deploy items.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deploy_executions: Vec<TemplateExecutor>,
    /// Templates that compute the exports.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub export_executions: Vec<TemplateExecutor>,
}

/// One import of a blueprint.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImportDefinition {
    /// Name of the import.
    pub name: String,
    /// Kind of import: `data`, `target`, `targetList`, `targetMap`.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// JSON schema of a data import.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<Value>,
    /// Target type of a target import.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_type: Option<String>,
    /// Whether the import must be satisfied (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
    /// Default value when not imported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<ImportDefault>,
    /// Imports that exist only when this one is satisfied.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub imports: Vec<ImportDefinition>,
}

/// A default import value.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImportDefault {
    /// The value.
    pub value: Value,
}

/// One export of a blueprint.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExportDefinition {
    /// Name of the export.
    pub name: String,
    /// Kind of export: `data` or `target`.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// JSON schema of a data export.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<Value>,
    /// Target type of a target export.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_type: Option<String>,
}

/// A template that computes something (deploy items, exports, imports, sub-installations).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TemplateExecutor {
    /// Unique name of the executor (required by upstream's validation, not by its decoder).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Template engine: `GoTemplate` or `Spiff`.
    #[serde(rename = "type")]
    pub type_: String,
    /// Path of a file in the blueprint holding the template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The template given inline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<Value>,
}

/// A sub-installation of a blueprint: inline, or in a file of the blueprint.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubinstallationTemplate {
    /// Path of a file holding an InstallationTemplate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The template given inline.
    #[serde(flatten)]
    pub template: Option<InstallationTemplate>,
}

/// An installation created by a blueprint.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InstallationTemplate {
    /// `landscaper.gardener.cloud/v1alpha1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `InstallationTemplate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Unique name of the sub-installation.
    pub name: String,
    /// The blueprint of the sub-installation.
    pub blueprint: InstallationTemplateBlueprint,
    /// Imports of the sub-installation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imports: Option<InstallationImports>,
    /// Templates computing further imports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub import_data_mappings: Option<BTreeMap<String, Value>>,
    /// Exports of the sub-installation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exports: Option<InstallationExports>,
    /// Templates computing the exports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub export_data_mappings: Option<BTreeMap<String, Value>>,
    /// Hints that let the landscaper skip work.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optimization: Option<Optimization>,
}

/// The blueprint of a sub-installation: a reference (`cd://…`) or an inline filesystem.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InstallationTemplateBlueprint {
    /// A reference to a blueprint resource.
    #[serde(default, rename = "ref", skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// An inline blueprint filesystem.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filesystem: Option<Value>,
}
