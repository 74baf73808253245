//! `values.schema.json` validation (JSON Schema draft 7 and 2020-12, chosen by `$schema`),
//! for the chart and every subchart on its own table, with errors naming the values path in
//! the words Helm v4 prints (`- at '/age': minimum: got -5, want 0`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use jsonschema::Draft;
use jsonschema::error::{TypeKind, ValidationErrorKind};
use serde_json::Value as Json;

use crate::chart::Chart;
use crate::data::{Data, Map};
use crate::value::Value;

/// What the `values.schema.json` of one chart (the root or a subchart) rejects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChartViolations {
    /// The chart's name, as Helm's report names it.
    pub chart: String,
    /// The schema file from the root chart's folder (`demo/charts/sub/values.schema.json`).
    pub file: String,
    /// [`validate_single_schema`]'s report: one `- at 'PATH': MESSAGE` line per violation.
    pub report: String,
}

/// Every chart whose values schema failed, root chart first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaViolations(pub Vec<ChartViolations>);

impl SchemaViolations {
    /// All violations on one line, each naming the schema file and the values path:
    /// `demo/values.schema.json: at '/age': minimum: got -5, want 0; …`.
    pub fn one_line(&self) -> String {
        self.0
            .iter()
            .flat_map(|c| {
                c.report
                    .lines()
                    .filter(|l| !l.trim().is_empty())
                    .map(move |l| format!("{}: {}", c.file, l.trim_start_matches("- ")))
            })
            .collect::<Vec<_>>()
            .join("; ")
    }
}

impl std::fmt::Display for SchemaViolations {
    /// Helm v4's report: per failing chart its name, then its violations.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for c in &self.0 {
            write!(f, "{}:\n{}", c.chart, c.report)?;
        }
        Ok(())
    }
}

/// Validates `values` against the schemas of `chart` and its subcharts; the error lists every
/// violation under the chart whose schema failed.
pub fn validate_against_schema(chart: &Chart, values: &Map) -> Result<(), SchemaViolations> {
    let mut found = Vec::new();
    collect_violations(chart, chart.name(), values, &mut found);
    if found.is_empty() {
        Ok(())
    } else {
        Err(SchemaViolations(found))
    }
}

/// Adds the violations of `chart` (in folder `folder`) and its subcharts to `found`.
fn collect_violations(chart: &Chart, folder: &str, values: &Map, found: &mut Vec<ChartViolations>) {
    if let Some(schema) = &chart.schema
        && let Err(report) = validate_single_schema(values, schema)
    {
        found.push(ChartViolations {
            chart: chart.name().to_string(),
            file: format!("{folder}/values.schema.json"),
            report,
        });
    }
    for sub in &chart.dependencies {
        let sub_values = match values.get(sub.name()) {
            Some(Data::Map(m)) => m.clone(),
            _ => Map::default(),
        };
        let sub_folder = format!("{folder}/charts/{}", sub.name());
        collect_violations(sub, &sub_folder, &sub_values, found);
    }
}

/// Starts building, on a thread of its own, the validator of the meta-schema `schema` names
/// (about 2 ms, once per process), which [`validate_single_schema`] would otherwise build when
/// it first checks a schema; the validation then finds it ready, or waits for it. Only the
/// first schema offered in a process starts it, which may be a subchart's.
pub(crate) fn prepare_meta_schema(schema: Arc<[u8]>) {
    static STARTED: AtomicBool = AtomicBool::new(false);
    if STARTED.swap(true, Ordering::Relaxed) {
        return;
    }
    // Without a thread the validation builds it as before.
    let _ = std::thread::Builder::new()
        .name("schema-meta".to_string())
        .spawn(move || build_meta_validator(&schema));
}

