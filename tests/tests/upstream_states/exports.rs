//! `installations/exports/testdata/state` (fake-client loader), as upstream's
//! `exports/constructor_test.go` reads it; blueprints from `installations/testdata/registry`.
//! The export executions the Go tests set inline are the `inline/exports-*` template cases.

use kube::api::Api;
use landscaper::dataflow::{self, DataflowError, Exports};
use landscaper_api::core::{
    Execution, Installation, Target, TemplateExecutor, data_object_name, execution_data_object_name,
};
use landscaper_blueprint::MemoryState;
use landscaper_e2e::states::{Loader, inline_executions, loaded};
use serde_json::{Value as Json, json};

use crate::support::{installation, options, patch, patch_status, prepare, registry};

const STATE: &str = "installations/exports/testdata/state";
const REGISTRY: &str = "installations/testdata/registry";

/// Upstream's `exports.NewConstructor(op).Construct` on `namespace/root`, its export executions
/// replaced by `executions` when given (as the Go tests replace them).
async fn construct(
    client: &kube::Client,
    namespace: &str,
    executions: Option<Vec<TemplateExecutor>>,
) -> Result<Exports, DataflowError> {
    let root = installation(client, namespace, "root").await;
    let (scope, resolved) = prepare(client, &root, &registry(REGISTRY)).await;
    let mut options = options(&root, &resolved);
    if let Some(executions) = executions {
        options.blueprint.export_executions = executions;
    }
    dataflow::construct_exports(client, &root, &options, &MemoryState::default(), &scope).await
}

fn data_objects(exports: &Exports) -> Json {
    Json::Object(exports.data_objects.iter().cloned().collect())
}

/// Our installation reads its Execution's exports through the Execution's `status.exportRef`,
/// which our Execution controller writes; upstream's state predates that field and names the
/// DataObject by convention, so the test writes the reference the controller would have.
async fn reference_execution_exports(client: &kube::Client, namespace: &str) {
    let executions: Api<Execution> = Api::namespaced(client.clone(), namespace);
    let exports = json!({"name": execution_data_object_name("root"), "namespace": namespace});
    patch_status(&executions, "root", json!({"exportRef": exports})).await;
}

/// "should construct the exported config from a child"; "should forbid the export from a
/// child when the schema is not satisfied" (a template without a top-level `exports` key).
#[tokio::test]
async fn test1_exports_from_the_children_and_a_template_without_exports_fails() {
    let (_bed, client, _) = loaded(STATE, Loader::FakeClient).await;
    let executions = inline_executions("exports-override-dataobjects.yaml");
    let exports = construct(&client, "test1", Some(executions)).await.unwrap();
    assert_eq!(
        data_objects(&exports),
        json!({"root.y": "val-c", "root.z": "val-b"})
    );
    let executions = inline_executions("exports-override-no-exports-key.yaml");
    let error = construct(&client, "test1", Some(executions))
        .await
        .unwrap_err();
    assert!(matches!(error, DataflowError::InvalidExport(_)), "{error}");
}

/// "should construct the exported config from its execution".
#[tokio::test]
async fn test2_exports_from_the_execution() {
    let (_bed, client, _) = loaded(STATE, Loader::FakeClient).await;
    reference_execution_exports(&client, "test2").await;
    let exports = construct(&client, "test2", None).await.unwrap();
    assert_eq!(
        data_objects(&exports),
        json!({"root.y": "val-exec-y", "root.z": "val-exec-z"})
    );
}

/// "should construct the exported config from a siblings and the execution config".
#[tokio::test]
async fn test3_exports_from_the_execution_and_a_child() {
    let (_bed, client, _) = loaded(STATE, Loader::FakeClient).await;
    reference_execution_exports(&client, "test3").await;
    let executions = inline_executions("exports-override-deployitems.yaml");
    let exports = construct(&client, "test3", Some(executions)).await.unwrap();
    assert_eq!(
        data_objects(&exports),
        json!({"root.y": "val-exec", "root.z": "val-a"})
    );
    assert!(exports.targets.is_empty());
}

/// Target Export: "should export a target from a template and a subinstallation"; "should
/// forbid export of a wrong target type".
#[tokio::test]
async fn test4_target_exports_and_a_wrong_target_type() {
    let (_bed, client, _) = loaded(STATE, Loader::FakeClient).await;
    // The state's executionRef names namespace test3, a slip upstream never reads: it looks
    // the Execution up in the installation's namespace. Ours honours the reference.
    let installations: Api<Installation> = Api::namespaced(client.clone(), "test4");
    let execution = json!({"name": "root", "namespace": "test4"});
    patch_status(&installations, "root", json!({"executionRef": execution})).await;
    reference_execution_exports(&client, "test4").await;
    let exports = construct(&client, "test4", None).await.unwrap();
    let targets = Json::Object(exports.targets.iter().cloned().collect());
    assert_eq!(
        targets["root.y"],
        json!({"type": "landscaper.gardener.cloud/mock", "config": "val-a"})
    );
    assert_eq!(
        targets["root.z"],
        json!({"type": "landscaper.gardener.cloud/mock", "config": "val-e"})
    );
    let targets: Api<Target> = Api::namespaced(client.clone(), "test4");
    let name = data_object_name("Inst.root", "root.z");
    patch(&targets, &name, json!({"spec": {"type": "unknownType"}})).await;
    let error = construct(&client, "test4", None).await.unwrap_err();
    assert!(
        error.to_string().contains(
            "exported target type is unknownType but expected landscaper.gardener.cloud/mock"
        ),
        "{error}"
    );
}

/// ExportDataMappings: "should correctly export hard-coded values".
#[tokio::test]
async fn test5_export_data_mappings_with_hard_coded_values() {
    let (_bed, client, _) = loaded(STATE, Loader::FakeClient).await;
    let exports = construct(&client, "test5", None).await.unwrap();
    assert_eq!(data_objects(&exports), json!({"my-export": "bar"}));
}

/// ExportDataMappings: "should correctly render templates with the child's exports".
#[tokio::test]
async fn test6_export_data_mappings_over_the_templates_exports() {
    let (_bed, client, _) = loaded(STATE, Loader::FakeClient).await;
    let executions = inline_executions("exports-override-dataobjects.yaml");
    let exports = construct(&client, "test6", Some(executions)).await.unwrap();
    assert_eq!(
        data_objects(&exports),
        json!({"root.y": "val-c", "root.z": {"some": {"arbitrary": {"struct": "val-b"}}}})
    );
}
