//! DeployerRegistrations and Environments for tests: the registrations' components live on a
//! registry that does not exist, so a pair's job fails at once unless the test writes its
//! outcome.

use kube::api::{Api, PostParams};
use landscaper_api::core::{DeployerRegistration, Environment};
use serde_json::{Value, json};

use crate::World;

/// The registration `name` serving `types`, with `values` as its `importDataMappings.values`;
/// its blueprint is `<name>-deployer-blueprint` of `example.com/<name>-deployer` v1.0.0 on
/// `registry.example.com`.
pub fn registration(name: &str, types: &[&str], values: Value) -> DeployerRegistration {
    serde_json::from_value(json!({
        "apiVersion": "landscaper.gardener.cloud/v1alpha1",
        "kind": "DeployerRegistration",
        "metadata": { "name": name },
        "spec": {
            "types": types,
            "installationTemplate": {
                "blueprint": { "ref": { "resourceName": format!("{name}-deployer-blueprint") } },
                "componentDescriptor": { "ref": {
                    "componentName": format!("example.com/{name}-deployer"),
                    "version": "v1.0.0",
                    "repositoryContext": { "type": "ociRegistry", "baseUrl": "registry.example.com" },
                } },
                "importDataMappings": { "values": values },
            },
        },
    }))
    .expect("a registration")
}

/// Creates the Environment `name` (deployer namespace `<name>-deployers`), whose host Target
/// carries the annotation `landscaper.gardener.cloud/environment: <name>` its target selector
/// matches.
pub async fn create_environment(world: &World, name: &str) {
    let landscaper = world.access(world.landscaper_cluster(), None).await;
    let environment: Environment = serde_json::from_value(json!({
        "apiVersion": "landscaper.gardener.cloud/v1alpha1",
        "kind": "Environment",
        "metadata": { "name": name },
        "spec": {
            "namespace": format!("{name}-deployers"),
            "hostTarget": {
                "type": "landscaper.gardener.cloud/kubernetes-cluster",
                "config": { "kubeconfig": "host kubeconfig of the test" },
                "annotations": { "landscaper.gardener.cloud/environment": name },
            },
            "landscaperClusterConfig": landscaper.endpoint.rest_config(),
            "targetSelectors": [{ "annotations": [{
                "key": "landscaper.gardener.cloud/environment", "operator": "=", "values": [name],
            }] }],
        },
    }))
    .expect("an environment");
    Api::<Environment>::all(world.landscaper_cluster().client())
        .create(&PostParams::default(), &environment)
        .await
        .expect("environment created");
}
