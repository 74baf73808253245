//! The records of what the controller remembers of items between reconciles: the job it last
//! finished (a store that has not caught up must not redo it) and transient failures being
//! retried.

use k8s_openapi::jiff::Timestamp;
use kube::runtime::reflector::{ObjectRef, Store};
use landscaper_api::core::DeployItem;
use std::collections::HashMap;
use std::time::Instant;

/// What we last finished per item, to recognise a store that has not caught up with our own
/// final write yet (and not redo the job).
#[derive(Debug, Clone)]
pub(super) struct Done {
    pub(super) job_id: String,
    pub(super) deleted: bool,
    pub(super) touched: Option<Timestamp>,
}

/// A transient failure being retried: when the next attempt is due, and the item and Target
/// as our own writes left them. Those writes trigger the item again at once; only a change by
/// someone else may cut the backoff short.
#[derive(Debug, Clone)]
pub(super) struct Retrying {
    pub(super) job_id: String,
    pub(super) item_version: Option<String>,
    pub(super) target_version: Option<String>,
    pub(super) due: Instant,
}

/// The last job this process finished for each item, until the item is gone.
#[derive(Default)]
pub(super) struct FinishedJobs {
    pub(super) by_item: HashMap<ObjectRef<DeployItem>, Done>,
    /// How many entries make the next sweep due.
    pub(super) sweep_at: usize,
}

impl FinishedJobs {
    /// Records the job just finished for `key`. Once the record has doubled since the last
    /// sweep, it forgets the items the store no longer holds: a deleted item leaves no trace
    /// once the store has caught up, and sweeping at doublings keeps the cost per job constant.
    pub(super) fn remember(
        &mut self,
        key: &ObjectRef<DeployItem>,
        done: Done,
        items: &Store<DeployItem>,
    ) {
        self.by_item.insert(key.clone(), done);
        if self.by_item.len() >= self.sweep_at.max(SWEEP_FROM) {
            self.by_item
                .retain(|k, _| k == key || items.get(k).is_some());
            self.sweep_at = 2 * self.by_item.len();
        }
    }
}

/// The fewest remembered jobs [`FinishedJobs::remember`] sweeps.
pub(super) const SWEEP_FROM: usize = 64;

#[cfg(test)]
mod tests {
    use super::*;
    use kube::runtime::reflector::store::Writer;
    use kube::runtime::watcher;

    fn item(name: &str) -> DeployItem {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "landscaper.gardener.cloud/v1alpha1", "kind": "DeployItem",
            "metadata": {"name": name, "namespace": "ns"},
            "spec": {"type": "landscaper.gardener.cloud/mock"}
        }))
        .unwrap()
    }

    fn done() -> Done {
        Done {
            job_id: "job".to_owned(),
            deleted: true,
            touched: None,
        }
    }

    #[test]
    fn deleted_items_are_forgotten_and_existing_ones_kept() {
        let mut writer = Writer::<DeployItem>::default();
        let live: Vec<DeployItem> = (0..10).map(|i| item(&format!("live-{i}"))).collect();
        for i in &live {
            writer.apply_watcher_event(&watcher::Event::Apply(i.clone()));
        }
        let store = writer.as_reader();
        let mut finished = FinishedJobs::default();
        for i in &live {
            finished.remember(&ObjectRef::from_obj(i), done(), &store);
        }
        let mut sweeps = 0;
        for n in 0..1000 {
            let gone = ObjectRef::from_obj(&item(&format!("gone-{n}")));
            let before = finished.by_item.len();
            finished.remember(&gone, done(), &store);
            sweeps += usize::from(finished.by_item.len() <= before);
            let remembered = finished.by_item.len();
            assert!(remembered <= SWEEP_FROM, "{remembered} remembered");
        }
        // With 10 items left after each sweep, the next is due 54 jobs later.
        assert!(sweeps <= 1000 / (SWEEP_FROM - 10) + 1, "{sweeps} sweeps");
        for i in &live {
            let key = ObjectRef::from_obj(i);
            assert!(finished.by_item.contains_key(&key), "forgot {key}");
        }
    }
}
