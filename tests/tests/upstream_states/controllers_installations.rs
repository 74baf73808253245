//! `controllers/installations/testdata/state` (envtest loader), as upstream's
//! `controllers/installations/{controller,reconcile_delete,retry_helper}_test.go` use it, with
//! our Installation controller running alone. The orphaned folders test2, test4 and test5 have
//! no Go test.

use kube::api::{Api, DeleteParams, PostParams};
use landscaper_api::constants::annotations;
use landscaper_api::core::{Execution, Installation, InstallationPhase};
use landscaper_e2e::eventually;
use landscaper_e2e::states::{LoadedState, Loader, loaded};
use serde_json::json;
use testbed::Testbed;

use crate::support::{installation_controller, patch, patch_status};

/// The folder `test` loaded into a cluster of its own.
async fn test_state(test: &str) -> (Testbed, kube::Client, LoadedState) {
    loaded(
        format!("controllers/installations/testdata/state/{test}"),
        Loader::EnvTest,
    )
    .await
}

fn status(installation: &Installation) -> landscaper_api::core::InstallationStatus {
    installation.status.clone().unwrap_or_default()
}

/// A root created after the controller started, whose job starting proves that the controller
/// has worked through the objects it found at its start.
async fn sentinel_reconciled(installations: &Api<Installation>) {
    let sentinel: Installation = serde_json::from_value(json!({
        "metadata": {"name": "sentinel", "annotations": {annotations::OPERATION: "reconcile"}},
        "spec": {"blueprint": {"inline": {"filesystem": {"blueprint.yaml": "kind: Blueprint\n"}}}},
    }))
    .expect("an installation");
    installations
        .create(&PostParams::default(), &sentinel)
        .await
        .expect("the sentinel is created");
    eventually("the sentinel has a job", || async {
        installations
            .get("sentinel")
            .await
            .is_ok_and(|i| status(&i).job_id.is_some())
    })
    .await;
}

/// Delete/Controller: "should not delete if another installation still imports a exported
/// value". Ours says so in the `InstallationReconciled` condition and an Event, as it says
/// every wait, where upstream writes `lastError`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test1_an_installation_whose_export_a_sibling_imports_is_not_deleted() {
    let (_bed, client, state) = test_state("test1").await;
    let installations: Api<Installation> = Api::namespaced(client.clone(), &state.namespace);
    patch_status(
        &installations,
        "a",
        json!({"phase": "Succeeded", "jobID": "job-a", "jobIDFinished": "job-a"}),
    )
    .await;
    let _controller = installation_controller(&client);
    installations
        .delete("a", &DeleteParams::default())
        .await
        .expect("a is deleted");
    eventually("a waits for its importer b", || async {
        installations.get("a").await.is_ok_and(|a| {
            status(&a).conditions.iter().any(|c| {
                c.message
                    .contains("a sibling still imports some of the exports (b)")
            })
        })
    })
    .await;
    let c = installations.get("c").await.expect("c exists");
    assert!(c.metadata.deletion_timestamp.is_none(), "c is not deleted");
    assert_ne!(
        status(&installations.get("a").await.unwrap()).phase,
        Some(InstallationPhase::TriggerDelete)
    );
}

/// Delete/reconciler: "should propagate the delete-without-uninstall annotation to an
/// execution".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test3_delete_without_uninstall_reaches_the_execution() {
    let (_bed, client, state) = test_state("test3").await;
    let installations: Api<Installation> = Api::namespaced(client.clone(), &state.namespace);
    let executions: Api<Execution> = Api::namespaced(client.clone(), &state.namespace);
    let _controller = installation_controller(&client);
    patch(
        &installations,
        "root",
        json!({"metadata": {"annotations": {annotations::DELETE_WITHOUT_UNINSTALL: "true"}}}),
    )
    .await;
    installations
        .delete("root", &DeleteParams::default())
        .await
        .expect("root is deleted");
    eventually("root is Deleting", || async {
        installations
            .get("root")
            .await
            .is_ok_and(|root| status(&root).phase == Some(InstallationPhase::Deleting))
    })
    .await;
    let root = status(&installations.get("root").await.unwrap());
    assert_ne!(root.job_id, root.job_id_finished);
    let execution = executions.get("root").await.expect("kept by its finalizer");
    assert!(execution.metadata.deletion_timestamp.is_some());
    assert_eq!(
        execution
            .metadata
            .annotations
            .unwrap_or_default()
            .get(annotations::DELETE_WITHOUT_UNINSTALL)
            .map(String::as_str),
        Some("true")
    );
}

/// "should not reconcile an installation without reconcile annotation".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test6_a_finished_root_without_the_reconcile_annotation_stays_as_it_is() {
    let (_bed, client, state) = test_state("test6").await;
    let installations: Api<Installation> = Api::namespaced(client.clone(), &state.namespace);
    let _controller = installation_controller(&client);
    sentinel_reconciled(&installations).await;
    let root = status(&installations.get("root").await.unwrap());
    assert_eq!(root.job_id.as_deref(), Some("job1"));
    assert_eq!(root.job_id_finished.as_deref(), Some("job1"));
    assert_eq!(root.phase, Some(InstallationPhase::Succeeded));
}

