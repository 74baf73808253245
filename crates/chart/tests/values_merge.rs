//! Helm's values-coalescing facts (`shared/conformance/helm/values-merge.yaml`): every case's
//! assertions, and for the `CoalesceValues` cases the complete `.Values` helm v4.1.4 gave the
//! root chart (`helm414.rootValues`). Cases whose `helm414.result` is `differs` test behaviour
//! newer than v4.1.4; for them only what v4.1.4 printed is checked.

use std::path::{Path, PathBuf};

use landscaper_chart::engine::value::Value;
use landscaper_chart::engine::{Engine, MissingKey};
use landscaper_chart::formats::tree::{Data, Map};
use landscaper_chart::formats::yaml;
use landscaper_chart::helm::chart::{Chart, Metadata};
use landscaper_chart::helm::values::{
    Warnings, coalesce_tables, coalesce_values, coalesce_values_taking, merge_tables, merge_values,
    process_dependencies,
};
use serde_yaml_ng::Value as Yaml;

fn facts() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/helm/values-merge.yaml")
}

/// Test data as Helm values: YAML through the same reader as values files.
fn data(y: &Yaml) -> Data {
    let text = serde_yaml_ng::to_string(y).expect("re-encode YAML");
    yaml::parse_value(&text).expect("values")
}

fn map(y: &Yaml) -> Map {
    match data(y) {
        Data::Map(m) => m,
        _ => Map::default(),
    }
}

fn chart(name: &str, values: &Yaml, subcharts: &Yaml) -> Chart {
    Chart {
        metadata: Metadata {
            name: name.to_string(),
            version: "0.1.0".to_string(),
            api_version: "v2".to_string(),
            ..Metadata::default()
        },
        values: map(values),
        dependencies: subcharts
            .as_sequence()
            .into_iter()
            .flatten()
            .map(|s| {
                chart(
                    s["name"].as_str().unwrap_or(""),
                    &s["values"],
                    &s["subcharts"],
                )
            })
            .collect(),
        ..Chart::default()
    }
}

fn lookup<'d>(root: &'d Data, path: &str) -> Option<&'d Data> {
    path.split('.')
        .try_fold(root, |d, key| d.as_map()?.get(key))
}

fn check(
    name: &str,
    result: &Data,
    warnings: &Warnings,
    expect: &Yaml,
    failures: &mut Vec<String>,
) {
    let mut fail = |what: String| failures.push(format!("{name}: {what}"));
    for t in expect["templates"].as_sequence().into_iter().flatten() {
        let tpl = t["tpl"].as_str().unwrap_or("");
        let mut engine = Engine::new(landscaper_chart::helm::funcs::helm_funcs());
        engine.options_mut().missing_key = MissingKey::Default;
        let rendered = engine
            .add_template("t", tpl)
            .and_then(|_| engine.render("t", &Value::from_data(result)))
            .map_err(|e| e.to_string());
        let want = t["output"].as_str().unwrap_or("");
        if rendered.as_deref() != Ok(want) {
            fail(format!("{tpl} gave {rendered:?}, want {want:?}"));
        }
    }
    for p in expect["absent"].as_sequence().into_iter().flatten() {
        let p = p.as_str().unwrap_or("");
        if lookup(result, p).is_some() {
            fail(format!("{p} should be absent"));
        }
    }
    for p in expect["present"].as_sequence().into_iter().flatten() {
        let p = p.as_str().unwrap_or("");
        if lookup(result, p).is_none() {
            fail(format!("{p} should be present"));
        }
    }
    for p in expect["presentNull"].as_sequence().into_iter().flatten() {
        let p = p.as_str().unwrap_or("");
        if lookup(result, p) != Some(&Data::Null) {
            fail(format!("{p} should be null"));
        }
    }
    for p in expect["isMap"].as_sequence().into_iter().flatten() {
        let p = p.as_str().unwrap_or("");
        if !matches!(lookup(result, p), Some(Data::Map(_))) {
            fail(format!("{p} should be a map"));
        }
    }
    if let Some(equals) = expect["equals"].as_mapping() {
        for (k, v) in equals {
            let k = k.as_str().unwrap_or("");
            if lookup(result, k) != Some(&data(v)) {
                fail(format!(
                    "{k} is {:?}, want {:?}",
                    lookup(result, k),
                    data(v)
                ));
            }
        }
    }
    for w in expect["warningsContain"]
        .as_sequence()
        .into_iter()
        .flatten()
    {
        let w = w.as_str().unwrap_or("");
        if !warnings.0.iter().any(|x| x.contains(w)) {
            fail(format!("no warning {w:?} in {:?}", warnings.0));
        }
    }
}

