//! What kube-controller-manager and kube-apiserver's own controllers do in a cluster:
//! CRD establishing and cleanup, garbage collection, namespace lifecycle and defaults.
//! Each controller reacts to store events in its own task.

mod crd;
mod gc;
pub mod kubelet;
mod namespace;
pub mod simulator;
mod tokens;

use crate::cluster::ClusterState;
use crate::objects::lifecycle;
use crate::store::Event;
use crate::writes::create_in_txn;
use serde_json::json;
use std::future::Future;
use std::sync::Arc;
use tokio::sync::broadcast;

/// Namespaces every cluster starts with.
const SYSTEM_NAMESPACES: &[&str] = &["default", "kube-system", "kube-public", "kube-node-lease"];

/// Creates the objects a new cluster has: the bootstrap RBAC policy, the system namespaces
/// and their defaults.
pub fn bootstrap(state: &ClusterState) {
    for obj in crate::rbac::bootstrap::objects() {
        let kind = obj
            .get("kind")
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default();
        let key = match kind {
            "ClusterRole" => "rbac.authorization.k8s.io/clusterroles",
            "ClusterRoleBinding" => "rbac.authorization.k8s.io/clusterrolebindings",
            "Role" => "rbac.authorization.k8s.io/roles",
            _ => "rbac.authorization.k8s.io/rolebindings",
        };
        let Some(res) = state.stored_resource(key) else {
            continue;
        };
        let ns = obj
            .pointer("/metadata/namespace")
            .and_then(serde_json::Value::as_str)
            .map(str::to_string);
        let Ok(obj) = lifecycle::prepare_create(&res, ns.as_deref(), obj) else {
            continue;
        };
        if let Err(e) = state
            .store
            .write(|txn| create_in_txn(txn, &res, obj, false))
        {
            tracing::warn!(error = %e.message, "bootstrap RBAC object");
        }
    }
    let Some(res) = state.stored_resource("/namespaces") else {
        return;
    };
    for name in SYSTEM_NAMESPACES {
        let obj = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
        let Ok(mut obj) = lifecycle::prepare_create(&res, None, obj) else {
            continue;
        };
        if crate::objects::kinds::default(&res, &mut obj).is_err() {
            continue;
        }
        let created = state
            .store
            .write(|txn| create_in_txn(txn, &res, obj, false));
        if let Err(e) = created {
            tracing::warn!(namespace = name, error = %e.message, "bootstrap namespace");
        }
        namespace::create_defaults(state, name);
    }
}

/// Starts every controller of a cluster; they end when the cluster stops.
pub fn spawn_all(state: &Arc<ClusterState>) {
    spawn(state, "crd", crd::handle);
    spawn(state, "garbage-collector", gc::handle);
    spawn(state, "namespace", namespace::handle);
    spawn(state, "token", tokens::handle);
    spawn(state, "workload-simulator", simulator::handle);
    let stopping = state.clone();
    let mut stop = state.control.stop.subscribe();
    tokio::spawn(async move {
        let _ = stop.wait_for(|s| *s).await;
        stopping.kubelet.stop_all();
    });
}

fn spawn<F, Fut>(state: &Arc<ClusterState>, name: &'static str, handle: F)
where
    F: Fn(Arc<ClusterState>, Option<Arc<Event>>) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send,
{
    let state = state.clone();
    let mut events = state.store.subscribe();
    let mut stop = state.control.stop.subscribe();
    tokio::spawn(async move {
        // A first pass with no event resynchronizes whatever is already stored.
        handle(state.clone(), None).await;
        loop {
            let ev = tokio::select! {
                ev = events.recv() => ev,
                _ = stop.wait_for(|s| *s) => return,
            };
            match ev {
                Ok(ev) => handle(state.clone(), Some(ev)).await,
                Err(broadcast::error::RecvError::Lagged(n)) => {
                    tracing::debug!(
                        controller = name,
                        missed = n,
                        "controller lagged; resynchronizing"
                    );
                    handle(state.clone(), None).await;
                }
                Err(broadcast::error::RecvError::Closed) => return,
            }
        }
    });
}
