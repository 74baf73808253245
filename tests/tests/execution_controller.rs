//! The Execution controller on the testbed: DeployItems created from `spec.deployItems` with
//! the execution's labels and owner, `dependsOn` ordering within a job, a failed item failing
//! the job by name, a dependency cycle as a status error, orphaned items deleted, deletion in
//! reverse dependency order, interrupt propagation, and a job completed by the mock deployer
//! with the items' exports collected into the DataObject of `status.exportRef`.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use landscaper::controllers::execution::{MANAGED_BY_LABEL, NAME_LABEL};
use landscaper_api::constants::{annotations, deploy_item_types};
use landscaper_api::core::{
    DataObject, DeployItem, Execution, ExecutionPhase, LastError, execution_data_object_name,
};
use landscaper_e2e::objects::list;
use landscaper_e2e::{World, assert_contains_all, eventually, flow};
use serde_json::{Value, json};

/// A world with the namespace `name` on the landscaper cluster, and the APIs of that namespace
/// the tests work with.
async fn world(name: &str) -> (World, Api<Execution>, Api<DeployItem>, Api<Secret>) {
    let world = World::start().await;
    let client = world.landscaper_namespace(name).await;
    (
        world,
        Api::namespaced(client.clone(), name),
        Api::namespaced(client.clone(), name),
        Api::namespaced(client, name),
    )
}

/// An execution of mock items; `items` are `(name, dependsOn, config)`.
fn execution(name: &str, items: &[(&str, &[&str], Value)]) -> Execution {
    let deploy_items: Vec<Value> = items
        .iter()
        .map(|(item, deps, config)| {
            json!({
                "name": item,
                "type": deploy_item_types::MOCK,
                "config": config,
                "dependsOn": deps,
                "timeout": "5m",
            })
        })
        .collect();
    serde_json::from_value(json!({
        "apiVersion": "landscaper.gardener.cloud/v1alpha1",
        "kind": "Execution",
        "metadata": { "name": name },
        "spec": { "context": "default", "deployItems": deploy_items },
    }))
    .expect("valid Execution")
}

/// Creates `execution` and starts its job `job-1`.
async fn create_and_start(executions: &Api<Execution>, execution: &Execution) {
    executions
        .create(&PostParams::default(), execution)
        .await
        .expect("the Execution is created");
    start_job(executions, &execution.name_any(), "job-1").await;
}

async fn start_job(executions: &Api<Execution>, name: &str, job_id: &str) {
    let patch = json!({ "status": { "jobID": job_id } });
    executions
        .patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("job ID is written");
}

/// The managed item of entry `item`, if it exists.
async fn item(items: &Api<DeployItem>, execution: &str, item: &str) -> Option<DeployItem> {
    let selector = format!("{MANAGED_BY_LABEL}={execution},{NAME_LABEL}={item}");
    items
        .list(&kube::api::ListParams::default().labels(&selector))
        .await
        .expect("items are listed")
        .items
        .into_iter()
        .next()
}

fn job_of(item: &DeployItem) -> Option<String> {
    item.status.as_ref().and_then(|s| s.job_id.clone())
}

/// Finishes the item's job as a deployer would, with exports in `<item>-export` if given.
async fn finish_item(
    items: &Api<DeployItem>,
    secrets: &Api<Secret>,
    item: &DeployItem,
    phase: &str,
    exports: Option<Value>,
) {
    let name = item.name_any();
    let job_id = job_of(item).expect("item has a job");
    let mut status = json!({ "phase": phase, "jobIDFinished": job_id });
    if phase == "Failed" {
        status["lastError"] = json!({
            "operation": "Reconcile", "reason": "Broken", "message": "the chart is broken",
            "lastTransitionTime": "2026-01-01T00:00:00Z", "lastUpdateTime": "2026-01-01T00:00:00Z",
        });
    }
    if let Some(values) = exports {
        let secret = Secret {
            metadata: ObjectMeta {
                name: Some(format!("{name}-export")),
                ..ObjectMeta::default()
            },
            data: Some(BTreeMap::from([(
                "config".to_owned(),
                ByteString(serde_json::to_vec(&values).expect("json")),
            )])),
            ..Secret::default()
        };
        secrets
            .create(&PostParams::default(), &secret)
            .await
            .expect("export Secret is created");
        status["exportRef"] = json!({ "name": format!("{name}-export") });
    }
    items
        .patch_status(
            &name,
            &PatchParams::default(),
            &Patch::Merge(&json!({ "status": status })),
        )
        .await
        .expect("item status is written");
}

