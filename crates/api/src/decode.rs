//! Decoding manifests and configuration files with errors that name the file and field.

mod did_you_mean;

use std::fmt;

use did_you_mean::Segment;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A decoded value and the fields of the input that no field of the type took.
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded<T> {
    /// The decoded value.
    pub value: T,
    /// Paths (`.spec.foo`, `.items[2].bar`) of input fields the type does not know.
    pub unknown_fields: Vec<String>,
}

/// Why a document could not be decoded.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DecodeError {
    /// The text is not valid YAML or JSON.
    #[error("{source_name}: {message}")]
    Syntax {
        /// The file (or other source) the text came from.
        source_name: String,
        /// What is wrong, with line and column where known.
        message: String,
    },
    /// A field has the wrong type or value.
    #[error("{source_name}: field {path}: {message}")]
    Field {
        /// The file (or other source) the document came from.
        source_name: String,
        /// Path of the field, e.g. `.spec.deployItems[0].type`.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// The configuration has fields this version does not know; they are rejected rather
    /// than ignored, so a typo cannot silently change behaviour.
    #[error("{source_name}: {}", unknown_fields_message(.fields))]
    UnknownFields {
        /// The file (or other source) the document came from.
        source_name: String,
        /// The unknown fields.
        fields: Vec<UnknownField>,
    },
}

/// A field of the input that the type does not know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownField {
    /// Its path, e.g. `.spec.tpye`.
    pub path: String,
    /// The known field of the same object it was probably meant to be (see
    /// [`did_you_mean`](self) for the rule).
    pub did_you_mean: Option<String>,
}

impl fmt::Display for UnknownField {
    /// The path, with the field probably meant in parentheses: `.spec.tpye (did you mean "type"?)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.did_you_mean {
            Some(meant) => write!(f, "{} (did you mean {meant:?}?)", self.path),
            None => f.write_str(&self.path),
        }
    }
}

/// `unknown field .a, did you mean "b"?` for one field; for several, each path with its
/// suggestion in parentheses.
fn unknown_fields_message(fields: &[UnknownField]) -> String {
    if let [field] = fields {
        return match &field.did_you_mean {
            Some(meant) => format!("unknown field {}, did you mean {meant:?}?", field.path),
            None => format!("unknown field {}", field.path),
        };
    }
    let listed: Vec<String> = fields.iter().map(UnknownField::to_string).collect();
    format!("unknown fields {}", listed.join(", "))
}

/// Splits YAML text into its documents, dropping empty ones.
pub fn yaml_documents(text: &str, source_name: &str) -> Result<Vec<Value>, DecodeError> {
    let mut documents = Vec::new();
    for document in serde_yaml_ng::Deserializer::from_str(text) {
        let value: Value =
            serde::Deserialize::deserialize(document).map_err(|error| DecodeError::Syntax {
                source_name: source_name.to_owned(),
                message: error.to_string(),
            })?;
        if !value.is_null() {
            documents.push(value);
        }
    }
    Ok(documents)
}

/// Decodes a single YAML (or JSON) document into `T`, tolerating unknown fields as
/// upstream's Go decoder does and reporting them.
pub fn from_yaml<T: DeserializeOwned>(
    text: &str,
    source_name: &str,
) -> Result<Decoded<T>, DecodeError> {
    let value: Value = serde_yaml_ng::from_str(text).map_err(|error| DecodeError::Syntax {
        source_name: source_name.to_owned(),
        message: error.to_string(),
    })?;
    from_value(value, source_name)
}

/// Decodes a JSON value into `T`, tolerating and reporting unknown fields.
pub fn from_value<T: DeserializeOwned>(
    value: Value,
    source_name: &str,
) -> Result<Decoded<T>, DecodeError> {
    let (value, unknown) = decode_tracking(value, source_name)?;
    Ok(Decoded {
        value,
        unknown_fields: unknown.into_iter().map(|(path, _)| path).collect(),
    })
}

/// An unknown field's path, as text and as segments.
type UnknownPath = (String, Vec<Segment>);

/// Decodes `value` into `T`; returns it with the unknown fields' paths.
fn decode_tracking<T: DeserializeOwned>(
    value: Value,
    source_name: &str,
) -> Result<(T, Vec<UnknownPath>), DecodeError> {
    let mut unknown = Vec::new();
    let mut record = |path: serde_ignored::Path<'_>| {
        unknown.push((FieldPath(&path).to_string(), segments(&path)));
    };
    let tracked = serde_ignored::Deserializer::new(value, &mut record);
    let result = serde_path_to_error::deserialize::<_, T>(tracked);
    // kube's derived resources check `apiVersion` and `kind` without storing them (they
    // are written back from the type), so they show up as ignored though nothing is lost.
    unknown.retain(|(path, _)| path != ".apiVersion" && path != ".kind");
    match result {
        Ok(value) => Ok((value, unknown)),
        Err(error) => Err(DecodeError::Field {
            source_name: source_name.to_owned(),
            path: display_path(error.path()),
            message: error.into_inner().to_string(),
        }),
    }
}

