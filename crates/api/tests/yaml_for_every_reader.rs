//! The YAML we write reads back the same in a YAML 1.1 reader: PyYAML's `safe_load` (as many
//! deployment tools use it) loads every generated CRD, and strings YAML 1.1 gives other
//! meanings stay strings. Runs when python3 with PyYAML is present; with `CI=true` their
//! absence is a failure.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

/// Whether python3 can import PyYAML; panics in CI when it cannot.
fn pyyaml_available() -> bool {
    let found = Command::new("python3")
        .args(["-c", "import yaml"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "python3 with PyYAML is required in CI (pip install pyyaml)"
        );
        eprintln!("python3 with PyYAML not found: skipping");
    }
    found
}

/// What PyYAML's `safe_load` makes of `text`, as JSON; the loader's error when it refuses.
fn pyyaml_load(text: &str) -> Result<Value, String> {
    let mut child = Command::new("python3")
        .args([
            "-c",
            "import json, sys, yaml; json.dump(yaml.safe_load(sys.stdin), sys.stdout)",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 starts");
    child
        .stdin
        .take()
        .expect("piped stdin")
        .write_all(text.as_bytes())
        .expect("YAML written to python3");
    let out = child.wait_with_output().expect("python3 finishes");
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())
}

#[test]
fn every_generated_crd_loads_in_pyyaml_as_generated() {
    if !pyyaml_available() {
        return;
    }
    for crd in landscaper_api::crd::all() {
        let name = landscaper_api::crd::file_name(&crd);
        let loaded = pyyaml_load(&landscaper_api::crd::to_yaml(&crd))
            .unwrap_or_else(|error| panic!("PyYAML refuses {name}: {error}"));
        assert_eq!(loaded, serde_json::to_value(&crd).unwrap(), "{name}");
    }
}

#[test]
fn strings_yaml_11_reads_otherwise_stay_strings() {
    if !pyyaml_available() {
        return;
    }
    let strings = [
        "=",
        "<<",
        "y",
        "n",
        "yes",
        "No",
        "on",
        "OFF",
        "~",
        "null",
        "",
        "0777",
        "0o17",
        "1:20",
        "190:20:30.15",
        "1_000",
        "0x1F",
        "0b101",
        ".inf",
        "-.Inf",
        ".NaN",
        "1e3",
        "2001-12-14",
        "2001-12-14t21:59:43.10-05:00",
        "it's",
        "plain text",
        "10Gi",
    ];
    let value = json!({
        "list": strings,
        "keys": strings.iter().map(|s| (s.to_string(), json!(s))).collect::<serde_json::Map<_, _>>(),
    });
    let text = landscaper_api::yaml::to_string(&value).unwrap();
    assert_eq!(pyyaml_load(&text).unwrap(), value, "{text}");
}
