//! Structural schemas of custom resources: pruning unknown fields, defaulting, and
//! validation with kube-apiserver's messages.

use crate::status::Cause;
use serde_json::{Map, Value};

fn preserves_unknown(schema: &Value) -> bool {
    schema.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true))
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// Removes fields the schema does not know; returns their paths (`spec.bogus`).
/// `apiVersion`, `kind` and `metadata` at the root are always kept.
pub fn prune(obj: &mut Value, schema: &Value) -> Vec<String> {
    let mut removed = Vec::new();
    prune_at(obj, schema, "", true, &mut removed);
    removed
}

fn prune_at(value: &mut Value, schema: &Value, path: &str, root: bool, removed: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            let props = schema.get("properties").and_then(Value::as_object);
            let additional = schema.get("additionalProperties").filter(|a| a.is_object());
            if props.is_none()
                && additional.is_none()
                && (preserves_unknown(schema) || !root && schema.get("type").is_none())
            {
                return;
            }
            let keys: Vec<String> = map.keys().cloned().collect();
            for key in keys {
                if root && matches!(key.as_str(), "apiVersion" | "kind" | "metadata") {
                    continue;
                }
                let child_schema = props.and_then(|p| p.get(&key)).or(additional);
                match child_schema {
                    Some(s) => {
                        if let Some(child) = map.get_mut(&key) {
                            prune_at(child, s, &join(path, &key), false, removed);
                        }
                    }
                    None if preserves_unknown(schema) => {}
                    None => {
                        map.remove(&key);
                        removed.push(join(path, &key));
                    }
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for (i, item) in items.iter_mut().enumerate() {
                    prune_at(item, item_schema, &format!("{path}[{i}]"), false, removed);
                }
            }
        }
        _ => {}
    }
}

/// Fills `default`s of missing properties, recursively.
pub fn apply_defaults(value: &mut Value, schema: &Value) {
    match value {
        Value::Object(map) => {
            let Some(props) = schema.get("properties").and_then(Value::as_object) else {
                return;
            };
            for (key, s) in props {
                if !map.contains_key(key)
                    && let Some(d) = s.get("default")
                {
                    map.insert(key.clone(), d.clone());
                }
                if let Some(child) = map.get_mut(key) {
                    apply_defaults(child, s);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for item in items {
                    apply_defaults(item, item_schema);
                }
            }
        }
        _ => {}
    }
}

/// Validates against the schema (root `metadata`, `apiVersion`, `kind` excluded).
pub fn validate(obj: &Value, schema: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let Some(map) = obj.as_object() else {
        return causes;
    };
    let props = schema.get("properties").and_then(Value::as_object);
    for (key, value) in map
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "apiVersion" | "kind" | "metadata"))
    {
        if let Some(s) = props.and_then(|p| p.get(key)) {
            validate_at(value, s, key, &mut causes);
        }
    }
    required(map, schema, "", &mut causes);
    causes
}

