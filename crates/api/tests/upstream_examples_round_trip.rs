//! Every upstream example manifest of a kind we type decodes and serializes back to the
//! same document: no field lost, renamed or re-typed.

mod common;

use std::collections::BTreeSet;

use landscaper_api::KnownDocument;
use landscaper_api::core::{data_object_name, execution_data_object_name};
use pretty_assertions::assert_eq;
use serde_json::Value;

/// Files that are in `examples/` but hold nothing to round-trip, and why.
const NOT_ROUND_TRIPPED: &[(&str, &str)] = &[
    (
        "ex__40-Example-DeployItem.yaml",
        "pseudo-YAML upstream; it does not parse (index.json)",
    ),
    (
        "ex-blueprints-simple-data__text",
        "a text blob of a blueprint, not a manifest",
    ),
    (
        "ex-comp-nginx-ingress-bp__deployItems.yaml",
        "a Landscaper GoTemplate deploy-execution input (.imports, .cd); not a manifest until a blueprint renders it",
    ),
    (
        "pl-inst-execs-reg-root-root-1__deploy-execution.yaml",
        "a Landscaper GoTemplate deploy-execution input (getResource, .imports); not a manifest until a blueprint renders it",
    ),
];

/// Documents our decoder rejects, the error it must give, and why that is right.
const EXPECTED_DECODE_ERRORS: &[(&str, &str, &str)] = &[
    (
        "ex__31-Example-Execution.yaml#0",
        "field .: missing field `metadata`",
        "upstream typo `metadta:` leaves the object without metadata; no API server accepts that, \
     and kube's typed resources require it",
    ),
    (
        "ex-comp-aggregated-bp-inst-dns__dns-installation.yaml#0",
        "field .exports[0]: invalid type: map, expected a sequence",
        "obsolete format with `exports` as a list; upstream's Go decoder rejects it too \
         (cannot unmarshal an array into InstallationExports)",
    ),
    (
        "ex-deploy-items__21-Helm-cluster-target.yaml#0",
        "field .metadata.annotations: invalid type: string \"abc...\", expected a map",
        "placeholder text `abc...` where a map belongs; upstream's Go decoder and any API server reject it too",
    ),
];

/// Unknown fields our decoder reports beyond those index.json lists, with the reason.
const EXPLAINED_UNKNOWN_FIELDS: &[(&str, &str, &str)] = &[
    (
        "ex__01-Agent-Configuration.yaml",
        ".targetSelectors[].annotations[].operation",
        "upstream typo for `operator` (index.json note); Go drops it too",
    ),
    (
        "ex__00-Landscaper-Configuration.yaml",
        ".deployerManagement.agent.targetSelectors[].annotations[].operation",
        "upstream typo for `operator` (index.json note); Go drops it too",
    ),
    (
        "ex__00-Landscaper-Configuration.yaml",
        ".controllers.contexts.config.default.excludeNamespaces",
        "stale key (upstream's field is excludedNamespaces); kept as part of the free-form contexts config",
    ),
];

#[test]
fn upstream_examples_round_trip() {
    let dir = common::landscaper_conformance_dir();
    let index: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("index.json")).unwrap()).unwrap();
    let mut checked = Vec::new();
    let mut skipped = Vec::new();
    for entry in index["files"].as_array().unwrap() {
        let file = entry["file"].as_str().unwrap();
        let Some(name) = file.strip_prefix("examples/") else {
            continue;
        };
        if let Some((_, why)) = NOT_ROUND_TRIPPED.iter().find(|(n, _)| *n == name) {
            skipped.push(format!("{name}: {why}"));
            continue;
        }
        let mut text = std::fs::read_to_string(dir.join(file)).unwrap();
        if entry["needs_template_rendering"].as_bool() == Some(true) {
            text = render_envtest_template(&text);
        }
        let listed: BTreeSet<String> = entry["fields_not_in_head_schema"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_str().unwrap().to_owned())
            .collect();
        let documents =
            common::yaml_documents(&text).unwrap_or_else(|e| panic!("{name} should parse: {e}"));
        for (position, document) in documents.into_iter().enumerate() {
            let label = format!("{name}#{position}");
            match round_trip(&label, name, document, &listed) {
                Some(kind) => checked.push(format!("{label} {kind}")),
                None => skipped.push(format!("{label}: not a kind this crate types")),
            }
        }
    }
    // The examples hold Installations, Executions, DeployItems, Targets, DataObjects, Contexts,
    // an Environment, a DeployerRegistration, Blueprints and the configuration kinds.
    for kind in [
        "Installation",
        "Execution",
        "DeployItem",
        "Target",
        "DataObject",
        "Context",
        "Environment",
        "DeployerRegistration",
        "Blueprint",
        "InstallationTemplate",
        "AgentConfiguration",
        "LandscaperConfiguration",
        "TargetSync",
        "LsHealthCheck",
        "helm.deployer.landscaper.gardener.cloud/v1alpha1/ProviderConfiguration",
        "manifest.deployer.landscaper.gardener.cloud/v1alpha2/ProviderConfiguration",
        "mock.deployer.landscaper.gardener.cloud/v1alpha1/ProviderConfiguration",
    ] {
        assert!(
            checked
                .iter()
                .any(|c| c.ends_with(&format!(" {kind}")) || c.contains(&format!(" {kind} "))),
            "no example of {kind} was round-tripped; checked: {checked:#?}"
        );
    }
    assert!(
        checked.len() >= 76,
        "only {} documents checked: {checked:#?}\nskipped: {skipped:#?}",
        checked.len()
    );
}

