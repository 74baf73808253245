//! Drives Sprig's test facts (`shared/conformance/helm/sprig.yaml`) through the engine with
//! Helm's function set.
//!
//! Rules for which rows run (no row is skipped by name):
//! * `same` rows must give `expect` (or fail when `wantError`, with `errorContains` in the
//!   message); `differs` rows must give what helm v4.1.4 gave (`output`, or an error);
//!   `not-run` rows (Go-only types, Windows, env) are not run;
//! * rows with `goTypes`, `os`, `env` or `expectDotAfter` are not run here: they need Go types,
//!   another OS, the environment, or a check of the data after execution;
//! * rows calling a function this crate does not provide yet are counted, not run;
//! * `differs` rows whose recorded output is a description in parentheses (the current time)
//!   are not run: their output changes from run to run.

mod support;

use std::collections::BTreeMap;
use std::path::PathBuf;

use landscaper_chart::engine::{Engine, Error};
use landscaper_chart::value::{Map, Value};
use serde_yaml_ng::Value as Yaml;

fn sprig_facts() -> Yaml {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/conformance/helm/sprig.yaml");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("conformance data {} must exist: {e}", path.display()));
    serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Test data as Go test tables hold it: YAML integers are Go `int`.
fn go_value(yaml: &Yaml) -> Value {
    match yaml {
        Yaml::Null => Value::Nil,
        Yaml::Bool(b) => Value::Bool(*b),
        Yaml::Number(n) => match n.as_i64() {
            Some(i) => Value::Int(i),
            None => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Yaml::String(s) => Value::from(s.as_str()),
        Yaml::Sequence(items) => Value::list(items.iter().map(go_value).collect()),
        Yaml::Mapping(entries) => {
            Value::Map(Map::from_entries(entries.iter().map(|(k, v)| {
                (k.as_str().unwrap_or_default().to_string(), go_value(v))
            })))
        }
        Yaml::Tagged(tagged) => go_value(&tagged.value),
    }
}

fn missing_function(error: &Error) -> Option<String> {
    let message = error.to_string();
    let tail = message.strip_suffix("\" not defined")?;
    let start = tail.rfind("function \"")? + "function \"".len();
    Some(tail[start..].to_string())
}

#[derive(Default)]
struct Tally {
    passed: usize,
    not_run: BTreeMap<String, usize>,
    failures: Vec<String>,
}

impl Tally {
    fn skip(&mut self, reason: &str) {
        *self.not_run.entry(reason.to_string()).or_default() += 1;
    }
}

fn run_case(case: &Yaml, tally: &mut Tally) {
    let id = case["id"].as_str().unwrap_or("?");
    let helm = &case["helm414"];
    let result = helm["result"].as_str().unwrap_or("same");
    if result == "not-run" {
        tally.skip("not-run on helm v4.1.4");
        return;
    }
    if result == "differs" && helm["output"].as_str().is_some_and(|o| o.starts_with('(')) {
        tally.skip("time-dependent on helm v4.1.4");
        return;
    }
    for field in ["goTypes", "os", "env", "expectDotAfter"] {
        if case.get(field).is_some() {
            tally.skip(&format!("has {field}"));
            return;
        }
    }
    let template = case["tpl"].as_str().unwrap_or_default();
    let mut engine = Engine::new();
    if let Err(error) = engine.add_template("test", template) {
        match missing_function(&error) {
            Some(name) => tally.skip(&format!("needs {name}")),
            None => tally.failures.push(format!("{id}: parse error {error}")),
        }
        return;
    }
    let dot = match case.get("vars") {
        None => Value::empty_map(),
        Some(vars) => go_value(vars),
    };
    let rendered = engine.render_helm("test", &dot);
    let (want_error, expected) = if result == "differs" {
        (helm.get("error").is_some(), helm["output"].as_str())
    } else {
        (
            case["wantError"].as_bool().unwrap_or(false),
            case["expect"].as_str(),
        )
    };
    match (rendered, want_error) {
        (Ok(out), false) if Some(out.as_str()) == expected => tally.passed += 1,
        (Err(error), true) => {
            let wanted = case["errorContains"].as_str().unwrap_or("");
            if result == "differs" || error.to_string().contains(wanted) {
                tally.passed += 1;
            } else {
                tally
                    .failures
                    .push(format!("{id}: error {error} lacks {wanted:?}"));
            }
        }
        (Err(error), false) if missing_function(&error).is_some() => {
            tally.skip(&format!(
                "needs {}",
                missing_function(&error).unwrap_or_default()
            ));
        }
        (got, _) => tally.failures.push(format!(
            "{id}: {template:?} gave {got:?}, want {expected:?}"
        )),
    }
}

#[test]
fn sprig_rows() {
    let facts = sprig_facts();
    let mut tally = Tally::default();
    for case in facts["cases"].as_sequence().into_iter().flatten() {
        run_case(case, &mut tally);
    }
    eprintln!("passed {}, not run: {:?}", tally.passed, tally.not_run);
    assert!(
        tally.failures.is_empty(),
        "{} failures:\n{}",
        tally.failures.len(),
        tally.failures.join("\n")
    );
    assert!(tally.passed >= 40, "only {} rows passed", tally.passed);
}
