//! Benchmark: deployer management at scale. 1,000 Environments × 5 DeployerRegistrations:
//! from the start of `landscaper run` until all 5,000 pairs have their Installation (each pair's
//! ServiceAccount, RBAC, access Secret and Target are written before it), and until every
//! Installation's first job has finished (it fails: the components' folder does not exist);
//! then the same landscaper restarted with nothing changed, which must write nothing.
//!
//! The landscaper cluster is a testbed in this process; the landscaper is the real
//! `landscaper run` binary in a child process, authenticated as its own user, so its requests
//! are counted apart (testbed request counters) and its memory is its own (`VmHWM`).
//!
//! ```sh
//! cargo build --release -p landscaper
//! cargo bench -p landscaper-e2e --bench deployer_management
//! ```
//! `DM_BENCH_ENVIRONMENTS` (default 1000) and `DM_BENCH_REGISTRATIONS` (default 5) change the
//! load; `LANDSCAPER_BIN` points at another landscaper binary.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use futures::StreamExt;
use kube::api::{Api, ListParams, PostParams};
use landscaper_api::core::{DeployerRegistration, Environment, Installation};
use landscaper_e2e::LS_NAMESPACE;
use landscaper_e2e::objects::ensure_namespace;
use landscaper_e2e::process::{
    Measured, Requests, admin_kubeconfig, load_summary, spawn_landscaper, usage,
};
use landscaper_e2e::registrations::registration_with_template;
use serde_json::json;
use testbed::RequestRecord;
use testbed::{Cluster, Testbed};

const USER: &str = "landscaper-bench";
const LIMIT: Duration = Duration::from_secs(900);

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn environment(name: &str, cluster: &Cluster) -> Environment {
    serde_json::from_value(json!({
        "apiVersion": "landscaper.gardener.cloud/v1alpha1",
        "kind": "Environment",
        "metadata": { "name": name },
        "spec": {
            "namespace": "deployers",
            "hostTarget": {
                "type": "landscaper.gardener.cloud/kubernetes-cluster",
                "config": { "kubeconfig": "fenced" },
            },
            "landscaperClusterConfig": { "host": cluster.url(), "apiPath": "", "insecure": true },
            "targetSelectors": [{ "annotations": [{
                "key": "landscaper.gardener.cloud/environment", "operator": "=", "values": [name],
            }] }],
        },
    }))
    .expect("an environment")
}

fn registration(name: &str) -> DeployerRegistration {
    registration_with_template(
        name,
        &[&format!("example.com/{name}")],
        json!({
            "blueprint": { "ref": { "resourceName": "blueprint" } },
            "componentDescriptor": { "ref": {
                "componentName": format!("example.com/{name}"),
                "version": "v1.0.0",
                // No such folder: each pair's job fails at once, without a network
                // round trip, so the bench measures deployer management.
                "repositoryContext": { "type": "local", "filePath": "/nonexistent/components" },
            } },
            "importDataMappings": { "values": { "replicas": 1 } },
        }),
    )
}

/// The landscaper's logged requests split into deployer management's and those of the pairs'
/// first jobs, which the Installation controller runs on each pair's Installation as on any
/// other (the `installations` bench measures them): its patches of Installations after the
/// first (deployer management writes each by one apply, and none again on a first run), of
/// their status, and the Events it publishes on them, named `<pair>.<suffix>` (deployer
/// management's Events name a registration or an environment).
fn split(records: &[RequestRecord], pairs: &BTreeSet<String>) -> (u64, u64) {
    let (mut management, mut jobs) = (0, 0);
    let mut applied = BTreeSet::new();
    for record in records.iter().filter(|r| r.user == USER) {
        let on_installation = record.resource == "installations"
            && record.verb == "patch"
            && (!record.subresource.is_empty() || !applied.insert(record.name.clone()));
        let installation_event = record.resource == "events"
            && record
                .name
                .split_once('.')
                .is_some_and(|(object, _)| pairs.contains(object));
        if on_installation || installation_event {
            jobs += 1;
        } else {
            management += 1;
        }
    }
    (management, jobs)
}

/// How many of the installations have finished the job they run (or never started one).
async fn count_settled(installations: &Api<Installation>) -> usize {
    installations
        .list(&ListParams::default())
        .await
        .map(|list| {
            list.items
                .iter()
                .filter(|i| {
                    i.status
                        .as_ref()
                        .is_some_and(|s| s.job_id.is_some() && s.job_id == s.job_id_finished)
                })
                .count()
        })
        .unwrap_or(0)
}

async fn count_installations(installations: &Api<Installation>) -> usize {
    installations
        .list_metadata(&ListParams::default())
        .await
        .map(|list| list.items.len())
        .unwrap_or(0)
}

