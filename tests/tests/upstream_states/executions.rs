//! `installations/executions/testdata/state/test2` (fake-client loader), as upstream's
//! `executions/executions_test.go` reads it: Spiff deploy executions whose items name their
//! Target by `target.import`, `target.import` + `index` and the legacy `target.name`, resolved
//! after templating among the imports the import constructor read from the cluster. These are
//! the template cases `executions/test2-*`, which need the Target objects of a cluster.

use landscaper_blueprint::{MemoryState, Templater, targets};
use landscaper_e2e::states::{Loader, loaded};
use serde_json::{Value as Json, json};

use crate::support::{construct_imports, installation, options, prepare, registry};

const STATE: &str = "installations/executions/testdata/state";
const REGISTRY: &str = "installations/executions/testdata/registry/root";

/// Upstream's `RenderDeployItemTemplates` for installation `test2/name`: the imports, the
/// deploy executions, and each item's target resolved; the targets as JSON, or the error.
async fn render_targets(client: &kube::Client, name: &str) -> Result<Json, String> {
    let root = registry(REGISTRY);
    let imports = construct_imports(client, &root, "test2", name)
        .await
        .map_err(|e| e.to_string())?;
    let installation = installation(client, "test2", name).await;
    let (_, resolved) = prepare(client, &installation, &root).await;
    let mut options = options(&installation, &resolved);
    options.imports = imports.values;
    let state = MemoryState::default();
    let items = Templater::new(&state)
        .deploy_executions(&options)
        .map_err(|e| e.to_string())?;
    let mut resolved_targets = Vec::new();
    for item in &items {
        let target = targets::deploy_item_target(
            item,
            &options.blueprint.imports,
            &options.imports,
            "test2",
        )?;
        resolved_targets.push(json!({"name": item.name, "target": target}));
    }
    Ok(Json::Array(resolved_targets))
}

/// "should correctly reference targets in deployitem specifications"; "should fail if
/// targetlist index is out-of-bounds"; "… if target import does not exist"; "… if target
/// import is accessed with index"; "… if targetlist import is accessed without index".
#[tokio::test]
async fn test2_deploy_item_targets_are_resolved_from_target_and_target_list_imports() {
    let (_bed, client, _) = loaded(STATE, Loader::FakeClient).await;
    let target = json!({"name": "mytarget", "namespace": "test2"});
    assert_eq!(
        render_targets(&client, "root").await,
        Ok(json!([
            {"name": "myDi", "target": target},
            {"name": "myOtherDi", "target": target},
            {"name": "myLegacyDi", "target": target},
        ]))
    );
    let failures = [
        (
            "import-index-wrong",
            "invalid deployitem specification \"myDi\": index 5 out of bounds",
        ),
        (
            "import-not-exist",
            "invalid deployitem specification \"myDi\": target import \"foo\" not found",
        ),
        (
            "import-wrong-type-1",
            "invalid deployitem specification \"myDi\": targetlist import \"targetImp\" not found",
        ),
        (
            "import-wrong-type-2",
            "invalid deployitem specification \"myDi\": target import \"targetListImp\" not found",
        ),
    ];
    for (name, message) in failures {
        assert_eq!(
            render_targets(&client, name).await,
            Err(message.to_string()),
            "{name}"
        );
    }
}
