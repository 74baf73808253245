//! Real charts as DeployItems carry them: a chart folder packaged into a `.tgz` the way
//! `helm package` lays it out (every file under a folder named after the chart), base64
//! encoded for `chart.archive.raw`, in a helm DeployItem.

use std::io::Write;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use flate2::Compression;
use flate2::write::GzEncoder;
use landscaper_api::constants::{annotations, deploy_item_types};
use landscaper_api::core::DeployItem;
use landscaper_chart::helm::chart;
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
