//! Real charts as DeployItems carry them: a chart folder packaged into a `.tgz` the way
//! `helm package` lays it out (every file under a folder named after the chart), base64
//! encoded for `chart.archive.raw`, in a helm DeployItem. And the repository's charts held
//! against the real helm: `helm template` equal to our engine's render, `helm lint` clean.

use std::io::Write;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use flate2::Compression;
use flate2::write::GzEncoder;
use landscaper_api::constants::{annotations, deploy_item_types};
use landscaper_api::core::DeployItem;
use landscaper_chart::helm::chart::{self, Chart, File};
use serde_json::{Value, json};

use crate::LS_NAMESPACE;

/// What a helm DeployItem installs: the release and the inline chart with its values.
pub struct HelmRelease<'a> {
    /// The release name.
    pub name: &'a str,
    /// The release namespace, created when missing.
    pub namespace: &'a str,
    /// The chart as `chart.archive.raw`.
    pub raw: &'a str,
    /// `values`.
    pub values: Value,
}

/// A helm DeployItem `name` in the landscaper namespace for the Target `target` there, with a
/// reconcile requested (nothing runs Executions in these tests).
pub fn helm_deploy_item(name: &str, target: &str, release: HelmRelease<'_>) -> DeployItem {
    let chart = json!({ "archive": { "raw": release.raw } });
    helm_deploy_item_of(
        name,
        target,
        helm_config(release.name, release.namespace, chart, release.values),
    )
}

/// A helm ProviderConfiguration installing `chart` (any of upstream's chart sources) with
/// `values` as release `name` in `namespace`, created when missing.
pub fn helm_config(name: &str, namespace: &str, chart: Value, values: Value) -> Value {
    json!({
        "apiVersion": "helm.deployer.landscaper.gardener.cloud/v1alpha1",
        "kind": "ProviderConfiguration",
        "name": name,
        "namespace": namespace,
        "createNamespace": true,
        "chart": chart,
        "values": values,
    })
}

/// A helm DeployItem `name` in the landscaper namespace with the provider configuration
/// `config`, for the Target `target` there, with a reconcile requested.
pub fn helm_deploy_item_of(name: &str, target: &str, config: Value) -> DeployItem {
    serde_json::from_value(json!({
        "apiVersion": "landscaper.gardener.cloud/v1alpha1",
        "kind": "DeployItem",
        "metadata": {
            "name": name,
            "namespace": LS_NAMESPACE,
            "annotations": { annotations::OPERATION: "reconcile" },
        },
        "spec": {
            "type": deploy_item_types::HELM,
            "target": { "name": target, "namespace": LS_NAMESPACE },
            "config": config,
        },
    }))
    .expect("a DeployItem")
}

/// The bitnami nginx chart of the conformance corpus (dependencies included).
pub fn nginx_chart_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/conformance/charts/nginx/chart")
}

/// The chart folder packaged as a gzipped tar, files in sorted order, without timestamps.
pub fn package(dir: &Path) -> Vec<u8> {
    let name = chart::load(dir)
        .unwrap_or_else(|e| panic!("chart {} loads: {e}", dir.display()))
        .metadata
        .name
        .clone();
    let mut files = Vec::new();
    collect_files(dir, dir, &mut files);
    files.sort();
    let mut builder = tar::Builder::new(GzEncoder::new(Vec::new(), Compression::default()));
    for relative in files {
        let data = std::fs::read(dir.join(&relative)).expect("chart file readable");
        let mut header = tar::Header::new_gnu();
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        builder
            .append_data(&mut header, format!("{name}/{relative}"), data.as_slice())
            .expect("tar entry");
    }
    let mut gz = builder.into_inner().expect("tar finished");
    gz.flush().expect("gzip flushed");
    gz.finish().expect("gzip finished")
}

/// A chart with one ConfigMap, `<release>-greeting`, holding `.Values.greeting`, written
/// below `dir` and returned as `chart.archive.raw`.
pub fn greeting_chart(dir: &Path) -> String {
    let chart = dir.join("greeting");
    std::fs::create_dir_all(chart.join("templates")).expect("chart folder");
    std::fs::write(
        chart.join("Chart.yaml"),
        "apiVersion: v2\nname: greeting\nversion: 0.1.0\n",
    )
    .expect("Chart.yaml");
    std::fs::write(chart.join("values.yaml"), "greeting: unset\n").expect("values.yaml");
    std::fs::write(
        chart.join("templates/configmap.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-greeting\n  namespace: {{ .Release.Namespace }}\ndata:\n  greeting: {{ .Values.greeting | quote }}\n",
    )
    .expect("template");
    archive_raw(&chart)
}

/// The packaged chart, base64 encoded as `chart.archive.raw` expects it.
pub fn archive_raw(dir: &Path) -> String {
    base64::engine::general_purpose::STANDARD.encode(package(dir))
}

fn collect_files(root: &Path, dir: &Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).expect("chart folder readable") {
        let path = entry.expect("chart folder entry").path();
        if path.is_dir() {
            collect_files(root, &path, out);
        } else {
            let relative = path.strip_prefix(root).expect("below the chart folder");
            out.push(relative.to_string_lossy().replace('\\', "/"));
        }
    }
}

/// A chart of this repository, `charts/<name>`.
pub fn repository_chart_dir(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../charts")
        .join(name)
}

