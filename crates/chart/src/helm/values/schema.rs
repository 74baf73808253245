//! `values.schema.json` validation (JSON Schema draft 7 and 2020-12, chosen by `$schema`),
//! for the chart and every subchart on its own table, with errors naming the values path in
//! the words Helm v4 prints (`- at '/age': minimum: got -5, want 0`).

use std::sync::atomic::{AtomicBool, Ordering};

use jsonschema::Draft;
use serde_json::Value as Json;

use crate::formats::tree::{Data, Map};
use crate::helm::chart::Chart;

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
    /// `demo/values.schema.json: at '/age': minimum: got -5, want 0; …` (nested ones too).
    pub fn one_line(&self) -> String {
        self.0
            .iter()
            .flat_map(|c| {
                c.report
                    .lines()
                    .filter(|l| !l.trim().is_empty())
                    .map(move |l| {
                        format!("{}: {}", c.file, l.trim_start().trim_start_matches("- "))
                    })
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
pub(crate) fn prepare_meta_schema(schema: bytes::Bytes) {
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
    // Helm's validator also knows `uuid` in drafts before 2019-09, which `jsonschema` does not.
    let validator = jsonschema::options()
        .with_format("uuid", is_uuid)
        .build(&schema)
        .map_err(|e| format!("values.schema.json: invalid schema: {e}\n"))?;
    let instance = to_json(&Data::Map(values.clone()));
    let errors: Vec<_> = validator.iter_errors(&instance).collect();
    if errors.is_empty() {
        return Ok(());
    }
    Err(super::schema_report::report(&errors, &schema))
}

fn is_uuid(s: &str) -> bool {
    super::schema_report::uuid_problem(s).is_none()
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
        let values = crate::formats::yaml::parse_values("age: -5\ntags: [a, 1]\n").unwrap();
        let err = validate_single_schema(&values, SCHEMA.as_bytes()).unwrap_err();
        assert_eq!(
            err,
            "- at '': missing property 'name'\n- at '/age': minimum: got -5, want 0\n- at '/tags/1': got number, want string\n"
        );
    }

    #[test]
    fn reports_nest_and_word_errors_as_helm_does() {
        // Each expectation is what helm v4.1.4 prints for the same schema and values.
        let schema = br##"{
            "$schema": "http://json-schema.org/draft-07/schema#",
            "properties": {
                "port": {"maximum": 65535},
                "ratio": {"minimum": 1},
                "tags": {"uniqueItems": true, "maxItems": 1},
                "mode": {"anyOf": [{"type": "string"}, {"type": "boolean"}]},
                "one": {"oneOf": [{"type": "number"}, {"type": "integer"}]},
                "all": {"allOf": [{"type": "string"}, {"minLength": 3}]},
                "deep": {"type": "array", "items": {"type": "integer", "maximum": 5}},
                "names": {"propertyNames": {"maxLength": 1}},
                "dep": {"dependencies": {"a": ["b", "c"]}},
                "shared": {"dependencies": {"a": ["c"], "b": ["c", "d"]}},
                "odd": {"required": ["a\\"]},
                "keys": {"propertyNames": {"maxLength": 1, "pattern": "^x"}},
                "req": {"required": ["a", "b"]},
                "ref": {"$ref": "#/definitions/short"},
                "id": {"format": "uuid"},
                "word": {"pattern": "^[a-z']+$", "enum": ["x"]}
            },
            "definitions": {"short": {"type": "string", "minLength": 3, "pattern": "^a"}}
        }"##;
        let cases = [
            (
                "port: 70000",
                "- at '/port': maximum: got 70,000, want 65,535\n",
            ),
            (
                "ratio: 0.000001",
                "- at '/ratio': minimum: got 1×10⁻⁰⁶, want 1\n",
            ),
            (
                "tags: [1, 2, 1]",
                "- at '/tags': maxItems: got 3, want 1\n- at '/tags': items at 0 and 2 are equal\n",
            ),
            (
                "mode: 1",
                "- at '/mode': 'anyOf' failed\n  - at '/mode': got number, want string\n  - at '/mode': got number, want boolean\n",
            ),
            (
                "one: 1",
                "- at '/one': 'oneOf' failed, subschemas 0, 1 matched\n",
            ),
            (
                "all: 1",
                "- at '/all': 'allOf' failed\n  - at '/all': got number, want string\n",
            ),
            (
                "deep: [1, x, 9]",
                "- at '/deep/1': got string, want integer\n- at '/deep/2': maximum: got 9, want 5\n",
            ),
            (
                "names: {ab: 1}",
                "- at '': invalid propertyName 'ab'\n  - at '': maxLength: got 2, want 1\n",
            ),
            (
                "dep: {a: 1}",
                "- at '/dep': properties 'b', 'c' required, if 'a' exists\n",
            ),
            ("req: {}", "- at '/req': missing properties 'a', 'b'\n"),
            (
                "shared: {a: 1, b: 1}",
                "- at '/shared': properties 'c' required, if 'a' exists\n- at '/shared': properties 'c', 'd' required, if 'b' exists\n",
            ),
            ("odd: {}", "- at '/odd': missing property 'a\\'\n"),
            (
                "keys: {ab: 1}",
                "- at '': invalid propertyName 'ab'\n  - at '': maxLength: got 2, want 1\n  - at '': 'ab' does not match pattern '^x'\n",
            ),
            (
                "ref: b",
                "- at '/ref': validation failed\n  - at '/ref': minLength: got 1, want 3\n  - at '/ref': 'b' does not match pattern '^a'\n",
            ),
            (
                "id: x",
                "- at '/id': 'x' is not valid uuid: must have 5 elements\n",
            ),
            (
                "id: 123e4567-e89b-12d3-a456-42661417400G",
                "- at '/id': '123e4567-e89b-12d3-a456-42661417400G' is not valid uuid: non-hex character 'G'\n",
            ),
            (
                "id: 123e4567-e89b-12d3-a456-4266141740é0",
                "- at '/id': '123e4567-e89b-12d3-a456-4266141740é0' is not valid uuid: element 5 must be 12 characters long\n",
            ),
            // A failed enum is reported alone.
            ("word: \"A'b\"", "- at '/word': value must be 'x'\n"),
            (
                "word: x\nref: b\n",
                "- at '/ref': validation failed\n  - at '/ref': minLength: got 1, want 3\n  - at '/ref': 'b' does not match pattern '^a'\n",
            ),
        ];
        for (values, want) in cases {
            let values = crate::formats::yaml::parse_values(values).unwrap();
            let got = validate_single_schema(&values, schema).unwrap_err();
            assert_eq!(got, want, "{values:?}");
        }
        for id in [
            "123e4567-e89b-12d3-a456-426614174000",
            "123E4567-E89B-12D3-A456-426614174000",
        ] {
            let valid = crate::formats::yaml::parse_values(&format!("id: {id}")).unwrap();
            assert!(validate_single_schema(&valid, schema).is_ok(), "{id}");
        }
    }

    #[test]
    fn valid_values_pass_and_bad_schemas_fail_cleanly() {
        let values = crate::formats::yaml::parse_values("name: x\nage: 3\n").unwrap();
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
