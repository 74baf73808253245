//! An installation's exports (`landscaper::dataflow::{construct_exports, write_exports}`) on the
//! state of upstream's `installations/exports` tests (`states/cases.md`, built inline with the
//! same names, contexts and data), and the template cases `exports/*` of
//! `templates/cases.yaml`, whose export templates need this cluster state.

mod dataflow_fixture;

use std::sync::Arc;

use dataflow_fixture::{Fixture, blueprint};
use kube::api::Api;
use landscaper::dataflow::{self, Exports};
use landscaper_api::core::{
    DataObject, Execution, Installation, Target, data_object_name, execution_data_object_name,
};
use landscaper_blueprint::{ExecutionOptions, MemoryState};
use landscaper_e2e::states::inline_executions;
use serde_json::{Value as Json, json};

/// A DataObject exported by subinstallation `by` into context `Inst.root` under `key`.
async fn child_export(f: &Fixture, by: &str, key: &str, data: Json) {
    f.create::<DataObject>(json!({
        "apiVersion": "landscaper.gardener.cloud/v1alpha1", "kind": "DataObject",
        "metadata": {
            "name": data_object_name("Inst.root", key),
            "labels": {"data.landscaper.gardener.cloud/context": "Inst.root", "data.landscaper.gardener.cloud/key": key},
            "annotations": {"exported-by": by}
        },
        "data": data
    }))
    .await;
}

/// Execution `root` with its export DataObject `Exec.root` holding `data`, referenced from
/// the Execution's `status.exportRef` and the root's `status.executionRef`.
async fn execution(f: &Fixture, data: Json) {
    let name = execution_data_object_name("root");
    f.create::<DataObject>(json!({
        "apiVersion": "landscaper.gardener.cloud/v1alpha1", "kind": "DataObject",
        "metadata": {"name": name}, "data": data
    }))
    .await;
    f.create::<Execution>(json!({"metadata": {"name": "root"}, "spec": {}}))
        .await;
    f.status::<Execution>(
        "root",
        json!({"phase": "Succeeded", "exportRef": {"name": name, "namespace": f.ns}}),
    )
    .await;
    f.status::<Installation>(
        "root",
        json!({"executionRef": {"name": "root", "namespace": f.ns}, "jobID": "job-1"}),
    )
    .await;
}

/// Constructs the exports of `root` with registry blueprint `blob`, its export executions
/// replaced by those of the template case `inline/<case>` when given.
async fn construct(
    f: &Fixture,
    blob: &str,
    case: Option<&str>,
) -> Result<Exports, dataflow::DataflowError> {
    let root = f.get_installation("root").await;
    let (mut bp, fs) = blueprint(blob);
    if let Some(case) = case {
        bp.export_executions = inline_executions(case);
    }
    let options = ExecutionOptions {
        blueprint: bp,
        filesystem: Arc::new(fs),
        installation: Some(serde_json::to_value(&root).unwrap()),
        ..ExecutionOptions::default()
    };
    let scope = f.scope(&root).await;
    dataflow::construct_exports(&f.client, &root, &options, &MemoryState::default(), &scope).await
}

/// The data exports of `root` (see [`construct`]), which must construct.
async fn data_exports(f: &Fixture, blob: &str, case: Option<&str>) -> Json {
    data_objects(&construct(f, blob, case).await.unwrap())
}

fn data_objects(exports: &Exports) -> Json {
    Json::Object(exports.data_objects.iter().cloned().collect())
}

async fn root(f: &Fixture, spec: Json) -> Installation {
    f.installation("root", None, spec).await
}

fn root_exports() -> Json {
    json!({"exports": {"data": [{"name": "root.y", "dataRef": "root.y"}, {"name": "root.z", "dataRef": "root.z"}]}})
}

/// root's subinstallations a, b and c exported `a.z`, `root.z` and `root.y` into `Inst.root`.
async fn children(f: &Fixture) {
    child_export(f, "a", "a.z", json!("val-a")).await;
    child_export(f, "b", "root.z", json!("val-b")).await;
    child_export(f, "c", "root.y", json!("val-c")).await;
}