/// Decodes a JSON value into `T` like [`from_value`], naming for each unknown field the
/// known field it was probably meant to be.
pub fn from_value_explained<T: DeserializeOwned + JsonSchema>(
    value: Value,
    source_name: &str,
) -> Result<(T, Vec<UnknownField>), DecodeError> {
    let (value, unknown) = decode_tracking(value, source_name)?;
    if unknown.is_empty() {
        return Ok((value, Vec::new()));
    }
    let schema = schemars::SchemaGenerator::default().into_root_schema_for::<T>();
    let schema = schema.as_value();
    let fields = unknown
        .into_iter()
        .map(|(path, segments)| UnknownField {
            did_you_mean: did_you_mean::suggestion(schema, &segments),
            path,
        })
        .collect();
    Ok((value, fields))
}

/// Decodes a configuration document: like [`from_yaml`], but unknown fields are an error
/// that names, for each, the known field it was probably meant to be.
pub fn config_from_yaml<T: DeserializeOwned + JsonSchema>(
    text: &str,
    source_name: &str,
) -> Result<T, DecodeError> {
    let value: Value = serde_yaml_ng::from_str(text).map_err(|error| DecodeError::Syntax {
        source_name: source_name.to_owned(),
        message: error.to_string(),
    })?;
    let (value, fields) = from_value_explained(value, source_name)?;
    if fields.is_empty() {
        return Ok(value);
    }
    Err(DecodeError::UnknownFields {
        source_name: source_name.to_owned(),
        fields,
    })
}

/// The segments of a `serde_ignored` path, root first.
fn segments(path: &serde_ignored::Path<'_>) -> Vec<Segment> {
    use serde_ignored::Path;
    match path {
        Path::Root => Vec::new(),
        Path::Seq { parent, .. } => {
            let mut out = segments(parent);
            out.push(Segment::Index);
            out
        }
        Path::Map { parent, key } => {
            let mut out = segments(parent);
            out.push(Segment::Key(key.clone()));
            out
        }
        Path::Some { parent }
        | Path::NewtypeStruct { parent }
        | Path::NewtypeVariant { parent } => segments(parent),
    }
}

fn display_path(path: &serde_path_to_error::Path) -> String {
    let mut out = String::new();
    for segment in path.iter() {
        match segment {
            serde_path_to_error::Segment::Seq { index } => out.push_str(&format!("[{index}]")),
            serde_path_to_error::Segment::Map { key } => {
                out.push('.');
                out.push_str(key);
            }
            serde_path_to_error::Segment::Enum { variant } => {
                out.push('.');
                out.push_str(variant);
            }
            serde_path_to_error::Segment::Unknown => out.push_str(".?"),
        }
    }
    if out.is_empty() { ".".to_owned() } else { out }
}

/// Formats a `serde_ignored` path as `.a.b[0].c`.
struct FieldPath<'a, 'b>(&'a serde_ignored::Path<'b>);

impl fmt::Display for FieldPath<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use serde_ignored::Path;
        match self.0 {
            Path::Root => Ok(()),
            Path::Seq { parent, index } => write!(f, "{}[{index}]", FieldPath(parent)),
            Path::Map { parent, key } => write!(f, "{}.{key}", FieldPath(parent)),
            Path::Some { parent }
            | Path::NewtypeStruct { parent }
            | Path::NewtypeVariant { parent } => {
                write!(f, "{}", FieldPath(parent))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::DeployItem;

    #[test]
    fn wrong_type_names_file_and_field_path() {
        let text = "apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: DeployItem\nmetadata: {name: a}\nspec:\n  type: x\n  updateOnChangeOnly: [1]\n";
        let error = from_yaml::<DeployItem>(text, "item.yaml").unwrap_err();
        assert_eq!(
            error.to_string(),
            "item.yaml: field .spec.updateOnChangeOnly: invalid type: sequence, expected a boolean"
        );
    }

    #[test]
    fn unknown_fields_are_reported_not_fatal() {
        let text = "apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: DeployItem\nmetadata: {name: a}\nspec:\n  type: x\n  tpye: y\n";
        let decoded = from_yaml::<DeployItem>(text, "item.yaml").unwrap();
        assert_eq!(decoded.unknown_fields, vec![".spec.tpye".to_owned()]);
        let error = config_from_yaml::<DeployItem>(text, "item.yaml").unwrap_err();
        assert_eq!(
            error.to_string(),
            "item.yaml: unknown field .spec.tpye, did you mean \"type\"?"
        );
    }

    #[test]
    fn unknown_fields_name_the_field_probably_meant() {
        use crate::config::AgentConfiguration;
        let text = "name: east\ntargetSelectors:\n- annotations:\n  - key: a\n    operation: \"=\"\n    values: [b]\nhartbeatPeriod: 1m\nsomethingElse: 1\n";
        let error = config_from_yaml::<AgentConfiguration>(text, "agent.yaml").unwrap_err();
        assert_eq!(
            error.to_string(),
            "agent.yaml: unknown fields .targetSelectors[0].annotations[0].operation (did you mean \"operator\"?), .hartbeatPeriod (did you mean \"heartbeatPeriod\"?), .somethingElse"
        );
    }

    #[test]
    fn syntax_errors_carry_the_position() {
        let error = from_yaml::<DeployItem>("spec: [", "broken.yaml").unwrap_err();
        let message = error.to_string();
        assert!(message.starts_with("broken.yaml: "), "{message}");
        assert!(message.contains("at line 2 column 1"), "{message}");
    }
}
