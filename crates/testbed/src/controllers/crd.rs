//! CustomResourceDefinitions: serving their resources, the NamesAccepted and Established
//! conditions, and the cleanup finalizer that deletes a CRD's objects before the CRD.

use crate::clock;
use crate::cluster::ClusterState;
use crate::objects::{finalizers, meta_mut};
use crate::resources::crd_resources;
use crate::store::{Event, EventType, Stored};
use crate::writes::{DeleteOptions, apply_update, delete_in_txn};
use serde_json::{Value, json};
use std::sync::Arc;

const CRD_KEY: &str = "apiextensions.k8s.io/customresourcedefinitions";
const CLEANUP: &str = "customresourcecleanup.apiextensions.k8s.io";

/// Reacts to a change (or resynchronizes all CRDs when `ev` is `None`).
pub async fn handle(state: Arc<ClusterState>, ev: Option<Arc<Event>>) {
    let Some(ev) = ev else {
        for crd in state.store.list(CRD_KEY, None, None).0 {
            reconcile(&state, &crd);
        }
        return;
    };
    if &*ev.storage_key == CRD_KEY {
        match ev.kind {
            EventType::Deleted => state.registry.remove_crd(&ev.object.name),
            _ => reconcile(&state, &ev.object),
        }
        return;
    }
    // A custom resource went away: its CRD may be waiting for that to finish cleanup.
    if ev.kind == EventType::Deleted
        && let Some(crd) = state
            .registry
            .by_storage_key(&ev.storage_key)
            .iter()
            .find_map(|r| r.crd.clone())
        && let Some(obj) = state.store.get(CRD_KEY, "", &crd.name)
        && obj.deleting
    {
        reconcile(&state, &obj);
    }
}

fn reconcile(state: &ClusterState, crd: &Arc<Stored>) {
    let value = crd.value();
    let defs = match crd_resources(&value) {
        Ok(defs) => defs,
        Err(e) => {
            tracing::warn!(crd = %crd.name, error = %e, "CRD cannot be served");
            return;
        }
    };
    let Some(key) = defs.first().map(|d| d.storage_key.clone()) else {
        return;
    };
    if crd.deleting {
        cleanup(state, crd, &key);
        return;
    }
    state.registry.set_crd(&crd.name, defs);
    state.store.start_serving(&key);
    establish(state, crd, &value);
}

fn establish(state: &ClusterState, crd: &Arc<Stored>, value: &Value) {
    let Some(res) = state.stored_resource(CRD_KEY) else {
        return;
    };
    let mut with_finalizer = value.clone();
    let mut fins = finalizers(value);
    if !fins.iter().any(|f| f == CLEANUP) {
        fins.push(CLEANUP.into());
        meta_mut(&mut with_finalizer).insert("finalizers".into(), json!(fins));
    }
    let mut names = value
        .pointer("/spec/names")
        .cloned()
        .unwrap_or_else(|| json!({}));
    if let Some(n) = names.as_object_mut() {
        let kind = n
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        n.entry("singular")
            .or_insert_with(|| kind.to_ascii_lowercase().into());
        n.entry("listKind")
            .or_insert_with(|| format!("{kind}List").into());
    }
    let conditions = value
        .pointer("/status/conditions")
        .cloned()
        .unwrap_or_else(|| json!([]));
    let time_of = |ty: &str| {
        conditions
            .as_array()
            .and_then(|cs| cs.iter().find(|c| c["type"] == ty && c["status"] == "True"))
            .and_then(|c| c.get("lastTransitionTime").cloned())
            .unwrap_or_else(|| clock::now_time().into())
    };
    let mut with_status = with_finalizer.clone();
    if let Some(m) = with_status.as_object_mut() {
        let stored = value
            .pointer("/status/storedVersions")
            .cloned()
            .unwrap_or_else(|| json!([]));
        m.insert(
            "status".into(),
            json!({
                "conditions": [
                    {"type": "NamesAccepted", "status": "True", "lastTransitionTime": time_of("NamesAccepted"), "reason": "NoConflicts", "message": "no conflicts found"},
                    {"type": "Established", "status": "True", "lastTransitionTime": time_of("Established"), "reason": "InitialNamesAccepted", "message": "the initial names have been accepted"}
                ],
                "acceptedNames": names,
                "storedVersions": stored
            }),
        );
    }
    let outcome = state.store.write(|txn| {
        let Some(current) = txn.get(CRD_KEY, "", &crd.name).filter(|c| c.rv == crd.rv) else {
            return Ok(());
        };
        let current = match apply_update(txn, &res, &current, with_finalizer, None, false)? {
            crate::writes::Updated::Stored(s) | crate::writes::Updated::Unchanged(s) => s,
            _ => return Ok(()),
        };
        apply_update(txn, &res, &current, with_status, Some("status"), false).map(|_| ())
    });
    if let Err(e) = outcome {
        tracing::warn!(crd = %crd.name, error = %e.message, "establishing CRD");
    }
}

fn cleanup(state: &ClusterState, crd: &Arc<Stored>, key: &str) {
    let Some(crd_res) = state.stored_resource(CRD_KEY) else {
        return;
    };
    let objects_res = state.stored_resource(key);
    let outcome = state.store.write(|txn| {
        let remaining = txn.list(key, None);
        if let Some(res) = &objects_res {
            for obj in remaining.iter().filter(|o| !o.deleting) {
                delete_in_txn(
                    txn,
                    res,
                    &obj.namespace,
                    &obj.name,
                    &DeleteOptions::default(),
                )?;
            }
        }
        if !txn.list(key, None).is_empty() {
            return Ok(());
        }
        let Some(current) = txn.get(CRD_KEY, "", &crd.name) else {
            return Ok(());
        };
        let mut value = current.value();
        let fins: Vec<String> = finalizers(&value)
            .into_iter()
            .filter(|f| f != CLEANUP)
            .collect();
        meta_mut(&mut value).insert("finalizers".into(), json!(fins));
        apply_update(txn, &crd_res, &current, value, None, false).map(|_| ())
    });
    if let Err(e) = outcome {
        tracing::warn!(crd = %crd.name, error = %e.message, "cleaning up CRD");
    }
}
