//! Readiness of watch caches that any number of reconciles may await at the same time.
//!
//! kube-runtime's `Store::wait_until_ready` keeps the waker of one waiter only (a oneshot
//! receiver): of two reconciles waiting at once, only the one that polled last is woken when
//! the cache has listed, and the other waits for ever — its object is never reconciled again
//! (an Environment created while the landscaper started stayed without its Target). A
//! [`Ready`] is the only waiter on its stores and wakes every task that awaits it.

use futures::future::{BoxFuture, FutureExt, Shared};
use kube::runtime::reflector::{Lookup, Store};
use std::hash::Hash;

/// Whether some caches have listed their objects once; cheap to clone, each clone awaits the
/// same readiness. Make one per store and share it: two on the same store are two waiters.
#[derive(Clone)]
pub struct Ready(Shared<BoxFuture<'static, bool>>);

impl Ready {
    /// Ready once `store` has listed its objects.
    pub fn of<K>(store: &Store<K>) -> Self
    where
        K: Lookup + Clone + Send + Sync + 'static,
        K::DynamicType: Eq + Hash + Clone + Send + Sync,
    {
        let store = store.clone();
        Self(
            async move { store.wait_until_ready().await.is_ok() }
                .boxed()
                .shared(),
        )
    }

    /// Ready once every one of `readies` is.
    pub fn all(readies: impl IntoIterator<Item = Ready>) -> Self {
        let waits: Vec<Ready> = readies.into_iter().collect();
        Self(
            async move {
                futures::future::join_all(waits.iter().map(Ready::wait))
                    .await
                    .into_iter()
                    .all(|ready| ready)
            }
            .boxed()
            .shared(),
        )
    }

    /// Waits until the caches have listed; false when one of them stopped before its first
    /// list (its watch was dropped at shutdown).
    pub async fn wait(&self) -> bool {
        self.0.clone().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::runtime::reflector;
    use kube::runtime::watcher::Event;
    use std::time::Duration;

    /// Tasks that started waiting before the list, as reconciles run by one controller do.
    fn waiters(ready: &Ready, count: usize) -> Vec<tokio::task::JoinHandle<bool>> {
        (0..count)
            .map(|_| {
                let ready = ready.clone();
                tokio::spawn(async move { ready.wait().await })
            })
            .collect()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn every_waiter_is_woken_when_the_cache_has_listed() {
        let (store, mut writer) = reflector::store::<ConfigMap>();
        let ready = Ready::all([Ready::of(&store)]);
        let tasks = waiters(&ready, 8);
        // Let every task poll (and register its waker) before the list completes.
        tokio::time::sleep(Duration::from_millis(50)).await;
        writer.apply_watcher_event(&Event::Init);
        writer.apply_watcher_event(&Event::InitDone);
        for task in tasks {
            let woken = tokio::time::timeout(Duration::from_secs(5), task).await;
            assert!(
                matches!(woken, Ok(Ok(true))),
                "a waiter was not woken: {woken:?}"
            );
        }
        assert!(ready.wait().await, "a later waiter sees it at once");
    }

    #[tokio::test]
    async fn a_cache_dropped_before_its_list_is_never_ready() {
        let (store, writer) = reflector::store::<ConfigMap>();
        let ready = Ready::of(&store);
        let tasks = waiters(&ready, 2);
        drop(writer);
        for task in tasks {
            assert!(!task.await.expect("joined"));
        }
    }
}