/// "should pass an interrupt annotation to an execution" (and to the subinstallation). Ours
/// also ends the running job Failed, and the subinstallation, whose controller is this one,
/// handles the annotation it got in turn: it ends its job Failed and drops it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test7_interrupt_is_passed_to_the_execution_and_the_subinstallation() {
    let (_bed, client, state) = test_state("test7").await;
    let installations: Api<Installation> = Api::namespaced(client.clone(), &state.namespace);
    let executions: Api<Execution> = Api::namespaced(client.clone(), &state.namespace);
    let _controller = installation_controller(&client);
    let interrupted = |installation: &Installation| {
        let status = status(installation);
        !installation
            .metadata
            .annotations
            .clone()
            .unwrap_or_default()
            .contains_key(annotations::OPERATION)
            && status.phase == Some(InstallationPhase::Failed)
            && status.job_id_finished.as_deref() == Some("job2")
    };
    eventually("root and subinst are interrupted", || async {
        let root = installations.get("root").await.unwrap();
        let subinst = installations.get("subinst").await.unwrap();
        interrupted(&root) && interrupted(&subinst)
    })
    .await;
    let execution = executions.get("root").await.unwrap();
    assert_eq!(
        execution
            .metadata
            .annotations
            .unwrap_or_default()
            .get(annotations::OPERATION)
            .map(String::as_str),
        Some("interrupt")
    );
}

/// Delete/reconciler: "should fail if a successor has failed": a, whose importer b failed to
/// delete, fails its deletion, and so does root.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test8_a_failed_successor_fails_the_deletion_up_to_the_root() {
    let (_bed, client, state) = test_state("test8").await;
    let installations: Api<Installation> = Api::namespaced(client.clone(), &state.namespace);
    let _controller = installation_controller(&client);
    for name in ["a", "root"] {
        eventually(&format!("{name} is DeleteFailed"), || async {
            installations.get(name).await.is_ok_and(|i| {
                let status = status(&i);
                status.phase == Some(InstallationPhase::DeleteFailed)
                    && status.job_id == status.job_id_finished
            })
        })
        .await;
    }
    let a = status(&installations.get("a").await.unwrap());
    let message = a.last_error.expect("a says why").message;
    assert!(
        message.contains("deletion of a sibling failed (b)"),
        "{message}"
    );
}

/// Retry handler: "should retry a failed installation" (test9, `interval`) and "… with cron
/// spec" (test11). The Go test moves a fake clock over hours; here the first steps are
/// asserted: the failed job is retried at once (the reconcile annotation starts a second job
/// and `automaticReconcileStatus` counts 1), and the second failure is not retried at once.
async fn failed_reconciles_are_retried(test: &str) {
    let (_bed, client, state) = test_state(test).await;
    let installations: Api<Installation> = Api::namespaced(client.clone(), &state.namespace);
    let _controller = installation_controller(&client);
    eventually("the retried job failed too", || async {
        let root = installations.get("root").await.unwrap();
        let requested = root
            .metadata
            .annotations
            .clone()
            .unwrap_or_default()
            .contains_key(annotations::OPERATION);
        let status = status(&root);
        !requested
            && status.phase == Some(InstallationPhase::Failed)
            && status.job_id == status.job_id_finished
            && status
                .automatic_reconcile_status
                .is_some_and(|a| a.number_of_reconciles == Some(1))
    })
    .await;
    sentinel_reconciled(&installations).await;
    let root = installations.get("root").await.unwrap();
    let status = status(&root);
    let message = status.last_error.expect("the failure is recorded").message;
    assert!(message.contains("not-existing-target"), "{message}");
    let automatic = status
        .automatic_reconcile_status
        .expect("the retries are counted");
    assert_eq!(automatic.number_of_reconciles, Some(1));
    assert_eq!(automatic.generation, root.metadata.generation);
    assert!(automatic.last_reconcile_time.is_some());
    assert_eq!(job_events(&client, &state.namespace).await, 2);
}

/// How many jobs the Installation controller started on `root` (its `JobStarted` Events).
async fn job_events(client: &kube::Client, namespace: &str) -> usize {
    let events: Api<k8s_openapi::api::events::v1::Event> =
        Api::namespaced(client.clone(), namespace);
    events
        .list(&Default::default())
        .await
        .expect("events listed")
        .items
        .iter()
        .filter(|event| event.reason.as_deref() == Some("JobStarted"))
        .filter(|event| event.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some("root"))
        // The recorder counts a repeated Event in its series instead of writing another.
        .map(|event| event.series.as_ref().map_or(1, |s| s.count as usize))
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test9_a_failed_installation_is_retried_after_its_interval() {
    failed_reconciles_are_retried("test9").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test11_a_failed_installation_is_retried_on_its_cron_spec() {
    failed_reconciles_are_retried("test11").await;
}

/// "should reconcile an installation with reconcile-if-changed annotation".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test10_reconcile_if_changed_starts_a_job_on_a_new_generation() {
    let (_bed, client, state) = test_state("test10").await;
    let installations: Api<Installation> = Api::namespaced(client.clone(), &state.namespace);
    let _controller = installation_controller(&client);
    eventually("root runs a new job", || async {
        let root = status(&installations.get("root").await.unwrap());
        root.job_id.is_some_and(|job| job != "job1")
    })
    .await;
}
