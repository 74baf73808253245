//! Whole-chart render benchmark, side by side with `helm template` in one run:
//! kube-prometheus-stack and bitnami nginx from `shared/conformance/charts`.
//!
//! For each chart it reports our in-process render time (load, values, render, sort,
//! output; median of several runs), then the cost of `landscaper-agent template` processes
//! and of `helm template` processes when helm is found (`$HELM` or `PATH`), how many times
//! faster ours is, and whether the two printed the same manifests.
//!
//! Each process is started directly, its output going to a file as with a shell's `>`: the
//! wall time runs from start to exit, the CPU time is what the kernel counts for the children
//! of this process (`/proc/self/stat`). Peak memory and page faults come from a second run of
//! each under `/usr/bin/time -f "%M %R"`, so that neither that program nor a pipe is part of
//! the timed runs.
//! Runs alternate between the two programs so that load from elsewhere on the machine hits
//! both alike.
//!
//! Run: `cargo bench -p landscaper-agent --bench render` (build the release binary first
//! with `cargo build --release -p landscaper-agent` so the process figures are optimized).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use landscaper_chart::formats::yaml;
use landscaper_chart::helm::chart;
use landscaper_chart::helm::render::{self, ReleaseOptions, TemplateOptions};

const CASES: &[(&str, &str, &str)] = &[
    (
        "kube-prometheus-stack",
        "kube-prometheus-stack/chart",
        "kube-prometheus-stack/values-default.yaml",
    ),
    ("bitnami nginx", "nginx/chart", "nginx/values-features.yaml"),
];

/// In-process renders per chart; the median is reported.
const RUNS: usize = 11;

/// Processes of each program per chart.
const PROCESS_RUNS: usize = 11;

fn charts() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/conformance/charts")
}

fn in_process(chart_dir: &Path, values: &Path) -> Result<(Duration, usize), String> {
    let options = TemplateOptions {
        release: ReleaseOptions {
            name: "rel".to_string(),
            namespace: "ns1".to_string(),
            ..ReleaseOptions::default()
        },
        kube_version: render::parse_kube_version("1.33.0").ok(),
        ..TemplateOptions::default()
    };
    let mut times = Vec::with_capacity(RUNS);
    let mut bytes = 0;
    for _ in 0..RUNS {
        let start = Instant::now();
        let loaded = chart::load(chart_dir).map_err(|e| e.to_string())?;
        let text = std::fs::read_to_string(values).map_err(|e| e.to_string())?;
        let user = yaml::parse_values(&text).map_err(|e| e.to_string())?;
        let release = render::install(&loaded, &user, &options).map_err(|e| e.to_string())?;
        let out = render::template_output(release, &options)?;
        times.push(start.elapsed());
        bytes = out.len();
    }
    times.sort();
    Ok((times[RUNS / 2], bytes))
}

/// What one program cost over its processes.
#[derive(Clone, Copy)]
struct Cost {
    /// Median wall time, from start to exit.
    wall: Duration,
    /// Mean CPU time (user + system); `None` where the kernel does not tell.
    cpu: Option<Duration>,
    /// Largest peak resident memory; `None` without `/usr/bin/time`.
    peak_kib: Option<u64>,
    /// Median page faults that needed no disk (each a page of fresh memory or of a mapped
    /// file); `None` without `/usr/bin/time`.
    faults: Option<u64>,
    /// The timed runs the figures come from.
    runs: usize,
    /// Runs (timed or for memory) that failed and count in no figure.
    failed: usize,
}

/// Helm's and XDG's variables that would point the processes at this machine's user's helm
/// configuration, cache, data and plugins despite the empty HOME.
const USER_FOLDER_VARIABLES: &[&str] = &[
    "HELM_CACHE_HOME",
    "HELM_CONFIG_HOME",
    "HELM_DATA_HOME",
    "HELM_PLUGINS",
    "HELM_REGISTRY_CONFIG",
    "HELM_REPOSITORY_CACHE",
    "HELM_REPOSITORY_CONFIG",
    "XDG_CACHE_HOME",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
];

/// One program rendering one chart, as a user runs it.
struct Run<'a> {
    program: &'a Path,
    /// An empty folder as HOME: no helm repositories or plugins of this machine's user.
    home: &'a Path,
    chart_dir: &'a Path,
    values: &'a Path,
}

