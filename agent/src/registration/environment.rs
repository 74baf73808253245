//! The Environment in the landscaper cluster: created with the agent's finalizer and an
//! annotation naming the host cluster, so no other agent can take it over by accident.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::ResourceExt;
use kube::api::{Api, PostParams};
use landscaper_api::constants::{annotations, finalizers, target_types};
use landscaper_api::core::{Environment, EnvironmentSpec, SecretReference, TargetTemplate};
use tracing::info;

use super::host::KUBECONFIG_KEY;
use super::{RegistrationError, api_error, owned_labels};
use crate::clients::Endpoint;
use crate::names::Names;
use crate::settings::Settings;

/// Annotation on the Environment naming the host cluster (the UID of the agent's host
/// namespace) whose agent owns it.
pub const HOST_CLUSTER_ANNOTATION: &str = "agent.landscaper.gardener.cloud/host-cluster-id";

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

/// Creates the Environment, or brings an existing one of ours up to date.
pub async fn ensure(
    client: &kube::Client,
    spec: EnvironmentSpec,
    names: &Names,
    host_cluster_id: &str,
) -> Result<Environment, RegistrationError> {
    let environments: Api<Environment> = Api::all(client.clone());
    let name = &names.environment;
    let object = format!("Environment {name}");
    let Some(mut existing) = environments
        .get_opt(name)
        .await
        .map_err(api_error("reading", object.clone()))?
    else {
        let mut environment = Environment::new(name, spec);
        environment.metadata = ObjectMeta {
            name: Some(name.clone()),
            labels: Some(owned_labels(name)),
            annotations: Some(
                [(
                    HOST_CLUSTER_ANNOTATION.to_owned(),
                    host_cluster_id.to_owned(),
                )]
                .into(),
            ),
            finalizers: Some(vec![finalizers::AGENT.to_owned()]),
            ..Default::default()
        };
        let created = environments
            .create(&PostParams::default(), &environment)
            .await
            .map_err(api_error("creating", object.clone()))?;
        info!(object = %object, "registered the environment");
        return Ok(created);
    };
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
    if existing.spec == spec && has_finalizer {
        return Ok(existing);
    }
    existing.spec = spec;
    if !has_finalizer {
        existing.finalizers_mut().push(finalizers::AGENT.to_owned());
    }
    let updated = environments
        .replace(name, &PostParams::default(), &existing)
        .await
        .map_err(api_error("updating", object.clone()))?;
    info!(object = %object, "updated the environment's registration");
    Ok(updated)
}
