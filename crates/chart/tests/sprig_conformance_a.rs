//! Sprig's own test tables (`sprig.yaml`) and Helm's function rows (`funcs.yaml`), for the
//! first half of the Sprig library: strings, regular expressions, encodings and checksums,
//! dates and crypto.
//! The other half has its own driver (`sprig_conformance.rs`); a row is ours when its template
//! calls one of our functions, and it is left to the other driver when it also calls a function
//! this crate does not provide yet.
//!
//! Which rows run, and against what, follows the data's README:
//! * `helm414.result: same` — the row's own expectation (output, or an error).
//! * `helm414.result: differs` — what helm v4.1.4 printed (`helm414.output`/`helm414.error`),
//!   unless that output is time-dependent (recorded as a description in parentheses).
//! * `not-run` rows are skipped (`env`, Windows paths, self-referential maps, Go types our
//!   values cannot hold), except those whose Go-typed vars our values can carry (`int64`,
//!   `int`, `int32`, `time.Time` from `time.Parse`): they run with those types against the row's
//!   own expectation, since Helm calls the same Sprig code.
//! * `function-absent` rows (functions added after v4.1.4) are skipped.
//!
//! Vars are given to the template as Helm values: numbers are `float64`, as the v4.1.4 runs
//! that recorded `helm414` had them.

use std::collections::BTreeSet;
use std::path::PathBuf;

use landscaper_chart::engine::Engine;
use landscaper_chart::funcs::dates;
use landscaper_chart::value::{Map, Value};
use serde_yaml_ng::Value as Yaml;

/// The functions of our half of the Sprig library that are registered today.
const OURS: &[&str] = &[
    // strings
    "hello",
    "upper",
    "lower",
    "title",
    "untitle",
    "swapcase",
    "snakecase",
    "kebabcase",
    "camelcase",
    "initials",
    "nospace",
    "shuffle",
    "trim",
    "trimAll",
    "trimall",
    "trimPrefix",
    "trimSuffix",
    "contains",
    "hasPrefix",
    "hasSuffix",
    "replace",
    "plural",
    "repeat",
    "substr",
    "trunc",
    "abbrev",
    "abbrevboth",
    "wrap",
    "wrapWith",
    "indent",
    "nindent",
    "quote",
    "squote",
    "cat",
    "split",
    "splitn",
    "splitList",
    "join",
    "sortAlpha",
    "randAlphaNum",
    "randAlpha",
    "randNumeric",
    "randAscii",
    // regular expressions
    "regexMatch",
    "mustRegexMatch",
    "regexFindAll",
    "mustRegexFindAll",
    "regexFind",
    "mustRegexFind",
    "regexReplaceAll",
    "mustRegexReplaceAll",
    "regexReplaceAllLiteral",
    "mustRegexReplaceAllLiteral",
    "regexSplit",
    "mustRegexSplit",
    "regexQuoteMeta",
    // encodings and checksums
    "b64enc",
    "b64dec",
    "b32enc",
    "b32dec",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "adler32sum",
    // dates
    "now",
    "date",
    "dateInZone",
    "date_in_zone",
    "htmlDate",
    "htmlDateInZone",
    "dateModify",
    "date_modify",
    "mustDateModify",
    "must_date_modify",
    "ago",
    "toDate",
    "mustToDate",
    "unixEpoch",
    "duration",
    "durationRound",
    // crypto
    "bcrypt",
    "htpasswd",
    "randBytes",
    "uuidv4",
    "derivePassword",
    "encryptAES",
    "decryptAES",
    "genPrivateKey",
    "buildCustomCert",
    "genCA",
    "genCAWithKey",
    "genSelfSignedCert",
    "genSelfSignedCertWithKey",
    "genSignedCert",
    "genSignedCertWithKey",
];

const KEYWORDS: &[&str] = &[
    "if", "else", "end", "range", "with", "define", "template", "block", "nil", "true", "false",
    "break", "continue",
];

fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/helm")
}

fn load(file: &str) -> Yaml {
    let path = data_dir().join(file);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("cannot parse {file}: {e}"))
}

/// The identifiers a template calls: words inside actions that are not fields, variables,
/// keywords or inside string literals.
fn called_functions(template: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for action in template.split("{{").skip(1) {
        let action = action.split("}}").next().unwrap_or("");
        let mut chars = action.chars().peekable();
        let mut prev = ' ';
        while let Some(c) = chars.next() {
            match c {
                '"' => {
                    while let Some(s) = chars.next() {
                        match s {
                            '\\' => {
                                chars.next();
                            }
                            '"' => break,
                            _ => {}
                        }
                    }
                    prev = '"';
                }
                '`' => {
                    for s in chars.by_ref() {
                        if s == '`' {
                            break;
                        }
                    }
                    prev = '`';
                }
                c if c.is_alphabetic() || c == '_' => {
                    let mut word = String::from(c);
                    while let Some(&n) = chars.peek() {
                        if !(n.is_alphanumeric() || n == '_') {
                            break;
                        }
                        word.push(n);
                        chars.next();
                    }
                    let is_call = !matches!(prev, '.' | '$') && !prev.is_alphanumeric();
                    if is_call && !KEYWORDS.contains(&word.as_str()) {
                        names.insert(word);
                    }
                    prev = 'a';
                }
                c => prev = c,
            }
        }
    }
    names
}

