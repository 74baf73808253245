//! Upstream's installation simulator case (`simulator/01-subinstallations` of
//! `../shared/conformance/landscaper/templates/cases.yaml`, Go test
//! `pkg/utils/landscaper/installation_simulator_test.go`) run through the real controllers on the
//! testbed: we have no offline simulator, the installation, execution and deploy-item
//! controllers are the simulator. The case's component descriptors and blueprints are served
//! from a `type: local` repository (a copy of the case's registry folder); the root
//! Installation gets the input's imports as a DataObject per data import and the Target
//! `cluster`; the test plays the deployer of the `landscaper.gardener.cloud/mock` items, as the
//! simulator's `exportTemplates.deployItemExports` do; then every assertion of the expect file
//! is checked against the cluster, each by a line of [`ASSERTIONS`] that names what it reads.
//!
//! Where the simulator and the controllers differ (upstream's controllers differ the same way),
//! the copy of the registry is changed, each change listed in [`REGISTRY_CHANGES`] with why.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, ListParams, Patch, PatchParams};
use kube::{Client, ResourceExt};
use landscaper::controllers::execution::NAME_LABEL;
use landscaper::controllers::installation::SUBINSTALLATION_NAME;
use landscaper::dataflow::names::{
    DATA_SOURCE, DATA_SOURCE_TYPE, EXPORT_SOURCE_TYPE, IMPORT_SOURCE_TYPE,
};
use landscaper_api::constants::{annotations, labels};
use landscaper_api::core::{
    DataObject, DeployItem, Execution, Installation, InstallationPhase, Target,
};
use landscaper_blueprint::{ExecutionOptions, RegistryAccess, RegistryOptions, source};
use landscaper_e2e::objects::create;
use landscaper_e2e::{World, eventually_within};
use serde_json::{Map, Value as Json, json};

const NAMESPACE: &str = "simulator";
const MOCK: &str = "landscaper.gardener.cloud/mock";

fn case_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/conformance/landscaper/templates");
    dir.join("cases.yaml").exists().then_some(dir)
}

