//! sigs.k8s.io/yaml's YAML → JSON → Go step: keys become strings, every number a float64,
//! NaN and infinities are refused as `encoding/json` refuses them.

use crate::formats::gofloat::{format_g, go_non_finite_name};
use crate::formats::strconv::quote;
use crate::formats::tree::{Data, Map};

use super::decode::Yaml;
use super::error::{Stage, YamlError};

/// Converts a typed YAML tree to the data Helm templates see.
pub fn to_data(y: &Yaml) -> Result<Data, YamlError> {
    Ok(match y {
        Yaml::Null => Data::Null,
        Yaml::Bool(b) => Data::Bool(*b),
        Yaml::Int(i) => Data::Float(*i as f64),
        Yaml::Uint(u) => Data::Float(*u as f64),
        Yaml::Float(f) if f.is_finite() => Data::Float(*f),
        Yaml::Float(f) => {
            return Err(YamlError::whole(
                Stage::ToJson,
                format!("json: unsupported value: {}", go_non_finite_name(*f)),
            ));
        }
        Yaml::String(s) => Data::String(s.clone()),
        Yaml::Seq(items) => Data::List(items.iter().map(to_data).collect::<Result<_, _>>()?),
        Yaml::Map(entries) => {
            let mut map = Map::with_capacity_and_hasher(entries.len(), Default::default());
            for (k, v) in entries {
                map.insert(key_string(k, v)?, to_data(v)?);
            }
            Data::Map(map)
        }
    })
}

impl Yaml {
    /// The text sigs.k8s.io/yaml gives a number or boolean bound for a Go `string` field
    /// (Chart.yaml's `version`, `appVersion`, `keywords`, `annotations`…): integers in
    /// decimal, floats with 32-bit precision (`1.10` becomes `1.1`). `None` for strings,
    /// which need no conversion, and for what it leaves alone: nulls, collections and
    /// infinities.
    pub fn scalar_text(&self) -> Option<String> {
        match self {
            Yaml::Int(i) => Some(i.to_string()),
            Yaml::Uint(u) => Some(u.to_string()),
            Yaml::Float(f) if f.is_finite() => Some(format_g(*f, true)),
            Yaml::Bool(b) => Some(b.to_string()),
            _ => None,
        }
    }
}

/// The JSON key for a YAML key, as sigs.k8s.io/yaml stringifies it.
pub fn key_string(key: &Yaml, value: &Yaml) -> Result<String, YamlError> {
    Ok(match key {
        Yaml::String(s) => s.clone(),
        Yaml::Int(i) => i.to_string(),
        Yaml::Bool(b) => b.to_string(),
        // go-yaml formats float keys with 32-bit precision here.
        Yaml::Float(f) => match format_g(*f, true).as_str() {
            "+Inf" => ".inf".to_owned(),
            "-Inf" => "-.inf".to_owned(),
            "NaN" => ".nan".to_owned(),
            s => s.to_owned(),
        },
        other => {
            let (ty, shown) = match other {
                Yaml::Uint(u) => ("uint64", format!("0x{u:x}")),
                _ => ("%!s(<nil>)", "<nil>".to_owned()),
            };
            return Err(YamlError::whole(
                Stage::ToJson,
                format!(
                    "unsupported map key of type: {ty}, key: {shown}, value: {}",
                    go_syntax(value)
                ),
            ));
        }
    })
}

/// Go's `%+#v` of a YAML value as the unsupported-key message prints it: `<nil>` for nil at
/// the top, [`go_sharp_v`] for anything else.
fn go_syntax(y: &Yaml) -> String {
    match y {
        Yaml::Null => "<nil>".to_owned(),
        other => go_sharp_v(other),
    }
}

/// Go's `%#v` of what go-yaml v2 decodes into `interface{}`: `[]interface {}{"a", 1}`,
/// `map[interface {}]interface {}{"k":true}` (keys in fmt's order), `interface {}(nil)`.
pub(super) fn go_sharp_v(y: &Yaml) -> String {
    match y {
        Yaml::Null => "interface {}(nil)".to_owned(),
        Yaml::Bool(b) => b.to_string(),
        Yaml::Int(i) => i.to_string(),
        Yaml::Uint(u) => format!("0x{u:x}"),
        Yaml::Float(f) => format_g(*f, false),
        Yaml::String(s) => quote(s),
        Yaml::Seq(items) => {
            let items: Vec<String> = items.iter().map(go_sharp_v).collect();
            format!("[]interface {{}}{{{}}}", items.join(", "))
        }
        Yaml::Map(entries) => {
            let mut entries: Vec<&(Yaml, Yaml)> = entries.iter().collect();
            entries.sort_by(|(a, _), (b, _)| fmt_key_order(a, b));
            let entries: Vec<String> = entries
                .iter()
                .map(|(k, v)| format!("{}:{}", go_sharp_v(k), go_sharp_v(v)))
                .collect();
            format!(
                "map[interface {{}}]interface {{}}{{{}}}",
                entries.join(", ")
            )
        }
    }
}

