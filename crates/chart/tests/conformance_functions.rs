//! The one conformance driver of the function library: every function row of
//! `../shared/conformance/helm/funcs.yaml` (Helm's `funcs`, `mustFuncs`, `durationHelpers`,
//! `durationMustErrors` and `merge` tables) and of `sprig.yaml` (Sprig's `cases` and the
//! template forms of its `goCalls`) rendered by our engine with Helm's function set.
//! (`conformance_helm.rs` drives `funcs.yaml`'s whole-render `engine` cases.)
//!
//! Rules, applied to every row alike (the data folder's README explains the fields):
//! * `helm414.result: same` — rendered Helm's way (template `test`, `missingkey=zero`,
//!   `<no value>` removed, dot = the row's `vars` as Helm values carry them: every number a
//!   float64, since helm was run with the vars in a values file); must give the row's
//!   expectation (its `expect`/`tplExpect`, or an error containing `errorContains` when
//!   `wantError`).
//! * `differs` — rendered Helm's way; must give what helm v4.1.4 gave: its `output`, or an
//!   error ending in the innermost line of its `error`. An output written in parentheses
//!   describes a value that changes from run to run (the current time); such a row must
//!   render without error.
//! * `not-run` (helm cannot carry the vars' Go types) — when every Go type in `goTypes` is one
//!   our values carry (`int`, `int32`, `int64`, `[]int`, `[]byte`, `time.Time` from
//!   `time.Parse`), rendered Go's way (plain text/template, Sprig's `runt`) with those types
//!   and checked against the row's own expectation, since Helm calls the same Sprig code;
//!   otherwise skipped (self-referential maps, structs of the Go test, `error` values, Windows paths, `env`).
//! * `expectDotAfter` rows (`merge`, `mergeOverwrite` writing into their first map) run Go's
//!   way with Go-typed vars and must leave the dot as expected.
//! * `function-absent` rows are skipped: the function came after helm v4.1.4; so are the
//!   `not-run` rows of the tables of helpers added after v4.1.4 (`durationHelpers`,
//!   `durationMustErrors`).
//! * `goCalls` without a template form are Go calls, not templates: skipped.
//!
//! A row whose template calls a function we do not provide fails: no row is skipped for that.

use std::collections::BTreeMap;
use std::path::PathBuf;

use landscaper_chart::engine::Engine;
use landscaper_chart::engine::value::{Map, Value};
use landscaper_chart::helm::funcs::dates;
use serde_yaml_ng::Value as Yaml;

fn load(file: &str) -> Yaml {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/conformance/helm")
        .join(file);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("cannot parse {file}: {e}"))
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

/// Row data as Helm values carry it: every number a float64.
fn helm_value(y: &Yaml) -> Value {
    convert(y, &|n| Value::Float(n.as_f64().unwrap_or(f64::NAN)))
}

/// Row data as the Go test tables hold it: integers are Go `int`.
fn go_value(y: &Yaml) -> Value {
    convert(y, &|n| match n.as_i64() {
        Some(i) => Value::Int(i),
        None => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
    })
}

fn convert(y: &Yaml, number: &dyn Fn(&serde_yaml_ng::Number) -> Value) -> Value {
    match y {
        Yaml::Null => Value::Nil,
        Yaml::Bool(b) => Value::Bool(*b),
        Yaml::Number(n) => number(n),
        Yaml::String(s) => Value::from(s.as_str()),
        Yaml::Sequence(items) => Value::list(items.iter().map(|i| convert(i, number)).collect()),
        Yaml::Mapping(entries) => Value::Map(Map::from_entries(
            entries
                .iter()
                .map(|(k, v)| (key_text(k), convert(v, number))),
        )),
        Yaml::Tagged(tagged) => convert(&tagged.value, number),
    }
}

fn text<'a>(row: &'a Yaml, key: &str) -> Option<&'a str> {
    row.get(key).and_then(Yaml::as_str)
}

/// One table of rows and how it names its fields.
struct Table {
    file: &'static str,
    key: &'static str,
    /// The field holding the expected output.
    expect_key: &'static str,
    /// The field holding helm v4.1.4's result.
    helm_key: &'static str,
    /// The dot when a row has no `vars`.
    absent_vars: fn() -> Value,
    /// The table tests helpers added after helm v4.1.4 (the README says so).
    after_v4_1_4: bool,
}

