//! The v2 component descriptor, typed as upstream's DeployerRegistration CRD types an inline
//! one (`spec.installationTemplate.componentDescriptor.inline`). The Installation's inline
//! descriptor stays free-form, as upstream's is: it may be written in either schema version.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A component descriptor in schema version v2.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ComponentDescriptorV2 {
    /// The descriptor's schema version.
    pub meta: DescriptorMeta,
    /// The component version.
    pub component: ComponentSpec,
    /// Signatures of the descriptor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signatures: Option<Vec<Signature>>,
}

/// The descriptor's metadata.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DescriptorMeta {
    /// The schema version (`v2`).
    pub schema_version: String,
}

/// A component version: its identity, where it is stored, and its elements.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ComponentSpec {
    /// The component's name.
    pub name: String,
    /// The component's version.
    pub version: String,
    /// Labels of the component.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<Vec<Label>>,
    /// The repositories the component was stored in; the last is the current one.
    #[schemars(schema_with = "free_form_list")]
    pub repository_contexts: Vec<Value>,
    /// The provider of the component.
    pub provider: String,
    /// The sources the component is built from.
    pub sources: Vec<Source>,
    /// The components this one references.
    pub component_references: Vec<ComponentReference>,
    /// The resources of the component.
    pub resources: Vec<Resource>,
}

/// A label: a name and any value.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Label {
    /// The label's name.
    pub name: String,
    /// The label's value. Upstream's schema says `string`/`byte` (a Go `json.RawMessage`);
    /// labels carry maps and lists, so any value is kept.
    #[schemars(schema_with = "crate::schema::any_json")]
    pub value: Value,
}

/// A digest of an element's content.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DigestSpec {
    /// The hash algorithm.
    pub hash_algorithm: String,
    /// How the content was normalised before hashing.
    pub normalisation_algorithm: String,
    /// The digest.
    pub value: String,
}

/// A source of the component.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Source {
    /// The source's name.
    pub name: String,
    /// The source's version.
    pub version: String,
    /// Identity attributes besides the name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_identity: Option<BTreeMap<String, String>>,
    /// The source's type.
    #[serde(rename = "type")]
    pub type_: String,
    /// Labels of the source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<Vec<Label>>,
    /// How the source is accessed.
    #[schemars(schema_with = "crate::schema::free_form_object")]
    pub access: Value,
}

/// A resource of the component.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Resource {
    /// The resource's name.
    pub name: String,
    /// The resource's version.
    pub version: String,
    /// Identity attributes besides the name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_identity: Option<BTreeMap<String, String>>,
    /// The resource's type.
    #[serde(rename = "type")]
    pub type_: String,
    /// Labels of the resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<Vec<Label>>,
    /// `local` or `external`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relation: Option<String>,
    /// The sources the resource is built from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub src_ref: Option<Vec<SourceRef>>,
    /// How the resource is accessed.
    #[schemars(schema_with = "crate::schema::free_form_object")]
    pub access: Value,
    /// The digest of the resource's content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<DigestSpec>,
}

/// A reference from a resource to sources of the component.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SourceRef {
    /// The identity of the sources meant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity_selector: Option<BTreeMap<String, String>>,
    /// Labels of the reference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<Vec<Label>>,
}

/// A reference to another component version.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ComponentReference {
    /// The reference's name.
    pub name: String,
    /// The referenced component.
    pub component_name: String,
    /// The referenced version.
    pub version: String,
    /// Identity attributes besides the name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_identity: Option<BTreeMap<String, String>>,
    /// Labels of the reference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<Vec<Label>>,
    /// The digest of the referenced descriptor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<DigestSpec>,
}

/// A signature of the descriptor.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Signature {
    /// The signature's name.
    pub name: String,
    /// The digest that was signed.
    pub digest: DigestSpec,
    /// The signature itself.
    pub signature: SignatureSpec,
}

/// A signature's value and how it was made.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SignatureSpec {
    /// The signing algorithm.
    pub algorithm: String,
    /// The signature.
    pub value: String,
    /// The media type of the signature.
    pub media_type: String,
}

/// A list of free-form objects.
fn free_form_list(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "array",
        "items": crate::schema::free_form_object(generator),
    })
}

/// The schema of a component descriptor definition (`ref` or `inline`) whose inline descriptor
/// is typed as a v2 descriptor, as in upstream's DeployerRegistration CRD.
pub fn typed_definition_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let mut schema = <super::ComponentDescriptorDefinition as JsonSchema>::json_schema(generator);
    let inline = <ComponentDescriptorV2 as JsonSchema>::json_schema(generator);
    if let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        properties.insert("inline".into(), inline.to_value());
    }
    // The field is optional, and `null` is accepted for it as for every optional field.
    schema.insert("nullable".into(), Value::Bool(true));
    schema
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_v2_descriptor_round_trips_through_the_types() {
        let json = serde_json::json!({"meta": {"schemaVersion": "v2"}, "component": {
            "name": "example.test/c", "version": "1.0.0", "provider": "internal",
            "labels": [{"name": "l", "value": {"any": ["thing"]}}],
            "repositoryContexts": [{"type": "ociRegistry", "baseUrl": "r.test"}],
            "sources": [], "componentReferences": [{"name": "r", "componentName": "example.test/d", "version": "2"}],
            "resources": [{"name": "bp", "version": "1.0.0", "type": "blueprint", "relation": "local",
                "extraIdentity": {"k": "v"}, "srcRef": [{"identitySelector": {"name": "s"}}],
                "access": {"type": "localBlob", "localReference": "sha256:00"}}]}});
        let typed: ComponentDescriptorV2 = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(serde_json::to_value(typed).unwrap(), json);
    }
}
