//! Checking an installation's imports against its blueprint's import definitions: required
//! imports present (or defaulted), data against its JSON schema, targets of the declared type,
//! and nested imports only where their parent is satisfied.
//!
//! Schemas may reference the blueprint's `localTypes` (`local://NAME`) and files of its
//! filesystem (`blueprint://PATH`); those references are resolved before validation.

use landscaper_api::core::{Blueprint, ImportDefinition};
use serde_json::{Map, Value as Json};

use crate::filesystem::Filesystem;

/// How deep schema references may nest before they are taken for a cycle.
const MAX_REF_DEPTH: usize = 32;

/// The imports with defaults applied, or every problem found, each naming the import.
pub fn validate(
    blueprint: &Blueprint,
    fs: &Filesystem,
    imports: &Map<String, Json>,
) -> Result<Map<String, Json>, Vec<String>> {
    let mut out = imports.clone();
    let mut problems = Vec::new();
    check_all(
        &blueprint.imports,
        blueprint,
        fs,
        &mut out,
        &mut problems,
        "imports",
    );
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(problems)
    }
}

fn check_all(
    definitions: &[ImportDefinition],
    blueprint: &Blueprint,
    fs: &Filesystem,
    imports: &mut Map<String, Json>,
    problems: &mut Vec<String>,
    field: &str,
) {
    for (i, definition) in definitions.iter().enumerate() {
        let at = format!("{field}[{i}] ({})", definition.name);
        let present = imports.get(&definition.name).is_some_and(|v| !v.is_null());
        if !present {
            if let Some(default) = &definition.default {
                imports.insert(definition.name.clone(), default.value.clone());
            } else {
                if definition.required.unwrap_or(true) {
                    problems.push(format!(
                        "blueprint {at}: the import {:?} is required but not satisfied",
                        definition.name
                    ));
                }
                for nested in &definition.imports {
                    if imports.get(&nested.name).is_some_and(|v| !v.is_null()) {
                        problems.push(format!(
                            "blueprint {at}: the import {:?} is only allowed when {:?} is imported",
                            nested.name, definition.name
                        ));
                    }
                }
                continue;
            }
        }
        let value = imports[&definition.name].clone();
        match definition.type_.as_deref().unwrap_or("data") {
            "data" => {
                if let Some(schema) = &definition.schema {
                    check_schema(&value, schema, blueprint, fs, &at, problems);
                }
            }
            "target" => check_target(&value, definition, &at, problems),
            "targetList" => match &value {
                Json::Array(items) => {
                    for (j, item) in items.iter().enumerate() {
                        check_target(item, definition, &format!("{at}[{j}]"), problems);
                    }
                }
                _ => problems.push(format!("import {at}: expected a list of Targets")),
            },
            "targetMap" => match &value {
                Json::Object(items) => {
                    for (key, item) in items {
                        check_target(item, definition, &format!("{at}[{key}]"), problems);
                    }
                }
                _ => problems.push(format!("import {at}: expected a map of Targets")),
            },
            other => problems.push(format!(
                "blueprint {at}.type: unknown import type {other:?} (data, target, targetList or targetMap)"
            )),
        }
        check_all(
            &definition.imports,
            blueprint,
            fs,
            imports,
            problems,
            &format!("{at}.imports"),
        );
    }
}

/// A blueprint's `targetType` as upstream's defaulting makes it: a type without a `/` is in
/// Landscaper's domain (`mock` is `landscaper.gardener.cloud/mock`).
pub fn qualified_target_type(target_type: &str) -> std::borrow::Cow<'_, str> {
    if target_type.is_empty() || target_type.contains('/') {
        std::borrow::Cow::Borrowed(target_type)
    } else {
        std::borrow::Cow::Owned(format!("landscaper.gardener.cloud/{target_type}"))
    }
}

fn check_target(value: &Json, definition: &ImportDefinition, at: &str, problems: &mut Vec<String>) {
    let Some(actual) = value.pointer("/spec/type").and_then(Json::as_str) else {
        problems.push(format!("import {at}: expected a Target with spec.type"));
        return;
    };
    if let Some(expected) = definition.target_type.as_deref().map(qualified_target_type)
        && actual != expected
    {
        problems.push(format!(
            "import {at}: the Target's type is {actual:?}, the blueprint expects {expected:?}"
        ));
    }
}

fn check_schema(
    value: &Json,
    schema: &Json,
    blueprint: &Blueprint,
    fs: &Filesystem,
    at: &str,
    problems: &mut Vec<String>,
) {
    let schema = match resolve_refs(schema, blueprint, fs, 0) {
        Ok(schema) => schema,
        Err(e) => {
            problems.push(format!("blueprint {at}.schema: {e}"));
            return;
        }
    };
    let validator = match jsonschema::draft7::new(&schema) {
        Ok(v) => v,
        Err(e) => {
            problems.push(format!("blueprint {at}.schema: invalid schema: {e}"));
            return;
        }
    };
    for error in validator.iter_errors(value) {
        let path = error.instance_path().to_string();
        let path = if path.is_empty() { "/" } else { path.as_str() };
        problems.push(format!("import {at} at {path}: {error}"));
    }
}

