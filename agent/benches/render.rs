//! Whole-chart render benchmark, side by side with `helm template` in one run:
//! kube-prometheus-stack and bitnami nginx from `shared/conformance/charts`.
//!
//! For each chart it reports our in-process render time (load, values, render, sort,
//! output; median of several runs), the median wall time, CPU time (user + system) and peak
//! memory of `landscaper-agent template` processes, the same for `helm template` when helm is
//! found (`$HELM` or `PATH`), and how many times faster ours is. CPU and peak memory come
//! from `/usr/bin/time -f "%U %S %M"`; runs alternate between the two programs so that load
//! from elsewhere on the machine hits both alike.
//!
//! Run: `cargo bench -p landscaper-agent --bench render` (build the release binary first
//! with `cargo build --release -p landscaper-agent` so the process figures are optimized).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use landscaper_chart::chart;
use landscaper_chart::render::{self, ReleaseOptions, TemplateOptions};
use landscaper_chart::yaml;

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
        let out = render::template_output(&release, &options)?;
        times.push(start.elapsed());
        bytes = out.len();
    }
    times.sort();
    Ok((times[RUNS / 2], bytes))
}

/// What one process cost.
#[derive(Clone, Copy)]
struct Cost {
    wall: Duration,
    cpu: Duration,
    peak_kib: u64,
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

/// Wall time, CPU time and peak RSS of one process, through `/usr/bin/time`, with the empty
/// folder `home` as its HOME: no helm repositories or plugins of this machine's user.
fn process(program: &Path, home: &Path, chart_dir: &Path, values: &Path) -> Option<Cost> {
    let start = Instant::now();
    let mut command = Command::new("/usr/bin/time");
    for variable in USER_FOLDER_VARIABLES {
        command.env_remove(variable);
    }
    let out = command
        .args(["-f", "%U %S %M"])
        .arg(program)
        .args(["template", "rel"])
        .arg(chart_dir)
        .arg("-f")
        .arg(values)
        .args(["--namespace", "ns1", "--kube-version", "1.33.0"])
        .env("HOME", home)
        .output()
        .ok()?;
    let wall = start.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let mut fields = stderr.lines().last()?.split_whitespace();
    let mut seconds = || fields.next()?.parse::<f64>().ok();
    let cpu = Duration::from_secs_f64(seconds()? + seconds()?);
    let peak_kib = seconds()? as u64;
    out.status.success().then_some(Cost {
        wall,
        cpu,
        peak_kib,
    })
}

/// Medians of wall and CPU time, and the largest peak, over `runs`.
fn median(mut runs: Vec<Cost>) -> Option<Cost> {
    let mid = runs.len() / 2;
    let peak_kib = runs.iter().map(|r| r.peak_kib).max()?;
    runs.sort_by_key(|r| r.wall);
    let wall = runs.get(mid)?.wall;
    runs.sort_by_key(|r| r.cpu);
    let cpu = runs.get(mid)?.cpu;
    Some(Cost {
        wall,
        cpu,
        peak_kib,
    })
}

fn show(label: &str, cost: Option<Cost>) {
    match cost {
        Some(c) => println!(
            "  {label:<20}{} wall, {} CPU, {:.1} MiB peak (median of {PROCESS_RUNS})",
            ms(c.wall),
            ms(c.cpu),
            c.peak_kib as f64 / 1024.0
        ),
        None => println!("  {label:<20}not measured (program missing or failed)"),
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
    let home = tempfile::Builder::new()
        .prefix("landscaper-bench-home-")
        .tempdir()
        .inspect_err(|e| println!("no temporary HOME, so no process figures: {e}"))
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
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        for _ in 0..PROCESS_RUNS {
            let Some(home) = &home else { break };
            if agent.is_file() {
                ours.extend(process(&agent, home.path(), &chart_dir, &values));
            }
            if let Some(helm) = &helm {
                theirs.extend(process(helm, home.path(), &chart_dir, &values));
            }
        }
        let (ours, theirs) = (median(ours), median(theirs));
        show("ours, process:", ours);
        show("helm template:", theirs);
        if let (Some(o), Some(h)) = (ours, theirs) {
            println!(
                "  helm / ours:        {:.2}x wall, {:.2}x CPU, {:.2}x peak memory",
                h.wall.as_secs_f64() / o.wall.as_secs_f64(),
                h.cpu.as_secs_f64() / o.cpu.as_secs_f64().max(1e-6),
                h.peak_kib as f64 / o.peak_kib.max(1) as f64
            );
        }
    }
}
