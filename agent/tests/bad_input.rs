//! `landscaper-agent template` on broken input: each failure is an `Error: …` line on stderr
//! that names the chart, file and position where it can, the exit status is 1, and nothing
//! panics.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A scratch chart folder, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!(
            "landscaper-agent-bad-input-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("templates")).expect("scratch folder");
        Scratch(dir)
    }

    fn write(&self, path: &str, text: &str) -> &Scratch {
        let file = self.0.join(path);
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent).expect("folder");
        }
        std::fs::write(file, text).expect("write");
        self
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const CHART_YAML: &str = "apiVersion: v2\nname: demo\nversion: 0.1.0\n";

fn template(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_landscaper-agent"))
        .arg("template")
        .args(args)
        .output()
        .expect("run landscaper-agent")
}

/// Asserts a clean failure and returns stderr.
fn failure(out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "stderr: {stderr}");
    assert!(stderr.starts_with("Error: "), "stderr: {stderr}");
    assert!(!stderr.contains("panicked"), "stderr: {stderr}");
    stderr
}

#[test]
fn malformed_chart_yaml_names_file_and_line() {
    let chart = Scratch::new("chart-yaml");
    chart.write(
        "Chart.yaml",
        "apiVersion: v2\nname: demo\nversion: 0.1.0\n  bad: [\n",
    );
    let err = failure(&template(&[chart.path().to_str().unwrap_or("")]));
    assert_eq!(
        err,
        "Error: cannot load Chart.yaml: error converting YAML to JSON: yaml: line 4: mapping values are not allowed in this context\n"
    );
}

#[test]
fn invalid_metadata_is_a_validation_error() {
    let chart = Scratch::new("metadata");
    chart.write("Chart.yaml", "apiVersion: v2\nname: demo\nversion: one\n");
    let err = failure(&template(&[chart.path().to_str().unwrap_or("")]));
    assert_eq!(
        err,
        "Error: validation: chart.metadata.version \"one\" is invalid\n"
    );
}

#[test]
fn missing_dependency_names_it() {
    let chart = Scratch::new("missing-dep");
    chart.write(
        "Chart.yaml",
        &format!("{CHART_YAML}dependencies:\n- name: redis\n  version: 1.x\n  repository: https://127.0.0.1:9/charts\n"),
    );
    let err = failure(&template(&[chart.path().to_str().unwrap_or("")]));
    assert!(
        err.ends_with("found in Chart.yaml, but missing in charts/ directory: redis\n"),
        "{err}"
    );
}

#[test]
fn schema_violation_names_chart_and_values_path() {
    let chart = Scratch::new("schema");
    chart
        .write("Chart.yaml", CHART_YAML)
        .write("values.yaml", "replicas: 1\n")
        .write(
            "values.schema.json",
            r#"{"type": "object", "properties": {"replicas": {"type": "integer", "minimum": 1}}}"#,
        );
    let err = failure(&template(&[
        chart.path().to_str().unwrap_or(""),
        "--set",
        "replicas=0",
    ]));
    assert_eq!(
        err,
        "Error: values don't meet the specifications of the schema(s) in the following chart(s):\ndemo:\n- at '/replicas': minimum: got 0, want 1\n\n"
    );
}

#[test]
fn template_errors_name_template_line_and_column() {
    let chart = Scratch::new("template");
    chart
        .write("Chart.yaml", CHART_YAML)
        .write("templates/cm.yaml", "a: 1\nb: {{ .Values.x.y.z }}\n");
    let err = failure(&template(&[chart.path().to_str().unwrap_or("")]));
    assert!(
        err.starts_with("Error: demo/templates/cm.yaml:2:13\n"),
        "{err}"
    );
    assert!(
        err.contains("nil pointer evaluating interface {}.y"),
        "{err}"
    );

    chart.write(
        "templates/cm.yaml",
        "a: {{ required \"set a\" .Values.a }}\n",
    );
    let err = failure(&template(&[chart.path().to_str().unwrap_or("")]));
    assert_eq!(
        err,
        "Error: execution error at (demo/templates/cm.yaml:1:6): set a\n\nUse --debug flag to render out invalid YAML\n"
    );

    chart.write("templates/cm.yaml", "a: {{ .Values.a\n");
    let err = failure(&template(&[chart.path().to_str().unwrap_or("")]));
    assert!(
        err.starts_with("Error: parse error at (demo/templates/cm.yaml:"),
        "{err}"
    );
}

