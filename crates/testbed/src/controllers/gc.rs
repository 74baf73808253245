//! The garbage collector: deletes dependents whose owners are gone, and runs the `orphan`
//! and `foregroundDeletion` finalizers.

use crate::cluster::ClusterState;
use crate::objects::{finalizers, meta_mut};
use crate::status::ApiError;
use crate::store::{Event, EventType, Stored, Txn};
use crate::writes::{DeleteOptions, apply_update, delete_in_txn};
use serde_json::{Value, json};
use std::sync::Arc;

const ORPHAN: &str = "orphan";
const FOREGROUND: &str = "foregroundDeletion";

/// Reacts to a change (or sweeps everything when `ev` is `None`).
pub async fn handle(state: Arc<ClusterState>, ev: Option<Arc<Event>>) {
    if let Some(ev) = &ev
        && ev.kind != EventType::Deleted
        && ev.object.owners.is_empty()
        && !ev.object.deleting
    {
        return;
    }
    let result = state.store.write(|txn| match &ev {
        None => sweep(&state, txn),
        Some(ev) => react(&state, txn, ev),
    });
    if let Err(e) = result {
        tracing::warn!(error = %e.message, "garbage collection step failed");
    }
}

fn sweep(state: &ClusterState, txn: &mut Txn<'_>) -> Result<(), ApiError> {
    for key in txn.keys() {
        for obj in txn.list(&key, None) {
            if !obj.owners.is_empty() {
                collect_if_orphaned(state, txn, &key, &obj, None)?;
            }
            if obj.deleting {
                run_finalizers(state, txn, &key, &obj)?;
            }
        }
    }
    Ok(())
}

fn react(state: &ClusterState, txn: &mut Txn<'_>, ev: &Event) -> Result<(), ApiError> {
    let obj = &ev.object;
    match ev.kind {
        EventType::Deleted => {
            for (key, dep) in txn.dependents_of(&obj.uid) {
                collect_if_orphaned(state, txn, &key, &dep, Some(&obj.uid))?;
            }
            // An owner deleting in the foreground may have waited for this object.
            for owner in owners_deleting(state, txn, obj) {
                run_finalizers(state, txn, &owner.0, &owner.1)?;
            }
        }
        EventType::Added | EventType::Modified => {
            if !obj.owners.is_empty() {
                collect_if_orphaned(state, txn, &ev.storage_key, obj, None)?;
            }
            if obj.deleting {
                run_finalizers(state, txn, &ev.storage_key, obj)?;
            }
        }
    }
    Ok(())
}

/// Resolves an ownerReference of `dep` to the stored owner, if it exists with that uid.
fn find_owner(
    state: &ClusterState,
    txn: &Txn<'_>,
    dep: &Stored,
    oref: &Value,
) -> Option<(String, Arc<Stored>)> {
    let text = |k: &str| oref.get(k).and_then(Value::as_str).unwrap_or_default();
    let res = state.registry.find_kind(text("apiVersion"), text("kind"))?;
    let ns = if res.namespaced {
        dep.namespace.as_str()
    } else {
        ""
    };
    let owner = txn.get(&res.storage_key, ns, text("name"))?;
    (owner.uid == text("uid")).then(|| (res.storage_key.clone(), owner))
}

fn owner_refs(obj: &Value) -> Vec<Value> {
    obj.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

fn owners_deleting(
    state: &ClusterState,
    txn: &Txn<'_>,
    obj: &Stored,
) -> Vec<(String, Arc<Stored>)> {
    owner_refs(&obj.value())
        .iter()
        .filter_map(|r| find_owner(state, txn, obj, r))
        .filter(|(_, o)| o.deleting)
        .collect()
}

/// Deletes `dep` when none of its owners exists any more (`gone` was just deleted).
fn collect_if_orphaned(
    state: &ClusterState,
    txn: &mut Txn<'_>,
    key: &str,
    dep: &Arc<Stored>,
    gone: Option<&str>,
) -> Result<(), ApiError> {
    if dep.deleting {
        return Ok(());
    }
    let value = dep.value();
    let alive = owner_refs(&value)
        .iter()
        .filter(|r| gone.is_none_or(|g| r.get("uid").and_then(Value::as_str) != Some(g)))
        .any(|r| find_owner(state, txn, dep, r).is_some());
    if alive {
        return Ok(());
    }
    let Some(res) = state.stored_resource(key) else {
        return Ok(());
    };
    tracing::debug!(resource = %res.plural, namespace = %dep.namespace, name = %dep.name, "collecting dependent of a deleted owner");
    match delete_in_txn(
        txn,
        &res,
        &dep.namespace,
        &dep.name,
        &DeleteOptions::default(),
    ) {
        Ok(_) | Err(ApiError { code: 404, .. }) => Ok(()),
        Err(e) => Err(e),
    }
}

fn run_finalizers(
    state: &ClusterState,
    txn: &mut Txn<'_>,
    key: &str,
    obj: &Arc<Stored>,
) -> Result<(), ApiError> {
    let value = obj.value();
    let fins = finalizers(&value);
    let dependents = txn.dependents_of(&obj.uid);
    let done = if fins.iter().any(|f| f == ORPHAN) {
        for (dkey, dep) in &dependents {
            release(state, txn, dkey, dep, &obj.uid)?;
        }
        ORPHAN
    } else if fins.iter().any(|f| f == FOREGROUND) {
        for (dkey, dep) in dependents.iter().filter(|(_, d)| !d.deleting) {
            if let Some(res) = state.stored_resource(dkey) {
                let opts = DeleteOptions {
                    propagation: crate::writes::Propagation::Foreground,
                    ..DeleteOptions::default()
                };
                delete_in_txn(txn, &res, &dep.namespace, &dep.name, &opts)?;
            }
        }
        let blocking = txn
            .dependents_of(&obj.uid)
            .iter()
            .any(|(_, d)| blocks(&d.value(), &obj.uid));
        if blocking {
            return Ok(());
        }
        FOREGROUND
    } else {
        return Ok(());
    };
    let Some(res) = state.stored_resource(key) else {
        return Ok(());
    };
    let Some(current) = txn.get(key, &obj.namespace, &obj.name) else {
        return Ok(());
    };
    let mut next = current.value();
    let kept: Vec<String> = finalizers(&next)
        .into_iter()
        .filter(|f| f != done)
        .collect();
    meta_mut(&mut next).insert("finalizers".into(), json!(kept));
    apply_update(txn, &res, &current, next, None, false).map(|_| ())
}

fn blocks(dep: &Value, owner_uid: &str) -> bool {
    owner_refs(dep).iter().any(|r| {
        r.get("uid").and_then(Value::as_str) == Some(owner_uid)
            && r.get("blockOwnerDeletion") == Some(&Value::Bool(true))
    })
}

/// Removes the ownerReference to `owner_uid` from a dependent (orphaning it).
fn release(
    state: &ClusterState,
    txn: &mut Txn<'_>,
    key: &str,
    dep: &Arc<Stored>,
    owner_uid: &str,
) -> Result<(), ApiError> {
    let Some(res) = state.stored_resource(key) else {
        return Ok(());
    };
    let mut value = dep.value();
    let refs: Vec<Value> = owner_refs(&value)
        .into_iter()
        .filter(|r| r.get("uid").and_then(Value::as_str) != Some(owner_uid))
        .collect();
    let meta = meta_mut(&mut value);
    if refs.is_empty() {
        meta.remove("ownerReferences");
    } else {
        meta.insert("ownerReferences".into(), Value::Array(refs));
    }
    apply_update(txn, &res, dep, value, None, false).map(|_| ())
}
