//! Sprig conformance of the whole library: every template row of
//! `../shared/conformance/helm/sprig.yaml` (its cases and the template forms of its Go-call
//! assertions) rendered by our engine as helm v4.1.4 renders it. (`funcs.yaml`, Helm's own
//! function and engine tables, is driven by `conformance_helm.rs`.)
//!
//! Rules, applied to every row alike (see the data folder's README):
//! * A row is rendered Helm's way: template `test`, Helm's function set, `missingkey=zero`,
//!   `<no value>` removed from the output, and dot = the row's `vars` as Helm values carry
//!   them (every number a float64, since helm was run with the vars in a values file).
//! * `helm414.result: same` rows must give the row's expectation (its `expect`, or an error
//!   when `wantError`, containing `errorContains` when given).
//! * `differs` rows must give what helm v4.1.4 gave: its `output`, or an error ending in the
//!   innermost line of its `error`. An output written in parentheses describes a value that
//!   changes from run to run (the current time); such a row must render without error.
//! * `not-run` rows are skipped: helm v4.1.4 cannot run them (Go-only types in `vars`,
//!   Windows-only paths, `env`/`expandenv`, checks of mutated vars, engine options).
//! * `function-absent` rows are skipped: the function does not exist in helm v4.1.4.

use std::path::PathBuf;

use landscaper_chart::engine::Engine;
use landscaper_chart::value::{Map, Value};
use serde_yaml_ng::Value as Yaml;

/// The conformance data folder shared by the team.
fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/helm")
}

fn load(file: &str) -> Yaml {
    let path = data_dir().join(file);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("cannot parse {file}: {e}"))
}

/// Row data as Helm values carry it: numbers are float64.
fn helm_value(y: &Yaml) -> Value {
    match y {
        Yaml::Null => Value::Nil,
        Yaml::Bool(b) => Value::Bool(*b),
        Yaml::Number(n) => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        Yaml::String(s) => Value::from(s.as_str()),
        Yaml::Sequence(items) => Value::list(items.iter().map(helm_value).collect()),
        Yaml::Mapping(entries) => Value::Map(Map::from_entries(
            entries.iter().map(|(k, v)| (key_text(k), helm_value(v))),
        )),
        Yaml::Tagged(tagged) => helm_value(&tagged.value),
    }
}

fn key_text(k: &Yaml) -> String {
    match k {
        Yaml::String(s) => s.clone(),
        other => serde_yaml_ng::to_string(other)
            .unwrap_or_default()
            .trim()
            .to_string(),
    }
}

fn text<'a>(row: &'a Yaml, key: &str) -> Option<&'a str> {
    row.get(key).and_then(Yaml::as_str)
}

/// What a row must produce.
#[derive(Debug)]
enum Expect {
    Output(String),
    /// Any output, as long as rendering succeeds.
    AnyOutput,
    /// An error whose message contains this text (empty: any error).
    ErrorContaining(String),
    /// An error whose message ends with this text.
    ErrorEndingWith(String),
}

