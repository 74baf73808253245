//! An installation's scope and imports (`landscaper::dataflow`), on the state of upstream's
//! `installations/imports` tests (`states/cases.md`, built inline with the same names, contexts
//! and data) and the blueprints of the shared registry `installations/testdata/registry`.

mod dataflow_fixture;

use dataflow_fixture::{Fixture, blueprint, values};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, DeleteParams};
use landscaper::dataflow;
use landscaper_api::core::{Installation, Target, data_object_name};
use serde_json::{Value as Json, json};

/// root with a, b and c below it (imports test2): b imports a sibling's export; c imports a
/// sibling's export and one of the parent's imports, all in context `Inst.root`.
async fn tree(f: &Fixture) -> (Installation, Installation, Installation) {
    f.data_object("", "ext.a", json!("val-root-import")).await;
    f.data_object("Inst.root", "root.a", json!("val-root-import"))
        .await;
    f.data_object("Inst.root", "a.z", json!("val-a")).await;
    let root = f
        .installation(
            "root",
            None,
            json!({"imports": {"data": [{"name": "root.a", "dataRef": "ext.a"}]}}),
        )
        .await;
    f.installation(
        "a",
        Some("root"),
        json!({"imports": {"data": [{"name": "a.b", "dataRef": "root.a"}]}}),
    )
    .await;
    let b = f
        .installation(
            "b",
            Some("root"),
            json!({"imports": {"data": [{"name": "b.a", "dataRef": "a.z"}]}}),
        )
        .await;
    let c = f
        .installation(
            "c",
            Some("root"),
            json!({"imports": {"data": [{"name": "c.a", "dataRef": "a.z"}, {"name": "c.b", "dataRef": "root.a"}]}}),
        )
        .await;
    (root, b, c)
}

#[tokio::test]
async fn the_scope_names_parent_siblings_and_context() {
    let f = Fixture::start("test2").await;
    let (root, b, _) = tree(&f).await;
    let scope = dataflow::scope(&f.client, &b).await.unwrap();
    assert_eq!(scope.context, "Inst.root");
    assert_eq!(scope.parent.unwrap().metadata.name.as_deref(), Some("root"));
    let mut siblings: Vec<_> = scope
        .siblings
        .iter()
        .filter_map(|s| s.metadata.name.clone())
        .collect();
    siblings.sort();
    assert_eq!(siblings, ["a", "c"]);
    let scope = dataflow::scope(&f.client, &root).await.unwrap();
    assert!(scope.is_root());
    assert_eq!(scope.context, "");
    assert!(scope.siblings.is_empty());
    // Another root installation is a sibling of the roots (test2 of installations/testdata).
    f.installation("other", None, json!({})).await;
    let scope = dataflow::scope(&f.client, &root).await.unwrap();
    let siblings: Vec<_> = scope
        .siblings
        .iter()
        .filter_map(|s| s.metadata.name.clone())
        .collect();
    assert_eq!(siblings, ["other"]);
    let scope = dataflow::scope_of(&f.client, &b, false).await.unwrap();
    assert_eq!(
        (scope.context.as_str(), scope.siblings.len()),
        ("Inst.root", 0)
    );
}

#[tokio::test]
async fn imports_from_a_sibling_and_the_parent() {
    let f = Fixture::start("test2").await;
    let (root, b, c) = tree(&f).await;
    assert_eq!(
        values(&f.imports(&b, "b").await.unwrap()),
        json!({"b.a": "val-a"})
    );
    let imports = f.imports(&c, "c").await.unwrap();
    assert_eq!(
        values(&imports),
        json!({"c.a": "val-a", "c.b": "val-root-import"})
    );
    assert_eq!(imports.hash.len(), 40);
    // The root reads its import from the root context, where `ext.a` names its DataObject.
    let imports = f.imports(&root, "root").await.unwrap();
    assert_eq!(values(&imports), json!({"root.a": "val-root-import"}));
}

#[tokio::test]
async fn a_missing_data_object_names_the_import_the_object_and_the_context() {
    let f = Fixture::start("test11").await;
    f.installation("root", None, json!({})).await;
    let a = f
        .installation(
            "a",
            Some("root"),
            json!({"imports": {"data": [{"name": "foo", "dataRef": "foo"}]}}),
        )
        .await;
    let err = f.imports(&a, "b").await.unwrap_err();
    assert!(err.is_import_not_found());
    assert_eq!(
        err.to_string(),
        format!(
            "import \"foo\" of Installation test11/a: DataObject test11/{} (key foo, context Inst.root) not found",
            data_object_name("Inst.root", "foo")
        )
    );
}

