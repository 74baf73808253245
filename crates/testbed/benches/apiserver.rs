//! Benchmark of the goals: 10,000 objects of one kind with 100 open watches — time to
//! list all, create and update throughput from an in-process client, and store memory per
//! object beyond its JSON size. Run with `cargo bench -p testbed --bench apiserver`.

use futures::{StreamExt, stream};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, PostParams};
use serde_json::json;
use std::time::{Duration, Instant};
use testbed::Testbed;
use testbed::store::{DEFAULT_HISTORY, Store};

const OBJECTS: usize = 10_000;
const WATCHES: usize = 100;
const IN_FLIGHT: usize = 64;

fn config_map(i: usize, version: &str) -> ConfigMap {
    serde_json::from_value(json!({
        "metadata": {"name": format!("cm-{i:05}"), "labels": {"app": "bench", "shard": (i % 10).to_string()}},
        "data": {"version": version, "payload": "x".repeat(200)}
    }))
    .expect("a valid ConfigMap")
}

/// Resident memory of this process in bytes (Linux), 0 where unknown.
fn rss_bytes() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<usize>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// Fills a bare store (no server, no client) and measures how much resident memory grows.
fn memory_per_object() -> (f64, f64) {
    let store = Store::new(DEFAULT_HISTORY);
    let before = rss_bytes();
    let mut json_bytes = 0usize;
    for i in 0..OBJECTS {
        let obj = json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": format!("cm-{i:05}"), "namespace": "default", "uid": testbed::ids::new_uid(),
                         "creationTimestamp": "2025-01-01T00:00:00Z", "labels": {"app": "bench", "shard": (i % 10).to_string()}},
            "data": {"version": "1", "payload": "x".repeat(200)}
        });
        let stored = store.write(|t| t.put("/configmaps", obj));
        json_bytes += stored.json.len();
    }
    let used = rss_bytes().saturating_sub(before);
    (
        json_bytes as f64 / OBJECTS as f64,
        used.saturating_sub(json_bytes) as f64 / OBJECTS as f64,
    )
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let (json_size, overhead) = memory_per_object();
    println!(
        "memory: {json_size:.0} B of JSON per object, {overhead:.0} B resident overhead per object (store + history, RSS growth)"
    );

    let bed = Testbed::start().await.expect("testbed starts");
    let client = bed.cluster().client();
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");

    // The watches are load on the server; they count event lines rather than decode them,
    // so the figures measure the server's fan-out, not the client's JSON decoding.
    let mut watchers = Vec::new();
    for _ in 0..WATCHES {
        let rv = bed.cluster().resource_version();
        let uri = format!(
            "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion={rv}&timeoutSeconds=600"
        );
        let req = http::Request::get(uri).body(Vec::new()).expect("request");
        let reader = client.request_stream(req).await.expect("watch");
        watchers.push(tokio::spawn(async move {
            use futures::AsyncBufReadExt;
            let mut lines = reader.lines();
            let mut n = 0usize;
            while let Some(Ok(_)) = lines.next().await {
                n += 1;
                if n == 2 * OBJECTS {
                    break;
                }
            }
            n
        }));
    }

    let start = Instant::now();
    stream::iter(0..OBJECTS)
        .map(|i| {
            let api = api.clone();
            async move {
                api.create(&PostParams::default(), &config_map(i, "1"))
                    .await
                    .expect("create")
            }
        })
        .buffer_unordered(IN_FLIGHT)
        .for_each(|_| async {})
        .await;
    let created = start.elapsed();
    println!(
        "create: {OBJECTS} objects in {created:?} = {:.0} writes/s ({WATCHES} watches open)",
        OBJECTS as f64 / created.as_secs_f64()
    );

    let start = Instant::now();
    stream::iter(0..OBJECTS)
        .map(|i| {
            let api = api.clone();
            async move {
                api.replace(
                    &format!("cm-{i:05}"),
                    &PostParams::default(),
                    &config_map(i, "2"),
                )
                .await
                .expect("update")
            }
        })
        .buffer_unordered(IN_FLIGHT)
        .for_each(|_| async {})
        .await;
    let updated = start.elapsed();
    println!(
        "update: {OBJECTS} objects in {updated:?} = {:.0} writes/s ({WATCHES} watches open)",
        OBJECTS as f64 / updated.as_secs_f64()
    );

    let mut raw = Vec::new();
    let mut typed = Vec::new();
    for _ in 0..10 {
        let req = http::Request::get("/api/v1/namespaces/default/configmaps")
            .body(Vec::new())
            .expect("request");
        let start = Instant::now();
        let body = client.request_text(req).await.expect("list");
        raw.push(start.elapsed());
        assert!(body.len() > OBJECTS * 200);
        let start = Instant::now();
        let list = api.list(&ListParams::default()).await.expect("list");
        typed.push(start.elapsed());
        assert!(list.items.len() > OBJECTS);
    }
    let median = |v: &mut Vec<Duration>| {
        v.sort();
        v[v.len() / 2]
    };
    println!(
        "list all {OBJECTS}: median {:?} over HTTPS (body read), {:?} including kube's typed decoding",
        median(&mut raw),
        median(&mut typed)
    );

    let start = Instant::now();
    for w in watchers {
        let seen = tokio::time::timeout(Duration::from_secs(120), w)
            .await
            .expect("watchers catch up")
            .expect("watcher");
        assert_eq!(seen, 2 * OBJECTS, "every watcher saw every change");
    }
    println!(
        "watches: all {WATCHES} watchers received all {} events ({:?} after the last write)",
        2 * OBJECTS,
        start.elapsed()
    );
}
