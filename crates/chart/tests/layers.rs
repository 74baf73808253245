//! The crate's layers use only the layers below them: every `crate::LAYER` path in a source
//! file (`use` lines, grouped imports and paths inside code alike) is checked against the
//! order `formats`, `parallel` < `engine` < `helm` < `fetch`. A path to a layer above the file's
//! own is a cycle in the making, whether in code or in its unit tests.

use std::fs;
use std::path::Path;

#[path = "support/crate_paths.rs"]
mod crate_paths;

use crate_paths::{named_modules, sources};

/// The layers from the bottom up; a layer may use its own rank and those below.
const LAYERS: &[(&str, u8)] = &[
    ("formats", 0),
    ("parallel", 0),
    ("engine", 1),
    ("helm", 2),
    ("fetch", 3),
];

fn rank(layer: &str) -> Option<u8> {
    LAYERS
        .iter()
        .find(|(name, _)| *name == layer)
        .map(|(_, rank)| *rank)
}

#[test]
fn no_layer_uses_a_layer_above_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    files.sort();
    let mut checked = 0;
    let mut upward = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(&src).expect("under src");
        let top = relative
            .components()
            .next()
            .and_then(|c| c.as_os_str().to_str())
            .expect("a file name");
        let layer = top.trim_end_matches(".rs");
        if layer == "lib" {
            continue;
        }
        let own = rank(layer)
            .unwrap_or_else(|| panic!("{}: module {layer} is in no layer", relative.display()));
        let text = fs::read_to_string(file).expect("readable source");
        for used in named_modules(&text) {
            let used_rank = rank(&used)
                .unwrap_or_else(|| panic!("{}: crate::{used} is in no layer", relative.display()));
            if used_rank > own {
                upward.push(format!("{} ({layer}) uses {used}", relative.display()));
            }
        }
        checked += 1;
    }
    assert!(
        checked > 100,
        "only {checked} source files found under {}",
        src.display()
    );
    assert!(
        upward.is_empty(),
        "uses of a higher layer:\n{}",
        upward.join("\n")
    );
}

#[test]
fn grouped_imports_and_paths_in_code_are_both_seen() {
    let text = "use crate::{formats::tree, helm};\nlet x = crate::engine::Engine::new(f);\n$crate::x; my_crate::y;";
    let names: Vec<String> = named_modules(text).into_iter().collect();
    assert_eq!(names, ["engine", "formats", "helm"]);
}
