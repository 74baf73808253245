//! `installations/imports/testdata/state` (fake-client loader: the whole tree, one namespace per
//! folder), as upstream's `imports/constructor_test.go`, `conditional_imports_test.go`,
//! `importexec_test.go` and `reconcilehelper/validation_test.go` read it (what the conditional
//! imports leave of subinstallation templates is in `subinstallations.rs`); the blueprints come
//! from the shared registry `installations/testdata/registry`.

use kube::api::{Api, DeleteParams};
use landscaper::dataflow::{self, DataflowError, Imports};
use landscaper_api::core::{DataObject, Target, data_object_name};
use landscaper_e2e::states::{Loader, loaded};
use serde_json::{Value as Json, json};

use crate::support::{construct_imports, installation, options, patch, prepare, registry};

const STATE: &str = "installations/imports/testdata/state";
const REGISTRY: &str = "installations/testdata/registry";

async fn construct(
    client: &kube::Client,
    namespace: &str,
    name: &str,
) -> Result<Imports, DataflowError> {
    construct_imports(client, &registry(REGISTRY), namespace, name).await
}

fn values(imports: &Imports) -> Json {
    Json::Object(imports.values.clone())
}

/// "should forbid when the import of a component does not satisfy the schema", and the
/// `ImportsSatisfied` cases of test1: imports from the parent and from siblings are satisfied.
#[tokio::test]
async fn test1_an_import_that_fails_its_schema_is_forbidden_and_sibling_imports_are_satisfied() {
    let (_bed, client, _state) = loaded(STATE, Loader::FakeClient).await;
    assert_eq!(
        values(&construct(&client, "test1", "a").await.unwrap()),
        json!({"a.b": "val-root-import"})
    );
    assert_eq!(
        values(&construct(&client, "test1", "b").await.unwrap()),
        json!({"b.a": "val-a"})
    );
    assert_eq!(
        values(&construct(&client, "test1", "c").await.unwrap()),
        json!({"c.a": "val-a", "c.b": "val-b"})
    );
    let objects: Api<DataObject> = Api::namespaced(client.clone(), "test1");
    patch(
        &objects,
        &data_object_name("Inst.root", "root.a"),
        json!({"data": 7}),
    )
    .await;
    let error = construct(&client, "test1", "a").await.unwrap_err();
    assert!(matches!(error, DataflowError::InvalidImport(_)), "{error}");
    assert!(
        error
            .to_string()
            .contains("import imports[0] (a.b) at /: 7 is not of type \"string\""),
        "{error}"
    );
}

/// "should construct the imported config from a sibling"; "… and the indirect parent import".
#[tokio::test]
async fn test2_imports_from_a_sibling_and_the_parent() {
    let (_bed, client, _state) = loaded(STATE, Loader::FakeClient).await;
    assert_eq!(
        values(&construct(&client, "test2", "b").await.unwrap()),
        json!({"b.a": "val-a"})
    );
    assert_eq!(
        values(&construct(&client, "test2", "c").await.unwrap()),
        json!({"c.a": "val-a", "c.b": "val-root-import"})
    );
}

/// "should construct import from a manually added target"; "… from a parent import"; and the
/// validation: a missing Target fails the import.
#[tokio::test]
async fn test4_target_imports_from_a_manual_target_and_the_parent() {
    let (_bed, client, _state) = loaded(STATE, Loader::FakeClient).await;
    let expected = json!({"type": "landscaper.gardener.cloud/mock", "config": "val-e"});
    let root = construct(&client, "test4", "root").await.unwrap();
    assert_eq!(root.values["root.a"]["spec"], expected);
    let f = construct(&client, "test4", "f").await.unwrap();
    assert_eq!(f.values["f.a"]["spec"], expected);
    Api::<Target>::namespaced(client.clone(), "test4")
        .delete(&data_object_name("", "ext.a"), &DeleteParams::default())
        .await
        .expect("the Target is deleted");
    let error = construct(&client, "test4", "root").await.unwrap_err();
    assert!(error.is_import_not_found(), "{error}");
    assert!(error.to_string().contains("Target test4/"), "{error}");
}

/// "should construct the imported config from a manual created data object".
#[tokio::test]
async fn test5_an_import_from_a_manually_created_data_object() {
    let (_bed, client, _state) = loaded(STATE, Loader::FakeClient).await;
    assert_eq!(
        values(&construct(&client, "test5", "root").await.unwrap()),
        json!({"root.a": "val-root-import"})
    );
}

/// "should construct the imported config from a secret" (the ref's `namespace` is not in the
/// CRD: the API server drops it, and the Secret is read in the installation's namespace).
#[tokio::test]
async fn test6_an_import_from_a_secret() {
    let (_bed, client, _state) = loaded(STATE, Loader::FakeClient).await;
    assert_eq!(
        values(&construct(&client, "test6", "root").await.unwrap()),
        json!({"root.a": "val-root-import"})
    );
}

/// "should construct the imported config from a configmap".
#[tokio::test]
async fn test7_an_import_from_a_config_map() {
    let (_bed, client, _state) = loaded(STATE, Loader::FakeClient).await;
    assert_eq!(
        values(&construct(&client, "test7", "root").await.unwrap()),
        json!({"root.a": "val-root-import"})
    );
}

