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

use std::time::Duration;

use futures::StreamExt;
use kube::api::{Api, ListParams, PostParams};
use landscaper_api::constants::deploy_item_types;
use landscaper_api::core::{Installation, InstallationPhase};
use landscaper_deployer::controller::DeployerConfig;
use landscaper_e2e::blueprints::mock_blueprint;
use landscaper_e2e::objects::ensure_namespace;
use landscaper_e2e::process::{Measured, Requests, admin_kubeconfig, load_summary};
use serde_json::json;
use testbed::Testbed;

const USER: &str = "landscaper-bench";
const NAMESPACE: &str = "bench";
const LIMIT: Duration = Duration::from_secs(900);

fn installation(name: &str) -> Installation {
    serde_json::from_value(json!({
        "apiVersion": "landscaper.gardener.cloud/v1alpha1",
        "kind": "Installation",
        "metadata": {
            "name": name,
            "annotations": {"landscaper.gardener.cloud/operation": "reconcile"},
        },
        "spec": {"blueprint": {"inline": {"filesystem": mock_blueprint("Succeeded")}}},
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
    let bed = Testbed::builder().start().await.expect("testbed starts");
    let cluster = bed.cluster();
    let client = cluster.client();
    landscaper::crds::ensure(&client).await.expect("CRDs");
    for name in [NAMESPACE, "ls-system"] {
        ensure_namespace(&client, name).await;
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
    let kubeconfig = admin_kubeconfig(cluster, USER, dir.path());
    let log = dir.path().join("landscaper.log");
    let counters = cluster.counters();
    counters.reset();
    let mut run = Measured::start(&kubeconfig, &log, LIMIT);
    run.wait_until(
        &format!("all {count} installations Succeeded"),
        Duration::from_millis(250),
        || async { count_succeeded(&installations).await >= count },
    )
    .await;
    let elapsed = run.started.elapsed();
    let used = run.usage();
    let Requests {
        all: requests,
        writes,
        top,
    } = Requests::of(counters, USER);
    let load = run.stop().await;

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
