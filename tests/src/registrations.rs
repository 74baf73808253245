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
    registration_with_template(
        name,
        types,
        json!({
            "blueprint": { "ref": { "resourceName": format!("{name}-deployer-blueprint") } },
            "componentDescriptor": { "ref": {
                "componentName": format!("example.com/{name}-deployer"),
                "version": "v1.0.0",
                "repositoryContext": { "type": "ociRegistry", "baseUrl": "registry.example.com" },
            } },
            "importDataMappings": { "values": values },
        }),
    )
}

/// The registration `name` serving `types`, installed with `installation_template` as its
/// `spec.installationTemplate`.
pub fn registration_with_template(
    name: &str,
    types: &[&str],
    installation_template: Value,
) -> DeployerRegistration {
    serde_json::from_value(json!({
        "apiVersion": "landscaper.gardener.cloud/v1alpha1",
        "kind": "DeployerRegistration",
        "metadata": { "name": name },
        "spec": { "types": types, "installationTemplate": installation_template },
    }))
    .expect("a registration")
}

/// The imports a deployer's blueprint declares for what every pair's Installation passes it:
/// the environment's Target (`cluster`), the landscaper cluster's Target and kubeconfig, the
/// release's name and namespace, the pair's identity and its environment's target selectors.
pub fn pair_imports() -> Vec<Value> {
    let cluster = "landscaper.gardener.cloud/kubernetes-cluster";
    vec![
        json!({"name": "cluster", "type": "target", "targetType": cluster}),
        json!({"name": "landscaperCluster", "type": "target", "targetType": cluster}),
        json!({"name": "landscaperClusterKubeconfig", "type": "data", "required": false, "schema": {"type": ["string", "object"]}}),
        json!({"name": "releaseName", "type": "data", "schema": {"type": "string"}}),
        json!({"name": "releaseNamespace", "type": "data", "schema": {"type": "string"}}),
        json!({"name": "identity", "type": "data", "schema": {"type": "string"}}),
        json!({"name": "targetSelectors", "type": "data", "required": false, "schema": {"type": "array"}}),
    ]
}

/// A deployer's deploy items template: one helm item `deployer` installing the chart `raw`
/// (`chart.archive.raw`) as the pair's release into the environment's cluster; `values` follows
/// `values:` (inline after a space, or lines indented by six spaces) and may use the imports.
pub fn pair_helm_item(raw: &str, values: &str) -> String {
    format!(
        r#"deployItems:
- name: deployer
  type: landscaper.gardener.cloud/helm
  target:
    import: cluster
  config:
    apiVersion: helm.deployer.landscaper.gardener.cloud/v1alpha1
    kind: ProviderConfiguration
    name: {{{{ .imports.releaseName }}}}
    namespace: {{{{ .imports.releaseNamespace }}}}
    createNamespace: true
    chart:
      archive:
        raw: {raw}
    values:{values}"#
    )
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