#[tokio::test]
async fn an_import_that_fails_its_schema_is_rejected() {
    let f = Fixture::start("test1").await;
    f.installation("root", None, json!({})).await;
    f.data_object("Inst.root", "root.a", json!(7)).await;
    let a = f
        .installation(
            "a",
            Some("root"),
            json!({"imports": {"data": [{"name": "a.b", "dataRef": "root.a"}]}}),
        )
        .await;
    let err = f.imports(&a, "a").await.unwrap_err().to_string();
    assert!(
        err.starts_with("Installation test1/a: imports do not satisfy the blueprint: import imports[0] (a.b) at /: 7 is not of type \"string\""),
        "{err}"
    );
}

#[tokio::test]
async fn imports_from_a_manual_data_object_a_secret_and_a_config_map() {
    let f = Fixture::start("test5").await;
    f.data_object("", "my-import", json!("val-root-import"))
        .await;
    f.create::<Secret>(
        json!({"metadata": {"name": "my-secret"}, "stringData": {"config": "val-root-import"}}),
    )
    .await;
    f.create::<ConfigMap>(
        json!({"metadata": {"name": "my-cm"}, "data": {"config": "val-root-import"}}),
    )
    .await;
    for (name, import) in [
        ("from-do", json!({"name": "root.a", "dataRef": "my-import"})),
        (
            "from-secret",
            json!({"name": "root.a", "secretRef": {"name": "my-secret", "key": "config"}}),
        ),
        (
            "from-cm",
            json!({"name": "root.a", "configMapRef": {"name": "my-cm", "key": "config"}}),
        ),
    ] {
        let inst = f
            .installation(name, None, json!({"imports": {"data": [import]}}))
            .await;
        let imports = f.imports(&inst, "root").await.unwrap();
        assert_eq!(
            values(&imports),
            json!({"root.a": "val-root-import"}),
            "{name}"
        );
    }
    // Without a key, the whole map is imported, each value read as YAML.
    f.create::<ConfigMap>(json!({"metadata": {"name": "whole"}, "data": {"a": "1", "b": "x: z"}}))
        .await;
    let inst = f
        .installation(
            "whole",
            None,
            json!({"imports": {"data": [{"name": "root.a", "configMapRef": {"name": "whole"}}]}}),
        )
        .await;
    let (mut bp, fs) = blueprint("root");
    bp.imports[0].schema = Some(json!({"type": "object"}));
    let scope = f.scope(&inst).await;
    let imports = dataflow::read_imports(&f.client, &inst, &bp, &fs, &scope)
        .await
        .unwrap();
    assert_eq!(
        values(&imports),
        json!({"root.a": {"a": 1, "b": {"x": "z"}}})
    );
    let inst = f
        .installation("missing-key", None, json!({"imports": {"data": [{"name": "root.a", "secretRef": {"name": "my-secret", "key": "other"}}]}}))
        .await;
    let err = f.imports(&inst, "root").await.unwrap_err().to_string();
    assert_eq!(
        err,
        "import \"root.a\" of Installation test5/missing-key: Secret test5/my-secret has no key \"other\""
    );
}

#[tokio::test]
async fn target_imports_from_the_root_context_and_the_parent() {
    let f = Fixture::start("test4").await;
    f.target("", "ext.a", "val-e").await;
    f.target("Inst.root", "root.a", "val-e").await;
    let root = f
        .installation(
            "root",
            None,
            json!({"imports": {"targets": [{"name": "root.a", "target": "ext.a"}]}}),
        )
        .await;
    let child = f
        .installation(
            "f",
            Some("root"),
            json!({"imports": {"targets": [{"name": "f.a", "target": "root.a"}]}}),
        )
        .await;
    let (mut bp, fs) = blueprint("root");
    bp.imports = serde_json::from_value(json!([{"name": "root.a", "type": "target", "targetType": "landscaper.gardener.cloud/mock"}])).unwrap();
    let scope = dataflow::scope(&f.client, &root).await.unwrap();
    let imports = dataflow::read_imports(&f.client, &root, &bp, &fs, &scope)
        .await
        .unwrap();
    assert_eq!(
        imports.values["root.a"]["spec"],
        json!({"type": "landscaper.gardener.cloud/mock", "config": "val-e"})
    );
    let imports = f.imports(&child, "f").await.unwrap();
    assert_eq!(imports.values["f.a"]["spec"]["config"], "val-e");

    Api::<Target>::namespaced(f.client.clone(), "test4")
        .delete("ext.a", &DeleteParams::default())
        .await
        .unwrap();
    let err = dataflow::read_imports(&f.client, &root, &bp, &fs, &scope)
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "import \"root.a\" of Installation test4/root: Target test4/ext.a (key ext.a, root context) not found"
    );
}

