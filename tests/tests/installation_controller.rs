//! The Installation controller on the testbed, with the landscaper's controllers running:
//! the cases of `states/cases.md` section `controllers/installations` built inline (job start
//! on the reconcile annotation, interrupt, deletion with delete-without-uninstall, a sibling
//! that still imports, automatic retries) plus a dependency cycle between siblings, and the
//! objects a blueprint renders that the API server refuses (Execution, subinstallation,
//! DeployItem, export and import DataObjects), each ending the job Failed with the server's
//! message. The tests finish Executions by writing their status.

use kube::api::{Api, DeleteParams, Patch, PatchParams};
use landscaper_api::constants::annotations;
use landscaper_api::core::{DeployItem, Execution, Installation, InstallationPhase, LastError};
use landscaper_e2e::blueprints::{blueprint_filesystem, mock_blueprint};
use landscaper_e2e::installations::create_root;
use landscaper_e2e::objects::create;
use landscaper_e2e::{World, assert_contains_all, eventually};
use serde_json::{Value, json};

const NAMESPACE: &str = "inst-test";

async fn world() -> (World, Api<Installation>, Api<Execution>) {
    let world = World::start().await;
    let client = world.landscaper_namespace(NAMESPACE).await;
    (
        world,
        Api::namespaced(client.clone(), NAMESPACE),
        Api::namespaced(client, NAMESPACE),
    )
}

/// Creates the root installation `name` with `spec`, waits until its first job ends Failed and
/// returns its `lastError`.
async fn root_fails(api: &Api<Installation>, name: &str, spec: Value) -> LastError {
    create_root(api, name, spec).await;
    failed_with(api, name).await
}

/// Asserts a job's `lastError`: its reason, the operation it failed in, and the parts its
/// message holds.
#[track_caller]
fn assert_last_error(error: &LastError, reason: &str, operation: &str, parts: &[&str]) {
    assert_eq!(
        (error.reason.as_str(), error.operation.as_str()),
        (reason, operation),
        "{}",
        error.message
    );
    assert_contains_all(&error.message, parts);
}

/// Waits until installation `name` ends its job Failed; its `lastError`.
async fn failed_with(api: &Api<Installation>, name: &str) -> LastError {
    wait_for_phase(api, name, InstallationPhase::Failed).await;
    api.get(name)
        .await
        .unwrap()
        .status
        .and_then(|status| status.last_error)
        .expect("a failed job records its last error")
}

/// Waits until installation `name` is in `phase`.
async fn wait_for_phase(api: &Api<Installation>, name: &str, phase: InstallationPhase) {
    eventually(&format!("{name} is {phase:?}"), || async {
        phase_of(api, name).await.as_ref() == Some(&phase)
    })
    .await;
}

async fn phase_of(api: &Api<Installation>, name: &str) -> Option<InstallationPhase> {
    api.get(name)
        .await
        .ok()
        .and_then(|i| i.status)
        .and_then(|s| s.phase)
}

fn job_ids(installation: &Installation) -> (Option<String>, Option<String>) {
    let status = installation.status.clone().unwrap_or_default();
    (status.job_id, status.job_id_finished)
}

/// Finishes the running job of Execution `name` with `phase`.
async fn finish_execution(executions: &Api<Execution>, name: &str, phase: &str) {
    let job = executions
        .get(name)
        .await
        .expect("Execution")
        .status
        .and_then(|s| s.job_id);
    executions
        .patch_status(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"jobIDFinished": job, "phase": phase}})),
        )
        .await
        .expect("the Execution's status is written");
}

/// Creates the root installation `root` whose blueprint is the inline `filesystem`.
async fn create_inline_root(installations: &Api<Installation>, filesystem: Value) {
    create_root(
        installations,
        "root",
        json!({"blueprint": {"inline": {"filesystem": filesystem}}}),
    )
    .await;
}

/// Creates the root installation `root` with one mock item and waits until its job reached
/// its Execution.
async fn start_root(installations: &Api<Installation>, executions: &Api<Execution>) {
    create_inline_root(installations, mock_blueprint("Succeeded")).await;
    eventually("the Execution root has the job ID", || async {
        execution_job(executions, "root").await.is_some()
    })
    .await;
}

