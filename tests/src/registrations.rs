//! DeployerRegistrations for tests: their components live on a registry that does not exist,
//! so a pair's job fails at once unless the test writes its outcome.

use landscaper_api::core::DeployerRegistration;
use serde_json::{Value, json};

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
