//! The Environment in the landscaper cluster: created with the agent's finalizer and an
//! annotation naming the host cluster, so no other agent can take it over by accident.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::ResourceExt;
use kube::api::Api;
use landscaper_api::constants::{annotations, finalizers, target_types};
use landscaper_api::core::{Environment, EnvironmentSpec, SecretReference, TargetTemplate};

use super::host::KUBECONFIG_KEY;
use super::object::{self, Repair};
use super::{RegistrationError, owned_labels};
use crate::clients::Endpoint;
use crate::names::Names;
use crate::settings::Settings;

/// Annotation on the Environment naming the host cluster (the UID of the agent's host
/// namespace) whose agent owns it.
pub const HOST_CLUSTER_ANNOTATION: &str = "agent.landscaper.gardener.cloud/host-cluster-id";

/// Annotation on the Environment naming the namespace of the agent's heartbeat Lease; defined
/// with the API because the landscaper reads it.
pub use landscaper_api::constants::annotations::HEARTBEAT_LEASE_NAMESPACE as LEASE_NAMESPACE_ANNOTATION;

/// The annotations the agent keeps on its Environment: the namespace of its heartbeat Lease
/// (its `landscaperNamespace`, where the landscaper reads it) and the namespaces its embedded
/// helm deployer serves (which a registered helm deployer leaves to it).
pub fn agent_annotations(settings: &Settings) -> BTreeMap<String, String> {
    BTreeMap::from([
        (
            LEASE_NAMESPACE_ANNOTATION.to_owned(),
            settings.landscaper_namespace.clone(),
        ),
        (
            annotations::AGENT_DEPLOY_ITEM_NAMESPACES.to_owned(),
            settings.deploy_item_namespaces.join(","),
        ),
    ])
}

/// The Environment an agent with these settings registers.
pub fn desired_spec(settings: &Settings, names: &Names, landscaper: &Endpoint) -> EnvironmentSpec {
    EnvironmentSpec {
        host_target: TargetTemplate {
            type_: target_types::KUBERNETES_CLUSTER.to_owned(),
            config: None,
            secret_ref: Some(SecretReference {
                name: names.target_access_secret(),
                namespace: Some(settings.namespace.clone()),
                key: Some(KUBECONFIG_KEY.to_owned()),
            }),
            labels: None,
            annotations: Some(
                [(annotations::ENVIRONMENT.to_owned(), settings.name.clone())].into(),
            ),
        },
        namespace: settings.namespace.clone(),
        landscaper_cluster_config: landscaper.rest_config(),
        target_selectors: settings.target_selectors.clone(),
    }
}

/// Creates the Environment, or brings an existing one of ours up to date, with the agent's
/// annotations `agent` ([`agent_annotations`]) for the landscaper.
pub async fn ensure(
    client: &kube::Client,
    spec: EnvironmentSpec,
    names: &Names,
    host_cluster_id: &str,
    agent: BTreeMap<String, String>,
) -> Result<Environment, RegistrationError> {
    let name = &names.environment;
    let mut desired = Environment::new(name, spec);
    let mut desired_annotations = agent.clone();
    desired_annotations.insert(
        HOST_CLUSTER_ANNOTATION.to_owned(),
        host_cluster_id.to_owned(),
    );
    desired.metadata = ObjectMeta {
        name: Some(name.clone()),
        labels: Some(owned_labels(name)),
        annotations: Some(desired_annotations),
        finalizers: Some(vec![finalizers::AGENT.to_owned()]),
        ..Default::default()
    };
    let environments = Api::all(client.clone());
    let repair = |mut existing: Environment, desired: Environment| {
        match existing.annotations().get(HOST_CLUSTER_ANNOTATION) {
            Some(owner) if owner == host_cluster_id => {}
            owner => {
                return Err(RegistrationError::OwnedByAnother {
                    name: name.clone(),
                    owner: owner.map_or_else(
                        || "no agent (it has no host cluster annotation)".to_owned(),
                        |id| format!("the agent of host cluster {id}"),
                    ),
                    ours: host_cluster_id.to_owned(),
                });
            }
        }
        if existing.metadata.deletion_timestamp.is_some() {
            return Err(RegistrationError::BeingDeleted { name: name.clone() });
        }
        let has_finalizer = existing.finalizers().iter().any(|f| f == finalizers::AGENT);
        if !has_finalizer {
            existing.finalizers_mut().push(finalizers::AGENT.to_owned());
        }
        let mut annotations_moved = false;
        for (key, value) in &agent {
            if existing.annotations().get(key) != Some(value) {
                existing
                    .annotations_mut()
                    .insert(key.clone(), value.clone());
                annotations_moved = true;
            }
        }
        let stale = existing.spec != desired.spec;
        existing.spec = desired.spec;
        Ok(Repair::replace_if(
            stale || !has_finalizer || annotations_moved,
            existing,
        ))
    };
    object::ensure(&environments, name, desired, repair).await
}