/// Builds the meta-schema validator that validating `schema` uses, as `jsonschema` picks it:
/// by `$schema`, 2020-12 when that is missing, and none for `true`, `false`, `{}` or text that
/// is not JSON. A `$schema` it does not know fails the validation; 2020-12's is built for it
/// here, in vain but without fetching anything (`jsonschema::meta` would try, and panic).
fn build_meta_validator(schema: &[u8]) {
    let Ok(schema) = serde_json::from_slice::<Json>(schema) else {
        return;
    };
    if schema.is_boolean() || schema.as_object().is_some_and(|o| o.is_empty()) {
        return;
    }
    let _ = match Draft::default().detect(&schema) {
        Draft::Draft4 => jsonschema::draft4::meta::validator(),
        Draft::Draft6 => jsonschema::draft6::meta::validator(),
        Draft::Draft7 => jsonschema::draft7::meta::validator(),
        Draft::Draft201909 => jsonschema::draft201909::meta::validator(),
        _ => jsonschema::draft202012::meta::validator(),
    };
}

/// Validates `values` against one schema document; the error is one `- at 'PATH': MESSAGE`
/// line per violation, ending in a newline.
pub fn validate_single_schema(values: &Map, schema: &[u8]) -> Result<(), String> {
    let schema: Json =
        serde_json::from_slice(schema).map_err(|e| format!("values.schema.json: {e}\n"))?;
    let validator = jsonschema::validator_for(&schema)
        .map_err(|e| format!("values.schema.json: invalid schema: {e}\n"))?;
    let instance = to_json(&Data::Map(values.clone()));
    let mut lines: Vec<(String, String)> = validator
        .iter_errors(&instance)
        .map(|e| (e.instance_path().to_string(), message(&e)))
        .collect();
    if lines.is_empty() {
        return Ok(());
    }
    lines.sort_by(|a, b| a.0.cmp(&b.0));
    let mut out = String::new();
    for (path, message) in lines {
        out.push_str(&format!("- at '{path}': {message}\n"));
    }
    Err(out)
}

fn go(v: &Json) -> String {
    match v {
        Json::String(s) => format!("'{s}'"),
        other => Value::from_data(&from_json(other)).to_go_string(),
    }
}

fn plain(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        other => go(other),
    }
}

fn json_type(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "boolean",
        Json::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Json::Number(_) => "number",
        Json::String(_) => "string",
        Json::Array(_) => "array",
        Json::Object(_) => "object",
    }
}

