//! Benchmark of the goals: 10,000 objects of one kind with 100 open watches — time to
//! list all, create and update throughput from an in-process client, and store memory per
//! object beyond its JSON size. Run with `cargo bench -p testbed --bench apiserver`.
//!
//! Besides wall time, each phase reports the process's CPU time (server, client and watchers
//! together), which stays meaningful on a machine loaded by other work. `BENCH_OBJECTS=N`
//! shrinks the run, e.g. for `valgrind --tool=callgrind`; `BENCH_PHASES=writes` runs only
//! the writes, so that the instructions of two runs of different sizes differ by the writes
//! alone (README: "Performance").

use futures::{StreamExt, stream};
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, ListParams, PostParams};
use serde_json::json;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use testbed::Testbed;
use testbed::store::{DEFAULT_HISTORY, Store};

/// Objects unless `BENCH_OBJECTS` says otherwise.
const DEFAULT_OBJECTS: usize = 10_000;
const WATCHES: usize = 100;
const IN_FLIGHT: usize = 64;

/// The object of write `i`, built as a typed value like a controller builds it: going
/// through JSON first would add work of the bench's own to every write.
fn config_map(i: usize, version: &str) -> ConfigMap {
    let pairs = |p: [(&str, String); 2]| Some(BTreeMap::from(p.map(|(k, v)| (k.to_string(), v))));
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(format!("cm-{i:05}")),
            labels: pairs([
                ("app", "bench".to_string()),
                ("shard", (i % 10).to_string()),
            ]),
            ..ObjectMeta::default()
        },
        data: pairs([
            ("version", version.to_string()),
            ("payload", "x".repeat(200)),
        ]),
        ..ConfigMap::default()
    }
}

fn objects() -> usize {
    std::env::var("BENCH_OBJECTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(DEFAULT_OBJECTS)
}

/// CPU time (user + system) this process has used so far, from `/proc/self/stat` (Linux);
/// zero where unknown.
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the parenthesised command name; utime and stime are the 12th and 13th.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let ticks: u64 = rest
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|t| t.parse::<u64>().ok())
        .sum();
    // The kernel reports clock ticks, 100 per second on Linux.
    Duration::from_millis(ticks * 10)
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
fn memory_per_object(objects: usize) -> (f64, f64) {
    let store = Store::new(DEFAULT_HISTORY);
    let before = rss_bytes();
    let mut json_bytes = 0usize;
    for i in 0..objects {
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
        json_bytes as f64 / objects as f64,
        used.saturating_sub(json_bytes) as f64 / objects as f64,
    )
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let objects = objects();
    println!(
        "machine: {} cores, 1-minute load average {}",
        std::thread::available_parallelism().map_or(1, usize::from),
        load_average()
    );
    let writes_only = std::env::var("BENCH_PHASES").as_deref() == Ok("writes");
    if !writes_only {
        let (json_size, overhead) = memory_per_object(objects);
        println!(
            "memory: {json_size:.0} B of JSON per object, {overhead:.0} B resident overhead per object (store + history, RSS growth)"
        );
    }

    let bed = Testbed::start().await.expect("testbed starts");
    let client = bed.cluster().client();
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");

    // The watches are load on the server; they count newlines in the raw stream rather than
    // decode events, so the figures measure the server's fan-out, not the client's JSON
    // decoding. Each watcher hands its stream back once it has seen every change, so the
    // watches stay open (idle) while the lists are measured.
    let mut watchers = Vec::new();
    for _ in 0..WATCHES {
        let rv = bed.cluster().resource_version();
        let uri = format!(
            "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion={rv}&timeoutSeconds=600"
        );
        let req = http::Request::get(uri).body(Vec::new()).expect("request");
        let mut reader = client.request_stream(req).await.expect("watch");
        watchers.push(tokio::spawn(async move {
            use futures::AsyncBufReadExt;
            let mut n = 0usize;
            while n < 2 * objects {
                let Ok(chunk) = reader.fill_buf().await else {
                    break;
                };
                if chunk.is_empty() {
                    break;
                }
                // memchr's vectorised search: a byte-by-byte count cost as much as the
                // server's encryption of these streams and would measure the bench itself.
                n += memchr::memchr_iter(b'\n', chunk).count();
                let len = chunk.len();
                reader.consume_unpin(len);
            }
            (n, reader)
        }));
    }

    let (writes_start, writes_cpu) = (Instant::now(), cpu_time());
    let (start, cpu) = (Instant::now(), cpu_time());
    write_all(&api, objects, Write::Create).await;
    report("create", objects, start.elapsed(), cpu_time() - cpu);

    let (start, cpu) = (Instant::now(), cpu_time());
    write_all(&api, objects, Write::Update).await;
    report("update", objects, start.elapsed(), cpu_time() - cpu);

    // Every watcher must have every event before the lists, which would otherwise compete
    // with the watchers catching up.
    let start = Instant::now();
    let mut open_watches = Vec::new();
    for w in watchers {
        let (seen, reader) = tokio::time::timeout(Duration::from_secs(120), w)
            .await
            .expect("watchers catch up")
            .expect("watcher");
        assert_eq!(seen, 2 * objects, "every watcher saw every change");
        open_watches.push(reader);
    }
    println!(
        "watches: all {WATCHES} watchers received all {} events ({:?} after the last write)",
        2 * objects,
        start.elapsed()
    );
    // The watchers may still be catching up when a phase's last write is answered, so the
    // fair CPU figure covers both phases until every event was read.
    report(
        "create+update until watchers caught up",
        2 * objects,
        writes_start.elapsed(),
        cpu_time() - writes_cpu,
    );

    if writes_only {
        return;
    }
    let mut raw = Vec::new();
    let mut typed = Vec::new();
    let mut raw_cpu = Duration::ZERO;
    for _ in 0..10 {
        let req = http::Request::get("/api/v1/namespaces/default/configmaps")
            .body(Vec::new())
            .expect("request");
        let (start, cpu) = (Instant::now(), cpu_time());
        let body = client.request_text(req).await.expect("list");
        raw.push(start.elapsed());
        raw_cpu += cpu_time() - cpu;
        assert!(body.len() > objects * 200);
        let start = Instant::now();
        let list = api.list(&ListParams::default()).await.expect("list");
        typed.push(start.elapsed());
        assert!(list.items.len() > objects);
    }
    let median = |v: &mut Vec<Duration>| {
        v.sort();
        v[v.len() / 2]
    };
    println!(
        "list all {objects}: median {:?} over HTTPS (body read; mean CPU {:?}), {:?} including kube's typed decoding",
        median(&mut raw),
        raw_cpu / 10,
        median(&mut typed)
    );

    drop(open_watches);
}

