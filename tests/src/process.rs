//! Measuring a child process of a benchmark from `/proc`, and the machine's load beside it:
//! benchmarks run on shared machines, so a slow run must be told from a busy machine.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// Peak resident set (KiB) and CPU seconds of a process, from `/proc`.
pub struct Usage {
    /// Peak resident set (`VmHWM`), KiB.
    pub peak_rss_kib: u64,
    /// Resident set now (`VmRSS`), KiB.
    pub rss_kib: u64,
    /// User and system CPU time, seconds.
    pub cpu_seconds: f64,
}

fn clock_ticks() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100.0)
}

/// The usage of process `pid` (`self` for this process).
pub fn usage(pid: &str) -> Usage {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name (which may contain spaces) start at the state, field 3.
    let rest: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, r)| r.split_whitespace().collect())
        .unwrap_or_default();
    let ticks = |i: usize| {
        rest.get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    Usage {
        peak_rss_kib: field("VmHWM:"),
        rss_kib: field("VmRSS:"),
        // utime and stime are fields 14 and 15: indexes 11 and 12 after the state.
        cpu_seconds: (ticks(11) + ticks(12)) / clock_ticks(),
    }
}

/// The 1-minute load average, from `/proc/loadavg`.
pub fn load_average() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().and_then(|v| v.parse().ok()))
        .unwrap_or(0.0)
}

/// Samples [`load_average`] every second until `done` fires; returns the samples.
pub async fn sample_load(mut done: tokio::sync::oneshot::Receiver<()>) -> Vec<f64> {
    let mut samples = vec![load_average()];
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tokio::select! {
            _ = &mut done => return samples,
            _ = tick.tick() => samples.push(load_average()),
        }
    }
}

/// A release binary of the workspace: the path in `variable`, or `name` beside the running
/// benchmark's target folder (`target/release/deps/<bench>` → `target/release/<name>`).
pub fn release_binary(variable: &str, name: &str) -> PathBuf {
    if let Some(path) = std::env::var_os(variable) {
        return PathBuf::from(path);
    }
    let exe = std::env::current_exe().expect("own path");
    exe.parent()
        .and_then(|deps| deps.parent())
        .map(|profile| profile.join(name))
        .expect("a target folder")
}

/// Starts the release binary of the landscaper (see [`release_binary`]) as `landscaper run`
/// with `kubeconfig`, logging to `log` at `RUST_LOG` (`warn` unless set); exits with status 2
/// when it is not built.
pub fn spawn_landscaper(kubeconfig: &Path, log: &Path) -> Child {
    let binary = release_binary("LANDSCAPER_BIN", "landscaper");
    if !binary.exists() {
        eprintln!(
            "no landscaper binary at {}: run `cargo build --release -p landscaper` first (or set LANDSCAPER_BIN)",
            binary.display()
        );
        std::process::exit(2);
    }
    Command::new(binary)
        .args(["run", "--kubeconfig"])
        .arg(kubeconfig)
        .env(
            "RUST_LOG",
            std::env::var("RUST_LOG").unwrap_or_else(|_| "warn".into()),
        )
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).expect("landscaper log"))
        .spawn()
        .expect("the landscaper starts")
}

/// A kubeconfig file in `dir` for `cluster` as `user`, a new cluster admin, so that the
/// requests of the process using it are counted apart.
pub fn admin_kubeconfig(cluster: &testbed::Cluster, user: &str, dir: &Path) -> PathBuf {
    let token = cluster.add_user(user, &["system:masters"]);
    let kubeconfig = dir.join(format!("{user}.yaml"));
    std::fs::write(&kubeconfig, cluster.kubeconfig_yaml_for(&token)).expect("kubeconfig");
    kubeconfig
}