fn quoted_list(items: &[String]) -> String {
    items
        .iter()
        .map(|s| format!("'{s}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The message santhosh-tekuri/jsonschema (Helm v4's validator) gives for a violation.
fn message(e: &jsonschema::ValidationError<'_>) -> String {
    let got = e.instance();
    let got = got.as_ref();
    match e.kind() {
        ValidationErrorKind::Required { property } => format!("missing property {}", go(property)),
        ValidationErrorKind::Type { kind } => {
            let want = match kind {
                TypeKind::Single(t) => t.to_string(),
                TypeKind::Multiple(set) => set
                    .iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(" or "),
            };
            format!("got {}, want {want}", json_type(got))
        }
        ValidationErrorKind::Minimum { limit } => {
            format!("minimum: got {}, want {}", plain(got), plain(limit))
        }
        ValidationErrorKind::Maximum { limit } => {
            format!("maximum: got {}, want {}", plain(got), plain(limit))
        }
        ValidationErrorKind::ExclusiveMinimum { limit } => {
            format!(
                "exclusiveMinimum: got {}, want {}",
                plain(got),
                plain(limit)
            )
        }
        ValidationErrorKind::ExclusiveMaximum { limit } => {
            format!(
                "exclusiveMaximum: got {}, want {}",
                plain(got),
                plain(limit)
            )
        }
        ValidationErrorKind::MinLength { limit } => format!(
            "minLength: got {}, want {limit}",
            got.as_str().map_or(0, |s| s.chars().count())
        ),
        ValidationErrorKind::MaxLength { limit } => format!(
            "maxLength: got {}, want {limit}",
            got.as_str().map_or(0, |s| s.chars().count())
        ),
        ValidationErrorKind::MinItems { limit } => format!(
            "minItems: got {}, want {limit}",
            got.as_array().map_or(0, Vec::len)
        ),
        ValidationErrorKind::MaxItems { limit } => format!(
            "maxItems: got {}, want {limit}",
            got.as_array().map_or(0, Vec::len)
        ),
        ValidationErrorKind::Enum { options } => {
            let list: Vec<String> = options
                .as_array()
                .map(|a| a.iter().map(go).collect())
                .unwrap_or_default();
            format!("value must be one of {}", list.join(", "))
        }
        ValidationErrorKind::Constant { expected_value } => {
            format!("value must be {}", go(expected_value))
        }
        ValidationErrorKind::Pattern { pattern } => {
            format!("{} does not match pattern '{pattern}'", go(got))
        }
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            format!(
                "additional properties {} not allowed",
                quoted_list(unexpected)
            )
        }
        ValidationErrorKind::FalseSchema => "false schema".to_string(),
        ValidationErrorKind::Format { format } => format!("{} is not valid {format}", go(got)),
        _ => e.to_string(),
    }
}

/// Values as JSON for the validator; whole floats become integers so `type: integer` holds
/// for them, as for Helm's `json.Number` values.
fn to_json(d: &Data) -> Json {
    match d {
        Data::Null => Json::Null,
        Data::Bool(b) => Json::Bool(*b),
        Data::Int(i) => Json::from(*i),
        Data::Uint(u) => Json::from(*u),
        Data::Float(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Json::from(*f as i64),
        Data::Float(f) => serde_json::Number::from_f64(*f).map_or(Json::Null, Json::Number),
        Data::String(s) => Json::String(s.clone()),
        Data::List(items) => Json::Array(items.iter().map(to_json).collect()),
        Data::Map(m) => Json::Object(m.iter().map(|(k, v)| (k.clone(), to_json(v))).collect()),
    }
}

fn from_json(v: &Json) -> Data {
    match v {
        Json::Null => Data::Null,
        Json::Bool(b) => Data::Bool(*b),
        Json::Number(n) => Data::Float(n.as_f64().unwrap_or(0.0)),
        Json::String(s) => Data::String(s.clone()),
        Json::Array(a) => Data::List(a.iter().map(from_json).collect()),
        Json::Object(o) => Data::Map(o.iter().map(|(k, v)| (k.clone(), from_json(v))).collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCHEMA: &str = r#"{
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "required": ["name"],
        "properties": {
            "age": {"type": "integer", "minimum": 0},
            "tags": {"type": "array", "items": {"type": "string"}}
        }
    }"#;

    #[test]
    fn violations_name_their_path() {
        let values = crate::yaml::parse_values("age: -5\ntags: [a, 1]\n").unwrap();
        let err = validate_single_schema(&values, SCHEMA.as_bytes()).unwrap_err();
        assert_eq!(
            err,
            "- at '': missing property 'name'\n- at '/age': minimum: got -5, want 0\n- at '/tags/1': got integer, want string\n"
        );
    }

    #[test]
    fn valid_values_pass_and_bad_schemas_fail_cleanly() {
        let values = crate::yaml::parse_values("name: x\nage: 3\n").unwrap();
        assert!(validate_single_schema(&values, SCHEMA.as_bytes()).is_ok());
        assert!(validate_single_schema(&values, b"{not json").is_err());
        let draft2020 = br#"{"$schema": "https://json-schema.org/draft/2020-12/schema", "properties": {"age": {"maximum": 2}}}"#;
        assert_eq!(
            validate_single_schema(&values, draft2020).unwrap_err(),
            "- at '/age': maximum: got 3, want 2\n"
        );
    }

    #[test]
    fn meta_schema_validators_are_built_for_any_schema_without_panicking() {
        // An unknown `$schema` made `jsonschema::meta` try to fetch its meta-schema and panic.
        for schema in [
            r#"{"$schema": "http://example.com/unknown", "type": "object"}"#,
            r#"{"$schema": "http://json-schema.org/schema#", "type": "object"}"#,
            r#"{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}"#,
            r#"{"$schema": "http://json-schema.org/draft-04/schema#", "type": "object"}"#,
            r#"{"type": "object"}"#,
            "true",
            "{}",
            "{not json",
        ] {
            build_meta_validator(schema.as_bytes());
        }
    }
}