#[tokio::test]
async fn exports_from_the_execution() {
    let f = Fixture::start("test2").await;
    root(&f, root_exports()).await;
    execution(
        &f,
        json!({"deploy": {"root.y": "val-exec-y", "root.z": "val-exec-z"}}),
    )
    .await;
    assert_eq!(
        data_exports(&f, "root", None).await,
        json!({"root.y": "val-exec-y", "root.z": "val-exec-z"})
    );
}

#[tokio::test]
async fn exports_from_the_children_and_a_template_without_exports_fails() {
    let f = Fixture::start("test1").await;
    root(&f, root_exports()).await;
    children(&f).await;
    assert_eq!(
        data_exports(&f, "root", Some("exports-override-dataobjects.yaml")).await,
        json!({"root.y": "val-c", "root.z": "val-b"})
    );
    let err = construct(&f, "root", Some("exports-override-no-exports-key.yaml"))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Installation test1/root: spec.exports.data \"root.y\": the blueprint's executions and exportDataMappings export no such value"
    );
}

#[tokio::test]
async fn exports_from_the_execution_and_the_children() {
    let f = Fixture::start("test3").await;
    root(&f, root_exports()).await;
    child_export(&f, "a", "root.z", json!("val-a")).await;
    execution(&f, json!({"deploy": {"root.y": "val-exec"}})).await;
    let exports = construct(&f, "root", Some("exports-override-deployitems.yaml"))
        .await
        .unwrap();
    assert_eq!(
        data_objects(&exports),
        json!({"root.y": "val-exec", "root.z": "val-a"})
    );
    assert!(exports.targets.is_empty());
}

#[tokio::test]
async fn target_exports_and_a_wrong_target_type() {
    let f = Fixture::start("test4").await;
    root(
        &f,
        json!({"exports": {"targets": [{"name": "root.y", "target": "root.y"}, {"name": "root.z", "target": "root.z"}]}}),
    )
    .await;
    execution(&f, json!({"deploy": {"root.y": {"type": "landscaper.gardener.cloud/mock", "config": "val-a"}}})).await;
    f.create::<Target>(json!({
        "metadata": {
            "name": data_object_name("Inst.root", "root.z"),
            "labels": {"data.landscaper.gardener.cloud/context": "Inst.root", "data.landscaper.gardener.cloud/key": "root.z"}
        },
        "spec": {"type": "landscaper.gardener.cloud/mock", "config": "val-e"}
    }))
    .await;
    let exports = construct(&f, "root-2", None).await.unwrap();
    let targets: Json = Json::Object(exports.targets.iter().cloned().collect());
    assert_eq!(
        targets["root.y"],
        json!({"type": "landscaper.gardener.cloud/mock", "config": "val-a"})
    );
    assert_eq!(
        targets["root.z"],
        json!({"type": "landscaper.gardener.cloud/mock", "config": "val-e"})
    );

    let targets_api: Api<Target> = Api::namespaced(f.client.clone(), "test4");
    let name = data_object_name("Inst.root", "root.z");
    let mut target = targets_api.get(&name).await.unwrap();
    target.spec.type_ = "unknownType".into();
    targets_api
        .replace(&name, &Default::default(), &target)
        .await
        .unwrap();
    let err = construct(&f, "root-2", None).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "Installation test4/root: export \"root.z\": exported target type is unknownType but expected landscaper.gardener.cloud/mock"
    );
}

#[tokio::test]
async fn export_data_mappings_with_hard_coded_values() {
    let f = Fixture::start("test5").await;
    root(
        &f,
        json!({"exportDataMappings": {"a.z": "bar"}, "exports": {"data": [{"name": "a.z", "dataRef": "my-export"}]}}),
    )
    .await;
    assert_eq!(
        data_exports(&f, "a", None).await,
        json!({"my-export": "bar"})
    );
}

