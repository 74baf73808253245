//! Rendering stored objects for the version a client asked for, and list bodies.

use crate::resources::ResourceDef;
use crate::store::Stored;
use bytes::Bytes;
use serde_json::Value;

/// Whether `obj`, as stored, differs from what `res` serves: core Events served as
/// events.k8s.io, or a custom resource stored in another version than requested (the
/// storage version, or an older one it was written in before the storage version moved).
pub fn converts(res: &ResourceDef, obj: &Stored) -> bool {
    match &res.crd {
        Some(_) => {
            let served = obj
                .api_version()
                .and_then(|v| v.strip_prefix(res.group.as_str()))
                .and_then(|v| v.strip_prefix('/'));
            served != Some(res.version.as_str())
        }
        None => res.group == "events.k8s.io",
    }
}

/// The object as served by `res`, as a value.
pub fn value_for(res: &ResourceDef, obj: &Stored) -> Value {
    let mut v = obj.value();
    if converts(res, obj) {
        crate::objects::convert::to_served(res, &mut v);
    }
    v
}

/// The object as served by `res`, serialized.
pub fn object_json(res: &ResourceDef, obj: &Stored) -> Bytes {
    if converts(res, obj) {
        Bytes::from(serde_json::to_vec(&value_for(res, obj)).unwrap_or_default())
    } else {
        obj.json.clone()
    }
}

/// Appends an item of a list to `out`: built-in lists leave out each item's kind and
/// apiVersion. Unconverted items are copied straight from the store: lists are the biggest
/// responses.
fn write_item(res: &ResourceDef, obj: &Stored, out: &mut Vec<u8>) {
    if converts(res, obj) {
        let mut v = value_for(res, obj);
        if res.crd.is_none()
            && let Some(m) = v.as_object_mut()
        {
            m.remove("kind");
            m.remove("apiVersion");
        }
        // Serializing a Value cannot fail: all its map keys are strings.
        let _ = serde_json::to_writer(&mut *out, &v);
    } else if res.crd.is_some() {
        out.extend_from_slice(&obj.json);
    } else {
        obj.write_without_type(out);
    }
}

/// Paging facts of a list response.
#[derive(Debug, Default)]
pub struct ListMeta {
    /// The revision the list was read at.
    pub rv: u64,
    /// The continue token, when more items follow.
    pub continue_token: Option<String>,
    /// How many items follow, when known.
    pub remaining: Option<usize>,
}

/// A `<Kind>List` document.
pub fn list_json(res: &ResourceDef, items: &[std::sync::Arc<Stored>], meta: &ListMeta) -> Bytes {
    let mut head = serde_json::Map::new();
    head.insert("resourceVersion".into(), meta.rv.to_string().into());
    match &meta.continue_token {
        Some(t) => {
            head.insert("continue".into(), t.clone().into());
        }
        // Custom resource lists always carry `continue`, core lists only when paging.
        None if res.crd.is_some() => {
            head.insert("continue".into(), "".into());
        }
        None => {}
    }
    if let Some(n) = meta.remaining {
        head.insert("remainingItemCount".into(), n.into());
    }
    let prefix = format!(
        "{{\"kind\":{},\"apiVersion\":{},\"metadata\":{},\"items\":[",
        Value::String(format!("{}List", res.kind)),
        Value::String(res.api_version()),
        Value::Object(head)
    );
    let mut out = Vec::with_capacity(
        prefix.len() + items.iter().map(|i| i.json.len() + 1).sum::<usize>() + 2,
    );
    out.extend_from_slice(prefix.as_bytes());
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_item(res, item, &mut out);
    }
    out.extend_from_slice(b"]}");
    Bytes::from(out)
}