fn read_yaml(path: &Path) -> Json {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Changes to the copy of the case's registry: `(file, text found, replacement, why)`.
const REGISTRY_CHANGES: &[(&str, &str, &str, &str)] = &[
    (
        "blobs/root-blueprint/blueprint.yaml",
        "          dataRef: subinst-a-export-b\n\n    exportDataMappings:",
        "          dataRef: subinst-a-export-b\n        - name: export-subinst-a\n          dataRef: export-subinst-a\n\n    exportDataMappings:",
        "the simulator publishes every exportDataMappings key as a DataObject of the parent \
         (installation_simulator.go: handleDataMappings into the installation's DataObjects); \
         upstream's controllers, and ours, write only what spec.exports lists, so subinst-a \
         lists `export-subinst-a`, which the root's export execution reads",
    ),
    (
        "blobs/c-blueprint/blueprint.yaml",
        "exports:\n  - name: subinst-c-export",
        "exportExecutions:\n  - name: simulated\n    type: GoTemplate\n    template: |\n      exports:\n        subinst-c-export: subinst-c\n\nexports:\n  - name: subinst-c-export",
        "subinst-c has neither executions nor subinstallations: in the simulator its export \
         comes from `exportTemplates.installationExports` (`{{ .installation.metadata.name }}`, \
         which renders `subinst-c` there); a controller has nothing that exports it, so the copy \
         gets an export execution exporting that rendered value (export executions see no \
         `.installation`, upstream's neither, and the object's name is generated)",
    ),
];

/// The simulator's `exportTemplates.deployItemExports`, as the test's deployer applies them:
/// `(installation template, item name, export of the item name, export of the component name)`.
const DEPLOY_ITEM_EXPORTS: &[(&str, &str, &str, &str)] = &[
    (
        "subinst-a",
        "subinst-a-deploy",
        "subinst-a-export-a",
        "subinst-a-export-b",
    ),
    (
        "subinst-b",
        "subinst-b-deploy",
        "subinst-b-export-a",
        "subinst-b-export-b",
    ),
];

/// Every assertion of the expect file, with what the test reads for it.
const ASSERTIONS: &[(&str, &str)] = &[
    (
        "/exports/dataObjects",
        "the DataObjects the root exported (source Inst.root, sourceType export) into the root context",
    ),
    (
        "/exports/dataObjects/export-root-a",
        "the data of the root's export DataObject export-root-a",
    ),
    (
        "/exports/dataObjects/export-root-b",
        "the data of the root's export DataObject export-root-b",
    ),
    (
        "/exports/dataObjects/export-root-c",
        "the data of the root's export DataObject export-root-c",
    ),
    (
        "/exports/targets",
        "the Targets the root exported into the root context",
    ),
    (
        "/exports/targets/export-root-target/spec/type",
        "spec.type of the root's export Target",
    ),
    (
        "/exports/targets/export-root-target/spec/config",
        "spec.config of the root's export Target",
    ),
    (
        "/callbacks/installations",
        "the Installations of the namespace, keyed root/<subinstallation-name annotation>",
    ),
    (
        "/callbacks/installations/root~1subinst-a/metadata/name",
        "the generated name is <template>-<suffix>: the template name is the subinstallation-name annotation, which the key already is; the test checks the name starts with it",
    ),
    (
        "/callbacks/installations/root~1subinst-b/metadata/name",
        "as for subinst-a",
    ),
    (
        "/callbacks/installations/root~1subinst-c/metadata/name",
        "as for subinst-a",
    ),
    (
        "/callbacks/deployItems",
        "the DeployItems of the namespace, keyed <installation path>/<execution.landscaper.gardener.cloud/name label> through their Execution's installation",
    ),
    (
        "/callbacks/deployItems/root~1subinst-a~1subinst-a-deploy/metadata/name",
        "the item's name in its Execution (the name label; the object's name is generated)",
    ),
    (
        "/callbacks/deployItems/root~1subinst-b~1subinst-b-deploy/metadata/name",
        "as for subinst-a-deploy",
    ),
    (
        "/callbacks/imports",
        "each installation's imports as its controller computes them from the cluster (landscaper::dataflow::read_imports, then import_executions); cross-checked with the import DataObjects and Targets it wrote into its own context",
    ),
    (
        "/callbacks/imports/root/foo",
        "the root's imports after its Spiff import execution (written nowhere: `foo` is no import definition)",
    ),
    ("/callbacks/imports/root~1subinst-a", "subinst-a's imports"),
    ("/callbacks/imports/root~1subinst-b", "subinst-b's imports"),
    (
        "/callbacks/imports/root~1subinst-b/subinst-b-param-b",
        "subinst-b's import subinst-b-param-b (mapped from subinst-a's export)",
    ),
    (
        "/callbacks/imports/root~1subinst-c/clusters-a",
        "subinst-c's targetList import clusters-a",
    ),
    (
        "/callbacks/imports/root~1subinst-c/clusters-b",
        "subinst-c's targetList import clusters-b",
    ),
    (
        "/callbacks/exports",
        "per installation, the keys of the DataObjects and Targets it exported (source Inst.<name>, sourceType export; every dataRef here equals the export's name)",
    ),
    ("/callbacks/exports/root~1subinst-a", "subinst-a's exports"),
    ("/callbacks/exports/root~1subinst-b", "subinst-b's exports"),
    ("/callbacks/exports/root~1subinst-c", "subinst-c's exports"),
    (
        "/callbacks/deployItemsState",
        "per installation and deploy execution, the state Secret (landscaper_blueprint::state::secret_name(<installation>, deploy<execution>)), keyed by installation path when it exists",
    ),
    (
        "/callbacks/deployItemsState/root~1subinst-a",
        "subinst-a's state Secrets, keyed deploy<execution>",
    ),
    (
        "/callbacks/deployItemsState/root~1subinst-a/deploydeploy-execution",
        "the `config` key of that Secret",
    ),
];

/// Copies the case's registry folder to `to`, with [`REGISTRY_CHANGES`] applied.
fn copy_registry(from: &Path, to: &Path) {
    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            let target = to.join(entry.file_name());
            if entry.path().is_dir() {
                copy(&entry.path(), &target);
            } else {
                std::fs::copy(entry.path(), target).unwrap();
            }
        }
    }
    copy(from, to);
    for (file, found, replacement, why) in REGISTRY_CHANGES {
        let path = to.join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text.matches(found).count(),
            1,
            "{file}: the text the change ({why}) replaces occurs once"
        );
        std::fs::write(&path, text.replace(found, replacement)).unwrap();
    }
}

