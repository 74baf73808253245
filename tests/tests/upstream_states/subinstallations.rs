//! `installations/subinstallations/testdata/state` (envtest loader; the files name their
//! namespaces), as upstream's `subinstallations/subinstallations_test.go` uses it. Upstream
//! calls `Ensure` on the root; ours makes the subinstallations in the root's `Init`, so each
//! test starts a job on the root with our Installation controller running and looks at the
//! subinstallations once `Init` is done. The roots' blueprints import `b`, which the Go test
//! hands to `Ensure`; here a DataObject gives it.

use kube::ResourceExt;
use kube::api::{Api, ListParams, PostParams};
use landscaper_api::constants::annotations;
use landscaper_api::core::{DataObject, Installation};
use landscaper_e2e::eventually;
use landscaper_e2e::states::{Loader, cluster_with_crds, load, loaded};
use serde_json::json;
use testbed::Testbed;

use crate::support::{installation_controller, local_repository, patch, registry};

const STATE: &str = "installations/subinstallations/testdata/state";
const REGISTRY: &str = "installations/subinstallations/testdata/registry";
const SUBINSTALLATION_NAME: &str = "landscaper.gardener.cloud/subinstallation-name";

/// Loads `test` (namespace `test`), runs a job on its root and gives the root's
/// subinstallations once its `Init` created them.
async fn ensure(test: &str) -> (Testbed, Api<Installation>, Vec<Installation>) {
    let (bed, client, _) = loaded(format!("{STATE}/{test}"), Loader::EnvTest).await;
    let installations: Api<Installation> = Api::namespaced(client.clone(), test);
    let objects: Api<DataObject> = Api::namespaced(client.clone(), test);
    let import: DataObject =
        serde_json::from_value(json!({"metadata": {"name": "b"}, "data": "val-b"})).unwrap();
    objects
        .create(&PostParams::default(), &import)
        .await
        .expect("the import is created");
    let root = installations.get("root").await.expect("the root");
    let blueprint = root
        .spec
        .blueprint
        .reference
        .as_ref()
        .map(|r| r.resource_name.clone())
        .unwrap_or_default();
    let imports = (blueprint != "root-5").then(|| json!({"data": [{"name": "b", "dataRef": "b"}]}));
    let children = run_root(&client, &installations, "root", REGISTRY, imports).await;
    (bed, installations, children)
}

/// Starts a job on `root` (its blueprint from the local registry `registry`, its
/// `spec.imports` set to `imports` when given) and gives its subinstallations once its `Init`
/// created them.
async fn run_root(
    client: &kube::Client,
    installations: &Api<Installation>,
    root: &str,
    registry_folder: &str,
    imports: Option<serde_json::Value>,
) -> Vec<Installation> {
    let test = installations
        .get(root)
        .await
        .unwrap()
        .metadata
        .namespace
        .unwrap();
    // The same registry root upstream's test gives as `LocalRegistryConfiguration.RootPath`.
    let mut spec = json!({"componentDescriptor": {"ref": {
        "repositoryContext": local_repository(&registry(registry_folder)),
    }}});
    if let Some(imports) = imports {
        spec["imports"] = imports;
    }
    patch(
        installations,
        root,
        json!({"metadata": {"annotations": {annotations::OPERATION: "reconcile"}}, "spec": spec}),
    )
    .await;
    let _controller = installation_controller(client);
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let status = installations.get(root).await.unwrap().status;
        let status = status.unwrap_or_default();
        // `Init` records the subinstallations it made; the job may be over by now (the
        // subinstallations lack their imports and fail), but not in `Init`.
        let init_failed = status
            .last_error
            .as_ref()
            .is_some_and(|error| error.operation == "Init");
        assert!(!init_failed, "{test}/{root} failed in Init: {status:?}");
        if status.job_id.is_some() && status.sub_inst_cache.is_some() {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{test}/{root} did not create its subobjects: {status:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    children_of(installations, root).await
}

/// The root's subinstallations that are not being deleted.
async fn children(installations: &Api<Installation>) -> Vec<Installation> {
    children_of(installations, "root").await
}

/// The subinstallations of `parent` that are not being deleted.
async fn children_of(installations: &Api<Installation>, parent: &str) -> Vec<Installation> {
    installations
        .list(&ListParams::default().labels(&format!(
            "landscaper.gardener.cloud/encompassed-by={parent}"
        )))
        .await
        .expect("listed")
        .items
        .into_iter()
        .filter(|child| child.metadata.deletion_timestamp.is_none())
        .collect()
}

/// The template names of the subinstallations, sorted.
fn template_names(children: &[Installation]) -> Vec<String> {
    let mut names: Vec<String> = children
        .iter()
        .map(|child| {
            child
                .annotations()
                .get(SUBINSTALLATION_NAME)
                .cloned()
                .unwrap_or_default()
        })
        .collect();
    names.sort();
    names
}

/// The subinstallation of template `name`, checked as upstream checks it: by annotation,
/// name prefix and namespace.
fn subinstallation<'a>(
    children: &'a [Installation],
    name: &str,
    namespace: &str,
) -> &'a Installation {
    let child = children
        .iter()
        .find(|c| {
            c.annotations()
                .get(SUBINSTALLATION_NAME)
                .map(String::as_str)
                == Some(name)
        })
        .unwrap_or_else(|| panic!("no subinstallation {name}"));
    assert!(
        child.name_any().starts_with(&format!("{name}-")),
        "{}",
        child.name_any()
    );
    assert_eq!(child.namespace().as_deref(), Some(namespace));
    child
}