/// Decodes, re-encodes and compares one document and the provider configurations nested in
/// it; returns what was checked, or `None` for a foreign kind.
fn round_trip(
    label: &str,
    file: &str,
    document: Value,
    listed: &BTreeSet<String>,
) -> Option<String> {
    if let Some((_, expected, _)) = EXPECTED_DECODE_ERRORS.iter().find(|(l, _, _)| *l == label) {
        let error = KnownDocument::decode(document, label)
            .expect_err("expected a decode error")
            .to_string();
        assert_eq!(error, format!("{label}: {expected}"));
        return Some("rejected as expected".to_owned());
    }
    let decoded =
        KnownDocument::decode(document.clone(), label).unwrap_or_else(|e| panic!("{e}"))?;
    check_unknown_fields(label, file, "", &decoded.unknown_fields, listed);
    let mut original = document.clone();
    let mut ours = decoded.value.to_value();
    for path in listed.iter().chain(explained_for(file).iter()) {
        remove_path(&mut original, path);
        remove_path(&mut ours, path);
    }
    assert_eq!(
        normalize(ours),
        normalize(original),
        "{label} does not round-trip"
    );
    let mut kinds = vec![document["kind"].as_str().unwrap_or_default().to_owned()];
    for (path, config) in nested_provider_configs(&document) {
        let nested_label = format!("{label} at {path}");
        let Some(nested) =
            KnownDocument::decode(config.clone(), &nested_label).unwrap_or_else(|e| panic!("{e}"))
        else {
            continue;
        };
        let listed_nested: BTreeSet<String> = listed
            .iter()
            .filter_map(|p| p.strip_prefix("(ProviderConfiguration)"))
            .map(str::to_owned)
            .collect();
        check_unknown_fields(
            &nested_label,
            file,
            &path,
            &nested.unknown_fields,
            &listed_nested,
        );
        let mut original = config.clone();
        let mut ours = nested.value.to_value();
        for path in &listed_nested {
            remove_path(&mut original, path);
            remove_path(&mut ours, path);
        }
        assert_eq!(
            normalize(ours),
            normalize(original),
            "{nested_label} does not round-trip"
        );
        kinds.push(format!(
            "{}/{}",
            config["apiVersion"].as_str().unwrap(),
            config["kind"].as_str().unwrap()
        ));
    }
    Some(kinds.join(" "))
}

fn explained_for(file: &str) -> Vec<String> {
    EXPLAINED_UNKNOWN_FIELDS
        .iter()
        .filter(|(f, _, _)| *f == file)
        .map(|(_, p, _)| (*p).to_owned())
        .collect()
}

/// The only fields we may drop are those upstream drops too: listed in index.json, or
/// explained above.
fn check_unknown_fields(
    label: &str,
    file: &str,
    prefix: &str,
    unknown: &[String],
    listed: &BTreeSet<String>,
) {
    let explained = explained_for(file);
    for field in unknown {
        let generic = strip_indexes(field);
        assert!(
            listed.contains(&generic) || explained.contains(&generic),
            "{label}: field {prefix}{field} was dropped although upstream's schema has it"
        );
    }
}

/// `.a[3].b` → `.a[].b`, the form index.json uses.
fn strip_indexes(path: &str) -> String {
    let mut out = String::new();
    let mut in_index = false;
    for c in path.chars() {
        match c {
            '[' => {
                in_index = true;
                out.push('[');
            }
            ']' => {
                in_index = false;
                out.push(']');
            }
            _ if in_index => {}
            _ => out.push(c),
        }
    }
    out
}

