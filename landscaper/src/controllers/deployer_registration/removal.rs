//! Removing a pair: its Installation first (the deployer is uninstalled from the environment),
//! only after the pairs that need its deployer there are gone; then its Target, access Secret,
//! RBAC and ServiceAccount.

use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use kube::core::PartialObjectMeta;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Resource, ResourceExt};
use landscaper_api::constants::finalizers;
use landscaper_api::core::{DeployerRegistration, Installation, Target};
use serde::de::DeserializeOwned;
use serde_json::json;
use tracing::info;

use super::order::Graph;
use super::pair::{access_secret_name, cluster_role_name};
use super::{Context, Error};
use crate::controllers::api_failure::ApiFailure;

/// Where a removal stands.
pub enum Removal {
    /// Nothing of the pair is left.
    Done,
    /// Under way; what it waits for, in words.
    Waiting(String),
}

/// Takes the next step of removing the pair of `registration` in `environment`.
pub async fn remove(
    context: &Context,
    graph: &Graph,
    registration: &str,
    environment: &str,
) -> Result<Removal, Error> {
    let name = format!("{registration}-{environment}");
    let namespace = context.settings.namespace.as_str();
    let caches = &context.caches;
    let fail = |action: &str, source| {
        let action = format!("environment {environment}: {action}");
        Error::Api(ApiFailure::named::<DeployerRegistration>(
            registration,
            action,
            source,
        ))
    };
    if let Some(installation) = caches
        .installations
        .get(&ObjectRef::new(&name).within(namespace))
    {
        let installations: Api<Installation> = Api::namespaced(context.client.clone(), namespace);
        let blockers = graph.removal_blockers(registration, environment);
        if installation.meta().deletion_timestamp.is_none() {
            if !blockers.is_empty() {
                return Ok(Removal::Waiting(format!(
                    "waiting for {} to be removed first: their items need this deployer",
                    blockers.join(", ")
                )));
            }
            delete(&installations, &name)
                .await
                .map_err(|source| fail("deleting the pair's Installation", source))?;
            info!(pair = %name, "deleting the pair's Installation: the deployer is uninstalled");
            return Ok(Removal::Waiting("uninstalling the deployer".to_owned()));
        }
        let others: Vec<String> = installation
            .finalizers()
            .iter()
            .filter(|finalizer| *finalizer != finalizers::DEPLOYER_MANAGEMENT)
            .cloned()
            .collect();
        if !others.is_empty() {
            return Ok(Removal::Waiting(
                "the deployer is being uninstalled".to_owned(),
            ));
        }
        installations
            .patch(
                &name,
                &PatchParams::default(),
                &Patch::Merge(json!({
                    "metadata": {
                        "finalizers": others,
                        "resourceVersion": installation.resource_version(),
                    }
                })),
            )
            .await
            .map_err(|source| fail("releasing the pair's Installation", source))?;
        return Ok(Removal::Waiting(
            "releasing the pair's Installation".to_owned(),
        ));
    }
    let client = &context.client;
    let role = cluster_role_name(&name);
    let secret = access_secret_name(&name);
    let mut removing = false;
    removing |= delete_cached::<Target>(
        &caches.targets,
        Api::namespaced(client.clone(), namespace),
        &name,
        Some(namespace),
    )
    .await
    .map_err(|s| fail("deleting the pair's Target", s))?;
    removing |= delete_cached::<Secret>(
        &caches.secrets,
        Api::namespaced(client.clone(), namespace),
        &secret,
        Some(namespace),
    )
    .await
    .map_err(|s| fail("deleting the pair's access Secret", s))?;
    removing |= delete_cached::<ClusterRoleBinding>(
        &caches.cluster_role_bindings,
        Api::all(client.clone()),
        &role,
        None,
    )
    .await
    .map_err(|s| fail("deleting the pair's ClusterRoleBinding", s))?;
    removing |=
        delete_cached::<ClusterRole>(&caches.cluster_roles, Api::all(client.clone()), &role, None)
            .await
            .map_err(|s| fail("deleting the pair's ClusterRole", s))?;
    removing |= delete_cached::<ServiceAccount>(
        &caches.service_accounts,
        Api::namespaced(client.clone(), namespace),
        &name,
        Some(namespace),
    )
    .await
    .map_err(|s| fail("deleting the pair's ServiceAccount", s))?;
    if removing {
        info!(pair = %name, "deleting the pair's Target, access Secret, RBAC and ServiceAccount");
        Ok(Removal::Waiting(
            "removing the pair's Target, access Secret, RBAC and ServiceAccount".to_owned(),
        ))
    } else {
        Ok(Removal::Done)
    }
}

/// Deletes the object if the cache holds it; whether it did.
async fn delete_cached<K>(
    cache: &Store<PartialObjectMeta<K>>,
    api: Api<K>,
    name: &str,
    namespace: Option<&str>,
) -> Result<bool, kube::Error>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + std::fmt::Debug,
{
    let key = match namespace {
        Some(namespace) => ObjectRef::new(name).within(namespace),
        None => ObjectRef::new(name),
    };
    if cache.get(&key).is_none() {
        return Ok(false);
    }
    delete(&api, name).await?;
    Ok(true)
}

/// Deletes, treating "already gone" as done.
async fn delete<K>(api: &Api<K>, name: &str) -> Result<(), kube::Error>
where
    K: Resource + Clone + DeserializeOwned + std::fmt::Debug,
{
    match api.delete(name, &DeleteParams::default()).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
        Err(error) => Err(error),
    }
}