#[tokio::main]
async fn main() {
    let environments = env_number("DM_BENCH_ENVIRONMENTS", 1000);
    let registrations = env_number("DM_BENCH_REGISTRATIONS", 5);
    let pairs = environments * registrations;
    let bed = Testbed::builder().start().await.expect("testbed starts");
    let cluster = bed.cluster();
    let client = cluster.client();
    landscaper::crds::ensure(&client).await.expect("CRDs");
    ensure_namespace(&client, LS_NAMESPACE).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let kubeconfig = admin_kubeconfig(cluster, USER, dir.path());
    let log = dir.path().join("landscaper.log");

    let environment_api: Api<Environment> = Api::all(client.clone());
    futures::stream::iter(0..environments)
        .map(|index| {
            let api = environment_api.clone();
            let environment = environment(&format!("env-{index:04}"), cluster);
            async move { api.create(&PostParams::default(), &environment).await }
        })
        .buffer_unordered(32)
        .for_each(|created| async move {
            created.expect("environment created");
        })
        .await;
    let registration_api: Api<DeployerRegistration> = Api::all(client.clone());
    for index in 0..registrations {
        registration_api
            .create(
                &PostParams::default(),
                &registration(&format!("deployer-{index}")),
            )
            .await
            .expect("registration created");
    }
    let installations: Api<Installation> = Api::namespaced(client.clone(), LS_NAMESPACE);
    let counters = cluster.counters();
    counters.reset();

    let mut run = Measured::start(&kubeconfig, &log, LIMIT);
    run.wait_until(
        &format!("all {pairs} pairs' Installations"),
        Duration::from_millis(250),
        || async { count_installations(&installations).await >= pairs },
    )
    .await;
    let elapsed = run.started.elapsed();
    let Requests {
        all: requests,
        writes,
        top,
    } = Requests::of(counters, USER);
    let pair_names: BTreeSet<String> = (0..registrations)
        .flat_map(|r| (0..environments).map(move |e| format!("deployer-{r}-env-{e:04}")))
        .collect();
    let (management, first_jobs) = split(&cluster.requests(), &pair_names);
    // The restart below must find nothing to do: every installation's first job ends first.
    run.wait_until(
        &format!("all {pairs} pairs' first jobs finished"),
        Duration::from_millis(500),
        || async { count_settled(&installations).await >= pairs },
    )
    .await;
    let settled = run.started.elapsed();
    // Statuses that summarise the jobs (the registrations') follow a moment later.
    let mut last = counters.writes(Some(USER));
    loop {
        tokio::time::sleep(Duration::from_secs(3)).await;
        let now = counters.writes(Some(USER));
        if now == last {
            break;
        }
        last = now;
    }
    let job_requests = counters.count(None, None, Some(USER)) - requests;
    let created = run.usage();
    let load = run.stop().await;

    // The same landscaper again, with nothing changed: it reads and must not write.
    counters.reset();
    let mut again = spawn_landscaper(&kubeconfig, &log);
    let restarted = Instant::now();
    while counters.count(Some("list"), Some("installations"), Some(USER)) == 0
        || counters.count(Some("list"), Some("deployerregistrations"), Some(USER)) == 0
    {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The caches are filled; give every registration's pass time to run.
    tokio::time::sleep(Duration::from_secs(10)).await;
    let restart_writes = counters.writes(Some(USER));
    let restart_requests = counters.count(None, None, Some(USER));
    let restart_usage = usage(&again.id().to_string());
    let _ = again.kill();
    let _ = again.wait();

    println!(
        "deployer_management: {environments} environments × {registrations} registrations = {pairs} pairs"
    );
    println!(
        "  all pairs' Installations after {:>8.2} s (wall, from the start of `landscaper run`)",
        elapsed.as_secs_f64()
    );
    println!(
        "  every first job finished after {:>8.2} s ({job_requests} more requests: {:.2} per pair)",
        settled.as_secs_f64(),
        job_requests as f64 / pairs as f64
    );
    println!(
        "  landscaper requests            {requests} ({:.2} per pair), of which writes {writes} ({:.2} per pair)",
        requests as f64 / pairs as f64,
        writes as f64 / pairs as f64
    );
    println!(
        "  of which deployer management   {management} ({:.2} per pair); the pairs' first jobs so far {first_jobs} ({:.2} per pair)",
        management as f64 / pairs as f64,
        first_jobs as f64 / pairs as f64
    );
    println!("  requests by kind               {top}");
    println!(
        "  landscaper peak RSS            {:>8.1} MiB (VmHWM), CPU {:.2} s",
        created.peak_rss_kib as f64 / 1024.0,
        created.cpu_seconds
    );
    println!(
        "  restart, nothing changed       {restart_writes} writes, {restart_requests} requests in {:.1} s; peak RSS {:.1} MiB",
        restarted.elapsed().as_secs_f64(),
        restart_usage.peak_rss_kib as f64 / 1024.0
    );
    println!("  load average (1 min)           {}", load_summary(&load));
    if restart_writes != 0 {
        println!("  writes after the restart: {:?}", counters.snapshot());
        std::process::exit(1);
    }
}
