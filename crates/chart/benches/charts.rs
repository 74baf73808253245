//! Whole-chart render timings on the real charts of `../shared/conformance/charts/`
//! (kube-prometheus-stack, ingress-nginx, nginx): load once, then the complete `helm template`
//! pipeline (values coalescing, every template parsed and executed, manifests split and
//! sorted) repeated, reporting the median and best time per render.
//!
//! Run with `cargo bench -p landscaper-chart --bench charts`; `BENCH_CHARTS=nginx,…` renders
//! only the charts named (e.g. to profile one of them).

use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use landscaper_chart::chart::load;
use landscaper_chart::render::{TemplateOptions, install};
use landscaper_chart::yaml::parse_values_file;

/// Renders per chart; the median of these is reported.
const ROUNDS: usize = 30;

fn charts_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/charts")
}

fn main() {
    let options = TemplateOptions::default();
    let only = std::env::var("BENCH_CHARTS").ok();
    let wanted = |name: &str| {
        only.as_deref()
            .is_none_or(|o| o.split(',').any(|n| n == name))
    };
    for name in ["kube-prometheus-stack", "ingress-nginx", "nginx"] {
        if !wanted(name) {
            continue;
        }
        let dir = charts_dir().join(name);
        let chart = match load(&dir.join("chart")) {
            Ok(chart) => chart,
            Err(e) => {
                println!("{name}: cannot load: {e}");
                continue;
            }
        };
        let values_path = dir.join("values-default.yaml");
        let text = std::fs::read_to_string(&values_path).unwrap_or_default();
        let values = match parse_values_file("values-default.yaml", &text) {
            Ok(values) => values,
            Err(e) => {
                println!("{name}: bad values: {e}");
                continue;
            }
        };
        let mut times: Vec<Duration> = Vec::with_capacity(ROUNDS);
        let mut bytes = 0;
        for _ in 0..ROUNDS {
            let start = Instant::now();
            let release = install(black_box(&chart), black_box(&values), &options);
            times.push(start.elapsed());
            match release {
                Ok(release) => bytes = release.manifest.len(),
                Err(e) => {
                    println!("{name}: render error: {e}");
                    break;
                }
            }
        }
        times.sort();
        if let (Some(best), Some(median)) = (times.first(), times.get(times.len() / 2)) {
            println!(
                "{name}: median {:.2} ms, best {:.2} ms per render ({bytes} bytes of manifest, {} rounds)",
                median.as_secs_f64() * 1e3,
                best.as_secs_f64() * 1e3,
                times.len()
            );
        }
    }
}