async fn phase_of(executions: &Api<Execution>, name: &str) -> Option<ExecutionPhase> {
    executions
        .get(name)
        .await
        .ok()
        .and_then(|e| e.status)
        .filter(|s| s.job_id.is_some() && s.job_id == s.job_id_finished)
        .and_then(|s| s.phase)
}

/// Waits until the Execution `name` in `namespace` succeeds; the exports it collected into the
/// DataObject its `status.exportRef` names.
async fn succeeded_exports(executions: &Api<Execution>, namespace: &str, name: &str) -> Value {
    eventually(&format!("Execution {name} succeeds"), || async {
        phase_of(executions, name).await == Some(ExecutionPhase::Succeeded)
    })
    .await;
    let status = executions.get(name).await.unwrap().status.unwrap();
    let export_ref = status.export_ref.expect("exportRef is set");
    assert_eq!(export_ref.name, execution_data_object_name(name));
    Api::<DataObject>::namespaced(executions.clone().into_client(), namespace)
        .get(&export_ref.name)
        .await
        .expect("the exports' DataObject")
        .data
}

/// The `lastError` of the Execution `name` once its job ended Failed.
async fn failed_error(executions: &Api<Execution>, name: &str) -> LastError {
    eventually(&format!("Execution {name} fails"), || async {
        phase_of(executions, name).await == Some(ExecutionPhase::Failed)
    })
    .await;
    executions
        .get(name)
        .await
        .expect("read")
        .status
        .and_then(|status| status.last_error)
        .expect("a failed job has a lastError")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn items_run_in_dependency_order_and_exports_are_collected() {
    let (_world, executions, items, secrets) = world("order").await;
    let exec = execution(
        "exec",
        &[
            ("b", &["a"], json!({ "phase": "Succeeded" })),
            ("a", &[], json!({ "phase": "Succeeded" })),
        ],
    );
    create_and_start(&executions, &exec).await;

    eventually("item a is started in job-1", || async {
        item(&items, "exec", "a")
            .await
            .is_some_and(|i| job_of(&i).as_deref() == Some("job-1"))
    })
    .await;
    let a = item(&items, "exec", "a").await.expect("item a");
    assert_eq!(a.spec.type_, deploy_item_types::MOCK);
    assert_eq!(a.spec.context.as_deref(), Some("default"));
    assert_eq!(a.spec.config, Some(json!({ "phase": "Succeeded" })));
    assert!(a.spec.timeout.is_some(), "timeout is forwarded");
    let owner = &a.owner_references()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str()),
        ("Execution", "exec")
    );
    assert!(
        item(&items, "exec", "b")
            .await
            .is_none_or(|b| job_of(&b).is_none()),
        "b waits for a"
    );

    finish_item(
        &items,
        &secrets,
        &a,
        "Succeeded",
        Some(json!({ "url": "a.example" })),
    )
    .await;
    eventually("item b is started in job-1", || async {
        item(&items, "exec", "b")
            .await
            .is_some_and(|i| job_of(&i).as_deref() == Some("job-1"))
    })
    .await;
    let b = item(&items, "exec", "b").await.expect("item b");
    finish_item(
        &items,
        &secrets,
        &b,
        "Succeeded",
        Some(json!({ "port": 443 })),
    )
    .await;

    assert_eq!(
        succeeded_exports(&executions, "order", "exec").await,
        json!({ "a": { "url": "a.example" }, "b": { "port": 443 } })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_item_fails_the_execution_by_name_and_its_dependents_never_start() {
    let (_world, executions, items, secrets) = world("failing").await;
    let exec = execution("exec", &[("a", &[], json!({})), ("b", &["a"], json!({}))]);
    create_and_start(&executions, &exec).await;
    eventually("item a is started", || async {
        item(&items, "exec", "a")
            .await
            .is_some_and(|i| job_of(&i).is_some())
    })
    .await;
    let a = item(&items, "exec", "a").await.unwrap();
    finish_item(&items, &secrets, &a, "Failed", None).await;
    let error = failed_error(&executions, "exec").await;
    assert!(error.message.contains(&a.name_any()), "{}", error.message);
    assert!(
        error.message.contains("the chart is broken"),
        "{}",
        error.message
    );
    assert!(
        item(&items, "exec", "b")
            .await
            .is_none_or(|b| job_of(&b).is_none())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dependency_cycle_is_a_status_error() {
    let (_world, executions, items, _) = world("cycle").await;
    let exec = execution(
        "exec",
        &[
            ("a", &["b"], json!({})),
            ("b", &["a"], json!({})),
            ("c", &[], json!({})),
        ],
    );
    create_and_start(&executions, &exec).await;
    let error = failed_error(&executions, "exec").await;
    assert!(
        error.message.contains("cycle among a, b"),
        "{}",
        error.message
    );
    assert!(list(&items).await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn orphans_go_and_deletion_follows_reverse_dependency_order() {
    let (_world, executions, items, secrets) = world("deleting").await;
    let exec = execution(
        "exec",
        &[
            ("a", &[], json!({})),
            ("b", &["a"], json!({})),
            ("old", &[], json!({})),
        ],
    );
    create_and_start(&executions, &exec).await;
    for name in ["a", "old", "b"] {
        eventually(&format!("item {name} is started"), || async {
            item(&items, "exec", name)
                .await
                .is_some_and(|i| job_of(&i).is_some())
        })
        .await;
        let started = item(&items, "exec", name).await.unwrap();
        finish_item(&items, &secrets, &started, "Succeeded", None).await;
    }
    eventually("the first job succeeds", || async {
        phase_of(&executions, "exec").await == Some(ExecutionPhase::Succeeded)
    })
    .await;

    // Drop `old` from the spec: the next job deletes it.
    let patch = json!({ "spec": { "deployItems": execution("exec", &[
        ("a", &[], json!({})), ("b", &["a"], json!({})),
    ]).spec.deploy_items } });
    executions
        .patch("exec", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    start_job(&executions, "exec", "job-2").await;
    eventually("the orphaned item is deleted", || async {
        item(&items, "exec", "old").await.is_none()
    })
    .await;

    // Hold b with a finalizer of the test: a must stay while b exists.
    let b = item(&items, "exec", "b").await.unwrap();
    let hold = json!({ "metadata": { "finalizers": ["test.landscaper/hold"] } });
    items
        .patch(&b.name_any(), &PatchParams::default(), &Patch::Merge(&hold))
        .await
        .unwrap();
    executions
        .delete("exec", &DeleteParams::default())
        .await
        .unwrap();
    eventually("b is being deleted", || async {
        item(&items, "exec", "b")
            .await
            .is_some_and(|b| b.metadata.deletion_timestamp.is_some())
    })
    .await;
    // Give the controller room to act wrongly: a stays while b is held.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let a = item(&items, "exec", "a").await.expect("a still exists");
    assert!(a.metadata.deletion_timestamp.is_none(), "a waits for b");
    assert!(executions.get_opt("exec").await.unwrap().is_some());

    let release = json!({ "metadata": { "finalizers": null } });
    items
        .patch(
            &b.name_any(),
            &PatchParams::default(),
            &Patch::Merge(&release),
        )
        .await
        .unwrap();
    eventually("the execution and its items are gone", || async {
        executions.get_opt("exec").await.unwrap().is_none() && list(&items).await.is_empty()
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupt_and_delete_without_uninstall_reach_the_items() {
    let (_world, executions, items, _) = world("interrupt").await;
    let exec = execution("exec", &[("a", &[], json!({}))]);
    create_and_start(&executions, &exec).await;
    eventually("item a is started", || async {
        item(&items, "exec", "a")
            .await
            .is_some_and(|i| job_of(&i).is_some())
    })
    .await;
    let patch = json!({ "metadata": { "annotations": { annotations::OPERATION: "interrupt" } } });
    executions
        .patch("exec", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    eventually(
        "the item is interrupted and the annotation consumed",
        || async {
            let item_annotated = item(&items, "exec", "a").await.is_some_and(|i| {
                i.annotations()
                    .get(annotations::OPERATION)
                    .map(String::as_str)
                    == Some("interrupt")
            });
            let consumed = executions
                .get("exec")
                .await
                .unwrap()
                .annotations()
                .get(annotations::OPERATION)
                .is_none();
            item_annotated && consumed
        },
    )
    .await;

    let a = item(&items, "exec", "a").await.unwrap();
    let hold = json!({ "metadata": { "finalizers": ["test.landscaper/hold"] } });
    items
        .patch(&a.name_any(), &PatchParams::default(), &Patch::Merge(&hold))
        .await
        .unwrap();
    let patch = json!({ "metadata": { "annotations": {
        annotations::DELETE_WITHOUT_UNINSTALL: "true" } } });
    executions
        .patch("exec", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    executions
        .delete("exec", &DeleteParams::default())
        .await
        .unwrap();
    eventually("the item is deleted without uninstall", || async {
        item(&items, "exec", "a").await.is_some_and(|i| {
            i.metadata.deletion_timestamp.is_some()
                && i.annotations()
                    .contains_key(annotations::DELETE_WITHOUT_UNINSTALL)
        })
    })
    .await;
    items
        .patch(
            &a.name_any(),
            &PatchParams::default(),
            &Patch::Merge(&json!({ "metadata": { "finalizers": null } })),
        )
        .await
        .unwrap();
    eventually("the execution is gone", || async {
        executions.get_opt("exec").await.unwrap().is_none()
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mock_deployer_completes_an_execution_with_exports() {
    let world = World::start().await;
    let client = flow::namespace_with_mock_deployer(&world, "mock").await;

    let executions: Api<Execution> = Api::namespaced(client, "mock");
    let exec = execution(
        "exec",
        &[
            (
                "db",
                &[],
                json!({
                    "apiVersion": "mock.deployer.landscaper.gardener.cloud/v1alpha1",
                    "kind": "ProviderConfiguration",
                    "phase": "Succeeded",
                    "export": { "host": "db.local" },
                }),
            ),
            (
                "app",
                &["db"],
                json!({
                    "apiVersion": "mock.deployer.landscaper.gardener.cloud/v1alpha1",
                    "kind": "ProviderConfiguration",
                    "phase": "Succeeded",
                    "export": { "replicas": 2 },
                }),
            ),
        ],
    );
    create_and_start(&executions, &exec).await;
    assert_eq!(
        succeeded_exports(&executions, "mock", "exec").await,
        json!({ "db": { "host": "db.local" }, "app": { "replicas": 2 } })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_item_the_api_server_refuses_fails_the_job_with_its_message() {
    let (_world, executions, items, _) = world("refused").await;
    let mut exec = execution(
        "exec",
        &[("fine", &[], json!({})), ("labelled", &["fine"], json!({}))],
    );
    // The Execution keeps an entry's labels as data; the API server checks them on the item.
    exec.spec.deploy_items[0].labels = Some(BTreeMap::from([("team".into(), "a b".into())]));
    create_and_start(&executions, &exec).await;
    let error = failed_error(&executions, "exec").await;
    assert_eq!(error.reason, "InvalidDeployItem");
    assert_contains_all(
        &error.message,
        &[
            "Execution refused/exec: create DeployItem for spec.deployItems fine",
            "DeployItem.landscaper.gardener.cloud \"exec-fine\" is invalid",
            "metadata.labels: Invalid value: \"a b\"",
        ],
    );
    assert!(
        list(&items).await.is_empty(),
        "neither item exists: the second waits for the first"
    );
}
