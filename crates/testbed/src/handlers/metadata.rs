//! Metadata-only answers (`as=PartialObjectMetadata` or `as=PartialObjectMetadataList` in
//! `Accept`): objects reduced to their `metadata`, as kube-apiserver's
//! `asPartialObjectMetadata` and `asPartialObjectMetadataList` reduce them, so a client that
//! caches metadata receives no spec, status or Secret data.

use super::negotiate::{MetaVersion, Output};
use super::render::ListMeta;
use crate::objects::decode::OBJECT_META;
use crate::resources::ResourceDef;
use crate::server::reply::Reply;
use crate::status::ApiError;
use crate::store::Stored;
use bytes::Bytes;
use serde_json::{Map, Value};
use std::sync::Arc;

/// `metadata` as Go's `ObjectMeta` serializes it: its own fields in declaration order, empty
/// ones left out (`omitempty`) except `creationTimestamp`, which Kubernetes 1.33 writes as
/// `null` when unset.
fn object_meta(meta: Option<&Map<String, Value>>) -> Map<String, Value> {
    let mut out = Map::new();
    for &field in OBJECT_META {
        let value = meta.and_then(|m| m.get(field)).unwrap_or(&Value::Null);
        let empty = match value {
            Value::Null => true,
            Value::String(s) => s.is_empty(),
            Value::Number(n) => n.as_i64() == Some(0),
            Value::Array(a) => a.is_empty(),
            Value::Object(o) => o.is_empty(),
            Value::Bool(_) => false,
        };
        // A zero grace period is a set pointer in Go, and so written.
        let keep = !empty
            || field == "creationTimestamp"
            || (field == "deletionGracePeriodSeconds" && !value.is_null());
        if keep {
            out.insert(field.into(), value.clone());
        }
    }
    out
}

/// `{"kind":"PartialObjectMetadata","apiVersion":…,"metadata":…}`.
fn document(meta: Option<&Map<String, Value>>, version: MetaVersion) -> Value {
    let mut doc = Map::new();
    doc.insert("kind".into(), "PartialObjectMetadata".into());
    doc.insert("apiVersion".into(), version.api_version().into());
    doc.insert("metadata".into(), Value::Object(object_meta(meta)));
    Value::Object(doc)
}

fn to_bytes(value: &Value) -> Bytes {
    // Serializing a Value cannot fail: all its map keys are strings.
    Bytes::from(serde_json::to_vec(value).unwrap_or_default())
}

/// Only the `metadata` of a stored object: the rest is skipped while parsing, not built.
#[derive(serde::Deserialize)]
struct MetadataOf {
    #[serde(default)]
    metadata: Option<Map<String, Value>>,
}

fn render(obj: &Stored, version: MetaVersion) -> Bytes {
    let meta = serde_json::from_slice::<MetadataOf>(&obj.json)
        .ok()
        .and_then(|m| m.metadata);
    to_bytes(&document(meta.as_ref(), version))
}

fn render_v1(obj: &Stored) -> Bytes {
    render(obj, MetaVersion::V1)
}

/// One stored object as a `PartialObjectMetadata`. Its `metadata` is the same in every version
/// the resource serves, so no conversion is due; the v1 form is kept with the object.
pub fn object(obj: &Stored, version: MetaVersion) -> Bytes {
    match version {
        MetaVersion::V1 => obj.metadata_only(render_v1).clone(),
        MetaVersion::V1beta1 => render(obj, version),
    }
}

/// A `PartialObjectMetadataList`: Go's `ListMeta` leaves an empty `continue` out, and the
/// list of no items is `null` (the converted list starts as a nil slice).
pub fn list(items: &[Arc<Stored>], meta: &ListMeta, version: MetaVersion) -> Bytes {
    let mut head = Map::new();
    head.insert("resourceVersion".into(), meta.rv.to_string().into());
    if let Some(token) = &meta.continue_token {
        head.insert("continue".into(), token.clone().into());
    }
    if let Some(n) = meta.remaining {
        head.insert("remainingItemCount".into(), n.into());
    }
    let prefix = format!(
        "{{\"kind\":\"PartialObjectMetadataList\",\"apiVersion\":\"{}\",\"metadata\":{},\"items\":",
        version.api_version(),
        Value::Object(head)
    );
    let rendered: Vec<Bytes> = items.iter().map(|i| object(i, version)).collect();
    let mut out =
        Vec::with_capacity(prefix.len() + rendered.iter().map(|r| r.len() + 1).sum::<usize>() + 8);
    out.extend_from_slice(prefix.as_bytes());
    if rendered.is_empty() {
        out.extend_from_slice(b"null");
    } else {
        out.push(b'[');
        for (i, item) in rendered.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(item);
        }
        out.push(b']');
    }
    out.push(b'}');
    Bytes::from(out)
}

/// A bookmark's object: only the revision (the bookmark kube-apiserver sends is an empty
/// object of the resource, reduced like any other).
pub fn bookmark(rv: u64, version: MetaVersion) -> Bytes {
    let mut meta = Map::new();
    meta.insert("resourceVersion".into(), rv.to_string().into());
    to_bytes(&document(Some(&meta), version))
}