/// The installation path of `installation` (`root`, `root/<template name>`).
fn path_of(installation: &Installation) -> String {
    match installation.annotations().get(SUBINSTALLATION_NAME) {
        Some(template) => format!("root/{template}"),
        None => installation.name_any(),
    }
}

/// Plays the deployer of every mock item whose job is not finished: writes its export Secret as
/// the simulator's deploy item export template says and ends the job Succeeded.
async fn finish_items(client: &Client) {
    let items: Api<DeployItem> = Api::namespaced(client.clone(), NAMESPACE);
    let executions: Api<Execution> = Api::namespaced(client.clone(), NAMESPACE);
    let installations: Api<Installation> = Api::namespaced(client.clone(), NAMESPACE);
    let secrets: Api<Secret> = Api::namespaced(client.clone(), NAMESPACE);
    let Ok(list) = items.list(&ListParams::default()).await else {
        return;
    };
    for item in list.items {
        let Some(status) = item.status.as_ref() else {
            continue;
        };
        let Some(job) = status.job_id.clone() else {
            continue;
        };
        if status.job_id_finished.as_ref() == Some(&job) || item.spec.type_ != MOCK {
            continue;
        }
        let local_name = item.labels().get(NAME_LABEL).cloned().unwrap_or_default();
        let execution = item
            .owner_references()
            .iter()
            .find(|o| o.kind == "Execution")
            .map(|o| o.name.clone())
            .expect("a deploy item is owned by its Execution");
        let execution = executions.get(&execution).await.unwrap();
        let owner = execution
            .owner_references()
            .iter()
            .find(|o| o.kind == "Installation")
            .map(|o| o.name.clone())
            .expect("an Execution is owned by its Installation");
        let installation = installations.get(&owner).await.unwrap();
        let component = installation
            .spec
            .component_descriptor
            .as_ref()
            .and_then(|c| c.reference.as_ref())
            .map(|r| r.component_name.clone())
            .expect("the installation's component");
        let template = installation
            .annotations()
            .get(SUBINSTALLATION_NAME)
            .cloned()
            .unwrap_or_default();
        let (_, _, export_a, export_b) = DEPLOY_ITEM_EXPORTS
            .iter()
            .find(|(t, name, _, _)| *t == template && *name == local_name)
            .unwrap_or_else(|| panic!("an export template for {template}/{local_name}"));
        let exports = json!({ *export_a: local_name, *export_b: component });
        let secret_name = format!("{}-export", item.name_any());
        let secret: Secret = serde_json::from_value(json!({
            "metadata": {"name": secret_name},
            "data": {"config": ByteString(serde_json::to_vec(&exports).unwrap())},
        }))
        .unwrap();
        secrets
            .patch(
                &secret_name,
                &PatchParams::apply("simulator-test").force(),
                &Patch::Apply(&secret),
            )
            .await
            .unwrap();
        items
            .patch_status(
                &item.name_any(),
                &PatchParams::default(),
                &Patch::Merge(json!({"status": {
                    "phase": "Succeeded",
                    "jobIDFinished": job,
                    "exportRef": {"name": secret_name, "namespace": NAMESPACE},
                }})),
            )
            .await
            .unwrap();
    }
}

