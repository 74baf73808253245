//! One stored object: its identity, labels for fast selection, and its serialized JSON.

use bytes::Bytes;
use serde_json::Value;

/// An object as stored: immutable, shared between the store, lists and watch history.
#[derive(Debug, Clone, PartialEq)]
pub struct Stored {
    /// Namespace, empty for cluster-scoped objects.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// `metadata.uid`.
    pub uid: String,
    /// `metadata.resourceVersion`.
    pub rv: u64,
    /// `metadata.labels`, sorted by key, kept apart so selectors need no parsing.
    pub labels: Vec<(String, String)>,
    /// uids of `metadata.ownerReferences`, for the garbage collector.
    pub owners: Vec<String>,
    /// Whether `metadata.deletionTimestamp` is set.
    pub deleting: bool,
    /// The whole object as JSON, `kind` and `apiVersion` first, resourceVersion included.
    pub json: Bytes,
    /// Where the fields after `kind` and `apiVersion` start in `json`.
    body_start: usize,
    /// The metadata-only form, made on first use (see [`Stored::metadata_only`]).
    metadata_only: Memo,
}

/// A value derived from an immutable object, made once on first use. It never takes part in
/// comparisons: two objects are equal whether or not either has made it yet.
#[derive(Debug, Clone, Default)]
struct Memo(std::sync::OnceLock<Bytes>);

impl PartialEq for Memo {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Stored {
    /// Builds the stored form of `obj`, writing `rv` into its metadata.
    pub fn from_value(mut obj: Value, rv: u64) -> Self {
        if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.insert("resourceVersion".into(), Value::String(rv.to_string()));
        }
        let meta = obj.get("metadata");
        let text = |k: &str| {
            meta.and_then(|m| m.get(k))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let mut labels: Vec<(String, String)> = meta
            .and_then(|m| m.get("labels"))
            .and_then(Value::as_object)
            .map(|l| {
                l.iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                    .collect()
            })
            .unwrap_or_default();
        labels.sort();
        let owners = meta
            .and_then(|m| m.get("ownerReferences"))
            .and_then(Value::as_array)
            .map(|refs| {
                refs.iter()
                    .filter_map(|r| r.get("uid")?.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        let deleting = meta
            .and_then(|m| m.get("deletionTimestamp"))
            .is_some_and(|v| !v.is_null());
        let (namespace, name, uid) = (text("namespace"), text("name"), text("uid"));
        let (json, body_start) = serialize(obj);
        Self {
            namespace,
            name,
            uid,
            rv,
            labels,
            owners,
            deleting,
            json,
            body_start,
            metadata_only: Memo::default(),
        }
    }

    /// The object's metadata-only form, made by `render` on first use and kept: the object never
    /// changes, so every list and watch asking for metadata shares one rendering. Callers pass
    /// the same `render` (the HTTP handlers' PartialObjectMetadata form).
    pub fn metadata_only(&self, render: fn(&Stored) -> Bytes) -> &Bytes {
        self.metadata_only.0.get_or_init(|| render(self))
    }

    /// The stored `apiVersion`, read from the front of the JSON where serialization put it.
    pub fn api_version(&self) -> Option<&str> {
        let head = std::str::from_utf8(&self.json[..self.body_start]).ok()?;
        let rest = head.split_once("\"apiVersion\":\"")?.1;
        rest.split_once('"').map(|(v, _)| v)
    }

    /// Appends the object's JSON without `kind` and `apiVersion` to `out`, as items of
    /// built-in lists are.
    pub fn write_without_type(&self, out: &mut Vec<u8>) {
        if self.body_start == 0 {
            out.extend_from_slice(&self.json);
        } else {
            out.push(b'{');
            out.extend_from_slice(&self.json[self.body_start..]);
        }
    }

    /// The object as a JSON value.
    pub fn value(&self) -> Value {
        serde_json::from_slice(&self.json).unwrap_or(Value::Null)
    }

    /// The value of one label.
    pub fn label(&self, key: &str) -> Option<&str> {
        self.labels
            .binary_search_by(|(k, _)| k.as_str().cmp(key))
            .ok()
            .map(|i| self.labels[i].1.as_str())
    }

    /// The same object re-stamped with another resourceVersion (for DELETED events).
    pub fn with_rv(&self, rv: u64) -> Self {
        Self::from_value(self.value(), rv)
    }
}

/// Serializes with `kind` and `apiVersion` first; returns the bytes and where the rest starts.
/// Written into one buffer: the rest follows the head in place.
fn serialize(mut obj: Value) -> (Bytes, usize) {
    let Some(map) = obj.as_object_mut() else {
        return (Bytes::from(serde_json::to_vec(&obj).unwrap_or_default()), 0);
    };
    let head: Vec<(&str, Value)> = ["kind", "apiVersion"]
        .into_iter()
        .filter_map(|k| map.remove(k).map(|v| (k, v)))
        .collect();
    // Serializing a Value cannot fail: all its map keys are strings.
    if head.is_empty() {
        return (Bytes::from(serde_json::to_vec(&obj).unwrap_or_default()), 0);
    }
    let mut out = Vec::with_capacity(512);
    for (k, v) in &head {
        out.push(if out.is_empty() { b'{' } else { b',' });
        let _ = serde_json::to_writer(&mut out, k);
        out.push(b':');
        let _ = serde_json::to_writer(&mut out, v);
    }
    let body_start = out.len() + 1;
    let _ = serde_json::to_writer(&mut out, &obj);
    if out.len() - body_start <= 1 {
        // No other fields: the rest was `{}`.
        out.truncate(body_start - 1);
        out.push(b'}');
        out.shrink_to_fit();
        return (Bytes::from(out), 0);
    }
    // The rest's opening brace becomes the separator after the head.
    out[body_start - 1] = b',';
    // Stored objects keep no spare capacity (memory per object), and an exact buffer
    // becomes `Bytes` without another allocation.
    out.shrink_to_fit();
    (Bytes::from(out), body_start)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn stamps_resource_version_and_indexes_labels() {
        let s = Stored::from_value(
            json!({"metadata": {"name": "a", "namespace": "n", "uid": "u", "labels": {"z": "1", "a": "2"}}}),
            7,
        );
        assert_eq!(s.value()["metadata"]["resourceVersion"], "7");
        assert_eq!(s.label("a"), Some("2"));
        assert_eq!(s.label("z"), Some("1"));
        assert_eq!(s.label("m"), None);
    }

    #[test]
    fn type_meta_comes_first_and_can_be_left_out() {
        let s = Stored::from_value(
            json!({"metadata": {"name": "a"}, "kind": "ConfigMap", "apiVersion": "v1", "data": {}}),
            3,
        );
        assert!(
            s.json
                .starts_with(br#"{"kind":"ConfigMap","apiVersion":"v1","metadata""#)
        );
        assert_eq!(s.api_version(), Some("v1"));
        let mut written = Vec::new();
        s.write_without_type(&mut written);
        let v: Value = serde_json::from_slice(&written).unwrap();
        assert_eq!(
            v,
            json!({"metadata": {"name": "a", "resourceVersion": "3"}, "data": {}})
        );
    }
}
