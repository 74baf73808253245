//! Helm's serialization functions (`toYaml`, `toYamlPretty`, `fromYaml`, `fromYamlArray`, `toJson`,
//! `fromJson`, `fromJsonArray`, their `must` forms) and Sprig's JSON ones that Helm keeps
//! (`toPrettyJson`, `toRawJson`, `mustFromJson`, …) and Helm's `toToml`/`fromToml`, on the
//! crate's Go-exact YAML, JSON and TOML modules.
//!
//! The `from…` functions never fail: a parse error becomes the value, under an `Error` key of
//! the returned map or as the only element of the returned list, exactly as Helm does.

use super::{FuncError, FuncMap, args};
use crate::engine::value::{Map, Value};
use crate::formats::tree::Data;
use crate::{formats::json, formats::toml, formats::yaml};

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
    funcs.add("toYamlPretty", |a: &[Value]| {
        args::count(a, 1)?;
        // Helm prints "" when the encoder fails.
        let text = a[0]
            .to_data()
            .map(|data| yaml::to_yaml_pretty(&data))
            .unwrap_or_default();
        Ok(Value::from(text))
    });
    funcs.add("toJson", |a: &[Value]| {
        args::count(a, 1)?;
        Ok(Value::from(encode(&a[0], COMPACT).unwrap_or_default()))
    });
    funcs.add("mustToJson", |a: &[Value]| {
        args::count(a, 1)?;
        encode(&a[0], COMPACT)
            .map(Value::from)
            .map_err(FuncError::failed)
    });
    funcs.add("toPrettyJson", |a: &[Value]| {
        args::count(a, 1)?;
        Ok(Value::from(encode(&a[0], PRETTY).unwrap_or_default()))
    });
    funcs.add("mustToPrettyJson", |a: &[Value]| {
        args::count(a, 1)?;
        encode(&a[0], PRETTY)
            .map(Value::from)
            .map_err(FuncError::failed)
    });
    // Sprig's toRawJson panics where the others return "", so both forms fail alike.
    for name in ["toRawJson", "mustToRawJson"] {
        funcs.add(name, |a: &[Value]| {
            args::count(a, 1)?;
            encode(&a[0], RAW)
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

/// `json.Marshal` (`toJson`).
const COMPACT: json::EncodeOptions = json::EncodeOptions {
    escape_html: true,
    pretty: false,
};
/// `json.MarshalIndent(v, "", "  ")` (`toPrettyJson`).
const PRETTY: json::EncodeOptions = json::EncodeOptions {
    escape_html: true,
    pretty: true,
};
/// An encoder without HTML escaping (`toRawJson`).
const RAW: json::EncodeOptions = json::EncodeOptions {
    escape_html: false,
    pretty: false,
};

/// Go's JSON of a value: maps with sorted keys, Go structs (Helm's `.Capabilities`) with their
/// fields in declaration order.
fn encode(v: &Value, opts: json::EncodeOptions) -> Result<String, String> {
    let mut out = String::new();
    write_json(&mut out, v, opts, 0)?;
    Ok(out)
}

fn write_json(
    out: &mut String,
    v: &Value,
    opts: json::EncodeOptions,
    depth: usize,
) -> Result<(), String> {
    let fields = match v {
        Value::Object(object) => object.json_fields(),
        _ => None,
    };
    let Some(fields) = fields else {
        let data = v.to_data()?;
        return json::write_value(out, &data, opts, depth).map_err(|e| e.message);
    };
    out.push('{');
    for (i, (name, field)) in fields.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        json::newline(out, opts, depth + 1);
        json::write_string(out, name, opts.escape_html);
        out.push(':');
        if opts.pretty {
            out.push(' ');
        }
        write_json(out, field, opts, depth + 1)?;
    }
    if !fields.is_empty() {
        json::newline(out, opts, depth);
    }
    out.push('}');
    Ok(())
}