/// The keys (`data.landscaper.gardener.cloud/key`) of the DataObjects and Targets `source`
/// wrote as `source_type`, with each DataObject's data and each Target.
async fn written(client: &Client, source: &str, source_type: &str) -> Map<String, Json> {
    let selector = ListParams::default().labels(&format!(
        "{DATA_SOURCE}={source},{DATA_SOURCE_TYPE}={source_type}"
    ));
    let key = |labels: &BTreeMap<String, String>| labels[labels::DATA_KEY].clone();
    let mut out = Map::new();
    let objects: Api<DataObject> = Api::namespaced(client.clone(), NAMESPACE);
    for object in objects.list(&selector).await.unwrap().items {
        out.insert(key(object.labels()), object.data.clone());
    }
    let targets: Api<Target> = Api::namespaced(client.clone(), NAMESPACE);
    for target in targets.list(&selector).await.unwrap().items {
        let name = key(target.labels());
        let value = serde_json::to_value(&target).unwrap();
        if target.labels().contains_key(labels::DATA_INDEX) {
            let list = out.entry(name).or_insert_with(|| json!([]));
            list.as_array_mut().unwrap().push(value);
        } else {
            out.insert(name, value);
        }
    }
    out
}

/// The imports of `installation` as its controller computes them: read from the cluster, then
/// the blueprint's import executions.
async fn imports_of(client: &Client, installation: &Installation) -> Map<String, Json> {
    let resolved = source::resolve(
        &installation.spec,
        None,
        &RegistryAccess::new(RegistryOptions::default()),
    )
    .await
    .unwrap_or_else(|e| panic!("the blueprint of {} resolves: {e}", installation.name_any()));
    let scope = landscaper::dataflow::scope(client, installation)
        .await
        .expect("the scope is read");
    let read = landscaper::dataflow::read_imports(
        client,
        installation,
        &resolved.blueprint,
        &resolved.filesystem,
        &scope,
    )
    .await
    .unwrap_or_else(|e| panic!("the imports of {} are read: {e}", installation.name_any()));
    let options = ExecutionOptions {
        blueprint: resolved.blueprint.clone(),
        filesystem: Arc::new(resolved.filesystem.clone()),
        installation: serde_json::to_value(installation).ok(),
        component: resolved.component.clone(),
        imports: read.values,
        ..ExecutionOptions::default()
    };
    landscaper::dataflow::import_executions(&scope, &options).unwrap_or_else(|e| {
        panic!(
            "the import executions of {} run: {e}",
            installation.name_any()
        )
    })
}

fn pointer<'a>(value: &'a Json, path: &str) -> Option<&'a Json> {
    value.pointer(path)
}

