//! Decoding manifests and configuration files with errors that name the file and field.

use std::fmt;

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
    #[error("{source_name}: unknown field{} {}", if .paths.len() == 1 { "" } else { "s" }, .paths.join(", "))]
    UnknownFields {
        /// The file (or other source) the document came from.
        source_name: String,
        /// Paths of the unknown fields.
        paths: Vec<String>,
    },
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
    let mut unknown_fields = Vec::new();
    let mut record =
        |path: serde_ignored::Path<'_>| unknown_fields.push(FieldPath(&path).to_string());
    let tracked = serde_ignored::Deserializer::new(value, &mut record);
    let result = serde_path_to_error::deserialize::<_, T>(tracked);
    // kube's derived resources check `apiVersion` and `kind` without storing them (they
    // are written back from the type), so they show up as ignored though nothing is lost.
    unknown_fields.retain(|path| path != ".apiVersion" && path != ".kind");
    match result {
        Ok(value) => Ok(Decoded {
            value,
            unknown_fields,
        }),
        Err(error) => Err(DecodeError::Field {
            source_name: source_name.to_owned(),
            path: display_path(error.path()),
            message: error.into_inner().to_string(),
        }),
    }
}

/// Decodes a configuration document: like [`from_yaml`], but unknown fields are an error.
pub fn config_from_yaml<T: DeserializeOwned>(
    text: &str,
    source_name: &str,
) -> Result<T, DecodeError> {
    let decoded = from_yaml(text, source_name)?;
    if decoded.unknown_fields.is_empty() {
        Ok(decoded.value)
    } else {
        Err(DecodeError::UnknownFields {
            source_name: source_name.to_owned(),
            paths: decoded.unknown_fields,
        })
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
        assert_eq!(error.to_string(), "item.yaml: unknown field .spec.tpye");
    }

    #[test]
    fn syntax_errors_carry_the_position() {
        let error = from_yaml::<DeployItem>("spec: [", "broken.yaml").unwrap_err();
        let message = error.to_string();
        assert!(message.starts_with("broken.yaml: "), "{message}");
        assert!(message.contains("at line 2 column 1"), "{message}");
    }
}
