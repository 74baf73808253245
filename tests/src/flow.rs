//! A two-stage data flow for end-to-end tests: a root installation whose inline blueprint runs a
//! producer and then a consumer subinstallation (one mock deploy item each); the root's import
//! `greeting` becomes `"<greeting>, produced, consumed"` in its export `result`.

use std::time::Duration;

use kube::Client;
use landscaper_api::constants::deploy_item_types;
use landscaper_deployer::controller::DeployerConfig;
use serde_json::{Value, json};

use crate::World;
use crate::blueprints::{blueprint_filesystem, mock_item_template};

/// A blueprint importing `import` and exporting `export` (both strings): one mock item that
/// exports `text`, `"<import>, <suffix>"`, which its export execution exports.
pub fn stage_blueprint(import: &str, export: &str, suffix: &str) -> Value {
    let export_text = format!(
        "    export:\n      text: {{{{ printf \"%s, {suffix}\" .imports.{import} | quote }}}}\n"
    );
    blueprint_filesystem(json!({
        "imports": [{"name": import, "schema": {"type": "string"}}],
        "exports": [{"name": export, "schema": {"type": "string"}}],
        "deployExecutions": [{
            "name": "main",
            "type": "GoTemplate",
            "template": mock_item_template("Succeeded", &export_text),
        }],
        "exportExecutions": [{
            "name": "out",
            "type": "GoTemplate",
            "template": format!("exports:\n  {export}: {{{{ .values.deployitems.item.text | quote }}}}\n"),
        }],
    }))
}

/// The root blueprint: imports `greeting`, runs producer then consumer, exports `result`.
pub fn root_blueprint() -> Value {
    blueprint_filesystem(json!({
        "imports": [{"name": "greeting", "schema": {"type": "string"}}],
        "exports": [{"name": "result", "schema": {"type": "string"}}],
        "subinstallations": [
            {
                "name": "producer",
                "blueprint": {"filesystem": stage_blueprint("greeting", "out", "produced")},
                "imports": {"data": [{"name": "greeting", "dataRef": "greeting"}]},
                "exports": {"data": [{"name": "out", "dataRef": "produced"}]},
            },
            {
                "name": "consumer",
                "blueprint": {"filesystem": stage_blueprint("in", "final", "consumed")},
                "imports": {"data": [{"name": "in", "dataRef": "produced"}]},
                "exports": {"data": [{"name": "final", "dataRef": "final"}]},
            },
        ],
        "exportExecutions": [{
            "name": "result",
            "type": "GoTemplate",
            "template": "exports:\n  result: {{ index .values.dataobjects \"final\" | quote }}\n",
        }],
    }))
}

/// The root Installation `name` (with the reconcile annotation) importing `greeting` from the
/// DataObject key `import` and exporting `result` to the key `export`, in the root context.
pub fn root_installation(name: &str, import: &str, export: &str) -> Value {
    json!({
        "apiVersion": "landscaper.gardener.cloud/v1alpha1",
        "kind": "Installation",
        "metadata": {"name": name, "annotations": {"landscaper.gardener.cloud/operation": "reconcile"}},
        "spec": {
            "blueprint": {"inline": {"filesystem": root_blueprint()}},
            "imports": {"data": [{"name": "greeting", "dataRef": import}]},
            "exports": {"data": [{"name": "result", "dataRef": export}]},
        },
    })
}

/// A namespace of its own, on the landscaper cluster, with the mock deployer serving it.
pub async fn namespace_with_mock_deployer(world: &World, name: &str) -> Client {
    let client = world.landscaper_namespace(name).await;
    let mut config = DeployerConfig::new(deploy_item_types::MOCK, "mock-deployer");
    config.namespace = Some(name.into());
    config.retry_initial = Duration::from_millis(100);
    let setup = landscaper_deployer::deployers::mock::setup(client.clone(), client.clone(), config);
    tokio::spawn(landscaper_deployer::run(setup, std::future::pending()));
    client
}
