//! Watch caches of what the DeployerRegistration controller reads: reconciling 1,000
//! environments must not cost 1,000 reads, and a restart with nothing changed must cost no
//! write, so every decision is taken on cached objects.

use std::fmt::Debug;
use std::pin::Pin;

use futures::{Stream, StreamExt};
use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use kube::Resource;
use kube::api::Api;
use kube::core::PartialObjectMeta;
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt, watcher};
use landscaper_api::constants::labels;
use landscaper_api::core::{DeployerRegistration, Environment, Execution, Installation, Target};
use serde::de::DeserializeOwned;

/// The cached objects. The pairs' own objects are cached as metadata only: whether they are
/// current is read from their labels and annotations.
pub struct Caches {
    /// Every DeployerRegistration.
    pub registrations: Store<DeployerRegistration>,
    /// Every Environment.
    pub environments: Store<Environment>,
    /// The pairs' Installations.
    pub installations: Store<Installation>,
    /// Executions in the deployer management namespace (the pairs' installations' items).
    pub executions: Store<Execution>,
    /// The pairs' ServiceAccounts.
    pub service_accounts: Store<PartialObjectMeta<ServiceAccount>>,
    /// The pairs' ClusterRoles.
    pub cluster_roles: Store<PartialObjectMeta<ClusterRole>>,
    /// The pairs' ClusterRoleBindings.
    pub cluster_role_bindings: Store<PartialObjectMeta<ClusterRoleBinding>>,
    /// The pairs' access Secrets.
    pub secrets: Store<PartialObjectMeta<Secret>>,
    /// The pairs' Targets.
    pub targets: Store<PartialObjectMeta<Target>>,
}

/// A stream that yields whenever a cached object changed; it must be polled for the caches to
/// fill.
pub type Changes = Pin<Box<dyn Stream<Item = ()> + Send>>;

impl Caches {
    /// Starts the watches of the landscaper cluster; `namespace` is the deployer management
    /// namespace.
    pub fn start(client: &kube::Client, namespace: &str) -> (Self, Changes) {
        let pairs = || watcher::Config::default().labels(labels::DEPLOYER_REGISTRATION);
        let everything = watcher::Config::default;
        let mut changes: Vec<Changes> = Vec::new();
        let registrations = cache(Api::all(client.clone()), everything(), &mut changes);
        let environments = cache(Api::all(client.clone()), everything(), &mut changes);
        let installations = cache(
            Api::namespaced(client.clone(), namespace),
            pairs(),
            &mut changes,
        );
        let executions = cache(
            Api::namespaced(client.clone(), namespace),
            everything(),
            &mut changes,
        );
        let service_accounts = metadata_cache(
            Api::namespaced(client.clone(), namespace),
            pairs(),
            &mut changes,
        );
        let cluster_roles = metadata_cache(Api::all(client.clone()), pairs(), &mut changes);
        let cluster_role_bindings = metadata_cache(Api::all(client.clone()), pairs(), &mut changes);
        let secrets = metadata_cache(
            Api::namespaced(client.clone(), namespace),
            pairs(),
            &mut changes,
        );
        let targets = metadata_cache(
            Api::namespaced(client.clone(), namespace),
            pairs(),
            &mut changes,
        );
        let caches = Self {
            registrations,
            environments,
            installations,
            executions,
            service_accounts,
            cluster_roles,
            cluster_role_bindings,
            secrets,
            targets,
        };
        (caches, Box::pin(futures::stream::select_all(changes)))
    }

    /// Waits until every cache has listed its objects once.
    pub async fn ready(&self) {
        // A writer only goes away when its stream is dropped, at shutdown.
        let _ = futures::join!(
            self.registrations.wait_until_ready(),
            self.environments.wait_until_ready(),
            self.installations.wait_until_ready(),
            self.executions.wait_until_ready(),
            self.service_accounts.wait_until_ready(),
            self.cluster_roles.wait_until_ready(),
            self.cluster_role_bindings.wait_until_ready(),
            self.secrets.wait_until_ready(),
            self.targets.wait_until_ready(),
        );
    }
}

/// A cache of `api`'s objects selected by `config`; its change stream is added to `changes`.
fn cache<K>(api: Api<K>, config: watcher::Config, changes: &mut Vec<Changes>) -> Store<K>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    cache_of(watcher(api, config), changes)
}

/// A cache of the metadata of `api`'s objects selected by `config` (an `Api` of
/// `PartialObjectMeta` watches with metadata-only requests).
fn metadata_cache<K>(
    api: Api<PartialObjectMeta<K>>,
    config: watcher::Config,
    changes: &mut Vec<Changes>,
) -> Store<PartialObjectMeta<K>>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    cache_of(watcher(api, config), changes)
}

/// Stores the objects of a watch; its change stream is added to `changes`.
fn cache_of<K, W>(watch: W, changes: &mut Vec<Changes>) -> Store<K>
where
    K: Resource<DynamicType = ()> + Clone + Debug + Send + Sync + 'static,
    W: Stream<Item = Result<watcher::Event<K>, watcher::Error>> + Send + 'static,
{
    let (reader, writer) = reflector::store();
    // managedFields are most of a server-side applied object and nothing here reads them.
    let watch = watch.modify(|object: &mut K| {
        object.meta_mut().managed_fields = None;
    });
    let stream = reflector::reflector(writer, watch)
        .default_backoff()
        .filter_map(|event| async move {
            match event {
                Ok(watcher::Event::Apply(_) | watcher::Event::Delete(_) | watcher::Event::InitDone) => {
                    Some(())
                }
                Ok(_) => None,
                Err(error) => {
                    tracing::warn!(%error, "watch of the deployer management caches failed; retrying");
                    None
                }
            }
        });
    changes.push(Box::pin(stream));
    reader
}
