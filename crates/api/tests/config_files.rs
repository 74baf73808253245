//! The commented configuration files under `config/` load with the binaries' strict decoding
//! and hold every key of their types, so neither can drift from the other: a key removed from
//! a type fails the decoding, a key added to a type fails the completeness check.

use landscaper_api::config::{AgentConfiguration, LandscaperConfiguration};
use landscaper_api::decode::config_from_yaml;
use landscaper_api::deployer::DeployerConfiguration;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

fn config_file(name: &str) -> String {
    let path = format!("{}/../../config/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("reading {path}: {error}"))
}

/// Decodes the file strictly and returns its keys missing from the type's schema.
fn missing_keys<T: DeserializeOwned + JsonSchema>(name: &str) -> Vec<String> {
    let text = config_file(name);
    config_from_yaml::<T>(&text, name).unwrap_or_else(|error| panic!("{error}"));
    let document: Value = serde_yaml_ng::from_str(&text).unwrap();
    let schema = schemars::schema_for!(T);
    let root = schema.as_value();
    let mut missing = Vec::new();
    collect_missing(root, root, &document, String::new(), &mut missing);
    missing
}

/// Walks the schema beside the document: every property of an object schema must be present,
/// and every element of a list is checked against the list's item schema.
fn collect_missing(
    root: &Value,
    schema: &Value,
    value: &Value,
    path: String,
    missing: &mut Vec<String>,
) {
    let schema = resolve(root, schema);
    for alternatives in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(options)) = schema.get(alternatives) {
            for option in options {
                collect_missing(root, option, value, path.clone(), missing);
            }
        }
    }
    if let (Some(Value::Object(properties)), Value::Object(fields)) =
        (schema.get("properties"), value)
    {
        for (key, property) in properties {
            match fields.get(key) {
                Some(field) => {
                    collect_missing(root, property, field, format!("{path}.{key}"), missing)
                }
                None => missing.push(format!("{path}.{key}")),
            }
        }
    }
    // An empty list shows no element's keys; the file shows them in a comment or in another
    // list of the same element type.
    if let (Some(items), Value::Array(elements)) = (schema.get("items"), value) {
        for (i, element) in elements.iter().enumerate() {
            collect_missing(root, items, element, format!("{path}[{i}]"), missing);
        }
    }
}

fn resolve<'a>(root: &'a Value, schema: &'a Value) -> &'a Value {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(reference) => {
            let pointer = reference.trim_start_matches('#');
            let target = root
                .pointer(pointer)
                .unwrap_or_else(|| panic!("schema reference {reference} not found"));
            resolve(root, target)
        }
        None => schema,
    }
}

#[test]
fn the_agent_configuration_file_has_every_key() {
    let missing = missing_keys::<AgentConfiguration>("agent.yaml");
    assert!(missing.is_empty(), "config/agent.yaml lacks {missing:?}");
}

#[test]
fn the_landscaper_configuration_file_has_every_key() {
    let missing = missing_keys::<LandscaperConfiguration>("landscaper.yaml");
    assert!(
        missing.is_empty(),
        "config/landscaper.yaml lacks {missing:?}"
    );
}

#[test]
fn the_deployer_configuration_file_has_every_key() {
    let missing = missing_keys::<DeployerConfiguration>("deployer.yaml");
    assert!(missing.is_empty(), "config/deployer.yaml lacks {missing:?}");
}

#[test]
fn a_key_the_type_lacks_fails_the_decoding() {
    let text = config_file("agent.yaml").replace("heartbeatPeriod:", "heartbeatPeriodd:");
    let error = config_from_yaml::<AgentConfiguration>(&text, "agent.yaml").unwrap_err();
    assert!(error.to_string().contains("heartbeatPeriodd"), "{error}");
}

#[test]
fn a_key_the_file_lacks_is_reported() {
    let root = schemars::schema_for!(AgentConfiguration);
    let mut document: Value = serde_yaml_ng::from_str(&config_file("agent.yaml")).unwrap();
    document.as_object_mut().unwrap().remove("heartbeatPeriod");
    let mut missing = Vec::new();
    collect_missing(
        root.as_value(),
        root.as_value(),
        &document,
        String::new(),
        &mut missing,
    );
    assert_eq!(missing, vec![".heartbeatPeriod"]);
}
