//! Drives Helm's whole-render engine cases (`shared/conformance/helm/funcs.yaml`, `engine`)
//! through the engine. (Its function tables are driven by `conformance_functions.rs`.)
//!
//! Rules for which cases run (no case is skipped by name):
//! * cases calling a function this crate does not provide yet are counted, not run (the parse
//!   error `function "X" not defined` tells); installing the function makes them run;
//! * engine `chart` cases run through a small chart harness when the chart has no
//!   subcharts, files or fake cluster; the chart renderer's own tests cover the rest.

mod support;

use std::collections::BTreeMap;
use std::path::PathBuf;

use landscaper_chart::engine::value::{Map, Value};
use landscaper_chart::engine::{Engine, Error, MissingKey};
use serde_yaml_ng::Value as Yaml;

fn conformance_file(name: &str) -> Yaml {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/conformance/helm")
        .join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("conformance data {} must exist: {e}", path.display()));
    serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Values as Helm holds them after reading a values file: every number is a `float64`.
fn helm_values(yaml: &Yaml) -> Value {
    let json = serde_json::to_value(yaml).unwrap_or(serde_json::Value::Null);
    support::from_json(&json)
}

fn text(yaml: &Yaml) -> String {
    match yaml {
        Yaml::String(s) => s.clone(),
        Yaml::Mapping(m) => {
            let repeat = m.get("repeat").and_then(Yaml::as_str).unwrap_or_default();
            let times = m.get("times").and_then(Yaml::as_u64).unwrap_or(0);
            repeat.repeat(usize::try_from(times).unwrap_or(0))
        }
        _ => String::new(),
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

    fn finish(self, least_passed: usize) {
        eprintln!("passed {}, not run: {:?}", self.passed, self.not_run);
        assert!(
            self.failures.is_empty(),
            "failures:\n{}",
            self.failures.join("\n")
        );
        assert!(
            self.passed >= least_passed,
            "only {} rows passed, expected at least {least_passed}",
            self.passed
        );
    }
}

/// Helm's template order: more path segments first, then reverse lexical order.
fn helm_order(names: &mut [String]) {
    names.sort_by(|a, b| {
        let depth = |s: &str| s.split('/').count();
        depth(b).cmp(&depth(a)).then_with(|| b.cmp(a))
    });
}

fn error_matches(case: &Yaml, error: &Error) -> bool {
    let Some(expected) = case["expectError"].as_str() else {
        return true;
    };
    let message = error.helm_message();
    match case["errorMatch"].as_str().unwrap_or("exact") {
        "contains" => message.contains(expected),
        "suffix" => message.ends_with(expected),
        _ => message == expected,
    }
}

/// Renders every template; returns outputs by name or the first error.
fn render_set(
    engine: &Engine,
    names: &[String],
    dot_for: &dyn Fn(&str) -> Value,
) -> Result<BTreeMap<String, String>, Error> {
    let mut out = BTreeMap::new();
    for name in names {
        let base = name.rsplit('/').next().unwrap_or(name);
        if base.starts_with('_') {
            continue;
        }
        out.insert(name.clone(), engine.render_helm(name, &dot_for(name))?);
    }
    Ok(out)
}

fn configure(engine: &mut Engine, case: &Yaml) {
    let options = &case["engine"];
    engine.options_mut().lint_mode = options["lintMode"].as_bool().unwrap_or(false);
    if options["strict"].as_bool().unwrap_or(false) {
        engine.options_mut().missing_key = MissingKey::Error;
    }
}

fn run_renderables(case: &Yaml, tally: &mut Tally) {
    let name = case["name"].as_str().unwrap_or("?");
    let mut engine = Engine::new(landscaper_chart::helm::funcs::helm_funcs());
    configure(&mut engine, case);
    let mut names = Vec::new();
    for (key, template) in case["templates"].as_mapping().into_iter().flatten() {
        let key = key.as_str().unwrap_or_default().to_string();
        match engine.add_template(&key, &text(template)) {
            Ok(()) => names.push(key),
            Err(error) => {
                if let Some(function) = missing_function(&error)
                    && !case["expectError"]
                        .as_str()
                        .unwrap_or("")
                        .contains(&function)
                {
                    tally.skip(&format!("needs {function}"));
                    return;
                }
                check_outcome(case, name, Err(error), tally);
                return;
            }
        }
    }
    let dot = helm_values(&case["dot"]);
    let rendered = render_set(&engine, &names, &|_| dot.clone());
    check_outcome(case, name, rendered, tally);
}

fn check_outcome(
    case: &Yaml,
    name: &str,
    rendered: Result<BTreeMap<String, String>, Error>,
    tally: &mut Tally,
) {
    let want_error = case["wantError"].as_bool().unwrap_or(false);
    match (rendered, want_error) {
        (Err(error), true) if error_matches(case, &error) => tally.passed += 1,
        (Err(error), true) => tally.failures.push(format!(
            "{name}: error {:?} (trace {:?}) does not match {:?}",
            error.helm_message(),
            error.trace(),
            case["expectError"]
        )),
        (Err(error), false) => match missing_function(&error) {
            Some(function) => tally.skip(&format!("needs {function}")),
            None => tally
                .failures
                .push(format!("{name}: unexpected error {error}")),
        },
        (Ok(out), true) => tally
            .failures
            .push(format!("{name}: expected an error, got {out:?}")),
        (Ok(out), false) => {
            for (path, expected) in case["expect"].as_mapping().into_iter().flatten() {
                let path = path.as_str().unwrap_or_default();
                let expected = text(expected);
                if out.get(path) != Some(&expected) {
                    tally.failures.push(format!(
                        "{name}: {path} rendered {:?}, want {expected:?}",
                        out.get(path)
                    ));
                    return;
                }
            }
            tally.passed += 1;
        }
    }
}

/// `.Values` for a chart without subcharts: user values over chart defaults.
fn coalesce(defaults: &Value, user: &Value) -> Value {
    match (defaults, user) {
        (Value::Map(d), Value::Map(u)) => {
            let merged = d.shallow_copy();
            for (key, value) in u.entries() {
                let combined = match merged.get(&key) {
                    Some(existing) => coalesce(&existing, &value),
                    None => value,
                };
                merged.insert(key, combined);
            }
            Value::Map(merged)
        }
        (_, Value::Nil) => defaults.clone(),
        _ => user.clone(),
    }
}

fn run_chart(case: &Yaml, tally: &mut Tally) {
    let name = case["name"].as_str().unwrap_or("?");
    let chart = &case["chart"];
    if chart.get("dependencies").is_some()
        || chart.get("files").is_some()
        || case.get("lookup").is_some()
        || case["engine"].get("customTemplateFuncs").is_some()
    {
        tally.skip("needs the chart renderer");
        return;
    }
    let chart_name = chart["name"].as_str().unwrap_or_default();
    let mut engine = Engine::new(landscaper_chart::helm::funcs::helm_funcs());
    configure(&mut engine, case);
    let mut names: Vec<String> = chart["templates"]
        .as_mapping()
        .into_iter()
        .flatten()
        .map(|(k, _)| format!("{chart_name}/{}", k.as_str().unwrap_or_default()))
        .collect();
    helm_order(&mut names);
    for full in &names {
        let path = &full[chart_name.len() + 1..];
        let template = text(&chart["templates"][path]);
        if let Err(error) = engine.add_template(full, &template) {
            match missing_function(&error) {
                Some(function) => tally.skip(&format!("needs {function}")),
                None => check_outcome(case, name, Err(error), tally),
            }
            return;
        }
    }
    let values = coalesce(
        &helm_values(&chart["values"]),
        &helm_values(&case["values"]),
    );
    let release = helm_values(&case["release"]);
    let chart_meta = Map::new();
    chart_meta.insert("Name", Value::from(chart_name));
    chart_meta.insert("IsRoot", Value::Bool(true));
    let dot_for = |template_name: &str| {
        let top = Map::new();
        top.insert("Values", values.clone());
        top.insert("Chart", Value::Map(chart_meta.clone()));
        if !release.is_nil() {
            top.insert("Release", release.clone());
        }
        let info = Map::new();
        info.insert("Name", Value::from(template_name));
        info.insert("BasePath", Value::from(format!("{chart_name}/templates")));
        top.insert("Template", Value::Map(info));
        Value::Map(top)
    };
    let mut ordered = names.clone();
    ordered.sort();
    let rendered = render_set(&engine, &ordered, &dot_for);
    check_outcome(case, name, rendered, tally);
}

#[test]
fn helm_engine_cases() {
    let facts = conformance_file("funcs.yaml");
    let mut tally = Tally::default();
    for case in facts["engine"].as_sequence().into_iter().flatten() {
        match case["kind"].as_str() {
            Some("renderables") => run_renderables(case, &mut tally),
            _ => run_chart(case, &mut tally),
        }
    }
    tally.finish(10);
}