fn field<'a>(row: &'a Yaml, key: &str) -> Option<&'a Yaml> {
    row.get(key)
}

fn text<'a>(row: &'a Yaml, key: &str) -> Option<&'a str> {
    field(row, key).and_then(Yaml::as_str)
}

/// What a row must produce.
enum Want {
    Output(String),
    Error(Option<String>),
}

/// Why a row does not run here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Skip {
    /// No function of ours in the template.
    NotOurs,
    /// It also calls a function of the other half that is not registered yet.
    OtherHalf,
    /// `helm414.result: not-run`: Go-only vars, `env`, Windows or mutation checks.
    NotRunInHelm,
    /// `helm414.result: function-absent`: the function came after v4.1.4.
    AbsentInHelm,
    /// The v4.1.4 output depends on the current time.
    TimeDependent,
}

fn classify(engine: &Engine, template: &str, helm: Option<&Yaml>) -> Result<(), Skip> {
    let called = called_functions(template);
    if !called.iter().any(|f| OURS.contains(&f.as_str())) {
        return Err(Skip::NotOurs);
    }
    if called
        .iter()
        .any(|f| !engine.has_function(f) && !OURS.contains(&f.as_str()))
    {
        return Err(Skip::OtherHalf);
    }
    match helm.and_then(|h| text(h, "result")) {
        Some("not-run") => Err(Skip::NotRunInHelm),
        Some("function-absent") => Err(Skip::AbsentInHelm),
        Some("differs")
            if helm
                .and_then(|h| text(h, "output"))
                .is_some_and(|o| o.starts_with('(')) =>
        {
            Err(Skip::TimeDependent)
        }
        _ => Ok(()),
    }
}

fn want(row: &Yaml, expect_key: &str, helm: Option<&Yaml>) -> Want {
    if let Some(h) = helm.filter(|h| text(h, "result") == Some("differs")) {
        if let Some(error) = text(h, "error") {
            return Want::Error(Some(error.to_string()));
        }
        return Want::Output(text(h, "output").unwrap_or("").to_string());
    }
    if field(row, "wantError").and_then(Yaml::as_bool) == Some(true) {
        return Want::Error(text(row, "errorContains").map(str::to_string));
    }
    Want::Output(text(row, expect_key).unwrap_or("").to_string())
}

/// The row's dot as Helm values: absent vars are an empty map, `null` is nil.
fn dot(row: &Yaml) -> Value {
    field(row, "vars").map_or_else(Value::empty_map, helm_value)
}

/// YAML data as Helm values hold it: every number a `float64`.
fn helm_value(yaml: &Yaml) -> Value {
    match yaml {
        Yaml::Null => Value::Nil,
        Yaml::Bool(b) => Value::Bool(*b),
        Yaml::Number(n) => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        Yaml::String(s) => Value::from(s.as_str()),
        Yaml::Sequence(items) => Value::list(items.iter().map(helm_value).collect()),
        Yaml::Mapping(entries) => Value::Map(Map::from_entries(entries.iter().map(|(k, v)| {
            let key = match k {
                Yaml::String(s) => s.clone(),
                other => serde_yaml_ng::to_string(other)
                    .unwrap_or_default()
                    .trim()
                    .to_string(),
            };
            (key, helm_value(v))
        }))),
        Yaml::Tagged(tagged) => helm_value(&tagged.value),
    }
}

/// The dot of a row that helm could not run because its vars have Go types, when every such
/// type is one our values carry: `int64`, `int`/`int32` (Go `int` and `int32` take the same
/// path in Sprig), and `time.Time`/`*time.Time` made by `time.Parse`.
fn go_typed_dot(row: &Yaml) -> Option<Value> {
    let types = field(row, "goTypes")?.as_mapping()?;
    let vars = field(row, "vars")?;
    let dot = helm_value(vars);
    let map = dot.as_map()?;
    for (path, go_type) in types {
        let key = path.as_str()?;
        let go_type = go_type.as_str()?;
        if key.contains(['.', '[']) {
            return None;
        }
        let number = || vars.get(key).and_then(Yaml::as_i64);
        let value = match go_type {
            "int64" => Value::Int64(number()?),
            "int" | "int32" => Value::Int(number()?),
            t if t.starts_with("time.Time (time.Parse(")
                || t.starts_with("*time.Time (time.Parse(") =>
            {
                let args = t.split_once("time.Parse(")?.1;
                let quoted: Vec<&str> = args.split('"').collect();
                let (layout, value) = (quoted.get(1)?, quoted.get(3)?);
                Value::object(dates::parse_utc(layout, value).ok()?)
            }
            _ => return None,
        };
        map.insert(key, value);
    }
    Some(dot)
}

