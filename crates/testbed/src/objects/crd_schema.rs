//! What kube-apiserver refuses in a CustomResourceDefinition's `openAPIV3Schema`: OpenAPI
//! constructs it does not support, and schemas that are not structural (a type on every
//! specified field, items on every array, no types or descriptions under logic junctors, and a
//! root `metadata` that restricts at most `name` and `generateName`).
//!
//! The rules and their wording follow apiextensions-apiserver (v1.28): its OpenAPI checks run
//! first, and the structural checks only when those found nothing, as there.

use crate::field_error::FieldError;
use crate::status::Cause;
use serde_json::{Map, Value};

/// Where a schema sits in its parent, which decides some rules and messages.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Root,
    Item,
    Field,
}

/// Every cause kube-apiserver gives for the schemas of a CRD's versions.
pub fn validate(crd: &Value) -> Vec<Cause> {
    let versions = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let schema_of = |v: &Value| v.pointer("/schema/openAPIV3Schema").cloned();
    let mut errors = Vec::new();
    for (i, version) in versions.iter().enumerate() {
        if schema_of(version).is_none() {
            errors.push(FieldError::required(
                &format!("spec.versions[{i}].schema.openAPIV3Schema"),
                "schemas are required",
            ));
        }
    }
    if !errors.is_empty() {
        return errors.iter().map(FieldError::to_cause).collect();
    }
    // Identical per-version schemas are moved to `spec.validation` by the conversion to the
    // internal version, so errors name that path, as kube-apiserver's do.
    let first = versions.first().and_then(schema_of);
    let shared = versions.iter().all(|v| schema_of(v) == first);
    let schemas: Vec<(String, Value)> = if shared {
        first
            .map(|s| ("spec.validation.openAPIV3Schema".to_string(), s))
            .into_iter()
            .collect()
    } else {
        versions
            .iter()
            .enumerate()
            .filter_map(|(i, v)| {
                schema_of(v).map(|s| (format!("spec.versions[{i}].schema.openAPIV3Schema"), s))
            })
            .collect()
    };
    for (path, schema) in &schemas {
        let mut found = Vec::new();
        openapi_errors(schema, path, &mut found);
        if found.is_empty() {
            structural_errors(schema, Level::Root, path, &mut found);
            // Like ValidateStructural, sorted by their text: stable whatever the map order.
            found.sort_by_key(ToString::to_string);
        }
        errors.extend(found);
    }
    errors.iter().map(FieldError::to_cause).collect()
}

fn key(path: &str, child: &str, name: &str) -> String {
    format!("{path}.{child}[{name}]")
}

fn child(path: &str, name: &str) -> String {
    format!("{path}.{name}")
}

fn props(schema: &Value) -> Option<&Map<String, Value>> {
    schema.get("properties").and_then(Value::as_object)
}

fn flag(schema: &Value, name: &str) -> bool {
    schema.get(name) == Some(&Value::Bool(true))
}

fn type_of(schema: &Value) -> &str {
    schema
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// The sub-schemas of `items`, `properties` and `additionalProperties`, with their paths.
fn children<'a>(schema: &'a Value, path: &str) -> Vec<(Level, String, &'a Value)> {
    let mut out = Vec::new();
    if let Some(items) = schema.get("items").filter(|i| i.is_object()) {
        out.push((Level::Item, child(path, "items"), items));
    }
    for (name, prop) in props(schema).into_iter().flatten() {
        out.push((Level::Field, key(path, "properties", name), prop));
    }
    if let Some(additional) = schema.get("additionalProperties").filter(|a| a.is_object()) {
        out.push((
            Level::Field,
            child(path, "additionalProperties"),
            additional,
        ));
    }
    out
}

