//! Criterion benchmark of whole-chart rendering on the real charts of
//! `../shared/conformance/charts/` (kube-prometheus-stack, ingress-nginx, bitnami nginx), side
//! by side with `helm template` in one run. For each chart, `landscaper` is the complete
//! pipeline in process (values coalescing, every template parsed and executed, each
//! document's YAML read, manifests sorted and printed as `helm template` prints them), and
//! `helm-template` one `helm template` process on the same chart, values and options, when
//! helm is found (`$HELM` or `PATH`).
//!
//! Run: `cargo bench -p landscaper-chart --bench charts`; criterion's filter picks cases, e.g.
//! `-- kube-prometheus-stack/landscaper`, and `--profile-time 20` only renders (for a
//! profiler). Process figures with peak memory are `cargo bench -p landscaper-agent --bench
//! render`.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use criterion::{Criterion, SamplingMode};
use landscaper_chart::formats::yaml::parse_values_file;
use landscaper_chart::helm::chart::load;
use landscaper_chart::helm::render::{self, ReleaseOptions, TemplateOptions};

/// Chart folder and values file of each case, under `../shared/conformance/charts/`.
const CASES: &[(&str, &str, &str)] = &[
    (
        "kube-prometheus-stack",
        "kube-prometheus-stack/chart",
        "kube-prometheus-stack/values-default.yaml",
    ),
    (
        "ingress-nginx",
        "ingress-nginx/chart",
        "ingress-nginx/values-default.yaml",
    ),
    ("nginx", "nginx/chart", "nginx/values-features.yaml"),
];

fn charts_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/charts")
}

/// The options both sides render with: release `rel` in `ns1`, Kubernetes 1.33.
fn options() -> TemplateOptions {
    TemplateOptions {
        release: ReleaseOptions {
            name: "rel".to_string(),
            namespace: "ns1".to_string(),
            ..ReleaseOptions::default()
        },
        kube_version: render::parse_kube_version("1.33.0").ok(),
        ..TemplateOptions::default()
    }
}

/// helm from `$HELM`, else the first `helm` on `PATH`.
fn helm() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("HELM").map(PathBuf::from)
        && path.is_file()
    {
        return Some(path);
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join("helm"))
        .find(|path| path.is_file())
}

/// One `helm template` process with the bench's options; its output is discarded.
fn helm_template(helm: &Path, home: &Path, chart: &Path, values: &Path) -> bool {
    Command::new(helm)
        .args(["template", "rel"])
        .arg(chart)
        .arg("-f")
        .arg(values)
        .args(["--namespace", "ns1", "--kube-version", "1.33.0"])
        .env("HOME", home)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

fn charts(c: &mut Criterion) {
    let options = options();
    let helm = helm();
    if helm.is_none() {
        eprintln!("helm not found ($HELM or PATH): measuring landscaper alone");
    }
    let home = std::env::temp_dir().join(format!("landscaper-charts-bench-{}", std::process::id()));
    if let Err(e) = std::fs::create_dir_all(&home) {
        eprintln!("cannot create {}: {e}", home.display());
        return;
    }
    for (name, chart_path, values_path) in CASES {
        let chart_dir = charts_dir().join(chart_path);
        let values_file = charts_dir().join(values_path);
        let chart = match load(&chart_dir) {
            Ok(chart) => chart,
            Err(e) => {
                eprintln!("{name}: cannot load: {e}");
                continue;
            }
        };
        let text = std::fs::read_to_string(&values_file).unwrap_or_default();
        let values = match parse_values_file(values_path, &text) {
            Ok(values) => values,
            Err(e) => {
                eprintln!("{name}: bad values: {e}");
                continue;
            }
        };
        if let Err(e) = render::install(&chart, &values, &options) {
            eprintln!("{name}: render error: {e}");
            continue;
        }
        let mut group = c.benchmark_group(*name);
        // Flat sampling: a helm process takes a few hundred milliseconds.
        group.sampling_mode(SamplingMode::Flat);
        group.sample_size(10);
        group.warm_up_time(Duration::from_secs(1));
        group.measurement_time(Duration::from_secs(5));
        group.bench_function("landscaper", |b| {
            b.iter(|| {
                render::install(black_box(&chart), black_box(&values), &options)
                    .ok()
                    .and_then(|release| render::template_output(release, &options).ok())
            })
        });
        if let Some(helm) = &helm {
            if helm_template(helm, &home, &chart_dir, &values_file) {
                group.bench_function("helm-template", |b| {
                    b.iter(|| helm_template(helm, &home, &chart_dir, &values_file))
                });
            } else {
                eprintln!("{name}: helm template failed; not compared");
            }
        }
        group.finish();
    }
    let _ = std::fs::remove_dir_all(&home);
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    charts(&mut criterion);
    criterion.final_summary();
}
