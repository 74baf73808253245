//! The format layer against real Helm: recorded helm v4.1.4 outputs (generated with the
//! reference binary on edge-case and random values, see `data/helm414/`) and the rows of the
//! shared conformance tables that these functions answer without the template engine.

use std::path::PathBuf;

use landscaper_chart::formats::tree::{Data, Map};
use landscaper_chart::{
    formats::json, formats::strvals, formats::toml, formats::yaml, helm::semver,
};

fn fixture(name: &str) -> Vec<Data> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/helm414")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let doc = json::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    match doc.as_map().and_then(|m| m.get("cases")) {
        Some(Data::List(cases)) => cases.clone(),
        _ => panic!("{}: no cases", path.display()),
    }
}

fn text<'a>(case: &'a Data, key: &str) -> &'a str {
    case.as_map()
        .and_then(|m| m.get(key))
        .and_then(Data::as_str)
        .unwrap_or_else(|| panic!("case without {key}: {case:?}"))
}

/// Data whose YAML does not read back the same, in go-yaml too: a `<<` key written plain
/// becomes a merge key, and the YAML 1.1 line breaks NEL, LS, PS fold.
fn reads_back_differently(d: &Data) -> bool {
    let breaks = ['\u{85}', '\u{2028}', '\u{2029}'];
    match d {
        Data::String(s) => s.contains(breaks),
        Data::List(items) => items.iter().any(reads_back_differently),
        Data::Map(m) => m
            .iter()
            .any(|(k, v)| k == "<<" || k.contains(breaks) || reads_back_differently(v)),
        _ => false,
    }
}

#[test]
fn encoders_match_helm_on_recorded_values() {
    let cases = fixture("encoders.json");
    assert!(cases.len() > 200);
    for case in &cases {
        let name = text(case, "name");
        let value = json::parse(text(case, "value")).unwrap();
        assert_eq!(yaml::to_yaml(&value), text(case, "toYaml"), "toYaml {name}");
        assert_eq!(
            yaml::to_yaml_pretty(&value),
            text(case, "toYamlPretty"),
            "toYamlPretty {name}"
        );
        assert_eq!(
            json::to_json(&value).unwrap(),
            text(case, "toJson"),
            "toJson {name}"
        );
        assert_eq!(
            json::to_pretty_json(&value).unwrap(),
            text(case, "toPrettyJson"),
            "toPrettyJson {name}"
        );
        assert_eq!(
            json::to_raw_json(&value).unwrap(),
            text(case, "toRawJson"),
            "toRawJson {name}"
        );
        if let Some(Data::String(want)) = case.as_map().and_then(|m| m.get("toToml")) {
            assert_eq!(&toml::to_toml(&value).unwrap(), want, "toToml {name}");
        }
        // The whole document (toYaml trims its last newline) reads back as the same data.
        let document = yaml::marshal(&value).unwrap();
        if !reads_back_differently(&value) {
            assert_eq!(
                yaml::parse_value(&document).unwrap(),
                value,
                "read back {name}"
            );
        }
    }
}

#[test]
fn semver_compare_matches_helm_on_recorded_pairs() {
    let cases = fixture("semver_compare.json");
    assert!(cases.len() > 500);
    for case in &cases {
        let c = text(case, "constraint");
        let v = text(case, "version");
        let want = case.as_map().and_then(|m| m.get("matches")) == Some(&Data::Bool(true));
        assert_eq!(semver::semver_compare(c, v), Ok(want), "{c} vs {v}");
    }
}

#[test]
fn strvals_match_helm_on_recorded_lines() {
    let cases = fixture("strvals.json");
    assert!(cases.len() > 40);
    for case in &cases {
        let flag = text(case, "flag");
        let line = text(case, "line");
        let mut values = Map::default();
        let result = match flag {
            "--set" => strvals::parse_into(line, &mut values),
            "--set-string" => strvals::parse_into_string(line, &mut values),
            "--set-json" => strvals::parse_json_into(line, &mut values),
            "--set-literal" => strvals::parse_literal_into(line, &mut values),
            other => panic!("unknown flag {other}"),
        };
        let fields = case.as_map().unwrap();
        match (result, fields.get("values"), fields.get("error")) {
            (Ok(()), Some(Data::String(want)), _) => {
                assert_eq!(
                    &json::to_json(&Data::Map(values)).unwrap(),
                    want,
                    "{flag} {line}"
                );
            }
            (Err(e), _, Some(Data::String(want))) => {
                // Helm's command wraps --set-json errors without their detail.
                if flag != "--set-json" {
                    let want = want
                        .strip_prefix(&format!("Error: failed parsing {flag} data: "))
                        .unwrap_or(want);
                    assert_eq!(e.0, want, "{flag} {line}");
                }
            }
            (got, _, _) => panic!("{flag} {line}: got {got:?}, want {case:?}"),
        }
    }
}

