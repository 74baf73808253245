//! The installation flow under faults: a 500 or a 409 on each write of a job, dropped
//! watches, and a landscaper restart in each phase (before Init, ObjectsCreated, Progressing,
//! Completing) all end with the job Succeeded and exactly one DeployItem per item.

use std::time::Duration;

use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use landscaper_api::core::{DeployItem, Installation, InstallationPhase};
use landscaper_e2e::{World, eventually_within, flow};
use serde_json::{Value, json};
use testbed::{Fault, Matcher};

/// A root installation `name` with one mock item that succeeds.
fn one_item(name: &str) -> Installation {
    let blueprint = "apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Blueprint\ndeployExecutions:\n- name: main\n  type: GoTemplate\n  template: |\n    deployItems:\n    - name: item\n      type: landscaper.gardener.cloud/mock\n      config:\n        apiVersion: mock.deployer.landscaper.gardener.cloud/v1alpha1\n        kind: ProviderConfiguration\n        phase: Succeeded\n";
    serde_json::from_value(json!({
        "metadata": {"name": name, "annotations": {"landscaper.gardener.cloud/operation": "reconcile"}},
        "spec": {"blueprint": {"inline": {"filesystem": {"blueprint.yaml": blueprint}}}},
    }))
    .expect("an installation")
}

/// Waits until `name` finished a job Succeeded (the retries after faults take a while);
/// `case` says which case waits, for the message.
async fn succeeds(api: &Api<Installation>, name: &str, case: &str) {
    eventually_within(
        &format!("installation {name} succeeds ({case})"),
        Duration::from_secs(90),
        || async {
            api.get(name).await.ok().is_some_and(|i| {
                i.status.is_some_and(|s| {
                    s.job_id.is_some()
                        && s.job_id == s.job_id_finished
                        && s.phase == Some(InstallationPhase::Succeeded)
                })
            })
        },
    )
    .await;
}

async fn item_count(client: &Client, namespace: &str) -> usize {
    Api::<DeployItem>::namespaced(client.clone(), namespace)
        .list(&Default::default())
        .await
        .expect("items listed")
        .items
        .len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_write_at_each_step_of_a_job_ends_succeeded_without_duplicate_items() {
    let world = World::start().await;
    let cases = [
        ("patch", "installations/status"),
        ("patch", "installations"),
        ("create", "executions"),
        ("patch", "executions/status"),
        ("create", "deployitems"),
        ("patch", "deployitems/status"),
        ("create", "dataobjects"),
    ];
    let mut namespaces = Vec::new();
    for (index, (verb, resource)) in cases.iter().enumerate() {
        for (fault_index, fault) in [Fault::InternalError, Fault::Conflict]
            .into_iter()
            .enumerate()
        {
            let namespace = format!("fault-{index}-{fault_index}");
            let client = flow::namespace_with_mock_deployer(&world, &namespace).await;
            // The first such request of this namespace fails; the controllers must retry.
            world.landscaper_cluster().faults().fail_next(
                1,
                Matcher::any()
                    .verb(verb)
                    .resource(resource)
                    .namespace(&namespace),
                fault,
            );
            Api::<Installation>::namespaced(client.clone(), &namespace)
                .create(&PostParams::default(), &one_item("root"))
                .await
                .expect("installation created");
            namespaces.push((namespace, client, format!("{verb} {resource}")));
        }
    }
    for (namespace, client, what) in &namespaces {
        let api = Api::<Installation>::namespaced(client.clone(), namespace);
        succeeds(&api, "root", &format!("{what} failing once in {namespace}")).await;
        assert_eq!(
            item_count(client, namespace).await,
            1,
            "{what} failing once in {namespace} made a second item"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropped_watches_during_a_job_do_not_stop_it() {
    let world = World::start().await;
    let client = flow::namespace_with_mock_deployer(&world, "dropped").await;
    let objects: Api<landscaper_api::core::DataObject> = Api::namespaced(client.clone(), "dropped");
    objects
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "greeting-in"}, "data": "hi"}))
                .unwrap(),
        )
        .await
        .unwrap();
    let installations: Api<Installation> = Api::namespaced(client.clone(), "dropped");
    let root: Installation =
        serde_json::from_value(flow::root_installation("root", "greeting-in", "result")).unwrap();
    installations
        .create(&PostParams::default(), &root)
        .await
        .unwrap();
    // Drop every watch a few times while the producer and consumer run.
    for _ in 0..5 {
        tokio::time::sleep(Duration::from_millis(300)).await;
        world.landscaper_cluster().faults().drop_watches();
    }
    succeeds(&installations, "root", "watches dropped").await;
    assert_eq!(
        item_count(&client, "dropped").await,
        2,
        "one item per stage"
    );
}

