//! The controller's shared state (clients, the deployer, its configuration and hooks, the
//! caches) and what it remembers of each item: the job it finished last, the backoff of
//! transient failures, and when it started each running job.

use super::config::DeployerConfig;
use super::memory::{Done, FinishedJobs, Retrying};
use crate::contract::decision::{Decision, Work};
use crate::deployer::Deployer;
use crate::hooks::Hooks;
use crate::target_access::TargetAccess;
use k8s_openapi::jiff::Timestamp;
use kube::runtime::reflector::{ObjectRef, Store};
use landscaper_api::core::{DeployItem, Target};
use landscaper_process::events::Events;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Shared state of the controller.
pub struct Context<D> {
    pub(super) ls: kube::Client,
    pub(super) deployer: D,
    pub(super) config: DeployerConfig,
    pub(super) hooks: Hooks,
    pub(super) targets: Store<Target>,
    pub(super) items: Store<DeployItem>,
    pub(super) target_access: Arc<TargetAccess>,
    pub(super) events: Events,
    pub(super) failures: Mutex<HashMap<ObjectRef<DeployItem>, u32>>,
    pub(super) done: Mutex<FinishedJobs>,
    /// When this process started each item's running job, to the nanosecond: the status's
    /// `lastReconcileTime` keeps whole seconds only, which would cut up to a second off the
    /// progressing timeout (all of a `1s` one).
    pub(super) started: Mutex<HashMap<ObjectRef<DeployItem>, Timestamp>>,
    pub(super) retrying: Mutex<HashMap<ObjectRef<DeployItem>, Retrying>>,
}

impl<D: Deployer> Context<D> {
    pub(super) fn backoff(&self, key: &ObjectRef<DeployItem>) -> Duration {
        let mut f = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        let n = f.entry(key.clone()).or_insert(0);
        let delay = self
            .config
            .retry_initial
            .saturating_mul(1u32 << (*n).min(16))
            .min(self.config.retry_max);
        *n += 1;
        delay
    }

    pub(super) fn reset_backoff(&self, key: &ObjectRef<DeployItem>) {
        self.failures
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(key);
        self.retrying
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(key);
    }

    /// How long the next attempt of a retried job must still wait, when nothing but our own
    /// writes changed the item and its Target since the failure.
    pub(super) fn retry_not_due(
        &self,
        key: &ObjectRef<DeployItem>,
        item: &DeployItem,
        target: Option<&Arc<Target>>,
    ) -> Option<Duration> {
        let retrying = self.retrying.lock().unwrap_or_else(|e| e.into_inner());
        let r = retrying.get(key)?;
        let job = item.status.as_ref().and_then(|s| s.job_id.as_deref());
        let unchanged = job == Some(r.job_id.as_str())
            && item.metadata.resource_version == r.item_version
            && target.and_then(|t| t.metadata.resource_version.clone()) == r.target_version;
        let left = r.due.saturating_duration_since(Instant::now());
        (unchanged && !left.is_zero()).then_some(left)
    }

    /// Whether the store has not caught up with a job we finished.
    pub(super) fn stale(
        &self,
        key: &ObjectRef<DeployItem>,
        item: &DeployItem,
        d: &Decision,
    ) -> bool {
        let mut done = self.done.lock().unwrap_or_else(|e| e.into_inner());
        let Some(last) = done.by_item.get(key) else {
            return false;
        };
        let status = item.status.clone().unwrap_or_default();
        let job = status.job_id.unwrap_or_default();
        if status.job_id_finished.as_deref() == Some(last.job_id.as_str()) && !last.deleted {
            done.by_item.remove(key);
            return false;
        }
        match d.work {
            Some(Work::Delete) => last.deleted && last.job_id == job,
            Some(Work::Reconcile { .. }) if !d.mint_job_id => !last.deleted && last.job_id == job,
            None => last.touched.is_some_and(|t| {
                status
                    .last_reconcile_time
                    .as_ref()
                    .is_none_or(|lrt| lrt.0 < t)
            }),
            _ => false,
        }
    }

    /// When the item's running job started: our own record of the pickup when it is the one
    /// `lastReconcileTime` shows (that field has whole seconds only), else that field (a job
    /// picked up before a restart), else now.
    pub(super) fn job_start(&self, key: &ObjectRef<DeployItem>, item: &DeployItem) -> Timestamp {
        let Some(recorded) = item
            .status
            .as_ref()
            .and_then(|s| s.last_reconcile_time.as_ref())
            .map(|t| t.0)
        else {
            return Timestamp::now();
        };
        let started = self.started.lock().unwrap_or_else(|e| e.into_inner());
        match started.get(key) {
            Some(precise) if precise.as_second() == recorded.as_second() => *precise,
            _ => recorded,
        }
    }

    pub(super) fn record_start(&self, key: &ObjectRef<DeployItem>, at: Timestamp) {
        self.started
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key.clone(), at);
    }

    pub(super) fn remember(&self, key: &ObjectRef<DeployItem>, done: Done) {
        self.started
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(key);
        self.done
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remember(key, done, &self.items);
    }
}