/// The spec upstream expects of `def-1`: the root's component, blueprint resource `def-1`,
/// the template's imports and exports. Our subinstallation keeps the parent's context as the
/// parent has it (unset, which means `default`), where upstream writes `default`; and it keeps
/// the parent's component reference as it is, where upstream writes the component's own
/// repository context.
fn assert_def_1(child: &Installation) {
    let spec = serde_json::to_value(&child.spec).unwrap();
    assert_eq!(spec["blueprint"]["ref"]["resourceName"], "def-1");
    assert_eq!(
        spec["componentDescriptor"]["ref"]["componentName"],
        "example.com/root"
    );
    assert_eq!(spec["componentDescriptor"]["ref"]["version"], "1.0.0");
    assert_eq!(
        spec["imports"]["data"],
        json!([{"name": "a", "dataRef": "b"}])
    );
    assert_eq!(
        spec["exports"]["data"],
        json!([{"name": "c", "dataRef": "d"}])
    );
    assert_eq!(
        landscaper_blueprint::source::context_name(&child.spec),
        "default"
    );
}

/// "should not create any installations if no subinstallation definitions are defined".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test1_no_definitions_no_subinstallations() {
    let (_bed, _installations, children) = ensure("test1").await;
    assert!(children.is_empty(), "{:?}", template_names(&children));
}

/// "should create one installation if a subinstallation is defined".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test2_one_static_subinstallation() {
    let (_bed, _installations, children) = ensure("test2").await;
    assert_eq!(template_names(&children), ["def-1"]);
    assert_def_1(subinstallation(&children, "def-1", "test2"));
}

/// "should create one installation if a subinstallationExecution is defined".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test3_one_subinstallation_from_an_execution() {
    let (_bed, _installations, children) = ensure("test3").await;
    assert_eq!(template_names(&children), ["def-1"]);
    assert_def_1(subinstallation(&children, "def-1", "test3"));
}

/// "should create multiple installations for all definition references".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test4_one_subinstallation_per_definition() {
    let (_bed, _installations, children) = ensure("test4").await;
    assert_eq!(template_names(&children), ["def-1", "def-2"]);
    assert_def_1(subinstallation(&children, "def-1", "test4"));
    let def_2 = subinstallation(&children, "def-2", "test4");
    let spec = serde_json::to_value(&def_2.spec).unwrap();
    assert_eq!(spec["blueprint"]["ref"]["resourceName"], "def-2");
}

/// "should create multiple installations for all templates defined by default
/// subinstallations and executions".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test5_static_and_templated_subinstallations() {
    let (_bed, _installations, children) = ensure("test5").await;
    assert_eq!(template_names(&children), ["def-1", "def-2"]);
    assert_def_1(subinstallation(&children, "def-1", "test5"));
}

