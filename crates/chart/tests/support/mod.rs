//! Shared helpers for the engine's integration tests.

use landscaper_chart::engine::value::{Map, Value};

/// Converts JSON test data to template values the way Helm sees values: every number is a
/// `float64`.
pub fn from_json(json: &serde_json::Value) -> Value {
    match json {
        serde_json::Value::Null => Value::Nil,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        serde_json::Value::String(s) => Value::from(s.as_str()),
        serde_json::Value::Array(items) => Value::list(items.iter().map(from_json).collect()),
        serde_json::Value::Object(entries) => Value::Map(Map::from_entries(
            entries.iter().map(|(k, v)| (k.clone(), from_json(v))),
        )),
    }
}

/// Parses JSON text into template values.
#[allow(dead_code, reason = "each test binary uses a subset of the helpers")]
pub fn data(json: &str) -> Value {
    let parsed: serde_json::Value = serde_json::from_str(json).unwrap_or(serde_json::Value::Null);
    from_json(&parsed)
}
