//! Benchmark: 200 helm DeployItems in one environment, from creation to all Succeeded.
//!
//! Every item carries the bitnami nginx chart of `../shared/conformance/charts/nginx` as an
//! inline archive with the values of the conformance case `nginx/values-default` (the chart's
//! defaults, which generate a CA and a signed certificate per release), each release in its
//! own namespace. The testbed clusters and the landscaper's controllers run in this process;
//! the agent is the real `landscaper-agent run` binary in a child process, with the agent
//! chart's RBAC in the fenced cluster and the documented RBAC in the landscaper cluster. So the
//! agent's figures are its own: peak RSS is `VmHWM` of `/proc/<pid>/status`, CPU is
//! `utime + stime` of `/proc/<pid>/stat`. The machine may be shared: the 1-minute load
//! average of `/proc/loadavg` is sampled every second of the run and printed beside the
//! figures, so a slow run can be told from a busy machine.
//!
//! ```sh
//! cargo build --release -p landscaper-agent
//! cargo bench -p landscaper-e2e --bench helm_200
//! ```
//! `HELM_BENCH_ITEMS` (default 200) and `HELM_BENCH_WORKERS` (the agent's `--helm-workers`,
//! default 8) change the load; `LANDSCAPER_AGENT_BIN` points at another agent binary.
//!
//! The figures, and how they changed, are in docs/performance.md.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use futures::{StreamExt, TryStreamExt};
use kube::api::{Api, PostParams};
use kube::runtime::{WatchStreamExt, watcher};
use landscaper_api::core::{DeployItem, DeployItemPhase, Target};
use landscaper_e2e::charts::{HelmRelease, archive_raw, helm_deploy_item, nginx_chart_dir};
use landscaper_e2e::process::{release_binary, sample_load, usage};
use landscaper_e2e::{LS_NAMESPACE, World, eventually};
use serde_json::{Value, json};

const ENVIRONMENT: &str = "bench";
const LIMIT: Duration = Duration::from_secs(600);

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The agent binary: `LANDSCAPER_AGENT_BIN`, or the one beside this benchmark's target folder.
fn agent_binary() -> PathBuf {
    release_binary("LANDSCAPER_AGENT_BIN", "landscaper-agent")
}

/// The values of the conformance case `nginx/values-default`.
fn case_values() -> Value {
    let path = nginx_chart_dir().join("../values-default.yaml");
    let text = std::fs::read_to_string(&path).expect("the conformance values");
    landscaper_api::decode::yaml_documents(&text, "values-default.yaml")
        .expect("values YAML")
        .into_iter()
        .next()
        .unwrap_or_else(|| json!({}))
}

fn item(index: usize, raw: &str, values: &Value) -> DeployItem {
    let namespace = format!("bench-{index:03}");
    let release = HelmRelease {
        name: "nginx",
        namespace: &namespace,
        raw,
        values: values.clone(),
    };
    helm_deploy_item(&format!("nginx-{index:03}"), ENVIRONMENT, release)
}

fn spawn_agent(world: &World, host: &PathBuf, landscaper: &PathBuf, workers: usize) -> Child {
    let binary = agent_binary();
    if !binary.exists() {
        eprintln!(
            "no agent binary at {}: run `cargo build --release -p landscaper-agent` first (or set LANDSCAPER_AGENT_BIN)",
            binary.display()
        );
        std::process::exit(2);
    }
    let log = std::fs::File::create(world.dir.path().join("agent.log")).expect("agent log");
    Command::new(binary)
        .args(["run", "--name", ENVIRONMENT, "--heartbeat-period", "10s"])
        .arg("--kubeconfig")
        .arg(host)
        .arg("--landscaper-kubeconfig")
        .arg(landscaper)
        .args(["--helm-workers", &workers.to_string()])
        .args(["--health-address", "127.0.0.1:0"])
        .env(
            "RUST_LOG",
            std::env::var("RUST_LOG").unwrap_or_else(|_| "info".into()),
        )
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("the agent starts")
}

/// Waits until every item is Succeeded (or one Failed); returns the phases seen last.
async fn all_succeeded(items: Api<DeployItem>, count: usize) -> BTreeMap<String, DeployItem> {
    let mut latest: BTreeMap<String, DeployItem> = BTreeMap::new();
    let mut events = watcher(items, watcher::Config::default())
        .default_backoff()
        .applied_objects()
        .boxed();
    let deadline = tokio::time::Instant::now() + LIMIT;
    loop {
        let next = tokio::time::timeout_at(deadline, events.try_next()).await;
        let Ok(Ok(Some(item))) = next else {
            return latest;
        };
        let name = item.metadata.name.clone().unwrap_or_default();
        let phase = item.status.as_ref().and_then(|s| s.phase.clone());
        latest.insert(name, item);
        if phase == Some(DeployItemPhase::Failed) {
            return latest;
        }
        let done = latest
            .values()
            .filter(|i| {
                i.status.as_ref().and_then(|s| s.phase.as_ref())
                    == Some(&DeployItemPhase::Succeeded)
            })
            .count();
        if done == count {
            return latest;
        }
    }
}