/// Values given to a render as helm takes them: `-f` files first, then `--set`s.
#[derive(Clone, Copy, Debug, Default)]
pub struct ValuesInput<'a> {
    /// Values files, merged in order.
    pub files: &'a [&'a Path],
    /// `--set` lines, applied after the files.
    pub sets: &'a [&'a str],
}

impl ValuesInput<'_> {
    /// The flags helm takes for these values.
    pub fn helm_args(&self) -> Vec<String> {
        let mut args = Vec::new();
        for file in self.files {
            args.extend(["-f".to_owned(), file.display().to_string()]);
        }
        for set in self.sets {
            args.extend(["--set".to_owned(), (*set).to_owned()]);
        }
        args
    }
}

/// Renders the chart in `dir` with our engine, as
/// `helm template RELEASE DIR -n NAMESPACE -f FILE… --set …`; the error is the engine's.
pub fn render_chart(
    dir: &Path,
    release: &str,
    namespace: &str,
    values: ValuesInput<'_>,
) -> Result<String, String> {
    use landscaper_chart::formats::tree::Map;
    use landscaper_chart::formats::{strvals, yaml};
    use landscaper_chart::helm::render::{self, ReleaseOptions, TemplateOptions};
    use landscaper_chart::helm::values::merge_maps;

    let chart = chart::load(dir).map_err(|e| format!("chart {}: {e}", dir.display()))?;
    let mut merged = Map::default();
    for file in values.files {
        let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
        let name = file.display().to_string();
        let current = yaml::parse_values_file(&name, &text).map_err(|e| format!("{name}: {e}"))?;
        merge_maps(&mut merged, current);
    }
    for set in values.sets {
        strvals::parse_into(set, &mut merged).map_err(|e| format!("--set {set}: {e}"))?;
    }
    let options = TemplateOptions {
        release: ReleaseOptions {
            name: release.into(),
            namespace: namespace.into(),
            ..Default::default()
        },
        ..Default::default()
    };
    let release = render::install(&chart, &merged, &options).map_err(|e| e.message)?;
    render::template_output(release, &options)
}

/// The real helm, when installed (`.ci/install-tools` sets `HELM`); under CI it must be there.
pub fn helm() -> Option<PathBuf> {
    let found = std::env::var_os("HELM")
        .map(PathBuf::from)
        .filter(|p| p.exists());
    assert!(
        found.is_some() || std::env::var("CI").as_deref() != Ok("true"),
        "CI=true but HELM is not installed"
    );
    if found.is_none() {
        eprintln!("skipped: no helm binary (set HELM, see .ci/install-tools)");
    }
    found
}

/// Runs helm with a fresh home; whether it succeeded, and its stdout followed by its stderr.
pub fn run_helm(helm: &Path, args: &[&str]) -> (bool, String) {
    let home = tempfile::tempdir().expect("a temporary helm home");
    let output = std::process::Command::new(helm)
        .args(args)
        .env("HOME", home.path())
        .output()
        .expect("helm runs");
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    (output.status.success(), text)
}

/// [`run_helm`] off the async runtime, so that a testbed helm talks to keeps answering.
pub async fn run_helm_async(helm: &Path, args: &[&str]) -> (bool, String) {
    let helm = helm.to_owned();
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        run_helm(&helm, &args)
    })
    .await
    .expect("helm ran")
}

/// Asserts, for each of `variants`, that `helm template` of the chart in `dir` prints exactly
/// what our engine renders, and that `helm lint` passes with those values.
pub fn assert_renders_as_helm_does(
    helm: &Path,
    dir: &Path,
    release: &str,
    namespace: &str,
    variants: &[ValuesInput<'_>],
) {
    let dir_text = dir.to_str().expect("a UTF-8 chart path");
    for values in variants {
        let flags = values.helm_args();
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        let mut args = vec!["template", release, dir_text, "--namespace", namespace];
        args.extend(&flags);
        let (ok, helm_output) = run_helm(helm, &args);
        assert!(ok, "helm template failed for {values:?}: {helm_output}");
        let ours = render_chart(dir, release, namespace, *values)
            .unwrap_or_else(|e| panic!("our render failed for {values:?}: {e}"));
        assert_eq!(
            ours, helm_output,
            "our render of {dir_text} differs from helm's for {values:?}"
        );
        let mut lint = vec!["lint", dir_text, "--strict"];
        lint.extend(&flags);
        let (ok, lint_output) = run_helm(helm, &lint);
        assert!(ok, "helm lint failed for {values:?}: {lint_output}");
    }
}

/// Asserts that the chart `packaged` (loaded from an archive) holds the templates and files of
/// the chart folder it was packaged from; `hint` says what differs and how to regenerate it.
#[track_caller]
pub fn assert_packaged_from(packaged: &Chart, folder: &Chart, hint: &str) {
    assert_eq!(
        contents(&packaged.templates),
        contents(&folder.templates),
        "{hint}: the templates differ"
    );
    assert_eq!(
        contents(&packaged.files),
        contents(&folder.files),
        "{hint}: the files differ"
    );
}

/// Names and contents, sorted by name: the times differ by design (an archive keeps its
/// entries' times, a checkout has the clone's).
fn contents(files: &[File]) -> Vec<(&str, &[u8])> {
    let mut files: Vec<_> = files
        .iter()
        .map(|file| (file.name.as_str(), &file.data.read().unwrap()[..]))
        .collect();
    files.sort();
    files
}
