//! Benchmark: 1,000 manifest DeployItems (one ConfigMap each) from a pending job to
//! Succeeded. Reports wall time, API requests per item and the deployer's peak RSS.
//!
//! The testbed clusters run in this process; the deployer runs in a child process (this
//! binary again, with `--serve-deployer`) so its memory is measured alone.
//!
//! `cargo bench -p landscaper-deployer --bench manifest_items [-- --items N --workers W]`

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Api;
use kube::api::{ListParams, Patch, PatchParams, PostParams};
use landscaper_api::constants::{deploy_item_types::MANIFEST, target_types};
use landscaper_api::core::{DeployItem, DeployItemPhase, Target, TargetSpec};
use landscaper_deployer::controller::DeployerConfig;
use landscaper_deployer::deployers::manifest;
use serde_json::json;
use std::time::{Duration, Instant};
use testbed::Testbed;

const NS: &str = "bench";

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    if let Some(i) = args.iter().position(|a| a == "--serve-deployer") {
        let kubeconfig = args.get(i + 1).expect("a kubeconfig path").clone();
        runtime.block_on(serve(kubeconfig, arg("--workers", 8) as u16));
    } else {
        runtime.block_on(bench(arg("--items", 1000), arg("--workers", 8)));
    }
}

async fn serve(kubeconfig: String, workers: u16) {
    let kc = kube::config::Kubeconfig::read_from(&kubeconfig).expect("kubeconfig");
    let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .expect("client config");
    let client = kube::Client::try_from(config).expect("client");
    let mut cfg = DeployerConfig::new(MANIFEST, "bench-deployer");
    cfg.namespace = Some(NS.into());
    cfg.workers = workers;
    // Runs until the parent kills this process.
    landscaper_deployer::run(
        manifest::setup(client.clone(), client, cfg),
        std::future::pending(),
    )
    .await;
}

async fn bench(items: usize, workers: usize) {
    let bed = Testbed::builder()
        .named(&["landscaper", "target"])
        .start()
        .await
        .expect("testbed");
    let ls_cluster = bed.cluster_named("landscaper").unwrap();
    let target_cluster = bed.cluster_named("target").unwrap();
    let ls = ls_cluster.client();
    for crd in landscaper_api::crd::all() {
        Api::<CustomResourceDefinition>::all(ls.clone())
            .create(&PostParams::default(), &crd)
            .await
            .expect("CRD");
    }
    Api::<Namespace>::all(ls.clone())
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": NS}})).unwrap(),
        )
        .await
        .unwrap();
    let di_api: Api<DeployItem> = Api::namespaced(ls.clone(), NS);
    while di_api.list(&ListParams::default()).await.is_err() {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let deployer_user = "bench-deployer";
    let ls_token = ls_cluster.add_user(deployer_user, &["system:masters"]);
    let target_token = target_cluster.add_user(deployer_user, &["system:masters"]);
    let target = Target::new(
        "cluster",
        TargetSpec {
            type_: target_types::KUBERNETES_CLUSTER.into(),
            config: Some(json!({"kubeconfig": target_cluster.kubeconfig_yaml_for(&target_token)})),
            secret_ref: None,
        },
    );
    Api::<Target>::namespaced(ls.clone(), NS)
        .create(&PostParams::default(), &target)
        .await
        .unwrap();
    for i in 0..items {
        let di: DeployItem = serde_json::from_value(json!({
            "apiVersion": "landscaper.gardener.cloud/v1alpha1", "kind": "DeployItem",
            "metadata": {"name": format!("item-{i}")},
            "spec": {"type": MANIFEST, "target": {"name": "cluster", "namespace": NS}, "config": {
                "apiVersion": "manifest.deployer.landscaper.gardener.cloud/v1alpha2",
                "kind": "ProviderConfiguration",
                "manifests": [{"policy": "manage", "manifest": {
                    "apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": format!("cm-{i}"), "namespace": "default"},
                    "data": {"index": i.to_string()}
                }}]
            }}
        }))
        .unwrap();
        di_api.create(&PostParams::default(), &di).await.unwrap();
        di_api
            .patch_status(
                &format!("item-{i}"),
                &PatchParams::default(),
                &Patch::Merge(json!({"status": {"jobID": "job-1"}})),
            )
            .await
            .unwrap();
    }

    let kubeconfig = bed.kubeconfig_dir().join("bench-deployer.kubeconfig");
    std::fs::write(&kubeconfig, ls_cluster.kubeconfig_yaml_for(&ls_token)).unwrap();
    let started = Instant::now();
    let child = Deployer(
        std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--serve-deployer",
                kubeconfig.to_str().unwrap(),
                "--workers",
                &workers.to_string(),
            ])
            .spawn()
            .expect("the deployer process starts"),
    );

    let mut peak_rss_kib = 0u64;
    loop {
        peak_rss_kib = peak_rss_kib.max(rss_kib(child.0.id()));
        let list = di_api.list(&ListParams::default()).await.unwrap();
        let done = list
            .items
            .iter()
            .filter(|d| {
                d.status.as_ref().is_some_and(|s| {
                    s.phase == Some(DeployItemPhase::Succeeded)
                        && s.job_id_finished.as_deref() == Some("job-1")
                })
            })
            .count();
        let failed = list
            .items
            .iter()
            .filter(|d| {
                d.status.as_ref().and_then(|s| s.phase.as_ref()) == Some(&DeployItemPhase::Failed)
            })
            .count();
        if done + failed == items {
            let wall = started.elapsed();
            // Let late reconciles (triggered by our own final writes) settle before counting.
            tokio::time::sleep(Duration::from_secs(2)).await;
            peak_rss_kib = peak_rss_kib.max(peak_kib(child.0.id()));
            let ls_requests = ls_cluster.counters().count(None, None, Some(deployer_user));
            let target_requests = target_cluster
                .counters()
                .count(None, None, Some(deployer_user));
            let ls_writes = ls_cluster.counters().writes(Some(deployer_user));
            let target_writes = target_cluster.counters().writes(Some(deployer_user));
            drop(child);
            println!("manifest deployer benchmark: {items} items, {workers} workers");
            println!("  succeeded: {done}, failed: {failed}");
            println!(
                "  wall time to all Succeeded: {:.2} s ({:.1} items/s)",
                wall.as_secs_f64(),
                items as f64 / wall.as_secs_f64()
            );
            println!(
                "  API requests: {} landscaper + {} target = {:.2} per item ({:.2} writes per item)",
                ls_requests,
                target_requests,
                (ls_requests + target_requests) as f64 / items as f64,
                (ls_writes + target_writes) as f64 / items as f64
            );
            for (k, n) in ls_cluster.counters().snapshot() {
                if k.user == deployer_user {
                    println!("    landscaper {} {}: {n}", k.verb, k.resource);
                }
            }
            for (k, n) in target_cluster.counters().snapshot() {
                if k.user == deployer_user {
                    println!("    target {} {}: {n}", k.verb, k.resource);
                }
            }
            println!(
                "  deployer peak RSS: {:.1} MiB",
                peak_rss_kib as f64 / 1024.0
            );
            return;
        }
        if started.elapsed() > Duration::from_secs(600) {
            drop(child);
            panic!("only {done} of {items} items succeeded within 10 minutes");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The deployer process; killed and reaped when dropped, also when the benchmark panics.
struct Deployer(std::process::Child);

impl Drop for Deployer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn status_field_kib(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

fn rss_kib(pid: u32) -> u64 {
    status_field_kib(pid, "VmRSS:")
}

fn peak_kib(pid: u32) -> u64 {
    status_field_kib(pid, "VmHWM:")
}
