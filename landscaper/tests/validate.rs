//! `landscaper validate` as the README runs it: our own examples pass, Helm chart folders are
//! rendered rather than read as manifests, and templated files say they need rendering.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs `landscaper validate PATHS…`; returns (success, stdout).
fn validate(paths: &[&Path]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_landscaper"))
        .arg("validate")
        .args(paths)
        .output()
        .expect("landscaper runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn write(dir: &Path, file: &str, text: &str) {
    let path = dir.join(file);
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("folder created");
    std::fs::write(path, text).expect("file written");
}

#[test]
fn validate_examples_finds_no_errors_and_renders_the_example_chart() {
    let examples = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let (success, out) = validate(&[&examples]);
    assert!(success, "{out}");
    assert!(!out.contains("error:"), "{out}");
    assert!(
        out.contains("charts/hello: Helm chart hello 1.0.0 renders with its default values"),
        "{out}"
    );
}

#[test]
fn a_chart_template_error_names_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "broken/Chart.yaml",
        "apiVersion: v2\nname: broken\nversion: 0.1.0\n",
    );
    write(
        dir.path(),
        "broken/templates/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: {{ .Values.missing.deep }}\n",
    );
    let (success, out) = validate(&[dir.path()]);
    assert!(!success, "{out}");
    assert!(
        out.contains("rendering chart broken 0.1.0 with its default values: template: broken/templates/cm.yaml:6:15:"),
        "{out}"
    );
    assert!(out.contains("0 Helm charts rendered"), "{out}");
}

#[test]
fn rendered_chart_output_is_validated_and_library_charts_are_skipped() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "app/Chart.yaml",
        "apiVersion: v2\nname: app\nversion: 0.1.0\n",
    );
    write(
        dir.path(),
        "app/values.yaml",
        "targetType: landscaper.gardener.cloud/kubernetes-cluster\n",
    );
    write(
        dir.path(),
        "app/templates/target.yaml",
        "apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Target\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  type: {{ .Values.targetType }}\n",
    );
    write(
        dir.path(),
        "lib/Chart.yaml",
        "apiVersion: v2\nname: lib\nversion: 0.1.0\ntype: library\n",
    );
    let (success, out) = validate(&[dir.path()]);
    assert!(success, "{out}");
    assert!(out.contains("(rendered) (document 1): Target app"), "{out}");
    assert!(out.contains("skipped: "), "{out}");
    assert!(
        out.contains("library chart lib 0.1.0: nothing to render"),
        "{out}"
    );
}

#[test]
fn a_templated_file_outside_a_chart_says_it_needs_rendering() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "target.yaml",
        "apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Target\nmetadata:\n  name: {{ .Values.name }}\nspec:\n  type: x\n",
    );
    let (success, out) = validate(&[dir.path()]);
    assert!(!success, "{out}");
    assert!(
        out.contains("metadata.name: invalid type: map")
            && out
                .contains("the file holds template directives ({{ … }}) and needs rendering first"),
        "{out}"
    );
}
