//! `landscaper-agent template` against helm's truth data: Helm's own `helm template` golden
//! cases (`shared/conformance/helm/template-cases.yaml`) and real charts with recorded helm
//! v4.1.4 output (`shared/conformance/charts/cases.yaml`), byte for byte.
//!
//! Each test asserts the exact set of failing case ids, so both a regression and an
//! improvement make it fail (then the set below is updated).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use regex::Regex;
use serde_yaml_ng::Value as Yaml;

fn shared() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/conformance")
}

/// The agent with none of this machine's namespace settings: helm's goldens were recorded
/// without `$HELM_NAMESPACE` or a kubeconfig naming one.
fn agent() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_landscaper-agent"));
    command.env_remove("HELM_NAMESPACE").env(
        "KUBECONFIG",
        std::env::temp_dir().join("landscaper-no-kubeconfig"),
    );
    command
}

fn load(path: &Path) -> Yaml {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn strings(v: &Yaml) -> Vec<String> {
    v.as_sequence()
        .map(|s| {
            s.iter()
                .map(|x| x.as_str().map(str::to_owned).unwrap_or_default())
                .collect()
        })
        .unwrap_or_default()
}

/// Runs `template` with `args` in `dir`; returns stdout followed by stderr, and success.
fn run_template(dir: &Path, args: &[String]) -> (String, bool) {
    let out = agent()
        .arg("template")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run landscaper-agent");
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    (text.replace("\r\n", "\n"), out.status.success())
}

/// Helm's cases still failing (none today).
const TEMPLATE_CASES_FAILING: &[&str] = &[];

#[test]
fn helm_template_golden_cases() {
    let dir = shared().join("helm");
    let cases = load(&dir.join("template-cases.yaml"));
    let mut failing = BTreeSet::new();
    let mut count = 0;
    for case in cases["cases"].as_sequence().expect("cases") {
        count += 1;
        let id = case["id"].as_str().unwrap_or_default().to_string();
        let mut args = strings(&case["args"]);
        args.extend(strings(&case["verifiedWithExtraArgs"]));
        let golden = std::fs::read_to_string(
            dir.join("golden")
                .join(case["golden"].as_str().unwrap_or_default()),
        )
        .expect("golden");
        // The golden's usage text names helm's command; ours names ours.
        let golden = golden
            .replace("\"helm template\"", "\"landscaper-agent template\"")
            .replace("Usage:  helm template", "Usage:  landscaper-agent template");
        let want_error = case["wantError"].as_bool().unwrap_or(false);
        let runs = 1 + case["repeat"].as_u64().unwrap_or(0);
        for _ in 0..runs {
            let (mut output, ok) = run_template(&dir, &args);
            if let Some(prefix) = case["verifiedDroppingLinesWithPrefix"].as_str() {
                output = output
                    .split_inclusive('\n')
                    .filter(|l| !l.starts_with(prefix))
                    .collect();
            }
            if output != golden || ok == want_error {
                eprintln!(
                    "--- {id}: exit ok={ok}\n{}",
                    first_difference(&golden, &output)
                );
                failing.insert(id.clone());
                break;
            }
        }
    }
    assert_eq!(count, 24, "template-cases.yaml has 24 cases");
    let expected: BTreeSet<String> = TEMPLATE_CASES_FAILING
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(failing, expected, "failing template cases changed");
}

/// Real-chart cases still failing (none today).
const CHART_CASES_FAILING: &[&str] = &[];

#[test]
fn real_chart_cases() {
    let dir = shared().join("charts");
    let cases = load(&dir.join("cases.yaml"));
    let release = cases["release"].as_str().unwrap_or("rel").to_string();
    let mut failing = BTreeSet::new();
    for case in cases["cases"].as_sequence().expect("cases") {
        let name = case["name"].as_str().unwrap_or_default().to_string();
        let values = case["values"].as_str().unwrap_or_default();
        let mut args = vec![
            release.clone(),
            case["chart"].as_str().unwrap_or_default().to_string(),
            "-f".to_string(),
            values.to_string(),
        ];
        args.extend(strings(&case["args"]));
        let out = agent()
            .arg("template")
            .args(&args)
            .current_dir(&dir)
            .output()
            .expect("run landscaper-agent");
        let actual = String::from_utf8_lossy(&out.stdout).into_owned();
        let expected =
            std::fs::read_to_string(dir.join(case["expected"].as_str().unwrap_or_default()))
                .expect("expected output");
        let masks = case["mask"]
            .as_str()
            .map(|m| masks_for(&dir.join(m), values))
            .unwrap_or_default();
        let (actual, expected) = (apply_masks(&actual, &masks), apply_masks(&expected, &masks));
        if !out.status.success() || actual != expected {
            eprintln!(
                "--- {name}: {}\n{}",
                String::from_utf8_lossy(&out.stderr),
                first_difference(&expected, &actual)
            );
            failing.insert(name);
        }
    }
    let expected: BTreeSet<String> = CHART_CASES_FAILING.iter().map(|s| s.to_string()).collect();
    assert_eq!(failing, expected, "failing chart cases changed");
}

fn masks_for(file: &Path, values: &str) -> Vec<Regex> {
    let base = Path::new(values)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_string();
    let doc = load(file);
    doc["masks"]
        .as_sequence()
        .into_iter()
        .flatten()
        .filter(|m| m["values"].is_null() || strings(&m["values"]).contains(&base))
        .map(|m| Regex::new(m["pattern"].as_str().unwrap_or_default()).expect("mask pattern"))
        .collect()
}

/// The README's mask rule: per line, each match's first group (or the whole match) becomes
/// `<masked>`.
fn apply_masks(text: &str, masks: &[Regex]) -> String {
    if masks.is_empty() {
        return text.to_string();
    }
    text.split('\n')
        .map(|line| {
            let mut line = line.to_string();
            for mask in masks {
                line = mask
                    .replace_all(&line, |c: &regex::Captures<'_>| {
                        let whole = c.get(0).map_or("", |m| m.as_str());
                        match c.get(1) {
                            Some(g) => {
                                let start = c.get(0).map_or(0, |m| m.start());
                                format!(
                                    "{}<masked>{}",
                                    &whole[..g.start() - start],
                                    &whole[g.end() - start..]
                                )
                            }
                            None => "<masked>".to_string(),
                        }
                    })
                    .into_owned();
            }
            line
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first differing line with a little context, for the test log.
fn first_difference(expected: &str, actual: &str) -> String {
    let e: Vec<&str> = expected.lines().collect();
    let a: Vec<&str> = actual.lines().collect();
    let at = e
        .iter()
        .zip(&a)
        .position(|(x, y)| x != y)
        .unwrap_or(e.len().min(a.len()));
    format!(
        "line {}: expected {:?}\n         actual   {:?}",
        at + 1,
        e.get(at).copied().unwrap_or("<end>"),
        a.get(at).copied().unwrap_or("<end>")
    )
}
