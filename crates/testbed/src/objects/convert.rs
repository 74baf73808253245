//! Conversion between the stored version of an object and the version a client uses.

use crate::resources::ResourceDef;
use serde_json::{Map, Value};

/// Renames fields between core/v1 Events (stored) and events.k8s.io/v1 Events.
const EVENT_FIELDS: &[(&str, &str)] = &[
    ("involvedObject", "regarding"),
    ("message", "note"),
    ("source", "deprecatedSource"),
    ("firstTimestamp", "deprecatedFirstTimestamp"),
    ("lastTimestamp", "deprecatedLastTimestamp"),
    ("count", "deprecatedCount"),
    ("reportingComponent", "reportingController"),
];

fn take_path(obj: &mut Map<String, Value>, path: &str) -> Option<Value> {
    match path.split_once('.') {
        Some((head, rest)) => {
            let inner = obj.get_mut(head)?.as_object_mut()?;
            let v = inner.remove(rest);
            if inner.is_empty() {
                obj.remove(head);
            }
            v
        }
        None => obj.remove(path),
    }
}

fn put_path(obj: &mut Map<String, Value>, path: &str, v: Value) {
    match path.split_once('.') {
        Some((head, rest)) => {
            let inner = obj.entry(head).or_insert_with(|| Value::Object(Map::new()));
            if let Some(m) = inner.as_object_mut() {
                m.insert(rest.into(), v);
            }
        }
        None => {
            obj.insert(path.into(), v);
        }
    }
}

fn rename(obj: &mut Value, forward: bool) {
    let Some(map) = obj.as_object_mut() else {
        return;
    };
    for (core, events) in EVENT_FIELDS {
        let (from, to) = if forward {
            (core, events)
        } else {
            (events, core)
        };
        if let Some(v) = take_path(map, from) {
            put_path(map, to, v);
        }
    }
}

/// Turns a stored object into the version `res` serves.
pub fn to_served(res: &ResourceDef, obj: &mut Value) {
    if res.crd.is_none() && res.group == "events.k8s.io" {
        rename(obj, true);
        // events.k8s.io/v1 leaves these out when empty; core/v1 always writes them.
        if let Some(m) = obj.as_object_mut() {
            m.retain(|k, v| {
                !(matches!(k.as_str(), "reportingController" | "reportingInstance") && v == "")
            });
        }
    }
    if let Some(m) = obj.as_object_mut() {
        m.insert("apiVersion".into(), res.api_version().into());
    }
}

/// Turns an object sent in the version `res` serves into its stored version.
pub fn to_stored(res: &ResourceDef, obj: &mut Value) {
    match &res.crd {
        Some(crd) => {
            if let Some(m) = obj.as_object_mut() {
                m.insert(
                    "apiVersion".into(),
                    format!("{}/{}", res.group, crd.storage_version).into(),
                );
            }
        }
        None if res.group == "events.k8s.io" => {
            rename(obj, false);
            if let Some(m) = obj.as_object_mut() {
                m.insert("apiVersion".into(), "v1".into());
            }
        }
        None => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn event_fields_round_trip() {
        let res = crate::resources::builtin_resources()
            .into_iter()
            .find(|r| r.group == "events.k8s.io")
            .unwrap();
        let core = json!({"apiVersion": "v1", "kind": "Event", "message": "hi", "source": {"component": "c"}, "count": 2});
        let mut v = core.clone();
        to_served(&res, &mut v);
        assert_eq!(v["note"], "hi");
        assert_eq!(v["deprecatedSource"]["component"], "c");
        to_stored(&res, &mut v);
        assert_eq!(v, core);
    }
}