#[tokio::test]
async fn a_root_runs_a_job_on_the_reconcile_annotation_and_succeeds_with_its_execution() {
    let (_world, installations, executions) = world().await;
    start_root(&installations, &executions).await;
    let root = installations.get("root").await.unwrap();
    assert!(
        !root
            .metadata
            .annotations
            .clone()
            .unwrap_or_default()
            .contains_key(annotations::OPERATION),
        "the annotation is removed"
    );
    let execution = executions.get("root").await.unwrap();
    assert_eq!(execution.spec.deploy_items.len(), 1);
    assert_eq!(
        execution.spec.deploy_items[0].type_,
        "landscaper.gardener.cloud/mock"
    );
    assert_eq!(execution.metadata.owner_references.unwrap()[0].name, "root");
    assert_eq!(
        execution.status.unwrap().job_id,
        root.status.clone().unwrap().job_id
    );
    assert_eq!(
        phase_of(&installations, "root").await,
        Some(InstallationPhase::Progressing)
    );
    finish_execution(&executions, "root", "Succeeded").await;
    wait_for_phase(&installations, "root", InstallationPhase::Succeeded).await;
    let (job, finished) = job_ids(&installations.get("root").await.unwrap());
    assert_eq!(job, finished);
}

#[tokio::test]
async fn a_failed_execution_fails_the_job_and_a_reconcile_annotation_on_a_subinstallation_has_no_effect()
 {
    let (_world, installations, executions) = world().await;
    start_root(&installations, &executions).await;
    finish_execution(&executions, "root", "Failed").await;
    let message = failed_with(&installations, "root").await.message;
    assert!(
        message.contains("Installation inst-test/root: Execution root ended Failed"),
        "{message}"
    );

    create(&installations, json!({
        "metadata": {"name": "child", "labels": {"landscaper.gardener.cloud/encompassed-by": "nobody"}, "annotations": {annotations::OPERATION: "reconcile"}},
        "spec": {"blueprint": {"inline": {"filesystem": mock_blueprint("Succeeded")}}},
    }))
    .await;
    eventually(
        "the annotation is removed from the subinstallation",
        || async {
            installations.get("child").await.ok().is_some_and(|c| {
                !c.metadata
                    .annotations
                    .unwrap_or_default()
                    .contains_key(annotations::OPERATION)
            })
        },
    )
    .await;
    let child = installations.get("child").await.unwrap();
    assert_eq!(
        job_ids(&child),
        (None, None),
        "no job starts on a subinstallation's annotation"
    );
}

#[tokio::test]
async fn subinstallations_run_in_dependency_order_and_the_parent_waits_for_them() {
    let (_world, installations, executions) = world().await;
    let blueprint_of = |definitions: &str| json!({"blueprint.yaml": format!("apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Blueprint\n{definitions}exportExecutions:\n- name: e\n  type: GoTemplate\n  template: |\n    exports:\n      out: produced\n")});
    let producer = blueprint_of("exports:\n- name: out\n  schema: {type: string}\n");
    let consumer = blueprint_of("imports:\n- name: in\n  schema: {type: string}\n");
    let sub = |name: &str, blueprint: &Value, imports: Value, exports: Value| json!({"name": name, "blueprint": {"filesystem": blueprint}, "imports": imports, "exports": exports});
    let blueprint = json!({"blueprint.yaml": serde_json::to_string(&json!({
        "apiVersion": "landscaper.gardener.cloud/v1alpha1",
        "kind": "Blueprint",
        "subinstallations": [
            sub("a", &producer, json!(null), json!({"data": [{"name": "out", "dataRef": "a.out"}]})),
            sub("b", &consumer, json!({"data": [{"name": "in", "dataRef": "a.out"}]}), json!(null)),
        ],
    })).unwrap()});
    create_inline_root(&installations, blueprint).await;
    wait_for_phase(&installations, "root", InstallationPhase::Succeeded).await;
    let list = installations.list(&Default::default()).await.unwrap().items;
    let a = list
        .iter()
        .find(|i| {
            i.metadata
                .name
                .as_deref()
                .is_some_and(|n| n.starts_with("a-"))
        })
        .expect("subinstallation a");
    let b = list
        .iter()
        .find(|i| {
            i.metadata
                .name
                .as_deref()
                .is_some_and(|n| n.starts_with("b-"))
        })
        .expect("subinstallation b");
    let a_done = a
        .status
        .as_ref()
        .unwrap()
        .phase_transition_time
        .clone()
        .unwrap()
        .0;
    assert_eq!(
        b.status.as_ref().unwrap().phase,
        Some(InstallationPhase::Succeeded)
    );
    assert!(
        b.status
            .as_ref()
            .unwrap()
            .phase_transition_time
            .clone()
            .unwrap()
            .0
            >= a_done,
        "b finishes after a"
    );
    assert!(
        executions.get_opt("root").await.unwrap().is_none(),
        "a blueprint without deploy items has no Execution"
    );
}