/// The schema with `local://` and `blueprint://` references replaced by what they name.
fn resolve_refs(
    schema: &Json,
    blueprint: &Blueprint,
    fs: &Filesystem,
    depth: usize,
) -> Result<Json, String> {
    if depth > MAX_REF_DEPTH {
        return Err("schema references nest too deeply (a cycle?)".into());
    }
    match schema {
        Json::Object(map) => {
            if let Some(Json::String(reference)) = map.get("$ref") {
                if let Some(name) = reference.strip_prefix("local://") {
                    let target = blueprint
                        .local_types
                        .as_ref()
                        .and_then(|types| types.get(name))
                        .ok_or_else(|| format!("$ref {reference}: no local type {name:?}"))?;
                    return resolve_refs(target, blueprint, fs, depth + 1);
                }
                if let Some(path) = reference.strip_prefix("blueprint://") {
                    let text = fs
                        .read_text(path)
                        .map_err(|e| format!("$ref {reference}: {e}"))?;
                    let target = crate::values::parse_yaml(text)
                        .map_err(|e| format!("$ref {reference}: {e}"))?;
                    return resolve_refs(&target, blueprint, fs, depth + 1);
                }
            }
            map.iter()
                .map(|(k, v)| Ok((k.clone(), resolve_refs(v, blueprint, fs, depth + 1)?)))
                .collect::<Result<Map<String, Json>, String>>()
                .map(Json::Object)
        }
        Json::Array(items) => items
            .iter()
            .map(|v| resolve_refs(v, blueprint, fs, depth + 1))
            .collect::<Result<Vec<Json>, String>>()
            .map(Json::Array),
        other => Ok(other.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn blueprint(imports: Json) -> Blueprint {
        serde_json::from_value(json!({
            "localTypes": {"port": {"type": "integer", "maximum": 65535}},
            "imports": imports
        }))
        .unwrap()
    }

    fn imports(v: Json) -> Map<String, Json> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn data_is_checked_against_its_schema_with_local_types() {
        let bp = blueprint(json!([
            {"name": "port", "type": "data", "schema": {"$ref": "local://port"}},
            {"name": "name", "type": "data", "schema": {"type": "string"}, "required": false}
        ]));
        let fs = Filesystem::new();
        assert!(validate(&bp, &fs, &imports(json!({"port": 80}))).is_ok());
        let problems = validate(&bp, &fs, &imports(json!({"port": 70000, "name": 1}))).unwrap_err();
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(
            problems[0].starts_with("import imports[0] (port) at /: 70000 is greater than"),
            "{problems:?}"
        );
        assert!(
            problems[1].starts_with("import imports[1] (name) at /: 1 is not of type"),
            "{problems:?}"
        );
    }

    #[test]
    fn required_imports_defaults_and_nested_imports() {
        let bp = blueprint(json!([
            {"name": "a", "type": "data", "schema": {"type": "string"}},
            {"name": "b", "type": "data", "default": {"value": "x"}},
            {"name": "c", "type": "data", "required": false, "imports": [{"name": "d", "type": "data"}]}
        ]));
        let fs = Filesystem::new();
        let problems = validate(&bp, &fs, &imports(json!({"d": 1}))).unwrap_err();
        assert_eq!(
            problems,
            [
                "blueprint imports[0] (a): the import \"a\" is required but not satisfied",
                "blueprint imports[2] (c): the import \"d\" is only allowed when \"c\" is imported"
            ]
        );
        let ok = validate(&bp, &fs, &imports(json!({"a": "y"}))).unwrap();
        assert_eq!(ok["b"], "x");
    }

    #[test]
    fn targets_must_have_the_declared_type() {
        let bp = blueprint(json!([
            {"name": "cluster", "type": "target", "targetType": "landscaper.gardener.cloud/kubernetes-cluster"},
            {"name": "more", "type": "targetList", "targetType": "landscaper.gardener.cloud/kubernetes-cluster", "required": false}
        ]));
        let fs = Filesystem::new();
        let k8s = json!({"spec": {"type": "landscaper.gardener.cloud/kubernetes-cluster"}});
        let other = json!({"spec": {"type": "other"}});
        assert!(validate(&bp, &fs, &imports(json!({"cluster": k8s, "more": [k8s]}))).is_ok());
        let problems =
            validate(&bp, &fs, &imports(json!({"cluster": other, "more": [1]}))).unwrap_err();
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(
            problems[1].contains("imports[1] (more)[0]: expected a Target"),
            "{problems:?}"
        );
    }
}
