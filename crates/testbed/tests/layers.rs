//! No import cycle between the testbed's top-level modules: every `crate::MODULE` path in code
//! (comments aside) is an edge, and the graph must be acyclic, so the write path, the store
//! and the objects stay usable without the HTTP layer and the controllers above them.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

#[path = "../../chart/tests/support/crate_paths.rs"]
mod crate_paths;

use crate_paths::{code_only, named_modules, sources};

type Graph = BTreeMap<String, BTreeSet<String>>;

/// Which top-level modules each top-level module of `src` names.
fn module_graph(src: &Path) -> Graph {
    let mut files = Vec::new();
    sources(src, &mut files);
    let module_of = |file: &Path| {
        let relative = file.strip_prefix(src).expect("under src");
        let top = relative.components().next().expect("a file name");
        top.as_os_str()
            .to_str()
            .expect("a UTF-8 name")
            .trim_end_matches(".rs")
            .to_owned()
    };
    let modules: BTreeSet<String> = files
        .iter()
        .map(|f| module_of(f))
        .filter(|m| m != "lib" && m != "bin")
        .collect();
    let mut graph = Graph::new();
    for file in &files {
        let module = module_of(file);
        if !modules.contains(&module) {
            continue;
        }
        let text = fs::read_to_string(file).expect("readable source");
        let uses = graph.entry(module.clone()).or_default();
        for used in named_modules(&code_only(&text)) {
            if used != module && modules.contains(&used) {
                uses.insert(used);
            }
        }
    }
    graph
}

/// A cycle of `graph` as a path (`a → b → a`), if it has one.
fn find_cycle(graph: &Graph) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &Graph,
        done: &mut BTreeSet<String>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, done, path) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut done, &mut Vec::new()))
}

#[test]
fn the_modules_import_each_other_without_a_cycle() {
    let graph = module_graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(graph.len() > 20, "only {} modules found", graph.len());
    assert!(graph["writes"].contains("store"), "the scan sees imports");
    if let Some(cycle) = find_cycle(&graph) {
        panic!("import cycle: {}", cycle.join(" → "));
    }
}

#[test]
fn a_cycle_is_reported_with_its_path() {
    let graph: Graph = [("a", "b"), ("b", "c"), ("c", "a")]
        .into_iter()
        .map(|(from, to)| (from.to_owned(), BTreeSet::from([to.to_owned()])))
        .collect();
    assert_eq!(
        find_cycle(&graph).expect("a cycle").join(" → "),
        "a → b → c → a"
    );
}
