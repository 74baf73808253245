//! Watch caches of what the DeployerRegistration controller reads: reconciling 1,000
//! environments must not cost 1,000 reads, and a restart with nothing changed must cost no
//! write, so every decision is taken on cached objects. Registrations, environments and the
//! pairs' Installations come from the caches it shares with the DeployItem controller
//! ([`DeployerCaches`]); the pairs' other objects are cached here as metadata only.

use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use kube::api::Api;
use kube::core::PartialObjectMeta;
use kube::runtime::reflector::Store;
use kube::runtime::watcher;
use landscaper_api::constants::labels;
use landscaper_api::core::{DeployerRegistration, Environment, Execution, Installation, Target};

use crate::controllers::deployer_caches::{
    Changes, DeployerCaches, cache, metadata_cache, slim_execution,
};
use crate::controllers::ready::Ready;

/// The cached objects. The pairs' own objects are cached as metadata only: whether they are
/// current is read from their labels and annotations.
pub struct Caches {
    /// Every DeployerRegistration (without status).
    pub registrations: Store<DeployerRegistration>,
    /// Every Environment.
    pub environments: Store<Environment>,
    /// The pairs' Installations (slim: metadata and where the job stands).
    pub installations: Store<Installation>,
    /// Executions in the deployer management namespace (the pairs' installations' items),
    /// with their items' names and types only.
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
    /// All of them have listed once.
    listed: Ready,
}

impl Caches {
    /// Starts the watches of the pairs' objects in the landscaper cluster beside the `shared`
    /// caches; `namespace` is the deployer management namespace. The returned stream yields
    /// on every change of either and must be polled for these caches to fill.
    pub fn start(
        client: &kube::Client,
        namespace: &str,
        shared: DeployerCaches,
    ) -> (Self, Changes) {
        let pairs = || watcher::Config::default().labels(labels::DEPLOYER_REGISTRATION);
        let mut changes: Vec<Changes> = vec![shared.changes()];
        let executions = cache(
            Api::namespaced(client.clone(), namespace),
            watcher::Config::default(),
            slim_execution,
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
        let listed = Ready::all([
            shared.listed(),
            Ready::of(&executions),
            Ready::of(&service_accounts),
            Ready::of(&cluster_roles),
            Ready::of(&cluster_role_bindings),
            Ready::of(&secrets),
            Ready::of(&targets),
        ]);
        let caches = Self {
            registrations: shared.registrations.clone(),
            environments: shared.environments.clone(),
            installations: shared.installations.clone(),
            executions,
            service_accounts,
            cluster_roles,
            cluster_role_bindings,
            secrets,
            targets,
            listed,
        };
        (caches, Box::pin(futures::stream::select_all(changes)))
    }

    /// Waits until every cache has listed its objects once (or stopped before: a writer only
    /// goes away when its stream is dropped, at shutdown).
    pub async fn ready(&self) {
        self.listed.wait().await;
    }
}