#[test]
fn helm_values_coalescing_facts() {
    let text = std::fs::read_to_string(facts()).expect("values-merge.yaml");
    let doc: Yaml = serde_yaml_ng::from_str(&text).expect("values-merge.yaml parses");
    let mut failures = Vec::new();
    let mut checked = 0;
    for case in doc["cases"].as_sequence().expect("cases") {
        let name = case["name"].as_str().unwrap_or("");
        let function = case["function"].as_str().unwrap_or("");
        let helm414 = case["helm414"]["result"].as_str().unwrap_or("");
        let mut warnings = Warnings::default();
        let user = map(&case["userValues"]);
        let result = match function {
            "CoalesceValues"
            | "MergeValues"
            | "coalesce (CoalesceValues internals, with a warning printer)" => {
                let c = chart(
                    case["chartName"].as_str().unwrap_or(""),
                    &case["chartValues"],
                    &case["subcharts"],
                );
                let out = if function == "MergeValues" {
                    merge_values(&c, &user, &mut warnings)
                } else {
                    let out = coalesce_values(&c, &user, &mut warnings);
                    // What a render does, done with the chart: the same, and the defaults gone.
                    let mut taken_from = c.clone();
                    let taken =
                        coalesce_values_taking(&mut taken_from, &user, &mut Warnings::default());
                    if taken != out || !taken_from.values.is_empty() {
                        failures.push(format!(
                            "{name}: coalescing the chart's own defaults gave {taken:?}, leaving {:?}",
                            taken_from.values
                        ));
                    }
                    out
                };
                if case["expect"]["userValuesUnchanged"].as_bool() == Some(true)
                    && user != map(&case["userValues"])
                {
                    failures.push(format!("{name}: user values were modified"));
                }
                if let Some(root) = case["helm414"].get("rootValues") {
                    // The whole pipeline `helm template` runs, against what v4.1.4 printed.
                    let mut c = c.clone();
                    let mut w = Warnings::default();
                    let full = process_dependencies(&mut c, &user, &mut w)
                        .and_then(|_| coalesce_values_taking(&mut c, &user, &mut w));
                    if full.as_ref().map(|m| Data::Map(m.clone())) != Ok(data(root)) {
                        failures.push(format!(
                            "{name}: root values {full:?}, helm v4.1.4 {:?}",
                            data(root)
                        ));
                    }
                    // The lines helm v4.1.4 logged on stderr. Their order among the keys of one
                    // table follows Go's random map iteration, so compare them sorted.
                    let mut logged: Vec<&str> = case["helm414"]["stderrWarnings"]
                        .as_sequence()
                        .into_iter()
                        .flatten()
                        .filter_map(Yaml::as_str)
                        .collect();
                    logged.sort_unstable();
                    let mut ours: Vec<&str> = w.0.iter().map(String::as_str).collect();
                    ours.sort_unstable();
                    if ours != logged {
                        failures.push(format!(
                            "{name}: warnings {:?}, helm v4.1.4 logged {logged:?}",
                            w.0
                        ));
                    }
                }
                Data::Map(out.expect("coalescing succeeds"))
            }
            f if f.starts_with("CoalesceTables") || f.starts_with("MergeTables") => {
                let mut dst = map(&case["dst"]);
                let src = map(&case["src"]);
                if f.starts_with("CoalesceTables") {
                    coalesce_tables(&mut dst, src, &mut warnings);
                } else {
                    merge_tables(&mut dst, src, &mut warnings);
                }
                Data::Map(dst)
            }
            other => panic!("{name}: unknown function {other}"),
        };
        checked += 1;
        if helm414 != "differs" {
            check(name, &result, &warnings, &case["expect"], &mut failures);
        }
    }
    assert_eq!(checked, 12);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