#[tokio::main]
async fn main() {
    let count = env_number("HELM_BENCH_ITEMS", 200);
    let workers = env_number("HELM_BENCH_WORKERS", 8);
    let world = World::start().await;
    world.fenced_cluster().set_simulate_workloads(true);
    let agent = world.production_agent(ENVIRONMENT).await;
    let mut child = spawn_agent(
        &world,
        &agent.host_kubeconfig,
        &agent.landscaper_kubeconfig,
        workers,
    );
    let pid = child.id().to_string();
    let targets: Api<Target> = Api::namespaced(world.landscaper_cluster().client(), LS_NAMESPACE);
    eventually(
        "the agent registered and the landscaper made its Target",
        || async { targets.get_opt(ENVIRONMENT).await.ok().flatten().is_some() },
    )
    .await;
    let idle = usage(&pid);

    let raw = archive_raw(&nginx_chart_dir());
    let values = case_values();
    let items: Api<DeployItem> = Api::namespaced(world.landscaper_cluster().client(), LS_NAMESPACE);
    let watching = tokio::spawn(all_succeeded(items.clone(), count));
    let (load_done, load_stop) = tokio::sync::oneshot::channel();
    let load = tokio::spawn(sample_load(load_stop));
    let started = Instant::now();
    for index in 0..count {
        items
            .create(&PostParams::default(), &item(index, &raw, &values))
            .await
            .expect("item created");
    }
    let created = started.elapsed();
    let latest = watching.await.expect("watch task");
    let elapsed = started.elapsed();
    let done = usage(&pid);
    let own = usage("self");
    let _ = load_done.send(());
    let load = load.await.expect("load sampler");
    let _ = child.kill();
    let _ = child.wait();

    let mut phases: BTreeMap<String, usize> = BTreeMap::new();
    for item in latest.values() {
        let phase = item
            .status
            .as_ref()
            .and_then(|s| s.phase.as_ref())
            .map_or("none".to_owned(), ToString::to_string);
        *phases.entry(phase).or_default() += 1;
    }
    let succeeded = phases.get("Succeeded").copied().unwrap_or(0);
    println!(
        "helm_200: {count} helm DeployItems (bitnami nginx, inline archive of {} KiB base64, values-default), agent --helm-workers {workers}",
        raw.len() / 1024
    );
    println!("  created in            {:>8.2} s", created.as_secs_f64());
    println!(
        "  all Succeeded after   {:>8.2} s (wall, from the first create)",
        elapsed.as_secs_f64()
    );
    println!(
        "  agent peak RSS        {:>8.1} MiB (VmHWM; {:.1} MiB when registered and idle, {:.1} MiB at the end)",
        done.peak_rss_kib as f64 / 1024.0,
        idle.rss_kib as f64 / 1024.0,
        done.rss_kib as f64 / 1024.0
    );
    println!(
        "  agent CPU             {:>8.2} s (user+system, of which {:.2} s before the first item)",
        done.cpu_seconds, idle.cpu_seconds
    );
    println!(
        "  this process CPU      {:>8.2} s (testbed clusters, landscaper controllers, the watch)",
        own.cpu_seconds
    );
    println!(
        "  load average (1 min)  {:>8.2} mean over the run ({:.2} at the start, {:.2} at most; {} cores)",
        load.iter().sum::<f64>() / load.len() as f64,
        load[0],
        load.iter().copied().fold(0.0, f64::max),
        std::thread::available_parallelism().map_or(0, usize::from)
    );
    println!("  phases                {phases:?}");
    if succeeded != count {
        for item in latest.values() {
            if let Some(error) = item.status.as_ref().and_then(|s| s.last_error.as_ref()) {
                println!(
                    "  {}: {}",
                    item.metadata.name.clone().unwrap_or_default(),
                    error.message
                );
                break;
            }
        }
        println!(
            "  agent log: {}",
            world.dir.path().join("agent.log").display()
        );
        // Keep the log for inspection.
        std::mem::forget(world);
        std::process::exit(1);
    }
}