#[test]
fn invalid_yaml_output_names_the_template() {
    let chart = Scratch::new("yaml");
    chart.write("Chart.yaml", CHART_YAML).write(
        "templates/cm.yaml",
        "kind: ConfigMap\nmetadata:\n  name: x\nbroken\n",
    );
    let err = failure(&template(&[chart.path().to_str().unwrap_or("")]));
    assert!(
        err.starts_with("Error: YAML parse error on demo/templates/cm.yaml: error converting YAML to JSON: yaml: line 5: could not find expected ':'"),
        "{err}"
    );
    let out = template(&[chart.path().to_str().unwrap_or(""), "--debug"]);
    failure(&out);
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains("# Source: demo/templates/cm.yaml\nkind: ConfigMap")
    );
}

#[test]
fn missing_charts_and_files_are_reported() {
    let err = failure(&template(&["./no-such-chart"]));
    assert_eq!(err, "Error: path \"./no-such-chart\" not found\n");
    let chart = Scratch::new("values-file");
    chart.write("Chart.yaml", CHART_YAML);
    let err = failure(&template(&[
        chart.path().to_str().unwrap_or(""),
        "-f",
        "/no/such/values.yaml",
    ]));
    assert_eq!(
        err,
        "Error: open /no/such/values.yaml: no such file or directory\n"
    );
    chart.write("bad.yaml", "a: [\n");
    let bad = chart.path().join("bad.yaml");
    let err = failure(&template(&[
        chart.path().to_str().unwrap_or(""),
        "-f",
        bad.to_str().unwrap_or(""),
    ]));
    assert!(err.contains("failed to parse"), "{err}");
}

#[test]
fn garbage_archives_fail_cleanly() {
    let chart = Scratch::new("archive");
    chart.write("demo-0.1.0.tgz", "this is not a gzip stream");
    let err = failure(&template(&[chart
        .path()
        .join("demo-0.1.0.tgz")
        .to_str()
        .unwrap_or("")]));
    assert!(
        err.contains("does not appear to be a gzipped archive"),
        "{err}"
    );
}

#[test]
fn helm_flags_without_an_implementation_are_rejected_with_the_reason_and_bad_values_refused() {
    let chart = Scratch::new("flags");
    chart.write("Chart.yaml", CHART_YAML);
    let path = chart.path().to_str().unwrap_or("");
    let cases: &[(&[&str], &str)] = &[
        (
            &["--verify"],
            "Error: --verify is not supported by landscaper-agent template: chart provenance (.prov files signed with OpenPGP) is not verified by landscaper-agent\n",
        ),
        (
            &["--dry-run=server"],
            "Error: --dry-run=server is not supported by landscaper-agent template: it asks a cluster, and landscaper-agent template never talks to one\n",
        ),
        // Flags helm ignores in `template` are ignored, but their values checked as helm does.
        (
            &["--wait=bogus"],
            "Error: invalid argument \"bogus\" for \"--wait\" flag: invalid wait input \"bogus\". Valid inputs are watcher, hookOnly, and legacy\n",
        ),
        (
            &["-l", "team"],
            "Error: invalid argument \"team\" for \"-l, --labels\" flag: team must be formatted as key=value\n",
        ),
        (
            &["--post-renderer", "kustomize"],
            "Error: --post-renderer is not supported by landscaper-agent template: helm 4 post-renderers are postrenderer/v1 plugins run by helm's plugin system, which landscaper-agent does not have; pipe the output into the post-renderer instead\n",
        ),
        (
            &["--cert-file", "c.pem"],
            "Error: --cert-file is not supported by landscaper-agent template: TLS client certificates for repositories and registries are not supported\n",
        ),
    ];
    for (flags, want) in cases {
        let mut args = vec![path];
        args.extend(flags.iter());
        assert_eq!(failure(&template(&args)), *want, "{flags:?}");
    }
}

#[test]
fn generate_name_with_a_name_is_an_error() {
    let chart = Scratch::new("generate-name");
    chart.write("Chart.yaml", CHART_YAML);
    let err = failure(&template(&[
        "-g",
        "rel",
        chart.path().to_str().unwrap_or(""),
    ]));
    assert_eq!(
        err,
        "Error: cannot set --generate-name and also specify a name\n"
    );
}

