//! Renders the largest Spiff case of the conformance data 1,000 times and prints the time
//! (`cargo bench -p landscaper-spiff`); nothing is asserted.

use std::path::Path;
use std::time::Instant;

use landscaper_spiff::{Spiff, Template};
use serde_json::Value;

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/conformance/landscaper/templates/testdata/executions-template/spifftemplate/yaml");
    let mut largest: Option<(usize, String, Value)> = None;
    for entry in std::fs::read_dir(&dir).expect("template dir") {
        let path = entry.expect("entry").path();
        let text = std::fs::read_to_string(&path).expect("template");
        if largest.as_ref().is_none_or(|(len, _, _)| text.len() > *len) {
            let execs: Value = serde_yaml_ng::from_str(&text).expect("yaml");
            largest = Some((
                text.len(),
                path.display().to_string(),
                execs[0]["template"].clone(),
            ));
        }
    }
    let (_, name, template) = largest.expect("a template");
    let values = serde_json::json!({
        "imports": {"config": {"verbosity": 10, "memory": {"min": 128, "max": 1024},
            "cert": "abc", "invalid": 1, "image": {"name": "test", "version": "0.0.1"}}},
        "cd": null, "components": null,
    });
    let spiff = Spiff::new().with_values(values);
    let runs = 1_000;
    let start = Instant::now();
    for _ in 0..runs {
        let t = Template::from_value(&template).expect("template");
        std::hint::black_box(spiff.cascade(&t, &[], None).expect("renders"));
    }
    let took = start.elapsed();
    println!(
        "{name}: {runs} renders in {took:?} ({:?} each)",
        took / runs
    );
}