#[tokio::test]
async fn interrupt_is_passed_down_and_ends_the_running_job_failed() {
    let (_world, installations, executions) = world().await;
    let blueprint = json!({"blueprint.yaml": "apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Blueprint\ndeployExecutions:\n- name: main\n  type: GoTemplate\n  template: |\n    deployItems:\n    - name: item\n      type: landscaper.gardener.cloud/mock\n      config: {}\nsubinstallations:\n- name: subinst\n  blueprint:\n    filesystem:\n      blueprint.yaml: \"kind: Blueprint\\n\"\n"});
    create_inline_root(&installations, blueprint).await;
    wait_for_phase(&installations, "root", InstallationPhase::Progressing).await;
    installations
        .patch(
            "root",
            &PatchParams::default(),
            &Patch::Merge(
                json!({"metadata": {"annotations": {annotations::OPERATION: "interrupt"}}}),
            ),
        )
        .await
        .unwrap();
    wait_for_phase(&installations, "root", InstallationPhase::Failed).await;
    let root = installations.get("root").await.unwrap();
    assert!(
        !root
            .metadata
            .annotations
            .clone()
            .unwrap_or_default()
            .contains_key(annotations::OPERATION)
    );
    let (job, finished) = job_ids(&root);
    assert_eq!(job, finished);
    // The interrupt reached the Execution; its controller passes it on to the deploy items and
    // removes it, so it is found on one or the other.
    let items: Api<DeployItem> = Api::namespaced(executions.clone().into_client(), NAMESPACE);
    eventually(
        "the interrupt reached the execution or its items",
        || async {
            let interrupted = |annotations: Option<&std::collections::BTreeMap<String, String>>| {
                annotations
                    .and_then(|a| a.get(annotations::OPERATION))
                    .is_some_and(|op| op == "interrupt")
            };
            let execution = executions.get("root").await.unwrap();
            interrupted(execution.metadata.annotations.as_ref())
                || items
                    .list(&Default::default())
                    .await
                    .unwrap()
                    .items
                    .iter()
                    .any(|item| interrupted(item.metadata.annotations.as_ref()))
        },
    )
    .await;
}

#[tokio::test]
async fn deletion_waits_for_importing_siblings_and_passes_delete_without_uninstall_down() {
    let (_world, installations, executions) = world().await;
    let producer = json!({
        "metadata": {"name": "a", "annotations": {annotations::OPERATION: "reconcile", annotations::DELETE_WITHOUT_UNINSTALL: "true"}},
        "spec": {"blueprint": {"inline": {"filesystem": mock_blueprint("Succeeded")}}, "exports": {"data": [{"name": "x", "dataRef": "a.z"}]}},
    });
    create(&installations, producer).await;
    create(&installations, json!({
        "metadata": {"name": "b"},
        "spec": {"blueprint": {"inline": {"filesystem": {"blueprint.yaml": "kind: Blueprint\n"}}}, "imports": {"data": [{"name": "z", "dataRef": "a.z"}]}},
    }))
    .await;
    eventually("a has its Execution", || async {
        executions.get_opt("a").await.ok().flatten().is_some()
    })
    .await;
    // Keep the Execution until the test has seen the annotation on it.
    executions
        .patch(
            "a",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": ["test/hold"]}})),
        )
        .await
        .unwrap();
    installations
        .delete("a", &DeleteParams::default())
        .await
        .unwrap();
    eventually("a waits for b", || async {
        installations
            .get("a")
            .await
            .ok()
            .and_then(|a| a.status)
            .is_some_and(|s| {
                s.conditions.iter().any(|c| {
                    c.message
                        .contains("a sibling still imports some of the exports")
                })
            })
    })
    .await;
    assert!(
        executions
            .get("a")
            .await
            .unwrap()
            .metadata
            .deletion_timestamp
            .is_none()
    );
    installations
        .delete("b", &DeleteParams::default())
        .await
        .unwrap();
    eventually(
        "the Execution is being deleted with the annotation",
        || async {
            executions.get("a").await.ok().is_some_and(|e| {
                e.metadata.deletion_timestamp.is_some()
                    && e.metadata
                        .annotations
                        .unwrap_or_default()
                        .get(annotations::DELETE_WITHOUT_UNINSTALL)
                        .map(String::as_str)
                        == Some("true")
            })
        },
    )
    .await;
    wait_for_phase(&installations, "a", InstallationPhase::Deleting).await;
    executions
        .patch(
            "a",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": null}})),
        )
        .await
        .unwrap();
    eventually("a is gone", || async {
        installations.get_opt("a").await.unwrap().is_none()
    })
    .await;
}