/// fmt's order of `interface{}` map keys: nil first, then by type (in the order helm v4.1.4's
/// binary places them: strings, integers, floats, booleans), then by value.
fn fmt_key_order(a: &Yaml, b: &Yaml) -> std::cmp::Ordering {
    let rank = |y: &Yaml| match y {
        Yaml::Null => 0,
        Yaml::String(_) => 1,
        Yaml::Int(_) => 2,
        Yaml::Uint(_) => 3,
        Yaml::Float(_) => 4,
        Yaml::Bool(_) => 5,
        Yaml::Seq(_) | Yaml::Map(_) => 6,
    };
    rank(a).cmp(&rank(b)).then_with(|| match (a, b) {
        (Yaml::String(x), Yaml::String(y)) => x.cmp(y),
        (Yaml::Int(x), Yaml::Int(y)) => x.cmp(y),
        (Yaml::Uint(x), Yaml::Uint(y)) => x.cmp(y),
        (Yaml::Float(x), Yaml::Float(y)) => x.total_cmp(y),
        (Yaml::Bool(x), Yaml::Bool(y)) => x.cmp(y),
        _ => std::cmp::Ordering::Equal,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_become_floats_and_keys_strings() {
        let y = Yaml::Map(vec![
            (Yaml::Int(1), Yaml::Int(2)),
            (Yaml::Float(1.5), Yaml::Uint(u64::MAX)),
            (Yaml::Bool(false), Yaml::Null),
        ]);
        let Data::Map(m) = to_data(&y).unwrap() else {
            panic!("not a map")
        };
        let keys: Vec<_> = m.keys().cloned().collect();
        assert_eq!(keys, ["1", "1.5", "false"]);
        assert_eq!(m["1"], Data::Float(2.0));
        assert_eq!(m["1.5"], Data::Float(u64::MAX as f64));
        assert_eq!(m["false"], Data::Null);
    }

    #[test]
    fn string_fields_reprint_numbers_like_chart_yaml_loading() {
        let text = |y: Yaml| y.scalar_text();
        assert_eq!(text(Yaml::Float(1.10)), Some("1.1".into()));
        assert_eq!(text(Yaml::Float(1000.0)), Some("1000".into()));
        assert_eq!(text(Yaml::Float(1e7)), Some("1e+07".into()));
        assert_eq!(text(Yaml::Float(1.123456789)), Some("1.1234568".into()));
        assert_eq!(text(Yaml::Int(123_456_789)), Some("123456789".into()));
        assert_eq!(text(Yaml::Uint(u64::MAX)), Some(u64::MAX.to_string()));
        assert_eq!(text(Yaml::Bool(false)), Some("false".into()));
        assert_eq!(text(Yaml::String("1.10".into())), None);
        assert_eq!(text(Yaml::Float(f64::INFINITY)), None);
        assert_eq!(text(Yaml::Null), None);
    }

    #[test]
    fn float_keys_use_single_precision_text() {
        assert_eq!(key_string(&Yaml::Float(0.1), &Yaml::Null).unwrap(), "0.1");
        assert_eq!(
            key_string(&Yaml::Float(f64::INFINITY), &Yaml::Null).unwrap(),
            ".inf"
        );
    }

    #[test]
    fn nan_values_and_null_keys_are_refused() {
        let err = to_data(&Yaml::Seq(vec![Yaml::Float(f64::NAN)])).unwrap_err();
        assert_eq!(
            err.helm_message(),
            "error converting YAML to JSON: json: unsupported value: NaN"
        );
        let err = to_data(&Yaml::Map(vec![(Yaml::Null, Yaml::Int(1))])).unwrap_err();
        assert!(
            err.reason
                .starts_with("unsupported map key of type: %!s(<nil>)")
        );
    }
}
