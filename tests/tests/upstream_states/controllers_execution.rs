//! `controllers/execution/testdata` (envtest loader), as upstream's
//! `controllers/execution/reconcile_test.go` uses it, with our Execution controller running.

use kube::api::{Api, ListParams};
use landscaper_api::core::{DeployItem, Execution, ExecutionPhase};
use landscaper_e2e::eventually;
use landscaper_e2e::states::{Loader, loaded};
use serde_json::json;

use crate::support::{execution_controller, patch, patch_status};

/// The items' job IDs (`None` where an item has none).
async fn jobs(items: &Api<DeployItem>, names: &[&str]) -> Vec<Option<String>> {
    let mut jobs = Vec::new();
    for name in names {
        let item = items.get(name).await.expect("the item exists");
        jobs.push(item.status.and_then(|s| s.job_id));
    }
    jobs
}

/// What a deployer writes when it finished `job` on `name` Succeeded.
async fn succeed(items: &Api<DeployItem>, name: &str, job: &str) {
    patch_status(
        items,
        name,
        json!({"phase": "Succeeded", "jobID": job, "jobIDFinished": job}),
    )
    .await;
}

async fn phase(executions: &Api<Execution>, name: &str) -> Option<ExecutionPhase> {
    executions.get(name).await.ok()?.status?.phase
}

/// Waits until the items `names` have job `job` (and the others not), in that order of names.
async fn started(items: &Api<DeployItem>, all: &[&str], running: &[&str], job: &str) {
    let expected: Vec<Option<String>> = all
        .iter()
        .map(|name| running.contains(name).then(|| job.to_owned()))
        .collect();
    eventually(&format!("{running:?} run job {job}"), || async {
        let now = jobs(items, all).await;
        now.iter()
            .zip(&expected)
            .all(|(now, expected)| expected.is_none() || now == expected)
    })
    .await;
    let now = jobs(items, all).await;
    for (name, job_now) in all.iter().zip(now) {
        if !running.contains(name) {
            assert_ne!(
                job_now.as_deref(),
                Some(job),
                "{name} must not run {job} yet"
            );
        }
    }
}

/// "Cleanup deploy items: should cleanup orphaned deploy items".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test1_orphaned_deploy_items_are_deleted_when_a_job_starts() {
    let (_bed, client, state) =
        loaded("controllers/execution/testdata/test1", Loader::EnvTest).await;
    let executions: Api<Execution> = Api::namespaced(client.clone(), &state.namespace);
    let items: Api<DeployItem> = Api::namespaced(client.clone(), &state.namespace);
    let a = json!({"name": "a", "type": "landscaper.gardener.cloud/helm", "config": {"apiVersion": "manifest.deployer.landscaper.gardener.cloud/v1alpha2", "kind": "ProviderConfiguration"}});
    patch(&executions, "exec-1", json!({"spec": {"deployItems": [a]}})).await;
    patch_status(&executions, "exec-1", json!({"jobID": "job2"})).await;
    let _controller = execution_controller(&client);
    eventually("di-b and di-c are being deleted", || async {
        let mut deleting = Vec::new();
        for name in ["di-b", "di-c"] {
            let item = items.get(name).await.expect("kept by its finalizer");
            deleting.push(item.metadata.deletion_timestamp.is_some());
        }
        deleting == [true, true]
    })
    .await;
    // Upstream also writes the execution's job ID onto an orphan so that its deployer deletes
    // it; our deployers delete an item on its deletion timestamp alone, so ours does not.
    let a = items.get("di-a").await.expect("di-a stays");
    assert!(a.metadata.deletion_timestamp.is_none());
    let managed = items
        .list(
            &ListParams::default().labels("execution.landscaper.gardener.cloud/managed-by=exec-1"),
        )
        .await
        .expect("items listed");
    assert_eq!(
        managed.items.len(),
        3,
        "all three are listed until they are gone"
    );
    assert_eq!(
        phase(&executions, "exec-1").await,
        Some(ExecutionPhase::CleanupOrphaned)
    );
    // Their deployer removes its finalizer: the job goes on with what is left.
    for name in ["di-b", "di-c"] {
        patch(&items, name, json!({"metadata": {"finalizers": null}})).await;
    }
    eventually("di-a runs job2", || async {
        jobs(&items, &["di-a"]).await == [Some("job2".to_owned())]
    })
    .await;
}

/// "Dependencies: should trigger deploy items in the correct order": c after a and b, then,
/// with the dependencies changed to a → b → c, one after another.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test2_deploy_items_are_triggered_in_dependency_order() {
    let (_bed, client, state) =
        loaded("controllers/execution/testdata/test2", Loader::EnvTest).await;
    let executions: Api<Execution> = Api::namespaced(client.clone(), &state.namespace);
    let items: Api<DeployItem> = Api::namespaced(client.clone(), &state.namespace);
    let _controller = execution_controller(&client);
    let all = ["di-a", "di-b", "di-c"];

    patch_status(&executions, "exec-2", json!({"jobID": "job2"})).await;
    started(&items, &all, &["di-a", "di-b"], "job2").await;
    eventually("exec-2 is Progressing", || async {
        phase(&executions, "exec-2").await == Some(ExecutionPhase::Progressing)
    })
    .await;
    succeed(&items, "di-a", "job2").await;
    started(&items, &all, &["di-a", "di-b"], "job2").await;
    succeed(&items, "di-b", "job2").await;
    started(&items, &all, &["di-a", "di-b", "di-c"], "job2").await;
    succeed(&items, "di-c", "job2").await;
    eventually("exec-2 finished job2 Succeeded", || async {
        let status = executions.get("exec-2").await.unwrap().status.unwrap();
        status.job_id_finished.as_deref() == Some("job2")
            && status.phase == Some(ExecutionPhase::Succeeded)
    })
    .await;

    let mut execution = executions.get("exec-2").await.unwrap();
    execution.spec.deploy_items[1].depends_on = Some(vec!["a".into()]);
    execution.spec.deploy_items[2].depends_on = Some(vec!["b".into()]);
    patch(
        &executions,
        "exec-2",
        json!({"spec": {"deployItems": execution.spec.deploy_items}}),
    )
    .await;
    patch_status(&executions, "exec-2", json!({"jobID": "job3"})).await;
    started(&items, &all, &["di-a"], "job3").await;
    succeed(&items, "di-a", "job3").await;
    started(&items, &all, &["di-a", "di-b"], "job3").await;
    succeed(&items, "di-b", "job3").await;
    started(&items, &all, &["di-a", "di-b", "di-c"], "job3").await;
    succeed(&items, "di-c", "job3").await;
    eventually("exec-2 finished job3 Succeeded", || async {
        let status = executions.get("exec-2").await.unwrap().status.unwrap();
        status.job_id_finished.as_deref() == Some("job3")
            && status.phase == Some(ExecutionPhase::Succeeded)
    })
    .await;
}