const TABLES: &[Table] = &[
    Table {
        file: "funcs.yaml",
        key: "funcs",
        expect_key: "expect",
        helm_key: "helm414",
        absent_vars: || Value::Nil,
        after_v4_1_4: false,
    },
    Table {
        file: "funcs.yaml",
        key: "mustFuncs",
        expect_key: "expect",
        helm_key: "helm414",
        absent_vars: || Value::Nil,
        after_v4_1_4: false,
    },
    Table {
        file: "funcs.yaml",
        key: "durationHelpers",
        expect_key: "expect",
        helm_key: "helm414",
        absent_vars: || Value::Nil,
        after_v4_1_4: true,
    },
    Table {
        file: "funcs.yaml",
        key: "durationMustErrors",
        expect_key: "expect",
        helm_key: "helm414",
        absent_vars: || Value::Nil,
        after_v4_1_4: true,
    },
    Table {
        file: "funcs.yaml",
        key: "merge",
        expect_key: "expect",
        helm_key: "helm414",
        absent_vars: || Value::Nil,
        after_v4_1_4: false,
    },
    // Sprig's runt() passes an empty map[string]string when a case has no vars.
    Table {
        file: "sprig.yaml",
        key: "cases",
        expect_key: "expect",
        helm_key: "helm414",
        absent_vars: Value::empty_map,
        after_v4_1_4: false,
    },
    Table {
        file: "sprig.yaml",
        key: "goCalls",
        expect_key: "tplExpect",
        helm_key: "tplHelm414",
        absent_vars: || Value::Nil,
        after_v4_1_4: false,
    },
];

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
    /// These keys of the dot equal these values after rendering (output not checked).
    DotAfter(Yaml),
}

/// How a row is rendered.
#[derive(Debug, Clone, Copy)]
enum Mode {
    /// Helm's renderer: `missingkey=zero`, `<no value>` removed.
    Helm,
    /// Plain Go text/template, as Sprig's own tests run.
    Go,
}