/// The Go type kube-apiserver names in its refusals: the internal type of the resource's
/// storage (`*core.ConfigMap`; `*core.EventList` for events.k8s.io), or the unstructured
/// one of custom resources. `group` and `kind` are those of the answer.
fn go_type(res: &ResourceDef, group: &str, kind: &str) -> String {
    if res.crd.is_some() && group == res.group {
        let list = if kind.ends_with("List") { "List" } else { "" };
        return format!("*unstructured.Unstructured{list}");
    }
    let package = match group {
        "" | "events.k8s.io" => "core",
        g => g.split('.').next().unwrap_or(g),
    };
    format!("*{package}.{kind}")
}

/// 406 for `as=PartialObjectMetadata` on an answer that is a list.
pub fn refuse_list(res: &ResourceDef, group: &str, list_kind: &str) -> ApiError {
    ApiError::not_acceptable(format!(
        "you requested PartialObjectMetadata, but the requested object is a list ({})",
        go_type(res, group, list_kind)
    ))
}

/// 406 for `as=PartialObjectMetadataList` on an answer that is one object.
pub fn refuse_object(res: &ResourceDef, group: &str, kind: &str) -> ApiError {
    ApiError::not_acceptable(format!(
        "you requested PartialObjectMetadataList, but the requested object is not a list ({})",
        go_type(res, group, kind)
    ))
}

/// The answer of any other verb (create, update, patch, delete, subresources) in the form
/// negotiated, as `transformResponseObject` makes it after the write: a Status or an error
/// passes unchanged, an object or list is reduced, or refused with 406 when its shape is not
/// the one asked for.
pub fn reply(reply: Reply, output: Output, res: &ResourceDef) -> Result<Reply, ApiError> {
    let version = match output {
        Output::Metadata(v) | Output::MetadataList(v) => v,
        Output::Object | Output::Table => return Ok(reply),
    };
    let Reply::Json {
        status,
        body,
        warnings,
    } = reply
    else {
        return Ok(reply);
    };
    let Some(value) = serde_json::from_slice::<Value>(&body).ok().filter(|v| {
        (200..300).contains(&status) && v.get("kind").and_then(Value::as_str) != Some("Status")
    }) else {
        return Ok(Reply::Json {
            status,
            body,
            warnings,
        });
    };
    let kind = value
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or(&res.kind);
    let group = value
        .get("apiVersion")
        .and_then(Value::as_str)
        .and_then(|v| v.rsplit_once('/'))
        .map_or("", |(group, _)| group);
    let items = value.get("items").and_then(Value::as_array);
    let reduced = match (output, items) {
        (Output::Metadata(_), Some(_)) => return Err(refuse_list(res, group, kind)),
        (Output::MetadataList(_), None) => return Err(refuse_object(res, group, kind)),
        (_, None) => to_bytes(&document(
            value.get("metadata").and_then(Value::as_object),
            version,
        )),
        (_, Some(items)) => list_of_values(&value, items, version),
    };
    Ok(Reply::Json {
        status,
        body: reduced,
        warnings,
    })
}

/// A `PartialObjectMetadataList` of a list answer's items.
fn list_of_values(list: &Value, items: &[Value], version: MetaVersion) -> Bytes {
    let mut head = Map::new();
    let list_meta = list.get("metadata").and_then(Value::as_object);
    for field in ["resourceVersion", "continue", "remainingItemCount"] {
        if let Some(v) = list_meta
            .and_then(|m| m.get(field))
            .filter(|v| !v.is_null() && v.as_str() != Some(""))
        {
            head.insert(field.into(), v.clone());
        }
    }
    let items: Vec<Value> = items
        .iter()
        .map(|item| document(item.get("metadata").and_then(Value::as_object), version))
        .collect();
    let mut doc = Map::new();
    doc.insert("kind".into(), "PartialObjectMetadataList".into());
    doc.insert("apiVersion".into(), version.api_version().into());
    doc.insert("metadata".into(), Value::Object(head));
    doc.insert(
        "items".into(),
        if items.is_empty() {
            Value::Null
        } else {
            Value::Array(items)
        },
    );
    to_bytes(&Value::Object(doc))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn metadata_keeps_object_meta_fields_in_go_order_and_drops_empty_ones() {
        let meta = json!({
            "labels": {"a": "1"},
            "annotations": {},
            "name": "x",
            "namespace": "default",
            "uid": "u",
            "resourceVersion": "7",
            "generation": 0,
            "finalizers": [],
            "deletionGracePeriodSeconds": 0,
            "unknown": true,
        });
        let out = object_meta(meta.as_object());
        let keys: Vec<&str> = out.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "name",
                "namespace",
                "uid",
                "resourceVersion",
                "creationTimestamp",
                "deletionGracePeriodSeconds",
                "labels"
            ]
        );
        assert_eq!(out["creationTimestamp"], Value::Null);
    }

    #[test]
    fn stored_objects_render_without_their_other_fields() {
        let obj = Stored::from_value(
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "creationTimestamp": "2026-01-01T00:00:00Z"}, "data": {"k": "c2VjcmV0"}}),
            5,
        );
        let doc: Value = serde_json::from_slice(&object(&obj, MetaVersion::V1)).unwrap();
        assert_eq!(
            doc,
            json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": {"name": "s", "resourceVersion": "5", "creationTimestamp": "2026-01-01T00:00:00Z"}})
        );
        let beta: Value = serde_json::from_slice(&object(&obj, MetaVersion::V1beta1)).unwrap();
        assert_eq!(beta["apiVersion"], "meta.k8s.io/v1beta1");
    }
}