/// The phase of `name` now.
async fn phase(api: &Api<Installation>, name: &str) -> Option<InstallationPhase> {
    api.get(name).await.ok()?.status?.phase
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_in_each_phase_resumes_the_job() {
    let mut world = World::start().await;
    let client = world.landscaper_namespace("restart").await;
    let installations: Api<Installation> = Api::namespaced(client.clone(), "restart");
    let items: Api<DeployItem> = Api::namespaced(client.clone(), "restart");
    // No deployer serves the item: the test finishes it while the landscaper is down.
    let by_hand = |name: &str| -> Installation {
        let blueprint = "apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Blueprint\ndeployExecutions:\n- name: main\n  type: GoTemplate\n  template: |\n    deployItems:\n    - name: item\n      type: example.com/by-hand\n      config: {}\n";
        serde_json::from_value(json!({
            "metadata": {"name": name, "annotations": {"landscaper.gardener.cloud/operation": "reconcile"}},
            "spec": {"blueprint": {"inline": {"filesystem": {"blueprint.yaml": blueprint}}}},
        }))
        .unwrap()
    };

    // Before Init: created while the landscaper is down.
    world.stop_landscaper().await;
    installations
        .create(&PostParams::default(), &by_hand("early"))
        .await
        .unwrap();
    world.start_landscaper().await;
    // Progressing: stopped while the item runs, finished meanwhile, resumed.
    eventually_within(
        "early's item has its job",
        Duration::from_secs(30),
        || async { item_job(&items, "early").await.is_some() },
    )
    .await;
    assert_eq!(
        phase(&installations, "early").await,
        Some(InstallationPhase::Progressing)
    );
    world.stop_landscaper().await;
    finish_item(&items, "early").await;
    world.start_landscaper().await;
    succeeds(&installations, "early", "restarted while Progressing").await;
    assert_eq!(item_count(&client, "restart").await, 1);

    // ObjectsCreated: the job ID cannot reach the Execution (its status writes fail), so the
    // job stays in that phase until the restart.
    let objects_created = Matcher::any()
        .verb("patch")
        .resource("executions/status")
        .namespace("restart");
    world.landscaper_cluster().faults().fail_next(
        usize::MAX,
        objects_created,
        Fault::InternalError,
    );
    installations
        .create(&PostParams::default(), &by_hand("handing-down"))
        .await
        .unwrap();
    stays_in(
        &installations,
        "handing-down",
        InstallationPhase::ObjectsCreated,
    )
    .await;
    world.stop_landscaper().await;
    world.landscaper_cluster().faults().clear();
    world.start_landscaper().await;
    eventually_within(
        "handing-down's item has its job",
        Duration::from_secs(30),
        || async { item_job(&items, "handing-down").await.is_some() },
    )
    .await;
    finish_item(&items, "handing-down").await;
    succeeds(
        &installations,
        "handing-down",
        "restarted in ObjectsCreated",
    )
    .await;

    // Completing: its export cannot be written (DataObject creates fail) until the restart.
    let exporting = {
        let mut installation = by_hand("exporting");
        let blueprint = "apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Blueprint\nexports:\n- name: out\n  schema: {type: string}\ndeployExecutions:\n- name: main\n  type: GoTemplate\n  template: |\n    deployItems:\n    - name: item\n      type: example.com/by-hand\n      config: {}\nexportExecutions:\n- name: out\n  type: GoTemplate\n  template: |\n    exports:\n      out: done\n";
        installation.spec.blueprint.inline =
            serde_json::from_value(json!({"filesystem": {"blueprint.yaml": blueprint}})).unwrap();
        installation.spec.exports =
            serde_json::from_value(json!({"data": [{"name": "out", "dataRef": "exported"}]}))
                .unwrap();
        installation
    };
    let completing = Matcher::any()
        .verb("create")
        .resource("dataobjects")
        .namespace("restart");
    world
        .landscaper_cluster()
        .faults()
        .fail_next(usize::MAX, completing, Fault::InternalError);
    installations
        .create(&PostParams::default(), &exporting)
        .await
        .unwrap();
    eventually_within(
        "exporting's item has its job",
        Duration::from_secs(30),
        || async { item_job(&items, "exporting").await.is_some() },
    )
    .await;
    finish_item(&items, "exporting").await;
    stays_in(&installations, "exporting", InstallationPhase::Completing).await;
    world.stop_landscaper().await;
    world.landscaper_cluster().faults().clear();
    world.start_landscaper().await;
    succeeds(&installations, "exporting", "restarted in Completing").await;
    let exported: Api<landscaper_api::core::DataObject> =
        Api::namespaced(client.clone(), "restart");
    assert_eq!(exported.get("exported").await.unwrap().data, "done");
    assert_eq!(
        item_count(&client, "restart").await,
        3,
        "one item per installation"
    );
}

/// Waits until `name` is in `phase` (held there by an injected fault) with its job running.
async fn stays_in(api: &Api<Installation>, name: &str, held: InstallationPhase) {
    eventually_within(
        &format!("{name} is held in {held:?}"),
        Duration::from_secs(30),
        || async {
            api.get(name)
                .await
                .ok()
                .and_then(|i| i.status)
                .is_some_and(|s| {
                    s.phase.as_ref() == Some(&held)
                        && s.job_id.is_some()
                        && s.job_id != s.job_id_finished
                })
        },
    )
    .await;
}

/// The job ID of the item of installation `installation`, once it has one.
async fn item_job(items: &Api<DeployItem>, installation: &str) -> Option<(String, String)> {
    let list = items.list(&Default::default()).await.ok()?.items;
    let item = list
        .into_iter()
        .find(|i| i.name_any().starts_with(installation))?;
    let job = item.status.as_ref()?.job_id.clone()?;
    Some((item.name_any(), job))
}

/// Writes what a deployer writes when the item's job succeeded.
async fn finish_item(items: &Api<DeployItem>, installation: &str) {
    let (name, job) = item_job(items, installation).await.expect("a running item");
    let status: Value = json!({"status": {"phase": "Succeeded", "jobIDFinished": job}});
    items
        .patch_status(&name, &PatchParams::default(), &Patch::Merge(status))
        .await
        .expect("the item's status is written");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_landscaper_stopped_right_after_it_started_stops_at_once() {
    let mut world = World::start().await;
    // kube's runner waits for its first list before it looks at the shutdown signal.
    let stopped = tokio::time::timeout(Duration::from_secs(10), world.stop_landscaper()).await;
    assert!(stopped.is_ok(), "the controllers did not stop within 10 s");
}