#[tokio::test]
async fn a_target_list_from_target_names() {
    let f = Fixture::start("test9").await;
    f.target("", "ext.a1", "val-ext-a1").await;
    f.target("", "ext.a2", "val-ext-a2").await;
    f.target("", "root.y", "val-sib-a").await;
    let root = f
        .installation("root", None, json!({"imports": {"targets": [{"name": "root.a", "targets": ["ext.a1", "ext.a2", "root.y"]}]}}))
        .await;
    let (mut bp, fs) = blueprint("root");
    bp.imports = serde_json::from_value(json!([{"name": "root.a", "type": "targetList", "targetType": "landscaper.gardener.cloud/mock"}])).unwrap();
    let scope = dataflow::scope(&f.client, &root).await.unwrap();
    let imports = dataflow::read_imports(&f.client, &root, &bp, &fs, &scope)
        .await
        .unwrap();
    let configs: Vec<&Json> = imports.values["root.a"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| &t["spec"]["config"])
        .collect();
    assert_eq!(
        configs,
        [
            &json!("val-ext-a1"),
            &json!("val-ext-a2"),
            &json!("val-sib-a")
        ]
    );
}

#[tokio::test]
async fn a_missing_schema_is_an_error_and_optional_imports_get_their_default() {
    let f = Fixture::start("test12").await;
    f.data_object("", "ext.a", json!("x")).await;
    let root = f
        .installation(
            "root",
            None,
            json!({"imports": {"data": [{"name": "a.b", "dataRef": "ext.a"}]}}),
        )
        .await;
    let err = f.imports(&root, "j").await.unwrap_err().to_string();
    assert!(err.contains("the blueprint defines no schema"), "{err}");
    let plain = f.installation("defaulted", None, json!({})).await;
    let imports = f.imports(&plain, "root-5").await.unwrap();
    assert_eq!(values(&imports), json!({"defaulted": {"foo": "bar"}}));
}

#[tokio::test]
async fn import_data_mappings_evaluate_spiff_over_the_imports() {
    let f = Fixture::start("mappings").await;
    f.data_object("", "ext.a", json!({"host": "h", "port": 80}))
        .await;
    let inst = f
        .installation(
            "root",
            None,
            json!({
                "imports": {"data": [{"name": "cfg", "dataRef": "ext.a"}]},
                "importDataMappings": {"root.a": "(( cfg.host \":\" cfg.port ))", "plain": "1"}
            }),
        )
        .await;
    let (mut bp, fs) = blueprint("root");
    bp.imports = serde_json::from_value(json!([
        {"name": "root.a", "type": "data", "schema": {"type": "string"}},
        {"name": "plain", "type": "data", "schema": {"type": "string"}}
    ]))
    .unwrap();
    let scope = dataflow::scope(&f.client, &inst).await.unwrap();
    let imports = dataflow::read_imports(&f.client, &inst, &bp, &fs, &scope)
        .await
        .unwrap();
    assert_eq!(values(&imports), json!({"root.a": "h:80", "plain": "1"}));
}

#[tokio::test]
async fn conditional_imports_follow_their_optional_parent_import() {
    let f = Fixture::start("test8").await;
    f.create::<ConfigMap>(
        json!({"metadata": {"name": "inst-import"}, "data": {"foo": "val-foo", "bar": "val-bar"}}),
    )
    .await;
    let none = f.installation("none", None, json!({})).await;
    assert_eq!(
        values(&f.imports(&none, "root-cond").await.unwrap()),
        json!({})
    );
    let both = f
        .installation(
            "both",
            None,
            json!({"imports": {"data": [
                {"name": "rootcond.foo", "configMapRef": {"name": "inst-import", "key": "foo"}},
                {"name": "rootcond.bar", "configMapRef": {"name": "inst-import", "key": "bar"}}
            ]}}),
        )
        .await;
    assert_eq!(
        values(&f.imports(&both, "root-cond").await.unwrap()),
        json!({"rootcond.foo": "val-foo", "rootcond.bar": "val-bar"})
    );
    let only_foo = f
        .installation(
            "only-foo",
            None,
            json!({"imports": {"data": [{"name": "rootcond.foo", "configMapRef": {"name": "inst-import", "key": "foo"}}]}}),
        )
        .await;
    let err = f.imports(&only_foo, "root-cond").await.unwrap_err();
    assert!(err.is_import_not_found());
    assert_eq!(
        err.to_string(),
        "Installation test8/only-foo: blueprint defines import \"rootcond.bar\" of type data, which is not satisfied"
    );
}

