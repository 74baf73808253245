//! Namespaces: their default contents (the `default` ServiceAccount and the
//! `kube-root-ca.crt` ConfigMap), and deletion of everything in a terminating namespace
//! before the namespace itself goes.

use crate::cluster::ClusterState;
use crate::objects::{kinds, lifecycle};
use crate::status::ApiError;
use crate::store::{Event, EventType};
use crate::writes::{DeleteOptions, create_in_txn, delete_in_txn};
use serde_json::{Value, json};
use std::sync::Arc;

const NS_KEY: &str = "/namespaces";
const ROOT_CA: &str = "kube-root-ca.crt";
const ROOT_CA_DESCRIPTION: &str = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.";

/// Reacts to a change (or resynchronizes all namespaces when `ev` is `None`).
pub async fn handle(state: Arc<ClusterState>, ev: Option<Arc<Event>>) {
    let Some(ev) = ev else {
        for ns in state.store.list(NS_KEY, None, None).0 {
            if ns.deleting {
                finalize(&state, &ns.name);
            } else {
                create_defaults(&state, &ns.name);
            }
        }
        return;
    };
    if &*ev.storage_key == NS_KEY {
        match ev.kind {
            EventType::Added => create_defaults(&state, &ev.object.name),
            EventType::Modified if ev.object.deleting => finalize(&state, &ev.object.name),
            _ => {}
        }
        return;
    }
    let ns = &ev.object.namespace;
    if !ns.is_empty()
        && (ev.kind == EventType::Deleted || ev.object.deleting)
        && state.store.get(NS_KEY, "", ns).is_some_and(|n| n.deleting)
    {
        finalize(&state, ns);
    }
}

/// Creates the `default` ServiceAccount and the `kube-root-ca.crt` ConfigMap if missing.
pub fn create_defaults(state: &ClusterState, ns: &str) {
    let sa = json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default", "namespace": ns}});
    let cm = json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": ROOT_CA, "namespace": ns, "annotations": {"kubernetes.io/description": ROOT_CA_DESCRIPTION}},
        "data": {"ca.crt": state.ca_pem}
    });
    for (key, obj) in [("/serviceaccounts", sa), ("/configmaps", cm)] {
        ensure(state, key, ns, obj);
    }
}

fn ensure(state: &ClusterState, key: &str, ns: &str, obj: Value) {
    let Some(res) = state.stored_resource(key) else {
        return;
    };
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let result = state.store.write(|txn| {
        let live = txn.get(NS_KEY, "", ns);
        if live.is_none_or(|n| n.deleting) || txn.get(key, ns, &name).is_some() {
            return Ok(());
        }
        let mut obj = lifecycle::prepare_create(&res, Some(ns), obj)?;
        kinds::default(&res, &mut obj)?;
        create_in_txn(txn, &res, obj, false).map(|_| ())
    });
    if let Err(e) = result {
        tracing::warn!(namespace = ns, name, error = %e.message, "creating namespace default");
    }
}

/// Deletes a terminating namespace's contents; once empty, the namespace itself.
fn finalize(state: &ClusterState, ns: &str) {
    let result = state.store.write(|txn| {
        for (key, obj) in txn.in_namespace(ns) {
            if obj.deleting {
                continue;
            }
            if let Some(res) = state.stored_resource(&key) {
                delete_in_txn(txn, &res, ns, &obj.name, &DeleteOptions::default())?;
            }
        }
        if !txn.in_namespace(ns).is_empty() {
            return Ok::<_, ApiError>(());
        }
        if let Some(nso) = txn.get(NS_KEY, "", ns)
            && crate::objects::finalizers(&nso.value()).is_empty()
        {
            tracing::debug!(namespace = ns, "namespace emptied; removing it");
            txn.delete(NS_KEY, "", ns);
        }
        Ok(())
    });
    if let Err(e) = result {
        tracing::warn!(namespace = ns, error = %e.message, "finalizing namespace");
    }
}