#[tokio::test]
async fn a_dependency_cycle_between_siblings_fails_naming_them() {
    let (_world, installations, _) = world().await;
    for (name, import, export) in [("x", "y.out", "x.out"), ("y", "x.out", "y.out")] {
        create_root(
            &installations,
            name,
            json!({
                "blueprint": {"inline": {"filesystem": {"blueprint.yaml": "kind: Blueprint\n"}}},
                "imports": {"data": [{"name": "in", "dataRef": import}]},
                "exports": {"data": [{"name": "out", "dataRef": export}]},
            }),
        )
        .await;
    }
    let message = failed_with(&installations, "x").await.message;
    assert!(
        message.contains("dependency cycle") && message.contains("x -> y -> x"),
        "{message}"
    );
}

/// A Spiff deploy execution that fails fails the job; `lastError` names the installation, the
/// execution, the node's path in the template and the expression.
#[tokio::test]
async fn a_failing_spiff_execution_fails_the_job_naming_execution_path_and_expression() {
    let (_world, installations, executions) = world().await;
    let blueprint = "apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Blueprint\ndeployExecutions:\n- name: main\n  type: Spiff\n  template:\n    deployItems:\n    - name: web\n      type: landscaper.gardener.cloud/mock\n      config:\n        replicas: (( imports.missing.replicas ))\n";
    let error = root_fails(
        &installations,
        "spiffy",
        json!({"blueprint": {"inline": {"filesystem": {"blueprint.yaml": blueprint}}}}),
    )
    .await;
    assert_contains_all(
        &error.message,
        &[
            "deploy execution \"main\"",
            "deployItems.[0].config.replicas",
            "(( imports.missing.replicas ))",
            "'imports.missing' not found",
        ],
    );
    assert!(
        executions.get_opt("spiffy").await.unwrap().is_none(),
        "no Execution is written"
    );
}

#[tokio::test]
async fn a_failed_job_is_retried_automatically_at_once_and_then_after_the_interval() {
    let (_world, installations, _) = world().await;
    create_root(
        &installations,
        "retry",
        json!({
            "blueprint": {"inline": {"filesystem": {"blueprint.yaml": "kind: Blueprint\n"}}},
            "imports": {"data": [{"name": "missing", "dataRef": "not-existing"}]},
            "automaticReconcile": {"failedReconcile": {"interval": "1h", "numberOfReconciles": 3}},
        }),
    )
    .await;
    eventually("the first retry ran and failed", || async {
        installations
            .get("retry")
            .await
            .ok()
            .and_then(|i| i.status)
            .is_some_and(|s| {
                s.automatic_reconcile_status
                    .as_ref()
                    .and_then(|a| a.number_of_reconciles)
                    == Some(1)
                    && s.phase == Some(InstallationPhase::Failed)
                    && s.job_id == s.job_id_finished
            })
    })
    .await;
    let retry = installations.get("retry").await.unwrap();
    let status = retry.status.unwrap();
    assert!(
        status
            .last_error
            .unwrap()
            .message
            .contains("import \"missing\" of Installation inst-test/retry: DataObject inst-test/not-existing (key not-existing, root context) not found")
    );
    assert_eq!(
        status.automatic_reconcile_status.unwrap().generation,
        retry.metadata.generation
    );
}

/// The job ID the Execution `name` was given, if it exists and has one.
async fn execution_job(executions: &Api<Execution>, name: &str) -> Option<String> {
    executions
        .get_opt(name)
        .await
        .ok()
        .flatten()
        .and_then(|e| e.status)
        .and_then(|s| s.job_id)
}

#[tokio::test]
async fn an_execution_the_api_server_refuses_fails_the_job_with_its_message() {
    let (_world, installations, executions) = world().await;
    // A deploy item without `config`, which the Execution CRD requires.
    let blueprint = "apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Blueprint\ndeployExecutions:\n- name: main\n  type: GoTemplate\n  template: |\n    deployItems:\n    - name: web\n      type: landscaper.gardener.cloud/mock\n";
    let error = root_fails(
        &installations,
        "unrendered",
        json!({"blueprint": {"inline": {"filesystem": {"blueprint.yaml": blueprint}}}}),
    )
    .await;
    assert_eq!(error.reason, "InvalidExecution");
    assert_contains_all(
        &error.message,
        &[
            "create Execution unrendered",
            "is invalid: spec.deployItems[0].config",
            "must be of type object",
        ],
    );
    assert!(!error.message.contains("Status {"), "{}", error.message);
    assert!(executions.get_opt("unrendered").await.unwrap().is_none());
}

