//! YAML as Helm reads and writes it.
//!
//! Reading follows sigs.k8s.io/yaml over go-yaml v2: YAML 1.1 typing (`yes`/`on` are booleans,
//! `0x1F` and `017` integers, `1e3` a float, timestamps stay strings), anchors, aliases and
//! merge keys, non-string keys turned into strings, then the JSON step that makes every number
//! a float64. [`parse_yaml`] gives the typed tree before that step, [`parse_value`] and
//! [`parse_values`] the data Helm's templates see. Writing is [`to_yaml`], byte for byte
//! Helm's `toYaml`.

mod block_end;
mod compose;
#[cfg(test)]
pub(crate) mod corpus;
mod decode;
mod documents;
mod emit;
mod error;
mod key_order;
pub(crate) mod plain;
mod repair;
mod resolve;
mod values;

pub use compose::{MAX_DEPTH, Mark};
pub use decode::{Yaml, plain_scalar};
pub use documents::split_manifests;
pub use emit::{EncodeError, marshal, marshal_for_every_reader, to_yaml, to_yaml_pretty};
pub use error::{Stage, YamlError};
pub use key_order::{key_cmp, key_less, key_less_v3};
pub use resolve::{Resolved, is_timestamp, resolve_plain};
pub use values::key_string;

use std::borrow::Cow;

use crate::formats::tree::{Data, Map};

/// Reads the first document of `src` into the YAML 1.1 typed tree (`Null` when empty).
pub fn parse_yaml(src: &str) -> Result<Yaml, YamlError> {
    if let Some(tree) = plain::read_plain(src) {
        return Ok(tree);
    }
    match compose::compose_first(src)? {
        Some(node) => decode::decode(node),
        None => Ok(Yaml::Null),
    }
}

/// Reads the first document of `src` as Helm data (`yaml.Unmarshal` into `interface{}`).
pub fn parse_value(src: &str) -> Result<Data, YamlError> {
    values::to_data(&parse_yaml(src)?)
}

/// Reads a values file or `fromYaml` input: the document must be a mapping
/// (or empty, which gives an empty map), as when Helm unmarshals into `map[string]interface{}`.
pub fn parse_values(src: &str) -> Result<Map, YamlError> {
    values_of(&parse_yaml(src)?)
}

/// A decoded document as [`parse_values`] reads it: a mapping, or nothing.
pub(crate) fn values_of(y: &Yaml) -> Result<Map, YamlError> {
    match values::to_data(y)? {
        Data::Map(m) => Ok(m),
        Data::Null => Ok(Map::default()),
        other => Err(YamlError::whole(
            Stage::Unmarshal,
            format!(
                "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                other.json_kind()
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
                other.json_kind()
            ),
        )),
    }
}

/// Reads a values file as Helm's `LoadValues` does: the text is cut into documents as
/// Kubernetes' YAML reader cuts it (see `split_documents`), each document is read with
/// [`parse_values`], and later documents are merged over earlier ones (nested maps merged,
/// anything else replaced). Errors name `file` and the line in the whole file.
pub fn parse_values_file(file: &str, src: &str) -> Result<Map, YamlError> {
    let mut values = Map::default();
    for (first_line, chunk) in split_documents(src).map_err(|e| e.in_file(file))? {
        let doc = parse_values(&chunk).map_err(|e| e.shifted(first_line).in_file(file))?;
        merge_maps(&mut values, doc);
    }
    Ok(values)
}

/// Kubernetes' `YAMLReader` over its `LineReader`: every line is ended by `\n` (a `\r\n` and
/// a missing last line break become one), and documents end at a line that starts with `---`
/// followed by nothing but whitespace or a comment (other text after it is an error); a
/// separator before any content stays part of the next document. Each document comes with the
/// number of lines before it. Text that needs none of this (the usual values file) is
/// borrowed whole.
fn split_documents(src: &str) -> Result<Vec<(usize, Cow<'_, str>)>, YamlError> {
    let has_separator =
        src.starts_with("---") || memchr::memmem::find(src.as_bytes(), b"\n---").is_some();
    if !has_separator && !src.contains('\r') && (src.is_empty() || src.ends_with('\n')) {
        return Ok(vec![(0, Cow::Borrowed(src))]);
    }
    let mut chunks = Vec::new();
    let mut buffer = String::new();
    let mut start = 0;
    let lines = src
        .split_inclusive('\n')
        .map(|l| match l.strip_suffix('\n') {
            Some(l) => l.strip_suffix('\r').unwrap_or(l),
            None => l,
        });
    for (index, line) in lines.enumerate() {
        if let Some(rest) = line.strip_prefix("---") {
            let rest = rest.trim();
            if !rest.is_empty() && !rest.starts_with('#') {
                return Err(YamlError::at(
                    Stage::Documents,
                    Mark {
                        line: index + 1,
                        column: 1,
                    },
                    &format!("invalid Yaml document separator: {rest}"),
                ));
            }
            // A separator ends a document and is dropped; before any content it is kept.
            if !buffer.is_empty() {
                chunks.push((start, Cow::Owned(std::mem::take(&mut buffer))));
                continue;
            }
        }
        if buffer.is_empty() {
            start = index;
        }
        buffer.push_str(line);
        buffer.push('\n');
    }
    if !buffer.is_empty() {
        chunks.push((start, Cow::Owned(buffer)));
    }
    Ok(chunks)
}

/// Helm's `MergeMaps`: values of `over` replace those of `base`, except that two maps merge.
fn merge_maps(base: &mut Map, over: Map) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(Data::Map(b)), Data::Map(o)) => merge_maps(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

#[cfg(test)]
mod tests;
