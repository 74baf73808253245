//! Timings of the format layer on the values files of the real charts in
//! `../shared/conformance/charts/`: reading (YAML 1.1 + JSON conversion) and every encoder.
//!
//! Run with `cargo bench -p landscaper-chart --bench formats`; prints one line per file.

use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use landscaper_chart::formats::tree::Data;
use landscaper_chart::{formats::json, formats::toml, formats::yaml};

const ROUNDS: u32 = 30;

fn time<T>(mut f: impl FnMut() -> T) -> Duration {
    let start = Instant::now();
    for _ in 0..ROUNDS {
        black_box(f());
    }
    start.elapsed() / ROUNDS
}

fn main() {
    let charts =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/charts");
    for chart in ["kube-prometheus-stack", "ingress-nginx", "nginx"] {
        let path = charts.join(chart).join("chart/values.yaml");
        let Ok(src) = std::fs::read_to_string(&path) else {
            println!("{chart}: no values file at {}", path.display());
            continue;
        };
        let values = yaml::parse_values_file("values.yaml", &src).expect("values parse");
        let data = Data::Map(values);
        let read = time(|| yaml::parse_values_file("values.yaml", &src));
        let to_yaml = time(|| yaml::to_yaml(&data));
        let pretty = time(|| yaml::to_yaml_pretty(&data));
        let to_json = time(|| json::to_json(&data));
        let to_toml = time(|| toml::to_toml(&data));
        println!(
            "{chart} values.yaml ({} KiB): read {read:?}, toYaml {to_yaml:?}, toYamlPretty {pretty:?}, toJson {to_json:?}, toToml {to_toml:?}",
            src.len() / 1024
        );
    }
}