#[test]
fn unwritable_output_dir_names_the_folder() {
    let chart = Scratch::new("output-dir");
    chart
        .write("Chart.yaml", CHART_YAML)
        .write("templates/cm.yaml", "a: 1\n")
        .write("not-a-folder", "");
    let file = chart.path().join("not-a-folder");
    let err = failure(&template(&[
        chart.path().to_str().unwrap_or(""),
        "--output-dir",
        file.to_str().unwrap_or(""),
    ]));
    assert_eq!(
        err,
        format!(
            "Error: stat {}/demo/templates: not a directory\n\nUse --debug flag to render out invalid YAML\n",
            file.display()
        )
    );
}

#[test]
fn malformed_repository_and_registry_configs_name_the_file() {
    let chart = Scratch::new("configs");
    chart.write("repositories.yaml", "repositories: [\n").write(
        "config.json",
        "{\"auths\": {\"127.0.0.1:9\": {\"auth\": \"c2VjcmV0\"}}}",
    );
    let repos = chart.path().join("repositories.yaml");
    let err = failure(&template(&[
        "myrepo/demo",
        "--repository-config",
        repos.to_str().unwrap_or(""),
    ]));
    assert_eq!(
        err,
        format!(
            "Error: couldn't load repositories file ({}): error converting YAML to JSON: yaml: line 1: did not find expected node content\n",
            repos.display()
        )
    );
    // base64 of "secret", without the user:password colon: the secret is not printed.
    let registry = chart.path().join("config.json");
    let err = failure(&template(&[
        "oci://127.0.0.1:9/charts/demo",
        "--version",
        "1.0.0",
        "--registry-config",
        registry.to_str().unwrap_or(""),
    ]));
    assert_eq!(
        err,
        format!(
            "Error: loading registry config {}: auth of 127.0.0.1:9 is not base64 of user:password\n",
            registry.display()
        )
    );
    assert!(
        !err.contains("secret") && !err.contains("c2VjcmV0"),
        "{err}"
    );
}

#[test]
fn chart_loading_errors_read_as_helm_v4_1_4_prints_them() {
    let chart = Scratch::new("loading");
    let path = chart.path().to_str().unwrap_or("").to_string();
    let err = failure(&template(&[&path]));
    assert_eq!(
        err,
        format!(
            "Error: unable to detect chart at {path}/Chart.yaml: open {path}/Chart.yaml: no such file or directory\n"
        )
    );

    chart
        .write("Chart.yaml", CHART_YAML)
        .write("values.yaml", "items: [a, b\n");
    let err = failure(&template(&[&path]));
    assert_eq!(
        err,
        "Error: cannot load values.yaml: cannot unmarshal yaml document: error converting YAML to JSON: yaml: line 1: did not find expected ',' or ']'\n"
    );

    chart
        .write("values.yaml", "")
        .write("Chart.yaml", "apiVersion: v9\nname: demo\nversion: 0.1.0\n");
    assert_eq!(
        failure(&template(&[&path])),
        "Error: unsupported chart version\n"
    );
    chart.write("Chart.yaml", "apiVersion: v3\nname: demo\nversion: 0.1.0\n");
    assert_eq!(
        failure(&template(&[&path])),
        "Error: an error occurred while checking for chart dependencies. You may need to run `helm dependency build` to fetch missing dependencies: unsupported chart dependency type\n"
    );
}

#[test]
fn unreachable_registry_is_a_one_line_error_with_the_cause() {
    // Port 9 (discard) on loopback: nothing listens there.
    for (args, reference) in [
        (
            &[
                "oci://127.0.0.1:9/charts/demo",
                "--version",
                "1.0.0",
                "--plain-http",
            ][..],
            "oci://127.0.0.1:9/charts/demo:1.0.0",
        ),
        (
            &["oci://127.0.0.1:9/charts/demo", "--plain-http"][..],
            "oci://127.0.0.1:9/charts/demo",
        ),
    ] {
        let err = failure(&template(args));
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with(&format!("Error: failed to fetch {reference}: ")),
            "{err}"
        );
        assert!(err.contains("Connection refused"), "{err}");
    }
}