fn check(result: &Json, assertion: &Json) -> Result<(), String> {
    let path = assertion["path"].as_str().unwrap();
    let found = pointer(result, path);
    let fail = |what: &str| Err(format!("{path}: {what}; found {found:?}"));
    let keys = |v: Option<&Json>| -> Vec<String> {
        v.and_then(Json::as_object)
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    };
    if let Some(expected) = assertion.get("equals") {
        if found != Some(expected) {
            return fail(&format!("expected {expected}"));
        }
    } else if let Some(n) = assertion.get("len") {
        let len = match found {
            Some(Json::Array(a)) => a.len(),
            Some(Json::Object(m)) => m.len(),
            _ => return fail("expected a list or map"),
        };
        if Some(len as u64) != n.as_u64() {
            return fail(&format!("expected length {n}"));
        }
    } else if let Some(list) = assertion.get("hasKeys") {
        let have = keys(found);
        for k in list.as_array().unwrap() {
            if !have.iter().any(|h| h == k) {
                return fail(&format!("expected key {k}"));
            }
        }
    } else if let Some(list) = assertion.get("lacksKeys") {
        let have = keys(found);
        for k in list.as_array().unwrap() {
            if have.iter().any(|h| h == k) {
                return fail(&format!("unexpected key {k}"));
            }
        }
    } else if assertion.get("notNull").is_some() {
        if matches!(found, None | Some(Json::Null)) {
            return fail("expected a value");
        }
    } else if let Some(s) = assertion.get("contains") {
        let s = s.as_str().unwrap();
        if !found.and_then(Json::as_str).is_some_and(|f| f.contains(s)) {
            return fail(&format!("expected a string containing {s:?}"));
        }
    } else {
        return Err(format!(
            "{path}: a check this test does not know: {assertion}"
        ));
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn simulator_01_subinstallations_runs_through_the_controllers() {
    let Some(dir) = case_dir() else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "the conformance data is required in CI"
        );
        eprintln!("conformance data not found: skipping");
        return;
    };
    let input = read_yaml(&dir.join("input/simulator-01-subinstallations.yaml"));
    let expect = read_yaml(&dir.join("expect/simulator-01-subinstallations.yaml"));
    let asserts = expect["assert"].as_array().unwrap();
    // Every assertion of the expect file has its line in the table, and no line is stale.
    let listed: Vec<&str> = ASSERTIONS.iter().map(|(p, _)| *p).collect();
    let mut in_file: Vec<&str> = asserts
        .iter()
        .map(|a| a["path"].as_str().unwrap())
        .collect();
    in_file.dedup();
    assert_eq!(
        listed, in_file,
        "ASSERTIONS maps each path of the expect file"
    );

    let world = World::start().await;
    let client = world.landscaper_namespace(NAMESPACE).await;
    let registry = world.dir.path().join("registry");
    copy_registry(&dir.join(input["registry"].as_str().unwrap()), &registry);

    // The input's imports: data as DataObjects, the Target `cluster` (also the one member of
    // the target list `clusters`).
    let imports = &input["imports"];
    let objects: Api<DataObject> = Api::namespaced(client.clone(), NAMESPACE);
    for name in ["root-param-a", "root-param-b"] {
        create(
            &objects,
            json!({"metadata": {"name": name}, "data": imports[name]}),
        )
        .await;
    }
    let cluster = &imports["cluster"];
    assert_eq!(
        imports["clusters"],
        json!([cluster]),
        "clusters is [cluster]"
    );
    let targets: Api<Target> = Api::namespaced(client.clone(), NAMESPACE);
    create(
        &targets,
        json!({"metadata": {"name": cluster["metadata"]["name"]}, "spec": cluster["spec"]}),
    )
    .await;
    let component = &input["componentVersion"];
    let installations: Api<Installation> = Api::namespaced(client.clone(), NAMESPACE);
    create(
        &installations,
        json!({
            "metadata": {"name": "root", "annotations": {annotations::OPERATION: "reconcile"}},
            "spec": {
                "componentDescriptor": {"ref": {
                    "repositoryContext": {"type": "local", "filePath": registry},
                    "componentName": component["componentName"],
                    "version": component["version"],
                }},
                "blueprint": {"ref": {"resourceName": "blueprint"}},
                "imports": {
                    "data": [
                        {"name": "root-param-a", "dataRef": "root-param-a"},
                        {"name": "root-param-b", "dataRef": "root-param-b"},
                    ],
                    "targets": [
                        {"name": "cluster", "target": "cluster"},
                        {"name": "clusters", "targets": ["cluster"]},
                    ],
                },
                "exports": {
                    "data": [
                        {"name": "export-root-a", "dataRef": "export-root-a"},
                        {"name": "export-root-b", "dataRef": "export-root-b"},
                        {"name": "export-root-c", "dataRef": "export-root-c"},
                    ],
                    "targets": [{"name": "export-root-target", "target": "export-root-target"}],
                },
            },
        }),
    )
    .await;

    // The test is the mock items' deployer until the root finished its job.
    let deployer_client = client.clone();
    let deployer = tokio::spawn(async move {
        loop {
            finish_items(&deployer_client).await;
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    });
    eventually_within(
        "the root installation finishes its job",
        std::time::Duration::from_secs(120),
        || async {
            installations.get("root").await.ok().is_some_and(|i| {
                i.status
                    .as_ref()
                    .is_some_and(|s| s.job_id.is_some() && s.job_id == s.job_id_finished)
            })
        },
    )
    .await;
    deployer.abort();
    let list = installations
        .list(&ListParams::default())
        .await
        .unwrap()
        .items;
    let not_succeeded: Vec<String> = list
        .iter()
        .filter_map(|installation| {
            let status = installation.status.clone().unwrap_or_default();
            (status.phase != Some(InstallationPhase::Succeeded)).then(|| {
                format!(
                    "{} ended {:?}: {:?}",
                    path_of(installation),
                    status.phase,
                    status.last_error.map(|e| e.message)
                )
            })
        })
        .collect();
    assert!(not_succeeded.is_empty(), "{not_succeeded:#?}");

    // The simulator's result, read from the cluster.
    let root_exports = written(&client, "Inst.root", EXPORT_SOURCE_TYPE).await;
    let mut data_exports = Map::new();
    let mut target_exports = Map::new();
    for (key, value) in root_exports {
        if value.get("spec").is_some() && value.get("kind").is_some() {
            target_exports.insert(key, value);
        } else {
            data_exports.insert(key, value);
        }
    }
    let mut by_path = Map::new();
    let mut imports_by_path = Map::new();
    let mut exports_by_path = Map::new();
    let mut state_by_path = Map::new();
    let secrets: Api<Secret> = Api::namespaced(client.clone(), NAMESPACE);
    for installation in &list {
        let path = path_of(installation);
        let mut view = serde_json::to_value(installation).unwrap();
        if let Some(template) = installation.annotations().get(SUBINSTALLATION_NAME) {
            let name = installation.name_any();
            assert!(
                name.starts_with(&format!("{template}-")),
                "{path}: the object name {name} is generated from the template name"
            );
            view["metadata"]["name"] = json!(template);
        }
        by_path.insert(path.clone(), view);

        let source = format!("Inst.{}", installation.name_any());
        let imports = imports_of(&client, installation).await;
        let written_imports = written(&client, &source, IMPORT_SOURCE_TYPE).await;
        for (key, value) in &written_imports {
            assert_eq!(
                imports.get(key).map(|v| v.is_array()),
                Some(value.is_array()),
                "{path}: the import {key} it wrote is one of its imports, of the same kind"
            );
        }
        imports_by_path.insert(path.clone(), Json::Object(imports));
        exports_by_path.insert(
            path.clone(),
            Json::Object(written(&client, &source, EXPORT_SOURCE_TYPE).await),
        );

        let resolved = source::resolve(
            &installation.spec,
            None,
            &RegistryAccess::new(RegistryOptions::default()),
        )
        .await
        .unwrap();
        let mut states = Map::new();
        for execution in &resolved.blueprint.deploy_executions {
            let key = format!("deploy{}", execution.name.as_deref().unwrap_or_default());
            let name = landscaper_blueprint::state::secret_name(&installation.name_any(), &key);
            if let Ok(secret) = secrets.get(&name).await {
                let data = secret.data.unwrap_or_default();
                let config = data.get("config").expect("a state Secret has `config`");
                states.insert(key, json!(String::from_utf8_lossy(&config.0)));
            }
        }
        if !states.is_empty() {
            state_by_path.insert(path, Json::Object(states));
        }
    }
    let owner_path: BTreeMap<String, String> =
        list.iter().map(|i| (i.name_any(), path_of(i))).collect();
    let executions: Api<Execution> = Api::namespaced(client.clone(), NAMESPACE);
    let mut items_by_path = Map::new();
    for item in Api::<DeployItem>::namespaced(client.clone(), NAMESPACE)
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
    {
        let execution = item
            .owner_references()
            .iter()
            .find(|o| o.kind == "Execution")
            .map(|o| o.name.clone())
            .unwrap();
        let execution = executions.get(&execution).await.unwrap();
        let installation = execution
            .owner_references()
            .iter()
            .find(|o| o.kind == "Installation")
            .map(|o| o.name.clone())
            .unwrap();
        let local_name = item.labels()[NAME_LABEL].clone();
        let mut view = serde_json::to_value(&item).unwrap();
        view["metadata"]["name"] = json!(local_name);
        items_by_path.insert(format!("{}/{local_name}", owner_path[&installation]), view);
    }
    let result = json!({
        "exports": {"dataObjects": data_exports, "targets": target_exports},
        "callbacks": {
            "installations": by_path,
            "deployItems": items_by_path,
            "imports": imports_by_path,
            "exports": exports_by_path,
            "deployItemsState": state_by_path,
        },
    });
    let failures: Vec<String> = asserts
        .iter()
        .filter_map(|a| check(&result, a).err())
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} assertions failed:\n{}\nresult: {result:#}",
        failures.len(),
        asserts.len(),
        failures.join("\n")
    );
}