#[tokio::test]
async fn a_subinstallation_the_api_server_refuses_fails_the_job_with_its_message() {
    let (_world, installations, _executions) = world().await;
    // `Web_1-` cannot prefix an object name: the API server refuses the subinstallation.
    let child = json!({"name": "Web_1", "blueprint": {"filesystem": mock_blueprint("Succeeded")}});
    let blueprint = json!({"blueprint.yaml": serde_json::to_string(&json!({
        "apiVersion": "landscaper.gardener.cloud/v1alpha1",
        "kind": "Blueprint",
        "subinstallations": [child],
    })).unwrap()});
    let error = root_fails(
        &installations,
        "parent",
        json!({"blueprint": {"inline": {"filesystem": blueprint}}}),
    )
    .await;
    assert_last_error(
        &error,
        "InvalidSubinstallation",
        "Init",
        &[
            "Installation inst-test/parent: create subinstallation Web_1",
            "is invalid",
            "metadata.generateName: Invalid value: \"Web_1-\"",
            "a lowercase RFC 1123 subdomain",
        ],
    );
    let names: Vec<String> = installations
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|i| i.metadata.name)
        .collect();
    assert_eq!(names, ["parent"], "no subinstallation was created");
}

#[tokio::test]
async fn a_deploy_item_the_api_server_refuses_fails_the_execution_and_the_job_with_its_message() {
    let (_world, installations, executions) = world().await;
    // `parent-Web_1` cannot name a DeployItem; the Execution itself is valid.
    let blueprint = json!({"blueprint.yaml": "apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Blueprint\ndeployExecutions:\n- name: main\n  type: GoTemplate\n  template: |\n    deployItems:\n    - name: Web_1\n      type: landscaper.gardener.cloud/mock\n      config:\n        apiVersion: mock.deployer.landscaper.gardener.cloud/v1alpha1\n        kind: ProviderConfiguration\n        phase: Succeeded\n"});
    let error = root_fails(
        &installations,
        "parent",
        json!({"blueprint": {"inline": {"filesystem": blueprint}}}),
    )
    .await;
    assert_eq!(error.reason, "SubobjectsFailed");
    let execution = executions.get("parent").await.unwrap().status.unwrap();
    let refused = execution.last_error.expect("the Execution's last error");
    assert_eq!(refused.reason, "InvalidDeployItem");
    for message in [&refused.message, &error.message] {
        assert_contains_all(
            message,
            &[
                "Execution inst-test/parent: create DeployItem for spec.deployItems Web_1",
                "DeployItem.landscaper.gardener.cloud \"parent-Web_1\" is invalid",
                "metadata.name: Invalid value: \"parent-Web_1\"",
            ],
        );
    }
    assert!(
        error.message.contains("InvalidDeployItem"),
        "{}",
        error.message
    );
}

/// The DataObjects a job writes carry a key (an export) or a name (an import passed down to
/// subinstallations) as a label value, which cannot hold a space: the API server refuses them.
#[tokio::test]
async fn a_data_object_the_api_server_refuses_fails_the_job_with_its_message() {
    let (world, installations, _executions) = world().await;
    let data_objects: Api<landscaper_api::core::DataObject> =
        Api::namespaced(world.landscaper_cluster().client(), NAMESPACE);
    create(
        &data_objects,
        json!({"metadata": {"name": "source"}, "data": "hello"}),
    )
    .await;
    let exporter = json!({
        "exports": [{"name": "out", "schema": {"type": "string"}}],
        "exportExecutions": [{"name": "e", "type": "GoTemplate", "template": "exports:\n  out: produced\n"}],
    });
    let importer = json!({"imports": [{"name": "my import", "schema": {"type": "string"}}]});
    let cases = [
        (
            "export",
            exporter,
            json!({"exports": {"data": [{"name": "out", "dataRef": "my export"}]}}),
            "InvalidExport",
            "Completing",
        ),
        (
            "import",
            importer,
            json!({"imports": {"data": [{"name": "my import", "dataRef": "source"}]}}),
            "InvalidImport",
            "Init",
        ),
    ];
    for (data, blueprint, mut spec, reason, operation) in cases {
        let name = format!("{data}er");
        spec["blueprint"] = json!({"inline": {"filesystem": blueprint_filesystem(blueprint)}});
        let error = root_fails(&installations, &name, spec).await;
        assert_last_error(
            &error,
            reason,
            operation,
            &[
                &format!("Installation inst-test/{name}: creating DataObject inst-test/"),
                &format!("for {data} \"my {data}\""),
                &format!("metadata.labels: Invalid value: \"my {data}\""),
            ],
        );
    }
}