impl Run<'_> {
    /// The `template` command line, run by `wrapper` (a program and its arguments, such as
    /// `/usr/bin/time -f %M`) when given.
    fn command(&self, wrapper: Option<(&str, &[&str])>) -> Command {
        let mut command = match wrapper {
            Some((runner, args)) => {
                let mut command = Command::new(runner);
                command.args(args).arg(self.program);
                command
            }
            None => Command::new(self.program),
        };
        for variable in USER_FOLDER_VARIABLES {
            command.env_remove(variable);
        }
        command
            .args(["template", "rel"])
            .arg(self.chart_dir)
            .arg("-f")
            .arg(self.values)
            .args(["--namespace", "ns1", "--kube-version", "1.33.0"])
            .env("HOME", self.home);
        command
    }

    /// Runs the program itself, its output going to the file `out` as with a shell's
    /// redirection: the wall time from start to exit, and the CPU clock ticks it used; or why
    /// it failed.
    fn timed(&self, out: &Path) -> Result<(Duration, Option<u64>), String> {
        let out = std::fs::File::create(out).map_err(|e| format!("{}: {e}", out.display()))?;
        let ticks_before = children_cpu_ticks();
        let start = Instant::now();
        let done = self
            .command(None)
            .stdout(out)
            .stderr(Stdio::piped())
            .output()
            .map_err(|e| format!("{}: {e}", self.program.display()))?;
        let wall = start.elapsed();
        let ticks = children_cpu_ticks()
            .zip(ticks_before)
            .map(|(after, before)| after.saturating_sub(before));
        if !done.status.success() {
            let stderr = String::from_utf8_lossy(&done.stderr);
            return Err(format!(
                "{} {}: {}",
                self.program.display(),
                done.status,
                stderr.lines().last().unwrap_or_default()
            ));
        }
        Ok((wall, ticks))
    }

    /// Runs the program under `/usr/bin/time` for its peak resident memory, in KiB, and its
    /// page faults that needed no disk.
    fn peak_and_faults(&self) -> Option<(u64, u64)> {
        let out = self
            .command(Some(("/usr/bin/time", &["-f", "%M %R"])))
            .stdout(Stdio::null())
            .output()
            .ok()?;
        let stderr = String::from_utf8_lossy(&out.stderr);
        let (peak, faults) = stderr.lines().last()?.trim().split_once(' ')?;
        let measured = (peak.parse().ok()?, faults.parse().ok()?);
        out.status.success().then_some(measured)
    }
}

/// Linux's `USER_HZ`: the unit of the CPU times in `/proc`.
const CLOCK_TICKS_PER_SECOND: u64 = 100;

/// CPU clock ticks (user + system) used by the children this process has waited for, from
/// `/proc/self/stat`; `None` where there is no such file.
fn children_cpu_ticks() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The fields after the command name, which is in parentheses and may hold spaces: the
    // first is field 3 (state), so fields 16 and 17 (cutime, cstime) are at 13 and 14.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let user: u64 = fields.get(13)?.parse().ok()?;
    let system: u64 = fields.get(14)?.parse().ok()?;
    Some(user + system)
}

/// The processes of one program: wall times, CPU ticks, peaks and page faults of each.
#[derive(Default)]
struct Processes {
    walls: Vec<Duration>,
    ticks: Vec<Option<u64>>,
    peaks: Vec<u64>,
    faults: Vec<u64>,
    /// Timed runs that failed: the output file may be a failed run's.
    timed_failures: usize,
    /// Runs for memory that failed (or found no `/usr/bin/time`).
    peak_failures: usize,
}

impl Processes {
    /// Runs `run` once for time (its output into `out`) and once for memory; the first
    /// failure of a timed run is printed.
    fn measure(&mut self, run: &Run, out: &Path) {
        match run.timed(out) {
            Ok((wall, ticks)) => {
                self.walls.push(wall);
                self.ticks.push(ticks);
            }
            Err(e) => {
                if self.timed_failures == 0 {
                    println!("  failed: {e}");
                }
                self.timed_failures += 1;
            }
        }
        match run.peak_and_faults() {
            Some((peak, faults)) => {
                self.peaks.push(peak);
                self.faults.push(faults);
            }
            None => self.peak_failures += 1,
        }
    }

    /// Whether every timed run succeeded, so that the output file is a successful run's.
    fn all_timed_succeeded(&self) -> bool {
        self.timed_failures == 0 && !self.walls.is_empty()
    }

    /// The median wall time, the mean CPU time (a process's ticks are 10 ms steps, too coarse
    /// to take a median of), the largest peak and the median page faults.
    fn cost(mut self) -> Option<Cost> {
        self.walls.sort();
        let wall = *self.walls.get(self.walls.len() / 2)?;
        let ticks: Option<u64> = self.ticks.iter().copied().sum();
        let cpu = ticks.map(|t| {
            Duration::from_secs_f64(
                t as f64 / CLOCK_TICKS_PER_SECOND as f64 / self.walls.len() as f64,
            )
        });
        Some(Cost {
            wall,
            cpu,
            peak_kib: self.peaks.iter().copied().max(),
            faults: median(&mut self.faults),
            runs: self.walls.len(),
            failed: self.timed_failures + self.peak_failures,
        })
    }
}