fn run(template: &str, dot: &Value) -> Result<String, String> {
    let mut engine = Engine::new();
    engine
        .add_template("test", template)
        .map_err(|e| e.to_string())?;
    engine.render_helm("test", dot).map_err(|e| e.to_string())
}

#[derive(Default)]
struct Tally {
    passed: usize,
    go_typed: usize,
    skipped: std::collections::BTreeMap<Skip, usize>,
    failures: Vec<String>,
}

impl Tally {
    fn check(
        &mut self,
        id: &str,
        template: &str,
        row: &Yaml,
        expect_key: &str,
        helm: Option<&Yaml>,
    ) {
        let engine = Engine::new();
        let dot = match classify(&engine, template, helm) {
            Ok(()) => dot(row),
            Err(Skip::NotRunInHelm) if go_typed_dot(row).is_some() => {
                self.go_typed += 1;
                go_typed_dot(row).unwrap_or_default()
            }
            Err(skip) => {
                *self.skipped.entry(skip).or_default() += 1;
                return;
            }
        };
        let helm = helm.filter(|h| text(h, "result") != Some("not-run"));
        let got = run(template, &dot);
        let ok = match (&want(row, expect_key, helm), &got) {
            (Want::Output(w), Ok(g)) => w == g,
            (Want::Error(None), Err(_)) => true,
            (Want::Error(Some(w)), Err(g)) => g.contains(w.as_str()),
            _ => false,
        };
        if ok {
            self.passed += 1;
        } else {
            let wanted = match want(row, expect_key, helm) {
                Want::Output(w) => format!("output {w:?}"),
                Want::Error(w) => format!("an error {w:?}"),
            };
            self.failures.push(format!(
                "{id}: {template:?}\n  want {wanted}\n  got  {got:?}"
            ));
        }
    }

    fn finish(self, table: &str) {
        println!(
            "{table}: {} passed ({} with Go-typed vars), {} failed, skipped {:?}",
            self.passed,
            self.go_typed,
            self.failures.len(),
            self.skipped
        );
        assert!(
            self.failures.is_empty(),
            "{} {table} rows failed:\n{}",
            self.failures.len(),
            self.failures.join("\n")
        );
    }
}

#[test]
fn sprig_cases_of_our_half() {
    let data = load("sprig.yaml");
    let mut tally = Tally::default();
    for row in data["cases"].as_sequence().into_iter().flatten() {
        let id = text(row, "id").unwrap_or("?");
        let template = text(row, "tpl").unwrap_or("");
        tally.check(id, template, row, "expect", field(row, "helm414"));
    }
    let passed = tally.passed;
    tally.finish("sprig.yaml cases");
    assert!(passed >= 60, "too few rows ran: {passed}");
}

#[test]
fn sprig_go_calls_of_our_half() {
    let data = load("sprig.yaml");
    let mut tally = Tally::default();
    for row in data["goCalls"].as_sequence().into_iter().flatten() {
        let Some(template) = text(row, "tpl") else {
            continue;
        };
        let id = text(row, "id").unwrap_or("?");
        tally.check(id, template, row, "tplExpect", field(row, "tplHelm414"));
    }
    let passed = tally.passed;
    tally.finish("sprig.yaml goCalls");
    assert!(passed >= 50, "too few rows ran: {passed}");
}

#[test]
fn helm_function_rows_of_our_half() {
    let data = load("funcs.yaml");
    let mut tally = Tally::default();
    for table in [
        "funcs",
        "mustFuncs",
        "durationHelpers",
        "durationMustErrors",
    ] {
        for row in data[table].as_sequence().into_iter().flatten() {
            let id = text(row, "id").unwrap_or("?");
            let template = text(row, "tpl").unwrap_or("");
            tally.check(id, template, row, "expect", field(row, "helm414"));
        }
    }
    tally.finish("funcs.yaml");
}

#[test]
fn called_functions_ignore_fields_variables_and_strings() {
    let names = called_functions(r#"{{ $x := .a | quote }}{{ index $x "upper" | trim }}{{ end }}"#);
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    assert_eq!(names, ["index", "quote", "trim"]);
}
