//! Crossings between the JSON values the API carries and the Go-typed values templates see,
//! and the YAML reading of rendered templates.
//!
//! Templates see integers as Go `int` and other numbers as `float64`, as Landscaper's imports
//! are typed when its tests build them; YAML read back from a rendered template goes through
//! the chart crate's Go-exact reader, so `yes`, `0777` and friends mean what they mean to
//! `sigs.k8s.io/yaml`.

use landscaper_chart::engine::value::{Map, Value};
use landscaper_chart::formats::tree::{Data, Map as DataMap};
use serde_json::Value as Json;

/// Whole floats below this are exact integers (2^53).
const MAX_EXACT_INTEGER: f64 = 9_007_199_254_740_992.0;

/// A template value for a JSON value.
pub fn to_template(json: &Json) -> Value {
    match json {
        Json::Null => Value::Nil,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => match n.as_i64() {
            Some(i) => Value::Int(i),
            None => Value::Float(n.as_f64().unwrap_or_default()),
        },
        Json::String(s) => Value::from(s.as_str()),
        Json::Array(items) => Value::list(items.iter().map(to_template).collect()),
        Json::Object(map) => Value::Map(Map::from_entries(
            map.iter().map(|(k, v)| (k.clone(), to_template(v))),
        )),
    }
}

/// The JSON value Go's `json.Marshal` makes of a template value.
pub fn from_template(value: &Value) -> Result<Json, String> {
    value.to_data().map(|data| from_data(&data))
}

/// The JSON value of a decoded YAML or JSON document.
pub fn from_data(data: &Data) -> Json {
    match data {
        Data::Null => Json::Null,
        Data::Bool(b) => Json::Bool(*b),
        Data::Int(i) => Json::from(*i),
        Data::Uint(u) => Json::from(*u),
        // Go decodes every number to float64 and encodes whole ones without a fraction.
        Data::Float(f) if f.fract() == 0.0 && f.abs() < MAX_EXACT_INTEGER => Json::from(*f as i64),
        Data::Float(f) => serde_json::Number::from_f64(*f).map_or(Json::Null, Json::Number),
        Data::String(s) => Json::String(s.clone()),
        Data::List(items) => Json::Array(items.iter().map(from_data).collect()),
        Data::Map(map) => {
            Json::Object(map.iter().map(|(k, v)| (k.clone(), from_data(v))).collect())
        }
    }
}

/// The decoded data of a JSON value.
pub fn to_data(json: &Json) -> Data {
    match json {
        Json::Null => Data::Null,
        Json::Bool(b) => Data::Bool(*b),
        Json::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => Data::Int(i),
            (None, Some(u)) => Data::Uint(u),
            _ => Data::Float(n.as_f64().unwrap_or_default()),
        },
        Json::String(s) => Data::String(s.clone()),
        Json::Array(items) => Data::List(items.iter().map(to_data).collect()),
        Json::Object(map) => Data::Map(
            map.iter()
                .map(|(k, v)| (k.clone(), to_data(v)))
                .collect::<DataMap>(),
        ),
    }
}

/// Reads one YAML (or JSON) document as `sigs.k8s.io/yaml` does; an empty document is null.
pub fn parse_yaml(text: &str) -> Result<Json, String> {
    landscaper_chart::formats::yaml::parse_value(text)
        .map(|data| from_data(&data))
        .map_err(|e| e.to_string())
}

/// YAML as Landscaper's `toYaml` writes it (`sigs.k8s.io/yaml`: keys sorted), without the
/// trailing newline.
pub fn to_yaml(json: &Json) -> Result<String, String> {
    landscaper_chart::formats::yaml::marshal(&to_data(json))
        .map(|text| text.trim_end_matches('\n').to_string())
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn integers_are_go_ints_and_round_trip() {
        let json = json!({"a": 1, "b": 1.5, "c": [true, null, "x"]});
        let value = to_template(&json);
        let Value::Map(map) = &value else {
            panic!("a map")
        };
        assert!(matches!(map.get("a"), Some(Value::Int(1))));
        assert!(matches!(map.get("b"), Some(Value::Float(f)) if f == 1.5));
        assert_eq!(from_template(&value).unwrap(), json);
    }

    #[test]
    fn yaml_is_read_as_go_reads_it() {
        assert_eq!(
            parse_yaml("a: yes\nb: '1'\nc: 2\n").unwrap(),
            json!({"a": true, "b": "1", "c": 2})
        );
        assert_eq!(parse_yaml("").unwrap(), Json::Null);
        assert_eq!(
            to_yaml(&json!({"b": 1, "a": [1]})).unwrap(),
            "a:\n- 1\nb: 1"
        );
    }
}
