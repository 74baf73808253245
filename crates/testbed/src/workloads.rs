//! What the workload simulator and its kubelet mode keep beside the stored objects, per
//! cluster: images whose pods never become ready, the templates of finished rollouts, and the
//! containers running in-process. Plain state, so the cluster can hold it without knowing the
//! controllers that use it.

use crate::kubelet::CancellationToken;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;

/// What the simulator knows beyond the stored objects: images whose pods never become ready,
/// and the pod template each workload last finished a rollout with (its "old pods").
#[derive(Debug, Default)]
pub struct Rollouts {
    never_ready: Mutex<BTreeSet<String>>,
    /// By workload uid.
    ready_templates: Mutex<HashMap<String, Value>>,
}

impl Rollouts {
    /// From now on, pods of `image` (exactly as written in a container) never become ready.
    pub fn never_ready(&self, image: &str) {
        self.never_ready
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(image.to_owned());
    }

    /// Whether a pod template runs an image that never becomes ready.
    pub(crate) fn stuck(&self, template: Option<&Value>) -> bool {
        let never = self.never_ready.lock().unwrap_or_else(|e| e.into_inner());
        let Some(spec) = template.and_then(|t| t.get("spec")) else {
            return false;
        };
        ["initContainers", "containers"]
            .iter()
            .filter_map(|k| spec.get(k).and_then(Value::as_array))
            .flatten()
            .filter_map(|c| c.get("image").and_then(Value::as_str))
            .any(|image| never.contains(image))
    }

    /// The template a workload last finished a rollout with.
    pub(crate) fn ready_template(&self, uid: &str) -> Option<Value> {
        self.ready_templates
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(uid)
            .cloned()
    }

    /// Records the template a workload finished a rollout with (none: forgets it).
    pub(crate) fn record_ready(&self, uid: &str, template: Option<&Value>) {
        let mut ready = self
            .ready_templates
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        match template {
            Some(t) => ready.insert(uid.to_owned(), t.clone()),
            None => ready.remove(uid),
        };
    }

    /// Forgets a deleted workload.
    pub(crate) fn forget(&self, uid: &str) {
        self.ready_templates
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(uid);
    }
}

/// The containers running in one cluster, by pod uid.
#[derive(Debug, Default)]
pub struct Kubelet {
    running: Mutex<HashMap<String, CancellationToken>>,
    /// Cancelled when the cluster stops; each container's token is a child of it.
    pub(crate) stopped: CancellationToken,
}

impl Kubelet {
    /// The running containers' stop tokens, by pod uid.
    pub(crate) fn running(&self) -> std::sync::MutexGuard<'_, HashMap<String, CancellationToken>> {
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Stops every container (the cluster stops).
    pub fn stop_all(&self) {
        self.stopped.cancel();
    }

    /// How many pods have a container running or waiting to restart.
    pub fn running_pods(&self) -> usize {
        self.running().len()
    }
}
