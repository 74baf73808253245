//! The watch caches deployer management shares between the DeployerRegistration and the
//! DeployItem controllers: every DeployerRegistration, every Environment and the pairs'
//! Installations, one watch of each for both controllers. At 1,000 environments × 5
//! registrations the pairs' Installations were most of the landscaper's memory, held three
//! times over, so the objects are kept slim: only what the two controllers decide on
//! (`slim_*` below), never written back.

use std::fmt::Debug;
use std::future::Future;
use std::pin::Pin;

use futures::{Stream, StreamExt};
use kube::Resource;
use kube::api::Api;
use kube::core::PartialObjectMeta;
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt, watcher};
use landscaper_api::constants::labels;
use landscaper_api::core::{
    DeployerRegistration, Environment, Execution, Installation, InstallationSpec,
    InstallationStatus,
};
use tokio::sync::watch;

use super::manager::Watched;
use super::ready::Ready;

/// A stream that yields whenever a cached object changed.
pub type Changes = Pin<Box<dyn Stream<Item = ()> + Send>>;

/// The future that keeps the caches filled; it runs until the process stops.
pub type Driver = Pin<Box<dyn Future<Output = ()> + Send>>;

/// The shared caches. Cloning is cheap: the stores are shared.
#[derive(Clone)]
pub struct DeployerCaches {
    /// Every DeployerRegistration, without its status (a thousand environments' entries).
    pub registrations: Store<DeployerRegistration>,
    /// Every Environment.
    pub environments: Store<Environment>,
    /// The pairs' Installations in the deployer management namespace: metadata and the job's
    /// phase, times and error only ([`slim_installation`]).
    pub installations: Store<Installation>,
    /// All three have listed once.
    listed: Ready,
    changed: watch::Receiver<()>,
}

impl DeployerCaches {
    /// Starts the watches; `namespace` is the deployer management namespace. The caches fill
    /// only while the returned [`Driver`] is polled.
    pub fn start(client: &kube::Client, namespace: &str) -> (Self, Driver) {
        let (changed_tx, changed) = watch::channel(());
        let mut streams: Vec<Changes> = Vec::new();
        let registrations = cache(
            Api::all(client.clone()),
            watcher::Config::default(),
            slim_registration,
            &mut streams,
        );
        let environments = cache(
            Api::all(client.clone()),
            watcher::Config::default(),
            drop_managed_fields,
            &mut streams,
        );
        let installations = cache(
            Api::namespaced(client.clone(), namespace),
            watcher::Config::default().labels(labels::DEPLOYER_REGISTRATION),
            slim_installation,
            &mut streams,
        );
        // Every subscriber learns that something changed, not what: each decides on the
        // caches, so changes that come in a burst fold into one notification.
        let driver = futures::stream::select_all(streams).for_each(move |()| {
            changed_tx.send_replace(());
            async {}
        });
        let listed = Ready::all([
            Ready::of(&registrations),
            Ready::of(&environments),
            Ready::of(&installations),
        ]);
        let caches = Self {
            registrations,
            environments,
            installations,
            listed,
            changed,
        };
        (caches, Box::pin(driver))
    }

    /// A stream that yields after the caches changed (a burst of changes may yield once).
    pub fn changes(&self) -> Changes {
        let mut receiver = self.changed.clone();
        receiver.mark_unchanged();
        Box::pin(futures::stream::unfold(
            receiver,
            |mut receiver| async move {
                receiver.changed().await.ok()?;
                Some(((), receiver))
            },
        ))
    }

    /// Waits until every cache has listed its objects once (or stopped before: a writer
    /// only goes away when its stream is dropped, at shutdown).
    pub async fn ready(&self) {
        self.listed.wait().await;
    }

    /// The readiness of these caches, to await beside others.
    pub fn listed(&self) -> Ready {
        self.listed.clone()
    }
}

/// Drops managedFields: most of a server-side applied object, and nothing here reads them.
pub fn drop_managed_fields<K: Resource>(object: &mut K) {
    object.meta_mut().managed_fields = None;
}

/// A registration as the caches keep it: what it serves and its metadata; its status (an
/// entry per environment) is read from the controller's own store where it is needed.
pub fn slim_registration(registration: &mut DeployerRegistration) {
    drop_managed_fields(registration);
    registration.status = None;
}

/// A pair's Installation as the caches keep it: its metadata (labels, the recorded hash,
/// finalizers, deletion) and where its job stands (phase, when it changed, job IDs, the last
/// error). The spec is what this controller wrote, recorded in the hash.
pub fn slim_installation(installation: &mut Installation) {
    drop_managed_fields(installation);
    installation.spec = InstallationSpec::default();
    if let Some(status) = installation.status.take() {
        installation.status = Some(InstallationStatus {
            observed_generation: status.observed_generation,
            phase: status.phase,
            phase_transition_time: status.phase_transition_time,
            last_error: status.last_error,
            job_id: status.job_id,
            job_id_finished: status.job_id_finished,
            ..InstallationStatus::default()
        });
    }
}

