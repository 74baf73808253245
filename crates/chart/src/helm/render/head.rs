//! What Helm reads of every rendered document: its `SimpleHead` (kind, name and annotations;
//! helm v4's `pkg/release/v1/util`), through sigs.k8s.io/yaml's `Unmarshal`. That is three
//! steps, each with its own rules, followed here on the typed YAML tree without building the
//! JSON data:
//!
//! 1. YAML to JSON-able values: keys become strings (some key types are refused), and a
//!    scalar bound for a `string` field becomes its text (`kind: 1` is the kind `"1"`).
//! 2. `json.Marshal`: keys sorted, and NaN or infinities refused where they stayed numbers.
//! 3. `json.Unmarshal` into the struct: keys taken in that sorted order and matched to fields
//!    exactly or case-insensitively (`Kind` is the kind), a later key overwriting an earlier
//!    one; `null` leaves a field alone but empties a map; the first value of the wrong type
//!    is the error.

use std::borrow::Cow;

use crate::formats::gofloat::format_g;
use crate::formats::yaml::{Stage, Yaml, YamlError, key_string};

/// The annotation that makes a document a hook.
pub const HOOK_ANNOTATION: &str = "helm.sh/hook";

/// The fields of a document Helm sorts and separates it by.
#[derive(Debug, Default, PartialEq)]
pub struct Head {
    /// `kind`, empty when absent.
    pub kind: String,
    /// The `helm.sh/hook` annotation, when the document has one (an empty one included).
    pub hook: Option<String>,
}

/// Go's type of `SimpleHead.metadata`, as its errors print it.
const METADATA_TYPE: &str = "struct { Name string \"json:\\\"name\\\"\"; Annotations map[string]string \"json:\\\"annotations\\\"\" }";

/// What a value is decoded into, which decides how step 1 converts it.
#[derive(Clone, Copy, PartialEq)]
enum Target {
    /// Not a field of the head: converted as it is.
    Other,
    /// A `string` field or map value: scalars become their text.
    String,
    /// `SimpleHead` itself.
    Head,
    /// `SimpleHead.metadata`.
    Metadata,
    /// `metadata.annotations`, a `map[string]string`.
    Annotations,
}

/// Reads the head of a decoded document as Helm does, or gives Helm's error.
pub fn read_head(doc: &Yaml) -> Result<Head, YamlError> {
    if check_keys(doc)? {
        first_non_finite(doc, Target::Head)?;
    }
    decode_head(doc).map_err(|reason| YamlError::whole(Stage::Unmarshal, reason))
}

/// Step 1's error, the first key that has no JSON form; otherwise whether a NaN or an
/// infinity is anywhere in the document (rare: only then does step 2 need the keys sorted).
fn check_keys(y: &Yaml) -> Result<bool, YamlError> {
    let mut non_finite = false;
    match y {
        Yaml::Float(f) => non_finite = !f.is_finite(),
        Yaml::Seq(items) => {
            for item in items {
                non_finite |= check_keys(item)?;
            }
        }
        Yaml::Map(entries) => {
            for (k, v) in entries {
                if !matches!(k, Yaml::String(_)) {
                    key_string(k, v)?;
                }
                non_finite |= check_keys(v)?;
            }
        }
        _ => {}
    }
    Ok(non_finite)
}