/// A template row ready to run, or why it is skipped.
enum Plan {
    Run {
        tpl: String,
        dot: Value,
        expect: Expect,
    },
    Skip(&'static str),
}

/// Applies the module's rules to one row; `absent_vars` is the dot when the row has no `vars`.
fn plan(row: &Yaml, tpl_key: &str, expect_key: &str, absent_vars: &Value) -> Plan {
    let Some(tpl) = text(row, tpl_key) else {
        return Plan::Skip("no template form");
    };
    let helm = row.get("helm414").or_else(|| row.get("tplHelm414"));
    let result = helm.and_then(|h| text(h, "result")).unwrap_or("same");
    let expect = match result {
        "not-run" => return Plan::Skip("helm v4.1.4 cannot run it"),
        "function-absent" => return Plan::Skip("function absent from helm v4.1.4"),
        "differs" => differing_expectation(helm.unwrap_or(&Yaml::Null)),
        _ if row.get("wantError").and_then(Yaml::as_bool) == Some(true) => {
            Expect::ErrorContaining(text(row, "errorContains").unwrap_or("").to_string())
        }
        _ => match row.get(expect_key) {
            Some(Yaml::String(s)) => Expect::Output(s.clone()),
            Some(other) => Expect::Output(key_text(other)),
            None => return Plan::Skip("no expectation"),
        },
    };
    let dot = match row.get("vars") {
        Some(vars) => helm_value(vars),
        None => absent_vars.clone(),
    };
    Plan::Run {
        tpl: tpl.to_string(),
        dot,
        expect,
    }
}

fn differing_expectation(helm: &Yaml) -> Expect {
    if let Some(error) = text(helm, "error") {
        let innermost = error.lines().last().unwrap_or(error).trim();
        return Expect::ErrorEndingWith(innermost.to_string());
    }
    match text(helm, "output") {
        Some(out) if out.starts_with('(') && out.ends_with(')') => Expect::AnyOutput,
        Some(out) => Expect::Output(out.to_string()),
        None => Expect::AnyOutput,
    }
}

fn render(tpl: &str, dot: &Value) -> Result<String, String> {
    let mut engine = Engine::new();
    engine
        .add_template("test", tpl)
        .map_err(|e| e.to_string())?;
    engine.render_helm("test", dot).map_err(|e| e.to_string())
}

/// Runs one planned row: `None` when it passes, else what went wrong.
fn check(tpl: &str, dot: &Value, expect: &Expect) -> Option<String> {
    let got = render(tpl, dot);
    let ok = match (&got, expect) {
        (Ok(out), Expect::Output(want)) => out == want,
        (Ok(_), Expect::AnyOutput) => true,
        (Err(e), Expect::ErrorContaining(part)) => e.contains(part.as_str()),
        (Err(e), Expect::ErrorEndingWith(end)) => e.trim_end().ends_with(end.as_str()),
        _ => false,
    };
    (!ok).then(|| format!("want {expect:?}, got {got:?}"))
}

/// Pass/skip/failure tally of one table.
#[derive(Default)]
struct Tally {
    passed: usize,
    skipped: std::collections::BTreeMap<&'static str, usize>,
    failures: Vec<String>,
}

impl Tally {
    fn run(&mut self, id: &str, plan: Plan) {
        match plan {
            Plan::Skip(reason) => *self.skipped.entry(reason).or_default() += 1,
            Plan::Run { tpl, dot, expect } => match check(&tpl, &dot, &expect) {
                None => self.passed += 1,
                Some(problem) => self.failures.push(format!("{id}: {tpl:?}: {problem}")),
            },
        }
    }

    fn finish(self, table: &str) {
        let skipped: usize = self.skipped.values().sum();
        println!(
            "{table}: {} passed, {} failed, {skipped} skipped {:?}",
            self.passed,
            self.failures.len(),
            self.skipped
        );
        assert!(
            self.failures.is_empty(),
            "{table}: {} rows differ from helm v4.1.4:\n{}",
            self.failures.len(),
            self.failures.join("\n")
        );
        assert!(self.passed > 0, "{table}: no row ran");
    }
}

fn rows<'a>(doc: &'a Yaml, key: &str) -> &'a [Yaml] {
    doc.get(key)
        .and_then(Yaml::as_sequence)
        .map(Vec::as_slice)
        .unwrap_or_else(|| panic!("missing table {key}"))
}

fn id(row: &Yaml) -> String {
    text(row, "id").unwrap_or("?").to_string()
}

#[test]
fn sprig_cases_render_as_helm_does() {
    let doc = load("sprig.yaml");
    // Sprig's runt() passes an empty map[string]string when a case has no vars.
    let absent = Value::empty_map();
    let mut tally = Tally::default();
    for row in rows(&doc, "cases") {
        tally.run(&id(row), plan(row, "tpl", "expect", &absent));
    }
    tally.finish("sprig.yaml cases");
}

#[test]
fn sprig_go_call_templates_render_as_helm_does() {
    let doc = load("sprig.yaml");
    let mut tally = Tally::default();
    for row in rows(&doc, "goCalls") {
        tally.run(&id(row), plan(row, "tpl", "tplExpect", &Value::Nil));
    }
    tally.finish("sprig.yaml goCalls");
}