/// An Execution as the DeployerRegistration controller keeps it: the names and types of its
/// deploy items (which types a pair needs), without their configurations.
pub fn slim_execution(execution: &mut Execution) {
    drop_managed_fields(execution);
    for item in &mut execution.spec.deploy_items {
        item.config = serde_json::Value::Null;
        item.labels = None;
    }
    execution.status = None;
}

/// A cache of `api`'s objects selected by `config`, each passed through `slim` before it is
/// stored; a stream yielding on each change is added to `streams`.
pub fn cache<K>(
    api: Api<K>,
    config: watcher::Config,
    slim: fn(&mut K),
    streams: &mut Vec<Changes>,
) -> Store<K>
where
    K: Watched,
{
    cache_of(watcher(api, config), slim, streams)
}

/// A cache of the metadata of `api`'s objects selected by `config` (an `Api` of
/// `PartialObjectMeta` lists and watches with metadata-only requests), without managedFields;
/// a stream yielding on each change is added to `streams`.
pub fn metadata_cache<K>(
    api: Api<PartialObjectMeta<K>>,
    config: watcher::Config,
    streams: &mut Vec<Changes>,
) -> Store<PartialObjectMeta<K>>
where
    K: Watched,
{
    cache_of(watcher(api, config), drop_managed_fields, streams)
}

/// Stores the objects of `watch`, each passed through `slim`; a stream yielding on each change
/// is added to `streams`.
fn cache_of<K, W>(watch: W, slim: fn(&mut K), streams: &mut Vec<Changes>) -> Store<K>
where
    K: Resource<DynamicType = ()> + Clone + Debug + Send + Sync + 'static,
    W: Stream<Item = Result<watcher::Event<K>, watcher::Error>> + Send + 'static,
{
    let (reader, writer) = reflector::store();
    let stream = reflector::reflector(writer, watch.modify(slim))
        .default_backoff()
        .filter_map(|event| async move {
            match event {
                Ok(watcher::Event::Apply(_) | watcher::Event::Delete(_) | watcher::Event::InitDone) => {
                    Some(())
                }
                Ok(_) => None,
                Err(error) => {
                    tracing::warn!(kind = %K::kind(&()), %error, "watch of a deployer management cache failed; retrying");
                    None
                }
            }
        });
    streams.push(Box::pin(stream));
    reader
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_slim_installation_keeps_what_the_decisions_read() {
        let mut installation: Installation = serde_json::from_value(json!({
            "apiVersion": "landscaper.gardener.cloud/v1alpha1",
            "kind": "Installation",
            "metadata": {
                "name": "mock-edge", "namespace": "ls-system",
                "labels": {"deployers.landscaper.gardener.cloud/environment": "edge"},
                "annotations": {"deployers.landscaper.gardener.cloud/spec-hash": "abc"},
                "finalizers": ["finalizer.deployermanagement.landscaper.gardener.cloud"],
                "managedFields": [{"manager": "m", "operation": "Apply"}],
            },
            "spec": {
                "blueprint": {"ref": {"resourceName": "blueprint"}},
                "importDataMappings": {"values": {"replicas": 2}},
            },
            "status": {
                "phase": "Failed", "jobID": "1", "jobIDFinished": "1",
                "lastError": {"operation": "Init", "reason": "R", "message": "no blueprint",
                    "lastTransitionTime": "2026-11-29T00:00:00Z",
                    "lastUpdateTime": "2026-11-29T00:00:00Z"},
                "importsHash": "h",
                "conditions": [{"type": "InstallationReconciled", "status": "False",
                    "reason": "R", "message": "m", "lastTransitionTime": "2026-11-29T00:00:00Z",
                    "lastUpdateTime": "2026-11-29T00:00:00Z"}],
            },
        }))
        .expect("an installation");
        slim_installation(&mut installation);
        assert!(installation.metadata.managed_fields.is_none());
        assert!(installation.spec.import_data_mappings.is_none());
        let status = installation.status.expect("status kept");
        assert_eq!(status.job_id_finished.as_deref(), Some("1"));
        assert_eq!(
            status.last_error.map(|e| e.message).as_deref(),
            Some("no blueprint")
        );
        assert!(status.conditions.is_empty() && status.imports_hash.is_none());
        assert_eq!(installation.metadata.finalizers.map(|f| f.len()), Some(1));
    }
}
