//! Helm's serialization functions (`toYaml`, `fromYaml`, `fromYamlArray`, `toJson`,
//! `fromJson`, `fromJsonArray`, their `must` forms) and Sprig's JSON ones that Helm keeps
//! (`toPrettyJson`, `toRawJson`, `mustFromJson`, …) and Helm's `toToml`/`fromToml`, on the
//! crate's Go-exact YAML, JSON and TOML modules.
//!
//! The `from…` functions never fail: a parse error becomes the value, under an `Error` key of
//! the returned map or as the only element of the returned list, exactly as Helm does.

use super::{FuncError, FuncMap, args};
use crate::data::Data;
use crate::value::{Map, Value};
use crate::{json, toml, yaml};

/// Registers the serialization functions.
pub fn install(funcs: &mut FuncMap) {
    funcs.add("toYaml", |a: &[Value]| {
        args::count(a, 1)?;
        Ok(Value::from(to_yaml(&a[0]).unwrap_or_default()))
    });
    funcs.add("mustToYaml", |a: &[Value]| {
        args::count(a, 1)?;
        to_yaml(&a[0]).map(Value::from).map_err(FuncError::failed)
    });
    funcs.add("fromYaml", |a: &[Value]| {
        args::count(a, 1)?;
        Ok(match yaml::parse_values(args::string(a, 0)?) {
            Ok(map) => Value::from_data(&Data::Map(map)),
            Err(e) => error_map(e.helm_message()),
        })
    });
    funcs.add("fromYamlArray", |a: &[Value]| {
        args::count(a, 1)?;
        Ok(match yaml::parse_list(args::string(a, 0)?) {
            Ok(items) => Value::from_data(&Data::List(items)),
            Err(e) => Value::list(vec![Value::from(e.helm_message())]),
        })
    });
    funcs.add("toJson", |a: &[Value]| {
        args::count(a, 1)?;
        Ok(Value::from(
            encode(&a[0], json::to_json).unwrap_or_default(),
        ))
    });
    funcs.add("mustToJson", |a: &[Value]| {
        args::count(a, 1)?;
        encode(&a[0], json::to_json)
            .map(Value::from)
            .map_err(FuncError::failed)
    });
    funcs.add("toPrettyJson", |a: &[Value]| {
        args::count(a, 1)?;
        Ok(Value::from(
            encode(&a[0], json::to_pretty_json).unwrap_or_default(),
        ))
    });
    funcs.add("mustToPrettyJson", |a: &[Value]| {
        args::count(a, 1)?;
        encode(&a[0], json::to_pretty_json)
            .map(Value::from)
            .map_err(FuncError::failed)
    });
    // Sprig's toRawJson panics where the others return "", so both forms fail alike.
    for name in ["toRawJson", "mustToRawJson"] {
        funcs.add(name, |a: &[Value]| {
            args::count(a, 1)?;
            encode(&a[0], json::to_raw_json)
                .map(Value::from)
                .map_err(FuncError::failed)
        });
    }
    funcs.add("fromJson", |a: &[Value]| {
        args::count(a, 1)?;
        Ok(match json::parse_object(args::string(a, 0)?) {
            Ok(map) => Value::from_data(&Data::Map(map)),
            Err(e) => error_map(e.message),
        })
    });
    funcs.add("fromJsonArray", |a: &[Value]| {
        args::count(a, 1)?;
        Ok(match json::parse_array(args::string(a, 0)?) {
            Ok(items) => Value::from_data(&Data::List(items)),
            Err(e) => Value::list(vec![Value::from(e.message)]),
        })
    });
    funcs.add("toToml", |a: &[Value]| {
        args::count(a, 1)?;
        let data = a[0].to_data().map_err(FuncError::failed)?;
        toml::to_toml(&data)
            .map(Value::from)
            .map_err(|e| FuncError::failed(e.0))
    });
    funcs.add("fromToml", |a: &[Value]| {
        args::count(a, 1)?;
        Ok(match toml::from_toml(args::string(a, 0)?) {
            Ok(map) => Value::from_data(&Data::Map(map)),
            Err(e) => error_map(e.to_string()),
        })
    });
    funcs.add("mustFromJson", |a: &[Value]| {
        args::count(a, 1)?;
        json::parse(args::string(a, 0)?)
            .map(|d| Value::from_data(&d))
            .map_err(|e| FuncError::failed(e.message))
    });
}

fn error_map(message: String) -> Value {
    let map = Map::new();
    map.insert("Error", Value::from(message));
    Value::Map(map)
}

/// sigs.k8s.io/yaml.Marshal without the final newline (Helm trims it).
fn to_yaml(v: &Value) -> Result<String, String> {
    let data = v.to_data()?;
    let mut text = yaml::marshal(&data).map_err(|e| e.to_string())?;
    if text.ends_with('\n') {
        text.pop();
    }
    Ok(text)
}

fn encode(
    v: &Value,
    encoder: fn(&Data) -> Result<String, json::JsonError>,
) -> Result<String, String> {
    let data = v.to_data()?;
    encoder(&data).map_err(|e| e.message)
}
