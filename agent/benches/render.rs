//! Whole-chart render benchmark, side by side with `helm template` in one run:
//! kube-prometheus-stack and bitnami nginx from `shared/conformance/charts`.
//!
//! For each chart it reports our in-process render time (load, values, render, sort,
//! output; mean of several runs), the wall time and peak memory of one `landscaper-agent
//! template` process, and the same for `helm template` when helm is found (`$HELM` or
//! `PATH`). Peak memory comes from `/usr/bin/time -f %M`.
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

const RUNS: u32 = 5;

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
    let mut total = Duration::ZERO;
    let mut bytes = 0;
    for _ in 0..RUNS {
        let start = Instant::now();
        let loaded = chart::load(chart_dir).map_err(|e| e.to_string())?;
        let text = std::fs::read_to_string(values).map_err(|e| e.to_string())?;
        let user = yaml::parse_values(&text).map_err(|e| e.to_string())?;
        let release = render::install(&loaded, &user, &options).map_err(|e| e.to_string())?;
        let out = render::template_output(&release, &options)?;
        total += start.elapsed();
        bytes = out.len();
    }
    Ok((total / RUNS, bytes))
}

/// Wall time and peak RSS (KiB) of one process, through `/usr/bin/time`.
fn process(program: &Path, chart_dir: &Path, values: &Path) -> Option<(Duration, u64)> {
    let home = std::env::temp_dir().join(format!("landscaper-bench-home-{}", std::process::id()));
    std::fs::create_dir_all(&home).ok()?;
    let start = Instant::now();
    let out = Command::new("/usr/bin/time")
        .args(["-f", "%M"])
        .arg(program)
        .args(["template", "rel"])
        .arg(chart_dir)
        .arg("-f")
        .arg(values)
        .args(["--namespace", "ns1", "--kube-version", "1.33.0"])
        .env("HOME", &home)
        .output()
        .ok()?;
    let elapsed = start.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let peak = stderr.lines().last()?.trim().parse().ok()?;
    out.status.success().then_some((elapsed, peak))
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
        match agent
            .is_file()
            .then(|| process(&agent, &chart_dir, &values))
            .flatten()
        {
            Some((time, kib)) => println!(
                "  ours, process:      {} wall, {:.1} MiB peak",
                ms(time),
                kib as f64 / 1024.0
            ),
            None => println!(
                "  ours, process:      not measured (no release binary at {} or it failed)",
                agent.display()
            ),
        }
        match helm
            .as_deref()
            .and_then(|h| process(h, &chart_dir, &values))
        {
            Some((time, kib)) => println!(
                "  helm template:      {} wall, {:.1} MiB peak",
                ms(time),
                kib as f64 / 1024.0
            ),
            None => println!("  helm template:      not measured (set HELM or put helm on PATH)"),
        }
    }
}