/// The OpenAPI constructs kube-apiserver does not support in a CRD schema.
fn openapi_errors(schema: &Value, path: &str, errors: &mut Vec<FieldError>) {
    if schema.get("$ref").is_some() {
        errors.push(FieldError::forbidden(
            &child(path, "$ref"),
            "$ref is not supported",
        ));
    }
    if flag(schema, "uniqueItems") {
        errors.push(FieldError::forbidden(
            &child(path, "uniqueItems"),
            "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        ));
    }
    if schema.get("additionalProperties").is_some() && schema.get("properties").is_some() {
        errors.push(FieldError::forbidden(
            &child(path, "additionalProperties"),
            "additionalProperties and properties are mutual exclusive",
        ));
    }
    if schema.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(false)) {
        errors.push(FieldError::invalid_raw(
            &child(path, "x-kubernetes-preserve-unknown-fields"),
            "false",
            "must be true or undefined",
        ));
    }
    if schema.get("items").is_some_and(Value::is_array) {
        errors.push(FieldError::forbidden(
            &child(path, "items"),
            "items must be a schema object and not an array",
        ));
    }
    for (_, p, sub) in children(schema, path) {
        openapi_errors(sub, &p, errors);
    }
    for junctor in ["allOf", "anyOf", "oneOf"] {
        for (i, sub) in schema
            .get(junctor)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            openapi_errors(sub, &format!("{path}.{junctor}[{i}]"), errors);
        }
    }
    if let Some(not) = schema.get("not") {
        openapi_errors(not, &child(path, "not"), errors);
    }
}

