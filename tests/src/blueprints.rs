//! Inline blueprints for tests, built from their fields, and the mock deploy item whose
//! configuration names the phase it ends in.

use serde_json::{Value, json};

/// The filesystem of an inline blueprint whose `blueprint.yaml` holds `fields` (a JSON object
/// of a Blueprint's fields besides `apiVersion` and `kind`).
pub fn blueprint_filesystem(fields: Value) -> Value {
    let mut blueprint = json!({
        "apiVersion": "landscaper.gardener.cloud/v1alpha1",
        "kind": "Blueprint",
    });
    let Value::Object(fields) = fields else {
        panic!("a blueprint's fields are a JSON object: {fields}");
    };
    blueprint
        .as_object_mut()
        .expect("a JSON object")
        .extend(fields);
    json!({ "blueprint.yaml": blueprint.to_string() })
}

/// A GoTemplate deploy items template rendering one mock item `item` that ends `phase`;
/// `config` is more of the item's configuration: YAML lines indented by four spaces, which may
/// hold template actions.
pub fn mock_item_template(phase: &str, config: &str) -> String {
    format!(
        "deployItems:\n- name: item\n  type: landscaper.gardener.cloud/mock\n  config:\n    apiVersion: mock.deployer.landscaper.gardener.cloud/v1alpha1\n    kind: ProviderConfiguration\n    phase: {phase}\n{config}"
    )
}

/// The filesystem of a blueprint whose deploy execution `main` renders one mock item `item`
/// that ends `phase`.
pub fn mock_blueprint(phase: &str) -> Value {
    blueprint_filesystem(json!({
        "deployExecutions": [{
            "name": "main",
            "type": "GoTemplate",
            "template": mock_item_template(phase, ""),
        }],
    }))
}
