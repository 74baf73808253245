//! The deployer library's test clusters and helpers (its `tests/common`), and the helm
//! deployer's own: starting it, chart archives, and the real helm CLI.

#![allow(dead_code)]

#[path = "../../../deployer/tests/common/mod.rs"]
mod library;

pub use library::*;

use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use kube::api::ListParams;
use landscaper_api::constants::deploy_item_types;
use landscaper_api::core::DeployItem;
use landscaper_helm_deployer::release;
use serde_json::{Value, json};

/// The helm deployer next to an [`Env`]'s clusters, and its items.
impl Env {
    /// Starts the helm deployer on the landscaper cluster (items and Secrets there).
    pub fn start_helm_deployer(&self) -> Running {
        start(landscaper_helm_deployer::setup(
            self.ls.clone(),
            self.ls.clone(),
            config(deploy_item_types::HELM),
        ))
    }

    /// Creates the helm item `web` of `config` for the Target `cluster` and gives it a
    /// pending job.
    pub async fn helm_item(&self, config: Value) -> DeployItem {
        self.item("web", deploy_item_types::HELM, Some("cluster"), config)
            .await
    }
}

/// The release records (Secrets) of release `web` in `apps` of the target cluster, each with
/// its decoded release, oldest first.
pub async fn release_records(env: &Env) -> Vec<(Secret, release::Release)> {
    let secrets: Api<Secret> = Api::namespaced(env.target.clone(), "apps");
    let mut out: Vec<_> = secrets
        .list(&ListParams::default().labels("owner=helm,name=web"))
        .await
        .expect("release records listed")
        .items
        .into_iter()
        .map(|s| {
            let body = release::decode(&s.data.as_ref().unwrap()["release"].0).unwrap();
            (s, body)
        })
        .collect();
    out.sort_by_key(|(_, body)| body.version);
    out
}

/// A helm item's configuration: release `release` in namespace `apps` (created when
/// missing) from `chart`, with `values`.
pub fn provider_config(release: &str, chart: Value, values: Value) -> Value {
    json!({
        "apiVersion": "helm.deployer.landscaper.gardener.cloud/v1alpha1",
        "kind": "ProviderConfiguration",
        "name": release,
        "namespace": "apps",
        "createNamespace": true,
        "chart": chart,
        "values": values,
    })
}

/// [`provider_config`] of release `web` from the inline base64 chart `archive`.
pub fn helm_config(archive: &str, values: Value) -> Value {
    provider_config("web", json!({"archive": {"raw": archive}}), values)
}

/// A chart template of a ConfigMap `<release>-extra` rendered only when the value `extra` is
/// true.
pub const EXTRA_CONFIGMAP: &str = r#"{{- if .Values.extra }}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-extra
data:
  k: v
{{- end }}
"#;

/// A helm chart whose one template looks up ConfigMap `data/probe` in the target cluster.
pub fn lookup_probe_archive() -> String {
    chart_archive(&[
        (
            "probe/Chart.yaml",
            "apiVersion: v2\nname: probe\nversion: 0.1.0\n",
        ),
        (
            "probe/templates/probe.yaml",
            r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-probe
data:
  seen: {{ lookup "v1" "ConfigMap" "data" "probe" | len | quote }}
"#,
        ),
    ])
}

/// A base64 `.tgz` of a chart from `(path, text)` pairs, paths starting with the chart's
/// directory (`demo/Chart.yaml`), as `archive.raw` takes it.
pub fn chart_archive(files: &[(&str, &str)]) -> String {
    use base64::Engine as _;
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let mut builder = tar::Builder::new(gz);
    for (path, text) in files {
        let mut header = tar::Header::new_gnu();
        header.set_size(text.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        builder
            .append_data(&mut header, path, text.as_bytes())
            .unwrap();
    }
    let bytes = builder.into_inner().unwrap().finish().unwrap();
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The real helm (`$HELM`, else `helm` on `PATH`) pointed at the target cluster, with its
/// config, cache and data homes in the testbed's directory; `None` with the reason printed
/// when there is none, except under `CI=true`, where a missing helm fails the test.
pub fn helm(env: &Env) -> Option<std::process::Command> {
    helm_at(env, env.target_cluster())
}

/// [`helm`] pointed at `cluster`.
pub fn helm_at(env: &Env, cluster: &testbed::Cluster) -> Option<std::process::Command> {
    let bin = std::env::var_os("HELM")
        .map(std::path::PathBuf::from)
        .or_else(|| {
            std::env::var_os("PATH").and_then(|paths| {
                std::env::split_paths(&paths)
                    .map(|dir| dir.join("helm"))
                    .find(|p| p.is_file())
            })
        });
    let Some(bin) = bin else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true but no helm found: set HELM or put helm on PATH (.ci/install-tools)"
        );
        eprintln!(
            "skipping the helm CLI checks: no helm found (set HELM or run .ci/install-tools)"
        );
        return None;
    };
    let home = env.bed.kubeconfig_dir().join("helm-home");
    let mut cmd = std::process::Command::new(bin);
    cmd.arg("--kubeconfig")
        .arg(cluster.kubeconfig_path())
        .env("HELM_CONFIG_HOME", home.join("config"))
        .env("HELM_CACHE_HOME", home.join("cache"))
        .env("HELM_DATA_HOME", home.join("data"));
    Some(cmd)
}

/// Runs a helm command off the runtime and returns its stdout, failing the test on failure.
pub async fn run_helm(cmd: std::process::Command, args: &[&str]) -> String {
    let (ok, stdout, stderr) = try_helm(cmd, args).await;
    assert!(ok, "helm {args:?} failed: {stderr}");
    stdout
}

/// Runs a helm command off the runtime; returns (success, stdout, stderr).
pub async fn try_helm(mut cmd: std::process::Command, args: &[&str]) -> (bool, String, String) {
    cmd.args(args);
    let out = tokio::task::spawn_blocking(move || cmd.output().expect("helm starts"))
        .await
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
