//! Conversion between template values and the plain data tree of the format layer
//! ([`crate::formats::tree::Data`]): values files and `fromYaml`/`fromJson` results come in as data,
//! `toYaml`/`toJson` go out through it.

use base64::Engine as _;

use super::{Map, Value};
use crate::formats::tree::{self, Data};

/// Go's `encoding/json` starts cycle detection this deep; a map nested deeper than this is
/// taken for a cycle, as `set $m "self" $m` makes one.
const MAX_DATA_DEPTH: usize = 1000;

impl Value {
    /// A template value from data, keeping Go's kinds: `Data::Int` becomes `int64`,
    /// `Data::Float` `float64`. (`Data::Uint`, only produced for YAML integers above
    /// `i64::MAX`, becomes the nearest `float64`, as the template value model has no `uint64`.)
    pub fn from_data(data: &Data) -> Value {
        match data {
            Data::Null => Value::Nil,
            Data::Bool(b) => Value::Bool(*b),
            Data::Int(i) => Value::Int64(*i),
            Data::Uint(u) => Value::Float(*u as f64),
            Data::Float(f) => Value::Float(*f),
            Data::String(s) => Value::from(s.as_str()),
            Data::List(items) => Value::list(items.iter().map(Value::from_data).collect()),
            Data::Map(map) => Value::from_data_map(map),
        }
    }

    /// [`Value::from_data`] of a data map, without first copying it into a [`Data`].
    pub fn from_data_map(map: &tree::Map) -> Value {
        Value::Map(Map::from_entries(
            map.iter().map(|(k, v)| (k.clone(), Value::from_data(v))),
        ))
    }

    /// The data Go's `json.Marshal` sees in this value: byte slices become base64 strings,
    /// objects give their own data. Fails where Go's encoder fails: cycles and objects
    /// that cannot be encoded.
    pub fn to_data(&self) -> Result<Data, String> {
        to_data_at(self, 0)
    }
}

fn to_data_at(value: &Value, depth: usize) -> Result<Data, String> {
    if depth > MAX_DATA_DEPTH {
        return Err(format!(
            "json: unsupported value: encountered a cycle via {}",
            value.type_name()
        ));
    }
    Ok(match value {
        Value::Nil => Data::Null,
        Value::Bool(b) => Data::Bool(*b),
        Value::Int(i) | Value::Int64(i) => Data::Int(*i),
        Value::Float(f) => Data::Float(*f),
        Value::String(s) => Data::String(s.to_string()),
        // Go's json.Marshal writes each invalid byte as U+FFFD.
        Value::RawString(b) => Data::String(String::from_utf8_lossy(b).into_owned()),
        Value::Bytes(bytes) => {
            Data::String(base64::engine::general_purpose::STANDARD.encode(bytes))
        }
        Value::List(items) => Data::List(
            items
                .iter()
                .map(|item| to_data_at(item, depth + 1))
                .collect::<Result<_, _>>()?,
        ),
        Value::Map(map) => {
            let mut out = tree::Map::default();
            for (key, item) in map.entries() {
                out.insert(key, to_data_at(&item, depth + 1)?);
            }
            Data::Map(out)
        }
        Value::Object(object) => object
            .to_data()
            .ok_or_else(|| format!("json: unsupported type: {}", object.type_name()))?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_round_trips_with_go_kinds() {
        let mut map = tree::Map::default();
        map.insert("i".into(), Data::Int(3));
        map.insert("f".into(), Data::Float(1.5));
        map.insert("l".into(), Data::List(vec![Data::Null, Data::Bool(true)]));
        let value = Value::from_data(&Data::Map(map.clone()));
        assert_eq!(value.to_go_string(), "map[f:1.5 i:3 l:[<nil> true]]");
        assert!(matches!(
            value.as_map().and_then(|m| m.get("i")),
            Some(Value::Int64(3))
        ));
        assert_eq!(value.to_data(), Ok(Data::Map(map)));
    }

    #[test]
    fn bytes_encode_as_base64_and_cycles_fail() {
        let bytes = Value::Bytes(b"hi".as_slice().into());
        assert_eq!(bytes.to_data(), Ok(Data::String("aGk=".into())));
        let map = Map::new();
        map.insert("self", Value::Map(map.clone()));
        let error = Value::Map(map.clone()).to_data().unwrap_err();
        assert!(error.contains("encountered a cycle"), "{error}");
        map.remove("self");
    }
}
