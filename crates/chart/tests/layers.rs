//! The crate's layers use only the layers below them: every `crate::LAYER` path in a source
//! file (`use` lines, grouped imports and paths inside code alike) is checked against the
//! order `formats`, `parallel` < `engine` < `helm` < `fetch`. A path to a layer above the file's
//! own is a cycle in the making, whether in code or in its unit tests.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

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

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("readable source folder") {
        let path = entry.expect("a folder entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
}

/// The layers a source text names with `crate::LAYER` or inside `crate::{…}`.
fn named_layers(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for (at, _) in text.match_indices("crate::") {
        let preceded_by_ident = text[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$');
        if preceded_by_ident {
            continue;
        }
        let rest = &text[at + "crate::".len()..];
        let names: Vec<&str> = match rest.strip_prefix('{') {
            Some(group) => group
                .split('}')
                .next()
                .unwrap_or("")
                .split(',')
                .map(str::trim)
                .collect(),
            None => vec![rest],
        };
        for name in names {
            let head: String = name
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !head.is_empty() {
                found.insert(head);
            }
        }
    }
    found
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
        for used in named_layers(&text) {
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
    let names: Vec<String> = named_layers(text).into_iter().collect();
    assert_eq!(names, ["engine", "formats", "helm"]);
}