#[tokio::test]
async fn import_executions_extend_and_validate_the_imports() {
    let f = Fixture::start("test11").await;
    let inst = f.installation("root", None, json!({})).await;
    let (bp, fs) = blueprint("h");
    let options = |imports: Json| landscaper_blueprint::ExecutionOptions {
        blueprint: bp.clone(),
        filesystem: std::sync::Arc::new(fs.clone()),
        imports: imports.as_object().cloned().unwrap(),
        ..Default::default()
    };
    let scope = f.scope(&inst).await;
    let input = |file: &str| {
        let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../shared/conformance/landscaper/templates/input")
            .join(file);
        let text = std::fs::read_to_string(path).unwrap();
        landscaper_blueprint::values::parse_yaml(&text).unwrap()
    };
    let ok = input("imports-test11-ok.yaml");
    let bad = input("imports-test11-error.yaml");
    assert!(dataflow::import_executions(&scope, &options(ok["importsBefore"].clone())).is_ok());
    let err = dataflow::import_executions(&scope, &options(bad["importsBefore"].clone()))
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "Installation test11/root: import validation failed: invalid test data:other"
    );
}

#[tokio::test]
async fn a_parent_writes_its_imports_for_its_subinstallations() {
    let f = Fixture::start("written").await;
    f.data_object("", "ext.a", json!("val-root-import")).await;
    f.target("", "ext.t", "val-t").await;
    f.installation(
        "root",
        None,
        json!({"imports": {
            "data": [{"name": "root.a", "dataRef": "ext.a"}],
            "targets": [{"name": "root.t", "target": "ext.t"}, {"name": "root.l", "targets": ["ext.t"]}]
        }}),
    )
    .await;
    f.status::<Installation>("root", json!({"jobID": "job-1"}))
        .await;
    let root = f.get_installation("root").await;
    let (mut bp, fs) = blueprint("root");
    bp.imports = serde_json::from_value(json!([
        {"name": "root.a", "type": "data", "schema": {"type": "string"}},
        {"name": "root.t", "type": "target", "targetType": "landscaper.gardener.cloud/mock"},
        {"name": "root.l", "type": "targetList", "targetType": "landscaper.gardener.cloud/mock"},
        {"name": "root.opt", "type": "data", "schema": {}, "required": false}
    ]))
    .unwrap();
    let scope = f.scope(&root).await;
    let imports = dataflow::read_imports(&f.client, &root, &bp, &fs, &scope)
        .await
        .unwrap();
    dataflow::write_imports(&f.client, &root, &bp, &imports.values, &scope)
        .await
        .unwrap();
    // Writing the same imports again changes nothing.
    let objects: Api<landscaper_api::core::DataObject> =
        Api::namespaced(f.client.clone(), "written");
    let name = data_object_name("Inst.root", "root.a");
    let before = objects.get(&name).await.unwrap();
    dataflow::write_imports(&f.client, &root, &bp, &imports.values, &scope)
        .await
        .unwrap();
    let after = objects.get(&name).await.unwrap();
    assert_eq!(
        before.metadata.resource_version,
        after.metadata.resource_version
    );
    let labels = after.metadata.labels.unwrap();
    assert_eq!(
        labels["data.landscaper.gardener.cloud/context"],
        "Inst.root"
    );
    assert_eq!(
        labels["data.landscaper.gardener.cloud/sourceType"],
        "import"
    );
    assert_eq!(labels["data.landscaper.gardener.cloud/source"], "Inst.root");
    assert_eq!(labels["data.landscaper.gardener.cloud/jobid"], "job-1");

    // A subinstallation imports them by the parent's import names, the list by reference.
    f
        .installation(
            "child",
            Some("root"),
            json!({"imports": {
                "data": [{"name": "c.a", "dataRef": "root.a"}],
                "targets": [{"name": "c.t", "target": "root.t"}, {"name": "c.l", "targetListRef": "root.l"}]
            }}),
        )
        .await;
    f.status::<Installation>("child", json!({"jobID": "job-1"}))
        .await;
    let child = f.get_installation("child").await;
    let mut child_bp = bp.clone();
    child_bp.imports = serde_json::from_value(json!([
        {"name": "c.a", "type": "data", "schema": {"type": "string"}},
        {"name": "c.t", "type": "target", "targetType": "landscaper.gardener.cloud/mock"},
        {"name": "c.l", "type": "targetList", "targetType": "landscaper.gardener.cloud/mock"}
    ]))
    .unwrap();
    let child_scope = f.scope(&child).await;
    let imports = dataflow::read_imports(&f.client, &child, &child_bp, &fs, &child_scope)
        .await
        .unwrap();
    assert_eq!(imports.values["c.a"], "val-root-import");
    assert_eq!(imports.values["c.t"]["spec"]["config"], "val-t");
    let list = imports.values["c.l"].as_array().unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["spec"]["config"], "val-t");
    assert_eq!(
        list[0]["metadata"]["labels"]["data.landscaper.gardener.cloud/index"],
        "0"
    );
}
