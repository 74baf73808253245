//! Benchmark: resolving the bitnami nginx chart (from `../shared/conformance/charts/`) the way
//! the helm deployer does on every reconcile — inline (`archive.raw`) and from a Helm
//! repository on loopback — cold (decode and parse; download) and warm (archive cache on disk
//! and loaded chart in memory). Reports the mean time per resolve and the repository requests.
//!
//! `cargo bench -p landscaper-helm-deployer --bench chart_sources [-- --rounds N]`

use base64::Engine as _;
use landscaper_api::core::DeployItem;
use landscaper_api::deployer::Chart as ChartSource;
use landscaper_deployer::Job;
use landscaper_deployer::contract::interrupt::Interrupt;
use landscaper_deployer::target_access::TargetAccess;
use landscaper_helm_deployer::source::{SourceSettings, Sources};
use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;
use testbed::Testbed;
use testbed::fixtures::chart_repository::{self, ChartRepository, RepoChart, RepoOptions};

fn rounds() -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == "--rounds")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(50)
}

/// The chart folder packed as `nginx/…`.
fn nginx_archive() -> Vec<u8> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/conformance/charts/nginx/chart");
    let mut files = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("chart folder").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let name = format!("nginx/{}", path.strip_prefix(&root).unwrap().display());
                files.push((name, std::fs::read_to_string(&path).expect("text file")));
            }
        }
    }
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(n, t)| (n.as_str(), t.as_str()))
        .collect();
    chart_repository::package(&refs)
}

fn mean_ms(total: std::time::Duration, n: usize) -> f64 {
    total.as_secs_f64() * 1000.0 / n as f64
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(bench(rounds()));
}

async fn bench(rounds: usize) {
    let bed = Testbed::builder().start().await.expect("testbed starts");
    let client = bed.cluster().client();
    let item: DeployItem = serde_json::from_value(json!({
        "apiVersion": "landscaper.gardener.cloud/v1alpha1", "kind": "DeployItem",
        "metadata": {"name": "bench", "namespace": "default"},
        "spec": {"type": "landscaper.gardener.cloud/helm"},
    }))
    .expect("an item");
    let job = Job {
        item: Arc::new(item),
        target: None,
        job_id: "bench".into(),
        force: false,
        interrupt: Interrupt::never(),
        ls_client: client.clone(),
        targets: Arc::new(TargetAccess::new(client)),
    };
    let archive = nginx_archive();
    let version = landscaper_chart::helm::chart::load_archive(&archive)
        .expect("nginx loads")
        .metadata
        .version;
    println!(
        "nginx {version}: archive {} KiB, {rounds} rounds",
        archive.len() / 1024
    );
    let cache = std::env::temp_dir().join(format!("chart-sources-bench-{}", std::process::id()));
    let settings = |loaded_charts| SourceSettings {
        cache_dir: Some(cache.clone()),
        loaded_charts,
        ..SourceSettings::default()
    };

    let raw: ChartSource = serde_json::from_value(json!({"archive": {"raw":
        base64::engine::general_purpose::STANDARD.encode(&archive)}}))
    .expect("a source");
    for (label, loaded) in [
        ("inline, parsed every time", 0),
        ("inline, chart kept in memory", 16),
    ] {
        let sources = Sources::new(settings(loaded));
        let start = Instant::now();
        for _ in 0..rounds {
            sources.resolve(&job, &raw).await.expect("resolves");
        }
        println!(
            "{label}: {:.2} ms per resolve",
            mean_ms(start.elapsed(), rounds)
        );
    }

    let repo = ChartRepository::serve(
        vec![RepoChart {
            name: "nginx".into(),
            version: version.clone(),
            archive: archive.clone(),
        }],
        RepoOptions::default(),
    )
    .expect("repository serves");
    let from_repo: ChartSource = serde_json::from_value(json!({"helmChartRepo": {
        "helmChartRepoUrl": repo.url(), "helmChartName": "nginx", "helmChartVersion": version}}))
    .expect("a source");
    let _ = std::fs::remove_dir_all(&cache);
    let sources = Sources::new(settings(16));
    let start = Instant::now();
    sources.resolve(&job, &from_repo).await.expect("resolves");
    println!(
        "repository, cold (index, download, parse): {:.2} ms, {} requests",
        mean_ms(start.elapsed(), 1),
        repo.requests()
    );
    let before = repo.requests();
    let start = Instant::now();
    for _ in 0..rounds {
        sources.resolve(&job, &from_repo).await.expect("resolves");
    }
    println!(
        "repository, warm (index only; archive from disk, chart from memory): {:.2} ms per resolve, {:.1} requests each",
        mean_ms(start.elapsed(), rounds),
        (repo.requests() - before) as f64 / rounds as f64
    );
    let _ = std::fs::remove_dir_all(&cache);
}