/// `landscaper run` under measurement (see [`spawn_landscaper`]), with the machine's load
/// sampled beside it until [`Measured::stop`].
pub struct Measured {
    /// The landscaper's process.
    pub landscaper: Child,
    /// When it started.
    pub started: std::time::Instant,
    log: PathBuf,
    limit: Duration,
    load_stop: tokio::sync::oneshot::Sender<()>,
    load: tokio::task::JoinHandle<Vec<f64>>,
}

impl Measured {
    /// Starts sampling the load and the landscaper on `kubeconfig`, logging to `log`; a wait
    /// longer than `limit` from now ends the benchmark (see [`Measured::wait_until`]).
    pub fn start(kubeconfig: &Path, log: &Path, limit: Duration) -> Self {
        let (load_stop, load_done) = tokio::sync::oneshot::channel();
        let load = tokio::spawn(sample_load(load_done));
        Self {
            started: std::time::Instant::now(),
            landscaper: spawn_landscaper(kubeconfig, log),
            log: log.to_owned(),
            limit,
            load_stop,
            load,
        }
    }

    /// Polls `done` every `every` until it holds, as [`wait_or_exit`] does.
    pub async fn wait_until<F, Fut>(&mut self, what: &str, every: Duration, done: F)
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = bool>,
    {
        wait_or_exit(
            what,
            self.started,
            self.limit,
            every,
            &mut self.landscaper,
            &self.log,
            done,
        )
        .await;
    }

    /// The landscaper's usage so far.
    pub fn usage(&self) -> Usage {
        usage(&self.landscaper.id().to_string())
    }

    /// Stops sampling the load and the landscaper; the load samples.
    pub async fn stop(mut self) -> Vec<f64> {
        let _ = self.load_stop.send(());
        let load = self.load.await.expect("load samples");
        let _ = self.landscaper.kill();
        let _ = self.landscaper.wait();
        load
    }
}

/// What one user asked of the API server since its counters were reset.
pub struct Requests {
    /// Every request.
    pub all: u64,
    /// The writes among them.
    pub writes: u64,
    /// The most frequent, as [`top_requests`] lists them.
    pub top: String,
}

impl Requests {
    /// The requests of `user` counted in `counters`.
    pub fn of(counters: &testbed::Counters, user: &str) -> Self {
        Self {
            all: counters.count(None, None, Some(user)),
            writes: counters.writes(Some(user)),
            top: top_requests(counters, user),
        }
    }
}

/// The twelve most frequent requests of `user`, as `verb resource count`, most frequent first.
pub fn top_requests(counters: &testbed::Counters, user: &str) -> String {
    let mut by_kind: Vec<(String, u64)> = counters
        .snapshot()
        .into_iter()
        .filter(|(key, _)| key.user == user)
        .map(|(key, count)| (format!("{} {}", key.verb, key.resource), count))
        .collect();
    by_kind.sort_by_key(|(_, count)| std::cmp::Reverse(*count));
    by_kind
        .iter()
        .take(12)
        .map(|(kind, count)| format!("{kind} {count}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The load samples of [`sample_load`] as a report line's value: mean, peak and cores.
pub fn load_summary(load: &[f64]) -> String {
    format!(
        "{:.2} mean ({:.2} at most; {} cores)",
        load.iter().sum::<f64>() / load.len().max(1) as f64,
        load.iter().copied().fold(0.0, f64::max),
        std::thread::available_parallelism().map_or(0, usize::from)
    )
}

/// Polls `done` every `every` until it holds. Past `limit` since `started` it kills `child`,
/// says what did not happen and where the child's `log` is (kept: `exit` runs no destructor,
/// so a temporary folder stays), and exits with status 1.
pub async fn wait_or_exit<F, Fut>(
    what: &str,
    started: std::time::Instant,
    limit: Duration,
    every: Duration,
    child: &mut std::process::Child,
    log: &std::path::Path,
    mut done: F,
) where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    while !done().await {
        if started.elapsed() > limit {
            eprintln!("{what}: not after {limit:?}; log: {}", log.display());
            let _ = child.kill();
            std::process::exit(1);
        }
        tokio::time::sleep(every).await;
    }
}
