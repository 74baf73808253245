//! Watch caches of what the DeployerRegistration controller reads: reconciling 1,000
//! environments must not cost 1,000 reads, and a restart with nothing changed must cost no
//! write, so every decision is taken on cached objects.

use std::pin::Pin;

use futures::{Stream, StreamExt};
use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use kube::Resource;
use kube::api::Api;
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt, watcher};
use landscaper_api::constants::labels;
use landscaper_api::core::{DeployerRegistration, Environment, Execution, Installation, Target};
use serde::de::DeserializeOwned;

/// The cached objects.
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
    pub service_accounts: Store<ServiceAccount>,
    /// The pairs' ClusterRoles.
    pub cluster_roles: Store<ClusterRole>,
    /// The pairs' ClusterRoleBindings.
    pub cluster_role_bindings: Store<ClusterRoleBinding>,
    /// The pairs' access Secrets.
    pub secrets: Store<Secret>,
    /// The pairs' Targets.
    pub targets: Store<Target>,
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
        let service_accounts = cache(
            Api::namespaced(client.clone(), namespace),
            pairs(),
            &mut changes,
        );
        let cluster_roles = cache(Api::all(client.clone()), pairs(), &mut changes);
        let cluster_role_bindings = cache(Api::all(client.clone()), pairs(), &mut changes);
        let secrets = cache(
            Api::namespaced(client.clone(), namespace),
            pairs(),
            &mut changes,
        );
        let targets = cache(
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
    K: Resource<DynamicType = ()>
        + Clone
        + DeserializeOwned
        + std::fmt::Debug
        + Send
        + Sync
        + 'static,
{
    let (reader, writer) = reflector::store();
    let stream = reflector::reflector(writer, watcher(api, config))
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