/// Removes a path like `.spec.imports.data[].secretRef.namespace` from a document.
fn remove_path(value: &mut Value, path: &str) {
    let segments: Vec<&str> = path.trim_start_matches('.').split('.').collect();
    remove_segments(value, &segments);
}

fn remove_segments(value: &mut Value, segments: &[&str]) {
    let Some((first, rest)) = segments.split_first() else {
        return;
    };
    let (key, all_items) = match first.strip_suffix("[]") {
        Some(key) => (key, true),
        None => (*first, false),
    };
    let Some(object) = value.as_object_mut() else {
        return;
    };
    if rest.is_empty() && !all_items {
        object.remove(key);
        return;
    }
    let Some(child) = object.get_mut(key) else {
        return;
    };
    if all_items {
        for item in child.as_array_mut().into_iter().flatten() {
            remove_segments(item, rest);
        }
    } else {
        remove_segments(child, rest);
    }
}

/// Drops nulls, empty maps and lists, and empty strings: Go's zero values, which upstream
/// either omits or writes (metav1's `ownerReferences[].uid`) exactly as we do.
fn normalize(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (k, normalize(v)))
                .filter(|(_, v)| !is_empty(v))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(normalize).collect()),
        other => other,
    }
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Object(map) => map.is_empty(),
        Value::Array(items) => items.is_empty(),
        Value::String(text) => text.is_empty(),
        _ => false,
    }
}

fn nested_provider_configs(document: &Value) -> Vec<(String, Value)> {
    let mut configs = Vec::new();
    if let Some(config) = document.pointer("/spec/config") {
        configs.push((".spec.config".to_owned(), config.clone()));
    }
    for (index, item) in document
        .pointer("/spec/deployItems")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        if let Some(config) = item.get("config") {
            configs.push((format!(".spec.deployItems[{index}].config"), config.clone()));
        }
    }
    configs
}

/// Renders the placeholders of upstream's envtest state files as the conformance README
/// describes: `.Namespace`, `.Namespace2`, `dataObjectName`, `dataObjectContext` and
/// `executionDataObjectNameExec`.
fn render_envtest_template(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let end = rest[start..]
            .find("}}")
            .map(|e| start + e + 2)
            .expect("unterminated action");
        out.push_str(&evaluate(rest[start + 2..end - 2].trim()));
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

fn evaluate(action: &str) -> String {
    let tokens = tokenize(action);
    let (value, used) = evaluate_tokens(&tokens);
    assert_eq!(
        used,
        tokens.len(),
        "unsupported template action {{{{ {action} }}}}"
    );
    value
}

fn tokenize(action: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut chars = action.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' => {}
            '(' | ')' => tokens.push(c.to_string()),
            '"' => {
                let mut s = String::from('"');
                for c in chars.by_ref() {
                    if c == '"' {
                        break;
                    }
                    s.push(c);
                }
                tokens.push(s);
            }
            _ => {
                let mut s = c.to_string();
                while let Some(&n) = chars.peek() {
                    if n == ' ' || n == '(' || n == ')' {
                        break;
                    }
                    s.push(n);
                    chars.next();
                }
                tokens.push(s);
            }
        }
    }
    tokens
}

/// Evaluates one expression at the start of `tokens`; returns its value and how many tokens
/// it used.
fn evaluate_tokens(tokens: &[String]) -> (String, usize) {
    let first = tokens[0].as_str();
    let argument = |at: usize| -> (String, usize) {
        if tokens[at] == "(" {
            let (value, used) = evaluate_tokens(&tokens[at + 1..]);
            assert_eq!(tokens[at + 1 + used], ")");
            (value, used + 2)
        } else {
            (tokens[at].trim_start_matches('"').to_owned(), 1)
        }
    };
    match first {
        ".Namespace" => ("test-ns".to_owned(), 1),
        ".Namespace2" => ("test-ns-2".to_owned(), 1),
        "dataObjectName" | "dataObjectContext" | "executionDataObjectNameExec" => {
            let (a, used_a) = argument(1);
            let (b, used_b) = argument(1 + used_a);
            let value = match first {
                "dataObjectName" => data_object_name(&a, &b),
                "dataObjectContext" => format!("Inst.{b}"),
                _ => execution_data_object_name(&b),
            };
            (value, 1 + used_a + used_b)
        }
        other => panic!("unsupported template function {other}"),
    }
}
