//! `application/json;as=Table;g=meta.k8s.io;v=v1` (chosen in `negotiate`): the server-side
//! tables kubectl prints.

mod cell;
mod jsonpath;

use super::render::value_for;
use crate::resources::ResourceDef;
use crate::store::Stored;
use serde_json::{Value, json};
use std::sync::Arc;

const NAME_DESCRIPTION: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";
const AGE_DESCRIPTION: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

/// One column: its definition and the JSONPath its cells come from (`None`: a path that
/// is not simple, whose cells stay empty).
struct Column {
    definition: Value,
    column_type: String,
    path: Option<Vec<jsonpath::Step>>,
}

/// The Name column, then the CRD's printer columns, or Age when it has none (as
/// kube-apiserver serves every custom resource).
fn columns(res: &ResourceDef) -> Vec<Column> {
    let mut cols = vec![Column {
        definition: json!({"name": "Name", "type": "string", "format": "name", "description": NAME_DESCRIPTION, "priority": 0}),
        column_type: "string".into(),
        path: jsonpath::parse(".metadata.name"),
    }];
    let printer = res
        .crd
        .as_ref()
        .and_then(|c| c.columns(&res.version))
        .and_then(Value::as_array)
        .filter(|defs| !defs.is_empty());
    let Some(defs) = printer else {
        cols.push(Column {
            definition: json!({"name": "Age", "type": "date", "format": "", "description": AGE_DESCRIPTION, "priority": 0}),
            column_type: "date".into(),
            path: jsonpath::parse(".metadata.creationTimestamp"),
        });
        return cols;
    };
    for d in defs {
        let path = d
            .get("jsonPath")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let column_type = d.get("type").and_then(Value::as_str).unwrap_or("string");
        cols.push(Column {
            definition: json!({
                "name": d.get("name").cloned().unwrap_or_default(),
                "type": column_type,
                "format": d.get("format").cloned().unwrap_or_else(|| "".into()),
                "description": d.get("description").cloned()
                    .unwrap_or_else(|| format!("Custom resource definition column (in JSONPath format): {path}").into()),
                "priority": d.get("priority").cloned().unwrap_or_else(|| 0.into()),
            }),
            column_type: column_type.into(),
            path: jsonpath::parse(path),
        });
    }
    cols
}

/// A Table of objects, their ages as of `now_nanos` (the cluster's clock).
pub fn table(res: &ResourceDef, items: &[Arc<Stored>], rv: u64, now_nanos: i128) -> Value {
    let cols = columns(res);
    let rows: Vec<Value> = items
        .iter()
        .map(|item| {
            let obj = value_for(res, item);
            let cells: Vec<Value> = cols
                .iter()
                .map(|c| {
                    let found = c.path.as_ref().and_then(|p| jsonpath::find(&obj, p));
                    cell::cell(&c.column_type, found, now_nanos)
                })
                .collect();
            let meta = obj.get("metadata").cloned().unwrap_or_default();
            json!({"cells": cells, "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": meta}})
        })
        .collect();
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {"resourceVersion": rv.to_string()},
        "columnDefinitions": cols.into_iter().map(|c| c.definition).collect::<Vec<_>>(),
        "rows": rows,
    })
}