/// Which write [`write_all`] makes.
#[derive(Clone, Copy)]
enum Write {
    Create,
    Update,
}

/// Creates or updates every object, [`IN_FLIGHT`] requests at a time, from a task of the
/// runtime like a controller's client calls (driven from the main thread, every response
/// would wake that thread from another one).
async fn write_all(api: &Api<ConfigMap>, objects: usize, write: Write) {
    let api = api.clone();
    tokio::spawn(async move {
        stream::iter(0..objects)
            .map(|i| {
                let api = api.clone();
                async move {
                    let result = match write {
                        Write::Create => {
                            api.create(&PostParams::default(), &config_map(i, "1"))
                                .await
                        }
                        Write::Update => {
                            api.replace(
                                &format!("cm-{i:05}"),
                                &PostParams::default(),
                                &config_map(i, "2"),
                            )
                            .await
                        }
                    };
                    result.expect("write");
                }
            })
            .buffer_unordered(IN_FLIGHT)
            .for_each(|_| async {})
            .await;
    })
    .await
    .expect("writes");
}

/// Prints a write phase: the wall-clock rate with the mean number of cores the process kept
/// busy (CPU time over wall time), and the writes per CPU-second of the whole process
/// (server, client and the watchers reading their streams; user and system time). On a
/// machine shared with other work the wall rate only shows the CPU the process was given.
/// Writes per CPU-second is the projection for one uncontended core: the rate that core
/// sustains while the run stays CPU-bound on it (64 writes in flight keep it busy) at the same
/// CPU cost per write. More free cores give at most that rate times their number — the
/// store's lock, the client and the fan-out to the watches do not spread perfectly — so no
/// figure is claimed for them.
fn report(phase: &str, writes: usize, wall: Duration, cpu: Duration) {
    let per_cpu_second = writes as f64 / cpu.as_secs_f64().max(f64::EPSILON);
    println!(
        "{phase}: {writes} writes in {wall:?} = {:.0} writes/s wall at {:.2} cores busy; {cpu:?} CPU = {per_cpu_second:.0} writes per CPU-second (projected writes/s on one uncontended core; {WATCHES} watches open)",
        writes as f64 / wall.as_secs_f64(),
        cpu.as_secs_f64() / wall.as_secs_f64().max(f64::EPSILON),
    );
}

/// The 1-minute load average (Linux), so figures from a shared machine can be read in context.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "unknown".to_string())
}