/// Go's `%v`-like rendering of a value inside "Invalid value: ...".
fn shown(v: &Value) -> String {
    match v {
        Value::String(s) => format!("{s:?}"),
        Value::Null => "null".into(),
        // Go prints a float64 without a fraction like an integer.
        Value::Number(n)
            if n.is_f64()
                && n.as_f64()
                    .is_some_and(|f| f.fract() == 0.0 && f.abs() < 1e15) =>
        {
            format!("{}", n.as_f64().unwrap_or_default() as i64)
        }
        other => other.to_string(),
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn type_matches(want: &str, v: &Value) -> bool {
    match want {
        "integer" => v.as_i64().is_some() || v.as_u64().is_some(),
        "number" => v.is_number(),
        "string" => v.is_string(),
        "boolean" => v.is_boolean(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        _ => true,
    }
}

fn required(map: &Map<String, Value>, schema: &Value, path: &str, causes: &mut Vec<Cause>) {
    for r in schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if !map.contains_key(r) {
            causes.push(Cause::new(
                "FieldValueRequired",
                "Required value",
                join(path, r),
            ));
        }
    }
}

/// A schema's numeric bound: `minimum` or `maximum`, strict when its `exclusive…` flag is set.
#[derive(Clone, Copy)]
enum Bound {
    Minimum,
    Maximum,
}

impl Bound {
    /// The comparison `n` fails, worded as kube-apiserver words it, and the schema's limit;
    /// `None` when `n` keeps the bound or the schema sets none.
    fn violated_by(self, n: f64, schema: &Value) -> Option<(&'static str, &Value)> {
        let (key, exclusive_key) = match self {
            Bound::Minimum => ("minimum", "exclusiveMinimum"),
            Bound::Maximum => ("maximum", "exclusiveMaximum"),
        };
        let limit = schema.get(key)?;
        let bound = limit.as_f64()?;
        let exclusive = schema.get(exclusive_key) == Some(&Value::Bool(true));
        let (violated, op) = match (self, exclusive) {
            (Bound::Minimum, true) => (n <= bound, "greater than"),
            (Bound::Minimum, false) => (n < bound, "greater than or equal to"),
            (Bound::Maximum, true) => (n >= bound, "less than"),
            (Bound::Maximum, false) => (n > bound, "less than or equal to"),
        };
        violated.then_some((op, limit))
    }
}

fn validate_at(value: &Value, schema: &Value, path: &str, causes: &mut Vec<Cause>) {
    if value.is_null() && schema.get("nullable") == Some(&Value::Bool(true)) {
        return;
    }
    if let Some(want) = schema.get("type").and_then(Value::as_str)
        && !type_matches(want, value)
    {
        causes.push(Cause::new(
            "FieldValueTypeInvalid",
            format!(
                "Invalid value: {:?}: {path} in body must be of type {want}: {:?}",
                type_name(value),
                type_name(value)
            ),
            path,
        ));
        return;
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array)
        && !options.contains(value)
    {
        let list = options.iter().map(shown).collect::<Vec<_>>().join(", ");
        causes.push(Cause::new(
            "FieldValueNotSupported",
            format!(
                "Unsupported value: {}: supported values: {list}",
                shown(value)
            ),
            path,
        ));
    }
    if let Some(n) = value.as_f64() {
        for bound in [Bound::Minimum, Bound::Maximum] {
            if let Some((op, limit)) = bound.violated_by(n, schema) {
                causes.push(Cause::new(
                    "FieldValueInvalid",
                    format!(
                        "Invalid value: {}: {path} in body should be {op} {}",
                        shown(value),
                        shown(limit)
                    ),
                    path,
                ));
            }
        }
    }
    if let Some(s) = value.as_str() {
        let len = s.chars().count() as u64;
        if let Some(min) = schema.get("minLength").and_then(Value::as_u64)
            && len < min
        {
            causes.push(Cause::new(
                "FieldValueInvalid",
                format!(
                    "Invalid value: {}: {path} in body should be at least {min} chars long",
                    shown(value)
                ),
                path,
            ));
        }
        if let Some(max) = schema.get("maxLength").and_then(Value::as_u64)
            && len > max
        {
            causes.push(Cause::new(
                "FieldValueTooLong",
                format!("Too long: may not be more than {max} bytes"),
                path,
            ));
        }
    }
    match value {
        Value::Object(map) => {
            let props = schema.get("properties").and_then(Value::as_object);
            let additional = schema.get("additionalProperties").filter(|a| a.is_object());
            for (k, v) in map {
                if let Some(s) = props.and_then(|p| p.get(k)).or(additional) {
                    validate_at(v, s, &join(path, k), causes);
                }
            }
            required(map, schema, path, causes);
        }
        Value::Array(items) => {
            if let Some(max) = schema.get("maxItems").and_then(Value::as_u64)
                && items.len() as u64 > max
            {
                causes.push(Cause::new(
                    "FieldValueTooMany",
                    format!("Too many: {}: must have at most {max} items", items.len()),
                    path,
                ));
            }
            if let Some(s) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    validate_at(item, s, &format!("{path}[{i}]"), causes);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type": "object", "properties": {"spec": {"type": "object", "required": ["size"], "properties": {
            "size": {"type": "integer", "minimum": 1},
            "color": {"type": "string", "default": "blue", "enum": ["blue", "red"]},
            "config": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}})
    }

    #[test]
    fn prunes_unknown_fields_but_keeps_preserved_ones() {
        let mut obj = json!({"metadata": {"name": "a"}, "spec": {"size": 1, "bogus": 1, "config": {"free": 1}}, "extra": 1});
        let removed = prune(&mut obj, &schema());
        assert_eq!(removed, vec!["spec.bogus", "extra"]);
        assert_eq!(obj["spec"]["config"]["free"], 1);
    }

    #[test]
    fn defaults_and_validation_messages() {
        let mut obj = json!({"spec": {"size": 0}});
        apply_defaults(&mut obj, &schema());
        assert_eq!(obj["spec"]["color"], "blue");
        let causes = validate(&obj, &schema());
        assert_eq!(
            causes[0].message,
            "Invalid value: 0: spec.size in body should be greater than or equal to 1"
        );
        let causes = validate(
            &json!({"spec": {"size": "x", "color": "purple"}}),
            &schema(),
        );
        assert_eq!(
            causes[0].message,
            "Invalid value: \"string\": spec.size in body must be of type integer: \"string\""
        );
        assert_eq!(
            causes[1].message,
            "Unsupported value: \"purple\": supported values: \"blue\", \"red\""
        );
        let causes = validate(&json!({"spec": {}}), &schema());
        assert_eq!(
            (causes[0].field.as_str(), causes[0].message.as_str()),
            ("spec.size", "Required value")
        );
    }
}
