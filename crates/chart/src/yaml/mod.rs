//! YAML as Helm reads and writes it.
//!
//! Reading follows sigs.k8s.io/yaml over go-yaml v2: YAML 1.1 typing (`yes`/`on` are booleans,
//! `0x1F` and `017` integers, `1e3` a float, timestamps stay strings), anchors, aliases and
//! merge keys, non-string keys turned into strings, then the JSON step that makes every number
//! a float64. [`parse_yaml`] gives the typed tree before that step, [`parse_value`] and
//! [`parse_values`] the data Helm's templates see. Writing is [`to_yaml`], byte for byte
//! Helm's `toYaml`.

mod compose;
mod decode;
mod emit;
mod error;
mod key_order;
mod resolve;
mod values;

pub use compose::{MAX_DEPTH, Mark};
pub use decode::Yaml;
pub use emit::{EncodeError, marshal, to_yaml};
pub use error::{Stage, YamlError};
pub use key_order::{key_cmp, key_less};
pub use resolve::{Resolved, is_timestamp, resolve_plain};
pub use values::key_string;

use crate::data::{Data, Map};

/// Reads the first document of `src` into the YAML 1.1 typed tree (`Null` when empty).
pub fn parse_yaml(src: &str) -> Result<Yaml, YamlError> {
    match compose::compose_first(src)? {
        Some(node) => decode::decode(&node),
        None => Ok(Yaml::Null),
    }
}

/// Reads the first document of `src` as Helm data (`yaml.Unmarshal` into `interface{}`).
pub fn parse_value(src: &str) -> Result<Data, YamlError> {
    values::to_data(&parse_yaml(src)?)
}

/// Reads a values file, Chart.yaml or `fromYaml` input: the document must be a mapping
/// (or empty, which gives an empty map), as when Helm unmarshals into `map[string]interface{}`.
pub fn parse_values(src: &str) -> Result<Map, YamlError> {
    match parse_value(src)? {
        Data::Map(m) => Ok(m),
        Data::Null => Ok(Map::new()),
        other => Err(YamlError::whole(
            Stage::Unmarshal,
            format!(
                "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                values::json_kind(&other)
            ),
        )),
    }
}

/// Reads `fromYamlArray` input: the document must be a sequence (or empty).
pub fn parse_list(src: &str) -> Result<Vec<Data>, YamlError> {
    match parse_value(src)? {
        Data::List(items) => Ok(items),
        Data::Null => Ok(Vec::new()),
        other => Err(YamlError::whole(
            Stage::Unmarshal,
            format!(
                "json: cannot unmarshal {} into Go value of type []interface {{}}",
                values::json_kind(&other)
            ),
        )),
    }
}

/// [`parse_values`] for a named file: errors name the file.
pub fn parse_values_file(file: &str, src: &str) -> Result<Map, YamlError> {
    parse_values(src).map_err(|e| e.in_file(file))
}

#[cfg(test)]
mod tests;