/// conditional imports: "should not succeed if a conditional import is not fulfilled while its
/// condition is fulfilled"; with neither or both set, the imports are read. (What the
/// subinstallation templates keep is in `subinstallations.rs`.)
#[tokio::test]
async fn test8_a_conditional_import_is_required_once_its_condition_is_set() {
    let (_bed, client, _state) = loaded(STATE, Loader::FakeClient).await;
    let name = "conditional-import-inst";
    assert_eq!(
        values(&construct(&client, "test8", name).await.unwrap()),
        json!({})
    );
    let installations: Api<landscaper_api::core::Installation> =
        Api::namespaced(client.clone(), "test8");
    let from_config_map = |key: &str| json!({"name": format!("rootcond.{key}"), "configMapRef": {"name": "inst-import", "key": key}});
    patch(
        &installations,
        name,
        json!({"spec": {"imports": {"data": [from_config_map("foo"), from_config_map("bar")]}}}),
    )
    .await;
    assert_eq!(
        values(&construct(&client, "test8", name).await.unwrap()),
        json!({"rootcond.foo": "fooValue", "rootcond.bar": "barValue"})
    );
    patch(
        &installations,
        name,
        json!({"spec": {"imports": {"data": [from_config_map("foo")]}}}),
    )
    .await;
    let error = construct(&client, "test8", name).await.unwrap_err();
    assert!(error.is_import_not_found(), "{error}");
    assert!(error.to_string().contains("rootcond.bar"), "{error}");
}

/// "should construct a targetlist import from target names": `root.y` is a sibling's export.
#[tokio::test]
async fn test9_a_target_list_from_target_names() {
    let (_bed, client, _state) = loaded(STATE, Loader::FakeClient).await;
    let imports = construct(&client, "test9", "root").await.unwrap();
    let configs: Vec<&Json> = imports.values["root.a"]
        .as_array()
        .expect("a list of Targets")
        .iter()
        .map(|target| &target["spec"]["config"])
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

/// The imports of `test11/<name>` after its blueprint's import executions (upstream's
/// `Constructor.RenderImportExecutions`).
async fn import_executions(
    client: &kube::Client,
    name: &str,
) -> Result<serde_json::Map<String, Json>, DataflowError> {
    let installation = installation(client, "test11", name).await;
    let (scope, resolved) = prepare(client, &installation, &registry(REGISTRY)).await;
    let imports = construct(client, "test11", name).await?;
    let mut options = options(&installation, &resolved);
    options.imports = imports.values;
    dataflow::import_executions(&scope, &options)
}

/// importexec: "should extend imports by import executions".
#[tokio::test]
async fn test11_import_executions_extend_the_imports() {
    let (_bed, client, _state) = loaded(STATE, Loader::FakeClient).await;
    let imports = import_executions(&client, "root").await.unwrap();
    assert_eq!(imports["processed"], "mytestvalue(extended)");
}

/// importexec: "should extend imports incrementally by import executions": the second sees
/// the first one's binding.
#[tokio::test]
async fn test11_import_executions_extend_the_imports_incrementally() {
    let (_bed, client, _state) = loaded(STATE, Loader::FakeClient).await;
    let imports = import_executions(&client, "multi").await.unwrap();
    assert_eq!(imports["processed"], "mytestvalue(extended)");
    assert_eq!(imports["further"], "mytestvalue(extended)(further)");
}

/// importexec: "should validate imports by import executions"; "should reject wrong imports
/// by import executions".
#[tokio::test]
async fn test11_import_executions_validate_the_imports() {
    let (_bed, client, _state) = loaded(STATE, Loader::FakeClient).await;
    import_executions(&client, "ok").await.unwrap();
    let error = import_executions(&client, "error").await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "Installation test11/error: import validation failed: invalid test data:other"
    );
}

/// validation: "should fail if neither the parent nor a sibling provide the import".
#[tokio::test]
async fn test11_an_import_nobody_exports_is_not_satisfied() {
    let (_bed, client, _state) = loaded(STATE, Loader::FakeClient).await;
    let error = construct(&client, "test11", "a").await.unwrap_err();
    assert!(error.is_import_not_found(), "{error}");
    // `a` carries no encompassed-by label in this state: it is a root, reading `foo` in the
    // root context.
    assert_eq!(
        error.to_string(),
        "import \"a.b\" of Installation test11/a: DataObject test11/foo (key foo, root context) not found"
    );
}

/// "should handle missing schema definition in import gracefully": an error, no panic.
#[tokio::test]
async fn test12_an_import_without_a_schema_is_an_error() {
    let (_bed, client, _state) = loaded(STATE, Loader::FakeClient).await;
    let error = construct(&client, "test12", "j").await.unwrap_err();
    assert!(
        error
            .to_string()
            .contains("the blueprint defines no schema"),
        "{error}"
    );
}

/// "should use defaults defined in blueprint for missing optional imports".
#[tokio::test]
async fn test13_an_optional_import_gets_its_default() {
    let (_bed, client, _state) = loaded(STATE, Loader::FakeClient).await;
    let imports = construct(&client, "test13", "root").await.unwrap();
    assert_eq!(imports.values["defaulted"], json!({"foo": "bar"}));
}