/// Step 2's error: the first NaN or infinity `json.Marshal` meets, in its sorted key order,
/// apart from those step 1 turned into text.
fn first_non_finite(y: &Yaml, target: Target) -> Result<(), YamlError> {
    match y {
        Yaml::Float(f) if !f.is_finite() && target != Target::String => Err(YamlError::whole(
            Stage::ToJson,
            format!("json: unsupported value: {}", format_g(*f, true)),
        )),
        Yaml::Seq(items) => items
            .iter()
            .try_for_each(|item| first_non_finite(item, Target::Other)),
        Yaml::Map(entries) => {
            let keyed = entries
                .iter()
                .map(|(k, v)| Ok((key_string(k, v)?, v)))
                .collect::<Result<Vec<_>, YamlError>>()?;
            for (key, value) in sorted_unique(keyed) {
                let field_target = match target {
                    Target::Head => match head_field(&key) {
                        Some(HeadField::Kind | HeadField::ApiVersion) => Target::String,
                        Some(HeadField::Metadata) => Target::Metadata,
                        None => Target::Other,
                    },
                    Target::Metadata => match metadata_field(&key) {
                        Some(MetadataField::Name) => Target::String,
                        Some(MetadataField::Annotations) => Target::Annotations,
                        None => Target::Other,
                    },
                    Target::Annotations => Target::String,
                    Target::Other | Target::String => Target::Other,
                };
                first_non_finite(value, field_target)?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Entries in `json.Marshal`'s key order, one per key: of keys that became the same text,
/// the later entry, as the later assignment to Go's map wins.
fn sorted_unique<K: AsRef<str>, V>(mut entries: Vec<(K, V)>) -> Vec<(K, V)> {
    // A stable sort keeps equal keys in document order, so the last of each run is the
    // later entry.
    entries.sort_by(|(a, _), (b, _)| a.as_ref().cmp(b.as_ref()));
    let mut unique: Vec<(K, V)> = Vec::with_capacity(entries.len());
    for entry in entries {
        match unique.last_mut() {
            Some(last) if last.0.as_ref() == entry.0.as_ref() => *last = entry,
            _ => unique.push(entry),
        }
    }
    unique
}

/// A field of `SimpleHead`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum HeadField {
    ApiVersion,
    Kind,
    Metadata,
}

/// A field of `SimpleHead.metadata`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum MetadataField {
    Name,
    Annotations,
}

/// The `SimpleHead` field an object key binds to, if any.
pub(super) fn head_field(key: &str) -> Option<HeadField> {
    [
        ("apiVersion", HeadField::ApiVersion),
        ("kind", HeadField::Kind),
        ("metadata", HeadField::Metadata),
    ]
    .into_iter()
    .find(|(name, _)| json_name_matches(key, name))
    .map(|(_, field)| field)
}

/// The `SimpleHead.metadata` field an object key binds to, if any.
pub(super) fn metadata_field(key: &str) -> Option<MetadataField> {
    [
        ("name", MetadataField::Name),
        ("annotations", MetadataField::Annotations),
    ]
    .into_iter()
    .find(|(name, _)| json_name_matches(key, name))
    .map(|(_, field)| field)
}

/// Whether `encoding/json` binds the object key `key` to the field named `name` (ASCII
/// letters): the same name but for case, where the Kelvin sign folds with `k` and the long s
/// with `s`, as Unicode's simple case folding has it.
fn json_name_matches(key: &str, name: &str) -> bool {
    let mut chars = key.chars();
    name.bytes().all(|n| {
        let upper = n.to_ascii_uppercase();
        match chars.next() {
            Some(c) if c.is_ascii() => c.to_ascii_uppercase() == upper as char,
            Some('\u{212A}') => upper == b'K',
            Some('\u{17F}') => upper == b'S',
            _ => false,
        }
    }) && chars.next().is_none()
}

/// The word `encoding/json` uses for a value's JSON type in its errors.
fn json_kind(y: &Yaml) -> &'static str {
    match y {
        Yaml::Null => "null",
        Yaml::Bool(_) => "bool",
        Yaml::Int(_) | Yaml::Uint(_) | Yaml::Float(_) => "number",
        Yaml::String(_) => "string",
        Yaml::Seq(_) => "array",
        Yaml::Map(_) => "object",
    }
}

fn field_error(value: &Yaml, field: &str, ty: &str) -> String {
    format!(
        "json: cannot unmarshal {} into Go struct field {field} of type {ty}",
        json_kind(value)
    )
}

/// A value bound for a `string` field after step 1: `Ok(None)` for `null`, which leaves the
/// field as it was.
fn string_field(value: &Yaml, field: &str) -> Result<Option<String>, String> {
    match value {
        Yaml::Null => Ok(None),
        Yaml::String(s) => Ok(Some(s.clone())),
        Yaml::Seq(_) | Yaml::Map(_) => Err(field_error(value, field, "string")),
        // Chart.yaml's loading refuses these; a document's head takes them as text.
        Yaml::Float(f) if !f.is_finite() => Ok(Some(format_g(*f, true))),
        scalar => Ok(scalar.scalar_text()),
    }
}

/// The entries of a mapping whose string keys bind to a field, in sorted key order. Other
/// keys cannot: no number or boolean is spelled like a field name.
fn fields_of<F>(
    entries: &[(Yaml, Yaml)],
    field: impl Fn(&str) -> Option<F>,
) -> Vec<(&str, F, &Yaml)> {
    let mut found: Vec<(&str, F, &Yaml)> = entries
        .iter()
        .filter_map(|(k, v)| match k {
            Yaml::String(key) => field(key).map(|f| (key.as_str(), f, v)),
            _ => None,
        })
        .collect();
    // The mapping holds each string key once, so no two are equal.
    found.sort_by(|a, b| a.0.cmp(b.0));
    found
}

/// Step 3.
fn decode_head(doc: &Yaml) -> Result<Head, String> {
    let entries = match doc {
        Yaml::Null => return Ok(Head::default()),
        Yaml::Map(entries) => entries,
        other => {
            return Err(format!(
                "json: cannot unmarshal {} into Go value of type util.SimpleHead",
                json_kind(other)
            ));
        }
    };
    let mut head = Head::default();
    for (_, field, value) in fields_of(entries, head_field) {
        match field {
            HeadField::ApiVersion => {
                string_field(value, "SimpleHead.apiVersion")?;
            }
            HeadField::Kind => {
                if let Some(kind) = string_field(value, "SimpleHead.kind")? {
                    head.kind = kind;
                }
            }
            HeadField::Metadata => match value {
                Yaml::Null => {}
                Yaml::Map(entries) => decode_metadata(entries, &mut head.hook)?,
                other => {
                    return Err(field_error(other, "SimpleHead.metadata", METADATA_TYPE));
                }
            },
        }
    }
    Ok(head)
}

/// Decodes one `metadata` object into what earlier ones left (`hook`): Go decodes a repeated
/// field into the same struct.
fn decode_metadata(entries: &[(Yaml, Yaml)], hook: &mut Option<String>) -> Result<(), String> {
    // The struct is anonymous: Go's errors name its fields after an empty type name.
    for (_, field, value) in fields_of(entries, metadata_field) {
        match field {
            MetadataField::Name => {
                string_field(value, ".metadata.name")?;
            }
            MetadataField::Annotations => match value {
                // `null` empties the map.
                Yaml::Null => *hook = None,
                Yaml::Map(annotations) => {
                    let keyed = annotations
                        .iter()
                        .map(|(k, v)| match k {
                            Yaml::String(s) => Ok((Cow::Borrowed(s.as_str()), v)),
                            other => key_string(other, v).map(|s| (Cow::Owned(s), v)),
                        })
                        .collect::<Result<Vec<_>, _>>()
                        .map_err(|e| e.reason)?;
                    for (key, value) in sorted_unique(keyed) {
                        // A `null` value is stored as the empty string.
                        let text = string_field(value, ".metadata.annotations")?;
                        if key == HOOK_ANNOTATION {
                            *hook = Some(text.unwrap_or_default());
                        }
                    }
                }
                other => {
                    return Err(field_error(
                        other,
                        ".metadata.annotations",
                        "map[string]string",
                    ));
                }
            },
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::yaml::parse_yaml;

    fn head(doc: &str) -> Result<Head, String> {
        read_head(&parse_yaml(doc).unwrap()).map_err(|e| e.helm_message())
    }

    fn kind(doc: &str) -> String {
        head(doc).unwrap().kind
    }

    fn hook(doc: &str) -> Option<String> {
        head(doc).unwrap().hook
    }

    fn unmarshal_error(doc: &str) -> String {
        head(doc)
            .unwrap_err()
            .strip_prefix("error unmarshaling JSON: while decoding JSON: json: cannot unmarshal ")
            .unwrap_or_else(|| panic!("{doc:?}"))
            .to_owned()
    }

    #[test]
    fn fields_match_their_names_whatever_the_case() {
        assert_eq!(kind("Kind: Pod"), "Pod");
        assert_eq!(kind("KIND: Pod"), "Pod");
        assert_eq!(kind("\u{212A}ind: Pod"), "Pod");
        // Only simple case folding: a dotless i is not an i.
        assert_eq!(kind("k\u{131}nd: Pod"), "");
        assert_eq!(
            hook("Metadata:\n  ANNOTATIONS:\n    helm.sh/hook: test"),
            Some("test".into())
        );
        // Map keys are not folded.
        assert_eq!(
            hook("metadata:\n  annotations:\n    Helm.sh/hook: test"),
            None
        );
    }

    #[test]
    fn keys_are_taken_in_sorted_order_the_last_one_winning() {
        // `Kind` sorts before `kind`, whatever their order in the document.
        assert_eq!(kind("kind: b\nKind: a"), "b");
        assert_eq!(kind("Kind: a\nkind: b"), "b");
        assert_eq!(kind("Kind: a\nkind: null"), "a");
        // `Annotations` first sets the hook, then `annotations: null` empties the map.
        assert_eq!(
            hook("metadata:\n  annotations: null\n  Annotations:\n    helm.sh/hook: pre-install"),
            None
        );
        assert_eq!(
            hook("metadata:\n  annotations:\n    helm.sh/hook: pre-install\n  Annotations: null"),
            Some("pre-install".into())
        );
        // Two `metadata` objects fill the same struct.
        assert_eq!(
            hook("Metadata:\n  annotations:\n    helm.sh/hook: test\nmetadata:\n  name: a"),
            Some("test".into())
        );
    }

    #[test]
    fn scalars_for_string_fields_become_their_text() {
        assert_eq!(kind("kind: 1"), "1");
        assert_eq!(kind("kind: 1.10"), "1.1");
        assert_eq!(kind("kind: 0x10"), "16");
        assert_eq!(kind("kind: yes"), "true");
        assert_eq!(kind("kind: .inf"), "+Inf");
        assert_eq!(kind("kind: .nan"), "NaN");
        assert_eq!(kind("metadata:\n  name: .nan"), "");
        assert_eq!(
            hook("metadata:\n  annotations:\n    helm.sh/hook: 1"),
            Some("1".into())
        );
        assert_eq!(
            hook("metadata:\n  annotations:\n    helm.sh/hook: null"),
            Some("".into())
        );
        assert_eq!(hook("metadata:\n  annotations:\n    a: .nan"), None);
    }

    #[test]
    fn values_of_the_wrong_type_name_the_field_go_names() {
        assert_eq!(
            unmarshal_error("kind: [1]"),
            "array into Go struct field SimpleHead.kind of type string"
        );
        // apiVersion sorts first.
        assert_eq!(
            unmarshal_error("kind: {a: 1}\napiVersion: [1]"),
            "array into Go struct field SimpleHead.apiVersion of type string"
        );
        assert_eq!(
            unmarshal_error("metadata: [1]"),
            format!("array into Go struct field SimpleHead.metadata of type {METADATA_TYPE}")
        );
        assert_eq!(
            unmarshal_error("metadata:\n  name: [1]"),
            "array into Go struct field .metadata.name of type string"
        );
        assert_eq!(
            unmarshal_error("metadata:\n  annotations: 5"),
            "number into Go struct field .metadata.annotations of type map[string]string"
        );
        assert_eq!(
            unmarshal_error("metadata:\n  annotations:\n    b: [1]\n    a: {x: 1}"),
            "object into Go struct field .metadata.annotations of type string"
        );
        // A later duplicate replaces the value of the wrong type.
        assert_eq!(
            hook("metadata:\n  annotations:\n    a: [1]\n    a: x"),
            None
        );
        assert_eq!(
            unmarshal_error("- a"),
            "array into Go value of type util.SimpleHead"
        );
        assert_eq!(
            unmarshal_error("just text"),
            "string into Go value of type util.SimpleHead"
        );
        assert_eq!(head("").unwrap(), Head::default());
    }

    #[test]
    fn conversion_errors_come_before_type_errors() {
        assert_eq!(
            head("kind: [1]\nspec:\n  a: .nan").unwrap_err(),
            "error converting YAML to JSON: json: unsupported value: NaN"
        );
        // In sorted order: `a` before `b`.
        assert_eq!(
            head("b: -.inf\na: .inf").unwrap_err(),
            "error converting YAML to JSON: json: unsupported value: +Inf"
        );
        // A NaN overwritten by a later duplicate key never reaches JSON.
        assert_eq!(kind("a: .nan\na: x\nkind: b"), "b");
        assert!(
            head("kind: [1]\nspec:\n  ~: a")
                .unwrap_err()
                .starts_with("error converting YAML to JSON: unsupported map key of type"),
        );
    }
}