#[tokio::test]
async fn export_data_mappings_over_the_templates_exports() {
    let f = Fixture::start("test6").await;
    root(
        &f,
        json!({
            "exports": {"data": [{"name": "root.y", "dataRef": "root.y"}, {"name": "foo", "dataRef": "root.z"}]},
            "exportDataMappings": {"foo": {"some": {"arbitrary": {"struct": "(( exports[\"root.z\"] ))"}}}}
        }),
    )
    .await;
    children(&f).await;
    assert_eq!(
        data_exports(&f, "root", Some("exports-override-dataobjects.yaml")).await,
        json!({"root.y": "val-c", "root.z": {"some": {"arbitrary": {"struct": "val-b"}}}})
    );
}

#[tokio::test]
async fn written_exports_carry_upstream_names_labels_and_owner_and_are_written_once() {
    let f = Fixture::start("write").await;
    f.installation("root", None, json!({})).await;
    f.installation(
        "a",
        Some("root"),
        json!({"exports": {"data": [{"name": "a.z", "dataRef": "a.z"}]}}),
    )
    .await;
    f.status::<Installation>("a", json!({"jobID": "job-7"}))
        .await;
    let a = f.get_installation("a").await;
    let (mut bp, fs) = blueprint("a");
    bp.export_executions = serde_json::from_value(
        json!([{"name": "e", "type": "GoTemplate", "template": "exports:\n  a.z: val-a\n"}]),
    )
    .unwrap();
    let options = ExecutionOptions {
        blueprint: bp,
        filesystem: Arc::new(fs),
        ..ExecutionOptions::default()
    };
    let scope = f.scope(&a).await;
    let state = MemoryState::default();
    dataflow::write_exports(&f.client, &a, &options, &state, &scope)
        .await
        .unwrap();
    let objects: Api<DataObject> = Api::namespaced(f.client.clone(), "write");
    let name = data_object_name("Inst.root", "a.z");
    let written = objects.get(&name).await.unwrap();
    assert_eq!(written.data, "val-a");
    let labels = written.metadata.labels.clone().unwrap();
    assert_eq!(
        labels["data.landscaper.gardener.cloud/context"],
        "Inst.root"
    );
    assert_eq!(labels["data.landscaper.gardener.cloud/key"], "a.z");
    assert_eq!(labels["data.landscaper.gardener.cloud/source"], "Inst.a");
    assert_eq!(
        labels["data.landscaper.gardener.cloud/sourceType"],
        "export"
    );
    assert_eq!(labels["data.landscaper.gardener.cloud/jobid"], "job-7");
    let owner = &written.metadata.owner_references.clone().unwrap()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str()),
        ("Installation", "a")
    );
    assert_eq!(Some(&owner.uid), a.metadata.uid.as_ref());

    // Unchanged exports are not written again; the parent reads them as its children's.
    dataflow::write_exports(&f.client, &a, &options, &state, &scope)
        .await
        .unwrap();
    let again = objects.get(&name).await.unwrap();
    assert_eq!(
        again.metadata.resource_version,
        written.metadata.resource_version
    );
    let root = f.get_installation("root").await;
    let root_scope = f.scope(&root).await;
    let (mut root_bp, root_fs) = blueprint("root");
    root_bp.exports = serde_json::from_value(
        json!([{"name": "root.y", "type": "data", "schema": {"type": "string"}}]),
    )
    .unwrap();
    root_bp.export_executions = serde_json::from_value(json!([{"type": "GoTemplate", "template": "exports:\n  root.y: {{ index .values.dataobjects \"a.z\" }}\n"}])).unwrap();
    let root_options = ExecutionOptions {
        blueprint: root_bp,
        filesystem: Arc::new(root_fs),
        ..ExecutionOptions::default()
    };
    let exports = dataflow::construct_exports(&f.client, &root, &root_options, &state, &root_scope)
        .await
        .unwrap();
    assert_eq!(exports.values["root.y"], "val-a");
}