/// The invariants of a structural schema (apiextensions' `validateStructuralInvariants`).
fn structural_errors(schema: &Value, level: Level, path: &str, errors: &mut Vec<FieldError>) {
    let ty = type_of(schema);
    let embedded = flag(schema, "x-kubernetes-embedded-resource");
    let int_or_string = flag(schema, "x-kubernetes-int-or-string");
    let preserve = flag(schema, "x-kubernetes-preserve-unknown-fields");
    if ty == "array" && schema.get("items").is_none() {
        errors.push(FieldError::required(
            &child(path, "items"),
            "must be specified",
        ));
    }
    for (lvl, p, sub) in children(schema, path) {
        structural_errors(sub, lvl, &p, errors);
    }
    if schema.get("additionalProperties").is_some() && level == Level::Root {
        errors.push(FieldError::forbidden(
            &child(path, "additionalProperties"),
            "must not be used at the root",
        ));
    }
    if int_or_string && preserve {
        errors.push(FieldError::invalid_raw(
            &child(path, "x-kubernetes-preserve-unknown-fields"),
            "true",
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    if int_or_string && embedded {
        errors.push(FieldError::invalid_raw(
            &child(path, "x-kubernetes-embedded-resource"),
            "true",
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    junctor_errors(schema, int_or_string_pattern(schema), path, errors);
    if embedded && ty != "object" {
        let detail = "must be object if x-kubernetes-embedded-resource is true";
        errors.push(if ty.is_empty() {
            FieldError::required(&child(path, "type"), detail)
        } else {
            FieldError::invalid_str(&child(path, "type"), ty, detail)
        });
    } else if ty.is_empty() && !int_or_string && !preserve {
        let detail = match level {
            Level::Root => "must not be empty at the root",
            Level::Item => "must not be empty for specified array items",
            Level::Field => "must not be empty for specified object fields",
        };
        errors.push(FieldError::required(&child(path, "type"), detail));
    }
    if embedded && schema.get("additionalProperties").is_some() {
        errors.push(FieldError::forbidden(
            &child(path, "additionalProperties"),
            "must not be used if x-kubernetes-embedded-resource is set",
        ));
    }
    if level == Level::Root && !ty.is_empty() && ty != "object" {
        errors.push(FieldError::invalid_str(
            &child(path, "type"),
            ty,
            "must be object at the root",
        ));
    }
    if level == Level::Root || embedded {
        metadata_field_errors(schema, path, errors);
    }
    if level == Level::Root
        && let Some(metadata) = props(schema).and_then(|p| p.get("metadata"))
        && !only_restricts_names(metadata)
    {
        errors.push(FieldError::forbidden(
            &key(path, "properties", "metadata"),
            "must not specify anything other than name and generateName, but metadata is implicitly specified",
        ));
    }
    if embedded && !preserve && props(schema).is_none_or(Map::is_empty) {
        errors.push(FieldError::required(
            &child(path, "properties"),
            "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
        ));
    }
}

/// `kind` and `apiVersion` must be strings and `metadata` an object, where an object's
/// metadata is described (the root, and embedded resources).
fn metadata_field_errors(schema: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let Some(properties) = props(schema) else {
        return;
    };
    for (name, expected) in [
        ("kind", "string"),
        ("apiVersion", "string"),
        ("metadata", "object"),
    ] {
        if let Some(field) = properties.get(name)
            && type_of(field) != expected
        {
            errors.push(FieldError::invalid_str(
                &child(&key(path, "properties", name), "type"),
                type_of(field),
                &format!("must be {expected}"),
            ));
        }
    }
}

/// Whether a root `metadata` schema says no more than its type, a default, and restrictions
/// of `name` and `generateName` (and nothing else beside them).
fn only_restricts_names(metadata: &Value) -> bool {
    let Some(map) = metadata.as_object() else {
        return false;
    };
    map.iter().all(|(k, v)| match k.as_str() {
        "type" | "default" => true,
        "properties" => v.as_object().is_some_and(|p| {
            p.keys()
                .all(|name| name == "name" || name == "generateName")
        }),
        _ => false,
    })
}

/// Which junctor's two branches are the int-or-string pattern `[{type: integer}, {type: string}]`
/// and so may carry types: `anyOf` itself, or the `anyOf` of the first `allOf` entry.
#[derive(Clone, Copy, Default)]
struct IntOrString {
    any_of: bool,
    first_all_of: bool,
}

fn is_int_or_string_pair(any_of: Option<&Value>) -> bool {
    let expected = serde_json::json!([{"type": "integer"}, {"type": "string"}]);
    any_of == Some(&expected)
}

fn int_or_string_pattern(schema: &Value) -> IntOrString {
    IntOrString {
        any_of: is_int_or_string_pair(schema.get("anyOf")),
        first_all_of: is_int_or_string_pair(schema.pointer("/allOf/0/anyOf")),
    }
}

/// The junctors `allOf`, `anyOf`, `oneOf` and `not` may only validate values: no types,
/// descriptions, defaults or vendor extensions, and never `metadata`.
fn junctor_errors(schema: &Value, skip: IntOrString, path: &str, errors: &mut Vec<FieldError>) {
    let entries = |name: &str| -> Vec<&Value> {
        schema
            .get(name)
            .and_then(Value::as_array)
            .map(|a| a.iter().collect())
            .unwrap_or_default()
    };
    if !skip.any_of {
        for (i, sub) in entries("anyOf").into_iter().enumerate() {
            nested_errors(sub, false, &format!("{path}.anyOf[{i}]"), errors);
        }
    }
    for (i, sub) in entries("allOf").into_iter().enumerate() {
        let skip_any_of = skip.first_all_of && i == 0;
        nested_errors(sub, skip_any_of, &format!("{path}.allOf[{i}]"), errors);
    }
    for (i, sub) in entries("oneOf").into_iter().enumerate() {
        nested_errors(sub, false, &format!("{path}.oneOf[{i}]"), errors);
    }
    if let Some(not) = schema.get("not") {
        nested_errors(not, false, &child(path, "not"), errors);
    }
}

fn nested_errors(schema: &Value, skip_any_of: bool, path: &str, errors: &mut Vec<FieldError>) {
    let skip = IntOrString {
        any_of: skip_any_of,
        first_all_of: false,
    };
    junctor_errors(schema, skip, path, errors);
    if let Some(items) = schema.get("items").filter(|i| i.is_object()) {
        nested_errors(items, false, &child(path, "items"), errors);
    }
    for (name, prop) in props(schema).into_iter().flatten() {
        nested_errors(prop, false, &key(path, "properties", name), errors);
    }
    const FORBIDDEN: [(&str, &str); 11] = [
        ("type", "must be empty to be structural"),
        ("additionalProperties", "must be undefined to be structural"),
        ("default", "must be undefined to be structural"),
        ("title", "must be empty to be structural"),
        ("description", "must be empty to be structural"),
        ("nullable", "must be false to be structural"),
        (
            "x-kubernetes-preserve-unknown-fields",
            "must be false to be structural",
        ),
        (
            "x-kubernetes-embedded-resource",
            "must be false to be structural",
        ),
        (
            "x-kubernetes-int-or-string",
            "must be false to be structural",
        ),
        (
            "x-kubernetes-list-map-keys",
            "must be empty to be structural",
        ),
        (
            "x-kubernetes-list-type",
            "must be undefined to be structural",
        ),
    ];
    for (field, detail) in FORBIDDEN {
        let set = match schema.get(field) {
            None | Some(Value::Null) | Some(Value::Bool(false)) => false,
            Some(Value::String(s)) => !s.is_empty(),
            Some(Value::Array(a)) => !a.is_empty(),
            Some(_) => true,
        };
        if set {
            errors.push(FieldError::forbidden(&child(path, field), detail));
        }
    }
    if props(schema).is_some_and(|p| p.contains_key("metadata")) {
        errors.push(FieldError::forbidden(
            &key(path, "properties", "metadata"),
            "must not be specified in a nested context",
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn crd(schema: Value) -> Value {
        json!({"spec": {"versions": [{"name": "v1", "schema": {"openAPIV3Schema": schema}}]}})
    }

    fn messages(schema: Value) -> Vec<String> {
        validate(&crd(schema))
            .iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect()
    }

    #[test]
    fn metadata_may_restrict_only_name_and_generate_name() {
        let forbidden = "spec.validation.openAPIV3Schema.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified";
        for metadata in [
            json!({"type": "object", "description": "Standard object metadata."}),
            json!({"type": "object", "properties": {"labels": {"type": "object"}}}),
            json!({"type": "object", "properties": {"name": {"type": "string"}, "labels": {"type": "object"}}}),
        ] {
            let schema = json!({"type": "object", "properties": {"metadata": metadata}});
            assert_eq!(messages(schema), [forbidden]);
        }
        for metadata in [
            json!({"type": "object"}),
            json!({"type": "object", "properties": {"name": {"type": "string", "maxLength": 40}}}),
            json!({"type": "object", "properties": {"name": {"type": "string"}, "generateName": {"type": "string"}}}),
        ] {
            let schema = json!({"type": "object", "properties": {"metadata": metadata}});
            assert!(messages(schema).is_empty());
        }
    }

    #[test]
    fn every_specified_field_has_a_type() {
        let schema = json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {"replicas": {"description": "no type"}}},
            "list": {"type": "array", "items": {"description": "no type"}},
            "free": {"x-kubernetes-preserve-unknown-fields": true},
            "port": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]},
            "bare": {"type": "array"}
        }});
        assert_eq!(
            messages(schema),
            [
                "spec.validation.openAPIV3Schema.properties[bare].items: Required value: must be specified",
                "spec.validation.openAPIV3Schema.properties[list].items.type: Required value: must not be empty for specified array items",
                "spec.validation.openAPIV3Schema.properties[spec].properties[replicas].type: Required value: must not be empty for specified object fields",
            ]
        );
    }

    #[test]
    fn junctors_only_validate_values() {
        let schema = json!({"type": "object", "properties": {"spec": {
            "type": "object",
            "oneOf": [{"type": "object", "description": "d", "properties": {"metadata": {}}}]
        }}});
        assert_eq!(
            messages(schema),
            [
                "spec.validation.openAPIV3Schema.properties[spec].oneOf[0].description: Forbidden: must be empty to be structural",
                "spec.validation.openAPIV3Schema.properties[spec].oneOf[0].properties[metadata]: Forbidden: must not be specified in a nested context",
                "spec.validation.openAPIV3Schema.properties[spec].oneOf[0].type: Forbidden: must be empty to be structural",
            ]
        );
    }

    #[test]
    fn unsupported_openapi_is_reported_before_structure() {
        let schema = json!({"type": "object", "properties": {
            "a": {"type": "object", "properties": {"x": {"type": "string"}}, "additionalProperties": {"type": "string"}},
            "b": {"type": "array", "uniqueItems": true, "items": {"type": "string"}},
            "c": {}
        }});
        assert_eq!(
            messages(schema),
            [
                "spec.validation.openAPIV3Schema.properties[a].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive",
                "spec.validation.openAPIV3Schema.properties[b].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
            ]
        );
    }

    #[test]
    fn different_version_schemas_are_named_by_version() {
        let crd = json!({"spec": {"versions": [
            {"name": "v1", "schema": {"openAPIV3Schema": {"type": "object"}}},
            {"name": "v2", "schema": {"openAPIV3Schema": {"type": "string"}}},
            {"name": "v3"}
        ]}});
        let causes = validate(&crd);
        assert_eq!(causes.len(), 1);
        assert_eq!(causes[0].field, "spec.versions[2].schema.openAPIV3Schema");
        let crd = json!({"spec": {"versions": [
            {"name": "v1", "schema": {"openAPIV3Schema": {"type": "object"}}},
            {"name": "v2", "schema": {"openAPIV3Schema": {"type": "string"}}}
        ]}});
        let causes = validate(&crd);
        assert_eq!(
            causes[0].message,
            "Invalid value: \"string\": must be object at the root"
        );
        assert_eq!(
            causes[0].field,
            "spec.versions[1].schema.openAPIV3Schema.type"
        );
    }
}