/// The shared conformance tables (`../shared/conformance/helm/` beside the repository).
fn conformance_rows(file: &str, section: &str) -> Vec<Data> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/conformance/helm")
        .join(file);
    let src = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let doc = yaml::parse_yaml(&src).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let doc = table_data(&doc);
    match doc.as_map().and_then(|m| m.get(section)) {
        Some(Data::List(rows)) => rows.clone(),
        _ => panic!("{}: no {section}", path.display()),
    }
}

/// The tables hold `.nan` and `.inf`, which Helm values refuse; keep them as floats here.
fn table_data(y: &yaml::Yaml) -> Data {
    match y {
        yaml::Yaml::Null => Data::Null,
        yaml::Yaml::Bool(b) => Data::Bool(*b),
        yaml::Yaml::Int(i) => Data::Float(*i as f64),
        yaml::Yaml::Uint(u) => Data::Float(*u as f64),
        yaml::Yaml::Float(f) => Data::Float(*f),
        yaml::Yaml::String(s) => Data::String(s.clone()),
        yaml::Yaml::Seq(items) => Data::List(items.iter().map(table_data).collect()),
        yaml::Yaml::Map(entries) => Data::Map(
            entries
                .iter()
                .map(|(k, v)| (yaml::key_string(k, v).unwrap_or_default(), table_data(v)))
                .collect(),
        ),
    }
}

/// Answers a row whose template is a single call of a format function, if it is one.
fn evaluate(tpl: &str, vars: &Data) -> Option<Result<String, String>> {
    let field = |name: &str| {
        vars.as_map()
            .and_then(|m| m.get(name))
            .cloned()
            .unwrap_or_default()
    };
    Some(match tpl.trim() {
        "{{ toYaml . }}" => Ok(yaml::to_yaml(vars)),
        "{{ toYamlPretty . }}" => Ok(yaml::to_yaml_pretty(vars)),
        "{{ toJson . }}" => json::to_json(vars).map_err(|e| e.to_string()),
        "{{ toToml . }}" => toml::to_toml(vars).map_err(|e| e.to_string()),
        "{{.Top | toJson}}" => json::to_json(&field("Top")).map_err(|e| e.to_string()),
        "{{.Top | toPrettyJson}}" => json::to_pretty_json(&field("Top")).map_err(|e| e.to_string()),
        "{{.Top | toRawJson}}" => json::to_raw_json(&field("Top")).map_err(|e| e.to_string()),
        t => {
            let args = t.strip_prefix("{{ semverCompare ")?.strip_suffix(" }}")?;
            let parts: Vec<&str> = args.split('"').collect();
            let [_, constraint, _, version, _] = parts.as_slice() else {
                return None;
            };
            semver::semver_compare(constraint, version)
                .map(|b| b.to_string())
                .map_err(|e| e.to_string())
        }
    })
}

#[test]
fn conformance_rows_answered_by_the_format_layer() {
    let mut rows = conformance_rows("funcs.yaml", "funcs");
    rows.extend(conformance_rows("funcs.yaml", "mustFuncs"));
    rows.extend(conformance_rows("sprig.yaml", "cases"));
    let mut checked = 0;
    for row in &rows {
        let Some(fields) = row.as_map() else { continue };
        let Some(tpl) = fields.get("tpl").and_then(Data::as_str) else {
            continue;
        };
        // Rows whose inputs need Go types that values cannot carry are not Helm facts.
        if fields.contains_key("goTypes") || fields.contains_key("varsGo") {
            continue;
        }
        let helm = fields.get("helm414").and_then(Data::as_map);
        let result = helm.and_then(|h| h.get("result")).and_then(Data::as_str);
        if result != Some("same") {
            continue;
        }
        let vars = fields
            .get("vars")
            .cloned()
            .unwrap_or(Data::Map(Map::default()));
        let Some(got) = evaluate(tpl, &vars) else {
            continue;
        };
        let id = fields.get("id").and_then(Data::as_str).unwrap_or("?");
        match fields.get("expect") {
            Some(Data::String(want)) => assert_eq!(got.as_deref(), Ok(want.as_str()), "{id}"),
            _ => assert!(got.is_err(), "{id}: expected an error, got {got:?}"),
        }
        checked += 1;
    }
    assert!(checked >= 8, "only {checked} rows checked");
}