/// "should set a installation reference even if nothing has changed to trigger a reconcile":
/// the existing def-1 is kept and updated, not created a second time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test6_an_existing_subinstallation_is_kept() {
    let (_bed, installations, children) = ensure("test6").await;
    assert_eq!(template_names(&children), ["def-1"]);
    assert_eq!(children[0].name_any(), "def-1");
    let root = installations.get("root").await.unwrap();
    let active = root.status.unwrap().sub_inst_cache.unwrap().active_subs;
    assert_eq!(active.len(), 1);
    assert_eq!(active[0].object_name.as_deref(), Some("def-1"));
}

/// "should update a reference even if nothing has changed to trigger a reconcile": the
/// legacy `installationRefs` naming `invalid` is pruned by the API server and read by nobody.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test7_a_stale_reference_changes_nothing() {
    let (_bed, _installations, children) = ensure("test7").await;
    assert_eq!(template_names(&children), ["def-1"]);
    assert_eq!(children[0].name_any(), "def-1");
}

/// "should reinstall a subinstallation that does not exist anymore".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test8_a_missing_subinstallation_is_created_again() {
    let (_bed, _installations, children) = ensure("test8").await;
    assert_eq!(template_names(&children), ["def-1"]);
    assert_def_1(subinstallation(&children, "def-1", "test8"));
}

/// Cleanup: "should remove a subinstallation that is not referenced anymore".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test10_an_unreferenced_subinstallation_is_removed() {
    let (_bed, installations, _children) = ensure("test10").await;
    eventually("def-1 is gone", || async {
        children(&installations).await.is_empty()
    })
    .await;
}

/// "should inherit context definition".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test12_the_subinstallation_inherits_the_context() {
    let (_bed, _installations, children) = ensure("test12").await;
    let def_1 = subinstallation(&children, "def-1", "test12");
    assert_eq!(def_1.spec.context.as_deref(), Some("custom"));
}

/// "should install subinstallation that references blueprint in a component reference": def-1
/// gets the referenced component `example.com/external` and its resource `def-1`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test11_a_blueprint_from_a_component_reference() {
    let (_bed, _installations, children) = ensure("test11").await;
    let def_1 = subinstallation(&children, "def-1", "test11");
    let spec = serde_json::to_value(&def_1.spec).unwrap();
    assert_eq!(spec["blueprint"]["ref"]["resourceName"], "def-1");
    assert_eq!(
        spec["componentDescriptor"]["ref"]["componentName"],
        "example.com/external"
    );
    assert_eq!(spec["componentDescriptor"]["ref"]["version"], "1.0.0");
}

/// `imports/conditional_imports_test.go` on `installations/imports/testdata/state/test8`: the
/// template names of `subinst-import`'s imports once the root ran with `imports`.
async fn conditional_imports(imports: Option<serde_json::Value>) -> Vec<String> {
    let bed = cluster_with_crds().await;
    let client = bed.cluster().client();
    let folder = "installations/imports/testdata/state/test8";
    load(&client, folder, Loader::FakeClient).await;
    let installations: Api<Installation> = Api::namespaced(client.clone(), "test8");
    let registry = "installations/testdata/registry";
    let children = run_root(
        &client,
        &installations,
        "conditional-import-inst",
        registry,
        imports,
    )
    .await;
    let child = subinstallation(&children, "subinst-import", "test8");
    let data = child
        .spec
        .imports
        .clone()
        .and_then(|i| i.data)
        .unwrap_or_default();
    let mut names: Vec<String> = data.into_iter().map(|i| i.name).collect();
    names.sort();
    drop(bed);
    names
}

/// "should remove imports based on optional/conditional parent imports from subinstallation".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn imports_test8_unset_optional_imports_are_removed_from_subinstallations() {
    assert_eq!(conditional_imports(None).await, ["internalBaz"]);
}

/// "should not remove imports based on optional/conditional parent imports from
/// subinstallation which are satisfied".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn imports_test8_set_optional_imports_are_kept_in_subinstallations() {
    let from_config_map = |key: &str| json!({"name": format!("rootcond.{key}"), "configMapRef": {"name": "inst-import", "key": key}});
    let imports = json!({"data": [from_config_map("foo"), from_config_map("bar")]});
    assert_eq!(
        conditional_imports(Some(imports)).await,
        ["internalBar", "internalBaz", "internalFoo"]
    );
}