/// A row ready to run, or why it is skipped.
enum Plan {
    Run {
        tpl: String,
        dot: Value,
        mode: Mode,
        expect: Expect,
    },
    Skip(&'static str),
}

fn plan(row: &Yaml, table: &Table) -> Plan {
    let Some(tpl) = text(row, "tpl") else {
        return Plan::Skip("Go call without a template form");
    };
    let helm = row.get(table.helm_key);
    let result = helm.and_then(|h| text(h, "result")).unwrap_or("same");
    if result == "function-absent" {
        return Plan::Skip("function absent from helm v4.1.4");
    }
    let run = |dot, mode, expect| Plan::Run {
        tpl: tpl.to_string(),
        dot,
        mode,
        expect,
    };
    if let Some(after) = row.get("expectDotAfter") {
        return match go_typed_dot(row) {
            Some(dot) => run(dot, Mode::Go, Expect::DotAfter(after.clone())),
            None => Plan::Skip("vars of Go types our values cannot carry"),
        };
    }
    if result == "not-run" && table.after_v4_1_4 {
        return Plan::Skip("helper added after helm v4.1.4");
    }
    if result == "not-run" {
        return match go_typed_dot(row) {
            Some(dot) => run(dot, Mode::Go, own_expectation(row, table)),
            None => Plan::Skip(
                "helm v4.1.4 cannot run it (self-referential maps, Go structs, Windows, env)",
            ),
        };
    }
    let expect = if result == "differs" {
        differing_expectation(helm.unwrap_or(&Yaml::Null))
    } else {
        own_expectation(row, table)
    };
    let dot = row.get("vars").map_or_else(table.absent_vars, helm_value);
    run(dot, Mode::Helm, expect)
}

fn own_expectation(row: &Yaml, table: &Table) -> Expect {
    if row.get("wantError").and_then(Yaml::as_bool) == Some(true) {
        return Expect::ErrorContaining(text(row, "errorContains").unwrap_or("").to_string());
    }
    match row.get(table.expect_key) {
        Some(Yaml::String(s)) => Expect::Output(s.clone()),
        Some(other) => Expect::Output(key_text(other)),
        None => Expect::Output(String::new()),
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

/// The dot with the Go types the row names, when every one is a type our values carry.
fn go_typed_dot(row: &Yaml) -> Option<Value> {
    let vars = row.get("vars")?;
    let dot = go_value(vars);
    let Some(types) = row.get("goTypes") else {
        return Some(dot);
    };
    for (path, go_type) in types.as_mapping()? {
        let path = path.as_str()?;
        let go_type = go_type.as_str()?;
        if path == "." {
            return types
                .as_mapping()?
                .len()
                .eq(&1)
                .then(|| go_typed(&dot, go_type))?;
        }
        let (parent, key) = match path.rsplit_once('.') {
            Some((parent, key)) => (lookup(&dot, parent)?, key),
            None => (dot.clone(), path),
        };
        let parent = parent.as_map()?.clone();
        let current = parent.get(key)?;
        let typed = go_typed(&current, go_type)?;
        parent.insert(key, typed);
    }
    Some(dot)
}

fn lookup(dot: &Value, path: &str) -> Option<Value> {
    path.split('.')
        .try_fold(dot.clone(), |v, key| v.as_map()?.get(key))
}

/// `value` as the Go type `go_type`, if our values carry that type.
fn go_typed(value: &Value, go_type: &str) -> Option<Value> {
    let int = || match value {
        Value::Int(i) => Some(*i),
        _ => None,
    };
    Some(match go_type {
        "int64" => Value::Int64(int()?),
        "int" | "int32" => Value::Int(int()?),
        "[]int" => {
            let items = value.as_list()?;
            if !items.iter().all(|i| matches!(i, Value::Int(_))) {
                return None;
            }
            value.clone()
        }
        "[]byte" => Value::Bytes(value.as_str()?.as_bytes().to_vec().into()),
        t if t.starts_with("time.Time (time.Parse(")
            || t.starts_with("*time.Time (time.Parse(") =>
        {
            let args = t.split_once("time.Parse(")?.1;
            let quoted: Vec<&str> = args.split('"').collect();
            let (layout, text) = (quoted.get(1)?, quoted.get(3)?);
            Value::object(dates::parse_utc(layout, text).ok()?)
        }
        _ => return None,
    })
}

fn render(tpl: &str, dot: &Value, mode: Mode) -> Result<String, String> {
    let mut engine = Engine::new(landscaper_chart::helm::funcs::helm_funcs());
    engine
        .add_template("test", tpl)
        .map_err(|e| e.to_string())?;
    match mode {
        Mode::Helm => engine.render_helm("test", dot),
        Mode::Go => engine.render("test", dot),
    }
    .map_err(|e| e.to_string())
}

/// Runs one planned row: `None` when it passes, else what went wrong.
fn check(tpl: &str, dot: &Value, mode: Mode, expect: &Expect) -> Option<String> {
    let got = render(tpl, dot, mode);
    let ok = match (&got, expect) {
        (Ok(out), Expect::Output(want)) => out == want,
        (Ok(_), Expect::AnyOutput) => true,
        (Err(e), Expect::ErrorContaining(part)) => e.contains(part.as_str()),
        (Err(e), Expect::ErrorEndingWith(end)) => e.trim_end().ends_with(end.as_str()),
        (Ok(_), Expect::DotAfter(after)) => {
            return dot_mismatch(dot, after);
        }
        _ => false,
    };
    (!ok).then(|| format!("want {expect:?}, got {got:?}"))
}

fn dot_mismatch(dot: &Value, after: &Yaml) -> Option<String> {
    let mapping = after.as_mapping()?;
    for (key, want) in mapping {
        let key = key_text(key);
        let got = dot.as_map().and_then(|m| m.get(&key)).map(|v| v.to_data());
        let want = go_value(want).to_data();
        if got.as_ref() != Some(&want) {
            return Some(format!("after rendering .{key} is {got:?}, want {want:?}"));
        }
    }
    None
}

/// Pass/skip/failure tally over all tables.
#[derive(Default)]
struct Tally {
    passed: BTreeMap<String, usize>,
    skipped: BTreeMap<&'static str, usize>,
    failures: Vec<String>,
}

#[test]
fn every_function_row_renders_as_helm_v4_1_4_does() {
    let mut tally = Tally::default();
    let mut docs = BTreeMap::new();
    for table in TABLES {
        let doc = docs.entry(table.file).or_insert_with(|| load(table.file));
        let rows = doc
            .get(table.key)
            .and_then(Yaml::as_sequence)
            .unwrap_or_else(|| panic!("{}: missing table {}", table.file, table.key));
        for row in rows {
            let id = text(row, "id").unwrap_or("?");
            match plan(row, table) {
                Plan::Skip(reason) => *tally.skipped.entry(reason).or_default() += 1,
                Plan::Run {
                    tpl,
                    dot,
                    mode,
                    expect,
                } => match check(&tpl, &dot, mode, &expect) {
                    None => {
                        let name = format!("{}:{} ({mode:?})", table.file, table.key);
                        *tally.passed.entry(name).or_default() += 1;
                    }
                    Some(problem) => tally.failures.push(format!("{id}: {tpl:?}: {problem}")),
                },
            }
        }
    }
    println!("passed {:?}\nskipped {:?}", tally.passed, tally.skipped);
    assert!(
        tally.failures.is_empty(),
        "{} rows differ from helm v4.1.4:\n{}",
        tally.failures.len(),
        tally.failures.join("\n")
    );
    let passed: usize = tally.passed.values().sum();
    let skipped: usize = tally.skipped.values().sum();
    // Every row is either run or skipped by a rule above; the skip rules stay narrow.
    assert!(passed >= 499, "only {passed} rows ran");
    assert!(skipped <= 90, "{skipped} rows skipped: {:?}", tally.skipped);
}

#[test]
fn helm_function_map_has_what_helm_has_and_lacks_env() {
    let facts = load("funcs.yaml");
    let engine = Engine::new(landscaper_chart::helm::funcs::helm_funcs());
    let func_map = &facts["engineFacts"]["funcMap"];
    for name in func_map["present"].as_sequence().into_iter().flatten() {
        let name = name.as_str().unwrap_or_default();
        assert!(
            engine.has_function(name),
            "{name} must be a template function"
        );
    }
    for name in func_map["absent"].as_sequence().into_iter().flatten() {
        let name = name.as_str().unwrap_or_default();
        assert!(
            !engine.has_function(name),
            "{name} must not be a template function"
        );
    }
}
