//! Our generated CRDs cover upstream's: names, scope, short names, subresources, printer
//! columns (ours may add some), and every spec and status field path with a compatible type;
//! a subtree upstream types is typed in ours too, not kept free-form.

mod common;

use std::collections::BTreeMap;

use landscaper_api::crd;
use serde_json::Value;

#[test]
fn every_upstream_crd_field_exists_in_ours_with_a_compatible_type() {
    let dir = common::landscaper_conformance_dir().join("crds");
    let ours: BTreeMap<String, Value> = crd::all()
        .into_iter()
        .map(|crd| {
            (
                crd.metadata.name.clone().unwrap(),
                serde_json::to_value(crd).unwrap(),
            )
        })
        .collect();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let mut compared = 0;
    let mut problems = Vec::new();
    let mut paths = 0;
    for file in files
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
    {
        let upstream = common::yaml_documents(&std::fs::read_to_string(file).unwrap())
            .unwrap()
            .remove(0);
        let name = upstream["metadata"]["name"].as_str().unwrap().to_owned();
        let Some(ours) = ours.get(&name) else {
            problems.push(format!("{name}: no CRD of ours"));
            continue;
        };
        paths += compare_crd(&name, &upstream, ours, &mut problems);
        compared += 1;
    }
    assert_eq!(
        compared,
        13,
        "expected 13 upstream CRDs in {}",
        dir.display()
    );
    // Guards the walk itself: upstream's schemas hold several hundred field paths.
    assert!(paths > 300, "only {paths} field paths compared");
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// Compares one CRD; returns how many schema field paths were compared.
fn compare_crd(name: &str, upstream: &Value, ours: &Value, problems: &mut Vec<String>) -> usize {
    let (u, o) = (&upstream["spec"], &ours["spec"]);
    for field in ["group", "scope"] {
        if u[field] != o[field] {
            problems.push(format!("{name}: spec.{field} {} != {}", u[field], o[field]));
        }
    }
    for field in ["kind", "plural", "singular"] {
        if u["names"][field] != o["names"][field] {
            problems.push(format!(
                "{name}: names.{field} {} != {}",
                u["names"][field], o["names"][field]
            ));
        }
    }
    for short_name in u["names"]["shortNames"].as_array().into_iter().flatten() {
        if !o["names"]["shortNames"]
            .as_array()
            .is_some_and(|ours| ours.contains(short_name))
        {
            problems.push(format!("{name}: short name {short_name} missing"));
        }
    }
    let (uv, ov) = (&u["versions"][0], &o["versions"][0]);
    if uv["name"] != ov["name"]
        || ov["served"] != Value::Bool(true)
        || ov["storage"] != Value::Bool(true)
    {
        problems.push(format!(
            "{name}: version {} must be served and stored",
            uv["name"]
        ));
    }
    if uv["subresources"].get("status").is_some() && ov["subresources"].get("status").is_none() {
        problems.push(format!("{name}: status subresource missing"));
    }
    let columns = |v: &Value| -> Vec<(Value, Value, Value)> {
        v["additionalPrinterColumns"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| (c["name"].clone(), c["type"].clone(), c["jsonPath"].clone()))
            .collect()
    };
    // Ours may add columns (DeployerRegistrations show their types and ready environments),
    // keeping upstream's in their order.
    let ours = columns(ov);
    let upstream_kept: Vec<_> = ours
        .iter()
        .filter(|column| columns(uv).contains(column))
        .cloned()
        .collect();
    if upstream_kept != columns(uv) {
        problems.push(format!(
            "{name}: printer columns {:?} are not all in {:?}, in order",
            columns(uv),
            columns(ov)
        ));
    }
    let mut paths = 0;
    let upstream_schema = &uv["schema"]["openAPIV3Schema"];
    let our_schema = &ov["schema"]["openAPIV3Schema"];
    for key in upstream_schema["properties"].as_object().unwrap().keys() {
        if key == "metadata" || key == "apiVersion" || key == "kind" {
            continue;
        }
        paths += compare_schema(
            name,
            &format!(".{key}"),
            &upstream_schema["properties"][key],
            &our_schema["properties"][key],
            problems,
        );
    }
    paths
}

/// Checks that `ours` accepts everything `upstream` describes at `path`, recursively;
/// returns how many paths it compared.
fn compare_schema(
    crd: &str,
    path: &str,
    upstream: &Value,
    ours: &Value,
    problems: &mut Vec<String>,
) -> usize {
    if ours.is_null() {
        problems.push(format!("{crd}: {path} missing"));
        return 1;
    }
    // A free-form node keeps any subtree as written: every upstream path below it is carried.
    let preserves = ours["x-kubernetes-preserve-unknown-fields"] == Value::Bool(true);
    let upstream_type = upstream["type"].as_str();
    let our_type = ours["type"].as_str();
    let compatible = match (upstream_type, our_type) {
        (_, None) => preserves,
        (None, Some(_)) => {
            upstream["x-kubernetes-preserve-unknown-fields"] != Value::Bool(true) || preserves
        }
        (Some(u), Some(o)) => u == o || (u == "integer" && o == "number"),
    };
    if !compatible {
        problems.push(format!(
            "{crd}: {path} has type {our_type:?}, upstream {upstream_type:?}"
        ));
        return 1;
    }
    if preserves && ours["properties"].is_null() {
        // Free-form where upstream types the subtree would let through what upstream refuses.
        let typed_upstream = upstream["properties"].is_object()
            || upstream["items"].is_object()
            || upstream["additionalProperties"].is_object();
        if typed_upstream {
            problems.push(format!(
                "{crd}: {path} is free-form, upstream types its fields"
            ));
        }
        return 1;
    }
    if upstream_type == Some("integer")
        && ours["format"] != upstream["format"]
        && !upstream["format"].is_null()
    {
        problems.push(format!(
            "{crd}: {path} format {} != {}",
            ours["format"], upstream["format"]
        ));
    }
    let mut paths = 1;
    for (key, child) in upstream["properties"].as_object().into_iter().flatten() {
        paths += compare_schema(
            crd,
            &format!("{path}.{key}"),
            child,
            &ours["properties"][key],
            problems,
        );
    }
    if !upstream["items"].is_null() {
        paths += compare_schema(
            crd,
            &format!("{path}[]"),
            &upstream["items"],
            &ours["items"],
            problems,
        );
    }
    if upstream["additionalProperties"].is_object() {
        paths += compare_schema(
            crd,
            &format!("{path}{{*}}"),
            &upstream["additionalProperties"],
            &ours["additionalProperties"],
            problems,
        );
    }
    paths
}
