//! Benchmark: the installation flow at scale. 1,000 root Installations, each with an inline
//! blueprint of one mock DeployItem, from the start of `landscaper run` until every one is
//! Succeeded.
//!
//! The landscaper cluster is a testbed in this process, and the mock deployer runs in this
//! process too; the landscaper is the real `landscaper run` binary in a child process,
//! authenticated as its own user, so its requests are counted apart (testbed request
//! counters) and its memory is its own (`VmHWM`).
//!
//! ```sh
//! cargo build --release -p landscaper
//! cargo bench -p landscaper-e2e --bench installations
//! ```
//! `INSTALLATIONS_BENCH_COUNT` (default 1000) changes the load; `LANDSCAPER_BIN` points at
//! another landscaper binary.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, ListParams, PostParams};
use landscaper_api::constants::deploy_item_types;
use landscaper_api::core::{Installation, InstallationPhase};
use landscaper_deployer::controller::DeployerConfig;
use landscaper_e2e::process::{
    load_summary, release_binary, sample_load, top_requests, usage, wait_or_exit,
};
use serde_json::json;
use testbed::Testbed;

const USER: &str = "landscaper-bench";
const NAMESPACE: &str = "bench";
const LIMIT: Duration = Duration::from_secs(900);

fn installation(name: &str) -> Installation {
    let blueprint = "apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Blueprint\ndeployExecutions:\n- name: main\n  type: GoTemplate\n  template: |\n    deployItems:\n    - name: item\n      type: landscaper.gardener.cloud/mock\n      config:\n        apiVersion: mock.deployer.landscaper.gardener.cloud/v1alpha1\n        kind: ProviderConfiguration\n        phase: Succeeded\n";
    serde_json::from_value(json!({
        "apiVersion": "landscaper.gardener.cloud/v1alpha1",
        "kind": "Installation",
        "metadata": {
            "name": name,
            "annotations": {"landscaper.gardener.cloud/operation": "reconcile"},
        },
        "spec": {"blueprint": {"inline": {"filesystem": {"blueprint.yaml": blueprint}}}},
    }))
    .expect("an installation")
}

/// How many installations finished a job Succeeded.
async fn count_succeeded(installations: &Api<Installation>) -> usize {
    installations
        .list(&ListParams::default())
        .await
        .map(|list| {
            list.items
                .iter()
                .filter(|i| {
                    i.status.as_ref().is_some_and(|s| {
                        s.job_id.is_some()
                            && s.job_id == s.job_id_finished
                            && s.phase == Some(InstallationPhase::Succeeded)
                    })
                })
                .count()
        })
        .unwrap_or(0)
}

#[tokio::main]
async fn main() {
    let count = std::env::var("INSTALLATIONS_BENCH_COUNT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000usize);
    let binary = release_binary("LANDSCAPER_BIN", "landscaper");
    if !binary.exists() {
        eprintln!(
            "no landscaper binary at {}: run `cargo build --release -p landscaper` first (or set LANDSCAPER_BIN)",
            binary.display()
        );
        std::process::exit(2);
    }
    let bed = Testbed::builder().start().await.expect("testbed starts");
    let cluster = bed.cluster();
    let client = cluster.client();
    landscaper::crds::ensure(&client).await.expect("CRDs");
    for name in [NAMESPACE, "ls-system"] {
        let namespace: Namespace =
            serde_json::from_value(json!({ "metadata": { "name": name } })).expect("ns");
        Api::<Namespace>::all(client.clone())
            .create(&PostParams::default(), &namespace)
            .await
            .expect("namespace");
    }
    let mut config = DeployerConfig::new(deploy_item_types::MOCK, "mock-deployer");
    config.namespace = Some(NAMESPACE.into());
    let setup = landscaper_deployer::deployers::mock::setup(client.clone(), client.clone(), config);
    tokio::spawn(landscaper_deployer::run(setup, std::future::pending()));

    let installations: Api<Installation> = Api::namespaced(client.clone(), NAMESPACE);
    futures::stream::iter(0..count)
        .map(|index| {
            let api = installations.clone();
            async move {
                api.create(
                    &PostParams::default(),
                    &installation(&format!("inst-{index:04}")),
                )
                .await
            }
        })
        .buffer_unordered(32)
        .for_each(|created| async move {
            created.expect("installation created");
        })
        .await;

    let dir = tempfile::tempdir().expect("temp dir");
    let token = cluster.add_user(USER, &["system:masters"]);
    let kubeconfig = dir.path().join("landscaper.yaml");
    std::fs::write(&kubeconfig, cluster.kubeconfig_yaml_for(&token)).expect("kubeconfig");
    let log = dir.path().join("landscaper.log");
    let counters = cluster.counters();
    counters.reset();
    let (load_stop, load_done) = tokio::sync::oneshot::channel();
    let load = tokio::spawn(sample_load(load_done));
    let started = Instant::now();
    let mut landscaper = Command::new(&binary)
        .args(["run", "--kubeconfig"])
        .arg(&kubeconfig)
        .env(
            "RUST_LOG",
            std::env::var("RUST_LOG").unwrap_or_else(|_| "warn".into()),
        )
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).expect("landscaper log"))
        .spawn()
        .expect("the landscaper starts");
    let pid = landscaper.id().to_string();
    wait_or_exit(
        &format!("all {count} installations Succeeded"),
        started,
        LIMIT,
        Duration::from_millis(250),
        &mut landscaper,
        &log,
        || async { count_succeeded(&installations).await >= count },
    )
    .await;
    let elapsed = started.elapsed();
    let used = usage(&pid);
    let requests = counters.count(None, None, Some(USER));
    let writes = counters.writes(Some(USER));
    let top = top_requests(counters, USER);
    let _ = load_stop.send(());
    let load = load.await.expect("load samples");
    let _ = landscaper.kill();
    let _ = landscaper.wait();

    println!("installations: {count} root Installations with one mock DeployItem each");
    println!(
        "  all Succeeded after            {:>8.2} s (wall, from the start of `landscaper run`)",
        elapsed.as_secs_f64()
    );
    println!(
        "  landscaper requests            {requests} ({:.2} per installation), of which writes {writes} ({:.2} per installation)",
        requests as f64 / count as f64,
        writes as f64 / count as f64
    );
    println!("  requests by kind               {top}");
    println!(
        "  landscaper peak RSS            {:>8.1} MiB (VmHWM), CPU {:.2} s",
        used.peak_rss_kib as f64 / 1024.0,
        used.cpu_seconds
    );
    println!("  load average (1 min)           {}", load_summary(&load));
}