fn show(label: &str, cost: Option<Cost>) {
    match cost {
        Some(c) => println!(
            "  {label:<20}{} wall (median), {} CPU (mean), {} peak (largest), {} page faults (median), of {} runs{}",
            ms(c.wall),
            c.cpu.map_or_else(|| "unknown".to_string(), ms),
            c.peak_kib.map_or_else(
                || "unknown".to_string(),
                |k| format!("{:.1} MiB", k as f64 / 1024.0)
            ),
            c.faults
                .map_or_else(|| "unknown".to_string(), |f| f.to_string()),
            c.runs,
            if c.failed > 0 {
                format!(" ({} failed runs left out)", c.failed)
            } else {
                String::new()
            }
        ),
        None => println!("  {label:<20}not measured (program missing or failed)"),
    }
}

/// The middle of `counts` (sorting them), or `None` when there are none.
fn median(counts: &mut [u64]) -> Option<u64> {
    counts.sort_unstable();
    counts.get(counts.len() / 2).copied()
}

/// How many times `theirs` is `ours`, or "n/a" when either is unknown or zero.
fn ratio(theirs: Option<f64>, ours: Option<f64>) -> String {
    match (theirs, ours) {
        (Some(t), Some(o)) if t > 0.0 && o > 0.0 => format!("{:.2}x", t / o),
        _ => "n/a".to_string(),
    }
}

fn find(name: &str, var: &str) -> Option<PathBuf> {
    if let Ok(p) = std::env::var(var) {
        return Some(PathBuf::from(p));
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    })
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn main() {
    let agent = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/release/landscaper-agent");
    let agent = std::env::var("CARGO_TARGET_DIR")
        .map(|d| PathBuf::from(d).join("release/landscaper-agent"))
        .ok()
        .filter(|p| p.is_file())
        .unwrap_or(agent);
    let helm = find("helm", "HELM");
    let scratch = tempfile::Builder::new()
        .prefix("landscaper-bench-")
        .tempdir()
        .inspect_err(|e| println!("no temporary folder, so no process figures: {e}"))
        .ok();
    for (name, chart_dir, values) in CASES {
        let chart_dir = charts().join(chart_dir);
        let values = charts().join(values);
        println!("== {name}");
        match in_process(&chart_dir, &values) {
            Ok((time, bytes)) => println!(
                "  ours, in process:   {} per render ({bytes} bytes)",
                ms(time)
            ),
            Err(e) => println!("  ours, in process:   failed: {e}"),
        }
        let Some(scratch) = &scratch else { continue };
        let home = scratch.path().join("home");
        if let Err(e) = std::fs::create_dir_all(&home) {
            println!("  no HOME for the processes: {e}");
            continue;
        }
        let (our_out, helm_out) = (scratch.path().join("ours"), scratch.path().join("helm"));
        let run = |program| Run {
            program,
            home: &home,
            chart_dir: &chart_dir,
            values: &values,
        };
        let (mut ours, mut theirs) = (Processes::default(), Processes::default());
        for _ in 0..PROCESS_RUNS {
            if agent.is_file() {
                ours.measure(&run(&agent), &our_out);
            }
            if let Some(helm) = &helm {
                theirs.measure(&run(helm), &helm_out);
            }
        }
        let comparable = ours.all_timed_succeeded() && theirs.all_timed_succeeded();
        let (ours, theirs) = (ours.cost(), theirs.cost());
        show("ours, process:", ours);
        show("helm template:", theirs);
        if let (Some(o), Some(h)) = (ours, theirs) {
            println!(
                "  helm / ours:        {} wall, {} CPU, {} peak memory",
                ratio(Some(h.wall.as_secs_f64()), Some(o.wall.as_secs_f64())),
                ratio(
                    h.cpu.map(|c| c.as_secs_f64()),
                    o.cpu.map(|c| c.as_secs_f64())
                ),
                ratio(h.peak_kib.map(|k| k as f64), o.peak_kib.map(|k| k as f64))
            );
            match (std::fs::read(&our_out), std::fs::read(&helm_out)) {
                _ if !comparable => {
                    println!("  outputs:            not compared (a run failed)")
                }
                (Ok(a), Ok(b)) if a == b => {
                    println!("  outputs:            identical ({} bytes)", a.len())
                }
                (Ok(a), Ok(b)) => println!(
                    "  outputs:            DIFFER ({} bytes ours, {} helm's)",
                    a.len(),
                    b.len()
                ),
                _ => println!("  outputs:            not compared (unreadable)"),
            }
        }
    }
}
