//! The landscaper's DeployItem controller on the testbed: a job no deployer picks up fails
//! after `deployItemTimeouts.pickup` (saying when the Target is missing), a picked-up job is
//! left to its deployer, a job not ended after an abort fails after `deployItemTimeouts.abort`,
//! `none` turns both off, the pickup timer does not run while a deployer registered for the
//! item's type and environment is not installed yet, a restart keeps every deadline, and an
//! Execution fails with its item. Also upstream's deploy item controller tests on upstream's
//! state (`controllers/deployitem/testdata`).

use std::time::Duration;

use k8s_openapi::api::events::v1::Event;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use landscaper::controllers::deploy_item::{
    ABORTING_TIMEOUT_OPERATION, ABORTING_TIMEOUT_REASON, PICKUP_TIMEOUT_OPERATION,
    PICKUP_TIMEOUT_REASON, WAITING_FOR_DEPLOYER, timeouts::ABORT_TIME,
};
use landscaper::settings::Settings;
use landscaper_api::config::LandscaperConfiguration;
use landscaper_api::constants::deploy_item_types;
use landscaper_api::core::{
    ConditionStatus, DeployItem, DeployItemPhase, DeployerRegistration, ErrorCode, Execution,
    ExecutionPhase, Installation, find_condition,
};
use landscaper_api::decode::config_from_yaml;
use landscaper_deployer::controller::DeployerConfig;
use landscaper_e2e::registrations::{create_environment, registration};
use landscaper_e2e::states::{Loader, loaded};
use landscaper_e2e::{LS_NAMESPACE, World, eventually};
use serde_json::{Value, json};

/// The namespace of the tests' items and Targets.
const NS: &str = "apps";

/// The landscaper's settings from a configuration file's text.
fn settings(config: &str) -> Settings {
    let config: LandscaperConfiguration =
        config_from_yaml(config, "landscaper.yaml").expect("a valid configuration");
    Settings {
        namespace: LS_NAMESPACE.to_owned(),
        ..Settings::from_configuration(&config)
    }
}

/// A world whose landscaper runs on `config`, with the namespace [`NS`].
async fn world(config: &str) -> (World, Api<DeployItem>) {
    let world = World::start_with(settings(config)).await;
    world.create_namespace(world.landscaper_cluster(), NS).await;
    let items = Api::namespaced(world.landscaper_cluster().client(), NS);
    (world, items)
}

/// Creates a DeployItem of `type_` pointing at the Target `target`, if given.
async fn create_item(items: &Api<DeployItem>, name: &str, type_: &str, target: Option<&str>) {
    let mut spec = json!({
        "type": type_,
        "config": {
            "apiVersion": "mock.deployer.landscaper.gardener.cloud/v1alpha1",
            "kind": "ProviderConfiguration",
        },
    });
    if let Some(target) = target {
        spec["target"] = json!({ "name": target });
    }
    let item: DeployItem = serde_json::from_value(json!({
        "apiVersion": "landscaper.gardener.cloud/v1alpha1",
        "kind": "DeployItem",
        "metadata": { "name": name },
        "spec": spec,
    }))
    .expect("a DeployItem");
    items
        .create(&PostParams::default(), &item)
        .await
        .expect("the DeployItem is created");
}

/// Creates a Target `name` in [`NS`] belonging to the environment `environment`.
async fn create_target(client: &Client, name: &str, environment: &str) {
    let targets: Api<landscaper_api::core::Target> = Api::namespaced(client.clone(), NS);
    let target = serde_json::from_value(json!({
        "apiVersion": "landscaper.gardener.cloud/v1alpha1",
        "kind": "Target",
        "metadata": {
            "name": name,
            "annotations": { "landscaper.gardener.cloud/environment": environment },
        },
        "spec": { "type": "landscaper.gardener.cloud/kubernetes-cluster", "config": {} },
    }))
    .expect("a Target");
    targets
        .create(&PostParams::default(), &target)
        .await
        .expect("the Target is created");
}

/// Starts job `job` on the item, as the Execution controller does, generated at `at`.
async fn start_job(items: &Api<DeployItem>, name: &str, job: &str, at: Timestamp) {
    patch_status(
        items,
        name,
        json!({ "jobID": job, "jobIDGenerationTime": Time(at) }),
    )
    .await;
}

/// Picks the job up as the deployer library does: phase and `lastReconcileTime`.
async fn pick_up(items: &Api<DeployItem>, name: &str) {
    patch_status(
        items,
        name,
        json!({ "phase": "Progressing", "lastReconcileTime": Time(Timestamp::now()) }),
    )
    .await;
}

async fn patch_status(items: &Api<DeployItem>, name: &str, status: Value) {
    items
        .patch_status(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({ "status": status })),
        )
        .await
        .expect("the status is written");
}

async fn item(items: &Api<DeployItem>, name: &str) -> DeployItem {
    items.get(name).await.expect("the DeployItem is read")
}

/// Whether the item's job ended Failed with `reason`.
async fn failed_with(items: &Api<DeployItem>, name: &str, reason: &str) -> bool {
    let status = item(items, name).await.status.unwrap_or_default();
    status.phase == Some(DeployItemPhase::Failed)
        && status.job_id.is_some()
        && status.job_id == status.job_id_finished
        && status.last_error.is_some_and(|e| e.reason == reason)
}

/// Whether the item's job is still running.
async fn running(items: &Api<DeployItem>, name: &str) -> bool {
    let status = item(items, name).await.status.unwrap_or_default();
    status.job_id.is_some() && status.job_id != status.job_id_finished
}

/// The reasons of the Events about the item.
async fn event_reasons(client: &Client, name: &str) -> Vec<String> {
    let events: Api<Event> = Api::namespaced(client.clone(), NS);
    events
        .list(&ListParams::default())
        .await
        .expect("Events are listed")
        .items
        .into_iter()
        .filter(|event| event.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(name))
        .filter_map(|event| event.reason)
        .collect()
}

fn ago(seconds: i64) -> Timestamp {
    Timestamp::now() - SignedDuration::from_secs(seconds)
}

#[tokio::test]
async fn a_job_no_deployer_picks_up_fails_after_the_pickup_timeout_naming_a_missing_target() {
    let (world, items) = world("deployItemTimeouts: {pickup: 2s}").await;
    let client = world.landscaper_cluster().client();
    create_target(&client, "cluster", "nowhere").await;
    create_item(
        &items,
        "with-target",
        "example.com/unserved",
        Some("cluster"),
    )
    .await;
    create_item(
        &items,
        "missing-target",
        "example.com/unserved",
        Some("gone"),
    )
    .await;
    let started = tokio::time::Instant::now();
    start_job(&items, "with-target", "job-1", Timestamp::now()).await;
    start_job(&items, "missing-target", "job-1", Timestamp::now()).await;
    let version = item(&items, "with-target").await.resource_version();

    tokio::time::sleep(Duration::from_millis(700)).await;
    assert!(
        running(&items, "with-target").await,
        "not before the timeout"
    );
    assert_eq!(
        item(&items, "with-target").await.resource_version(),
        version,
        "nothing is written while the timer runs"
    );
    for name in ["with-target", "missing-target"] {
        eventually(&format!("{name} fails with PickupTimeout"), || async {
            failed_with(&items, name, PICKUP_TIMEOUT_REASON).await
        })
        .await;
    }
    // Job times are whole seconds: the 2s deadline is at least 1s after the job started.
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );

    let failed = item(&items, "with-target").await;
    let error = failed.status.as_ref().unwrap().last_error.clone().unwrap();
    assert_eq!(error.operation, PICKUP_TIMEOUT_OPERATION);
    assert_eq!(error.codes, vec![ErrorCode::Timeout]);
    assert!(
        error.message.contains("job-1") && error.message.contains("2 seconds"),
        "{}",
        error.message
    );
    assert!(!error.message.contains("Target"), "{}", error.message);
    let missing = item(&items, "missing-target")
        .await
        .status
        .unwrap()
        .last_error
        .unwrap();
    assert!(
        missing
            .message
            .contains("spec.target names Target apps/gone, which does not exist"),
        "{}",
        missing.message
    );
    assert!(
        event_reasons(&client, "with-target")
            .await
            .contains(&PICKUP_TIMEOUT_REASON.to_owned())
    );

    // An item whose job ended is left alone; the timer never polled, and without registered
    // deployers the Target is read only to word the failure.
    let version = failed.resource_version();
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(
        item(&items, "with-target").await.resource_version(),
        version
    );
    let reads = world
        .landscaper_cluster()
        .counters()
        .count(Some("get"), Some("targets"), None);
    assert!(reads <= 4, "the controller read Targets {reads} times");
}

#[tokio::test]
async fn a_job_a_deployer_picked_up_is_left_to_the_deployer() {
    let (world, items) = world("deployItemTimeouts: {pickup: 2s, abort: 2s}").await;
    let client = world.landscaper_cluster().client();
    let mut config = DeployerConfig::new(deploy_item_types::MOCK, "mock-deployer");
    config.namespace = Some(NS.into());
    config.retry_initial = Duration::from_millis(100);
    let setup = landscaper_deployer::deployers::mock::setup(client.clone(), client.clone(), config);
    tokio::spawn(landscaper_deployer::run(setup, std::future::pending()));

    create_item(&items, "mocked", deploy_item_types::MOCK, None).await;
    create_item(&items, "long", "example.com/long-running", None).await;
    start_job(&items, "mocked", "job-1", Timestamp::now()).await;
    start_job(&items, "long", "job-1", Timestamp::now()).await;
    pick_up(&items, "long").await;
    eventually("the mock deployer finishes its job", || async {
        let status = item(&items, "mocked").await.status.unwrap_or_default();
        status.job_id_finished.as_deref() == Some("job-1")
    })
    .await;

    tokio::time::sleep(Duration::from_secs(4)).await;
    let mocked = item(&items, "mocked").await.status.unwrap();
    assert_eq!(mocked.phase, Some(DeployItemPhase::Succeeded));
    assert!(mocked.last_error.is_none(), "{:?}", mocked.last_error);
    let long = item(&items, "long").await.status.unwrap();
    assert_eq!(long.phase, Some(DeployItemPhase::Progressing));
    assert_eq!(
        long.job_id_finished, None,
        "a running job is the deployer's"
    );
}

#[tokio::test]
async fn a_job_not_ended_after_an_abort_fails_after_the_abort_timeout() {
    let (_world, items) = world("deployItemTimeouts: {pickup: 2s, abort: 2s}").await;
    create_item(&items, "stuck", "example.com/stuck", None).await;
    create_item(&items, "aborted-before", "example.com/stuck", None).await;
    // An abort time of an earlier job does not count for the next one.
    let stale = json!({ "metadata": { "annotations": { ABORT_TIME: "2020-01-01T00:00:00Z" } } });
    items
        .patch(
            "aborted-before",
            &PatchParams::default(),
            &Patch::Merge(&stale),
        )
        .await
        .expect("annotated");
    for name in ["stuck", "aborted-before"] {
        start_job(&items, name, "job-1", Timestamp::now()).await;
        pick_up(&items, name).await;
    }
    let abort = json!({ "metadata": { "annotations": { "landscaper.gardener.cloud/operation": "abort" } } });
    items
        .patch("stuck", &PatchParams::default(), &Patch::Merge(&abort))
        .await
        .expect("abort requested");
    let requested = tokio::time::Instant::now();

    eventually("the abort is recorded", || async {
        item(&items, "stuck")
            .await
            .annotations()
            .contains_key(ABORT_TIME)
    })
    .await;
    eventually("stuck fails with AbortingTimeout", || async {
        failed_with(&items, "stuck", ABORTING_TIMEOUT_REASON).await
    })
    .await;
    assert!(
        requested.elapsed() >= Duration::from_secs(1),
        "{:?}",
        requested.elapsed()
    );
    let error = item(&items, "stuck")
        .await
        .status
        .unwrap()
        .last_error
        .unwrap();
    assert_eq!(error.operation, ABORTING_TIMEOUT_OPERATION);
    assert!(error.message.contains("job-1"), "{}", error.message);

    assert!(
        running(&items, "aborted-before").await,
        "its abort was for an earlier job"
    );
}

#[tokio::test]
async fn none_turns_both_timeouts_off() {
    let (_world, items) = world("deployItemTimeouts: {pickup: none, abort: none}").await;
    create_item(&items, "unpicked", "example.com/unserved", Some("gone")).await;
    create_item(&items, "aborting", "example.com/stuck", None).await;
    start_job(&items, "unpicked", "job-1", ago(3600)).await;
    start_job(&items, "aborting", "job-1", Timestamp::now()).await;
    pick_up(&items, "aborting").await;
    let abort = json!({ "metadata": { "annotations": { "landscaper.gardener.cloud/operation": "abort" } } });
    items
        .patch("aborting", &PatchParams::default(), &Patch::Merge(&abort))
        .await
        .expect("abort requested");

    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(
        running(&items, "unpicked").await,
        "an hour unpicked, and no pickup timeout"
    );
    assert!(running(&items, "aborting").await, "no abort timeout");
    assert!(
        !item(&items, "aborting")
            .await
            .annotations()
            .contains_key(ABORT_TIME)
    );
}

/// Registers the deployer `name` serving `types`.
async fn register(world: &World, name: &str, types: &[&str]) {
    let registration = registration(name, types, json!({}));
    let registrations: Api<DeployerRegistration> = Api::all(world.landscaper_cluster().client());
    registrations
        .create(&PostParams::default(), &registration)
        .await
        .expect("registration created");
}

#[tokio::test]
async fn the_pickup_timer_waits_for_a_registered_deployer_that_is_not_installed_yet() {
    let (world, items) = world("deployItemTimeouts: {pickup: 3s}").await;
    let client = world.landscaper_cluster().client();
    create_environment(&world, "edge").await;
    register(&world, "mock", &[deploy_item_types::MOCK]).await;
    create_target(&client, "edge-cluster", "edge").await;
    create_item(
        &items,
        "held",
        deploy_item_types::MOCK,
        Some("edge-cluster"),
    )
    .await;
    create_item(
        &items,
        "unregistered",
        "example.com/unserved",
        Some("edge-cluster"),
    )
    .await;
    start_job(&items, "held", "job-1", Timestamp::now()).await;
    start_job(&items, "unregistered", "job-1", Timestamp::now()).await;
    let started = tokio::time::Instant::now();

    eventually("held says what it waits for", || async {
        let held = item(&items, "held").await;
        let conditions = held.status.map(|s| s.conditions).unwrap_or_default();
        find_condition(&conditions, WAITING_FOR_DEPLOYER).is_some_and(|c| {
            c.status == ConditionStatus::True
                && c.message.contains("deployer mock in environment edge")
                && c.message.contains("mock-edge")
        })
    })
    .await;
    eventually("a type nobody registered times out as usual", || async {
        failed_with(&items, "unregistered", PICKUP_TIMEOUT_REASON).await
    })
    .await;
    assert!(
        event_reasons(&client, "held")
            .await
            .contains(&"WaitingForDeployer".to_owned())
    );

    // The pair's Installation ends its first job Failed (its component is not reachable here).
    let installations: Api<Installation> = Api::namespaced(client.clone(), LS_NAMESPACE);
    eventually("the pair's Installation is not installed", || async {
        let status = installations
            .get_opt("mock-edge")
            .await
            .expect("read")
            .and_then(|i| i.status)
            .unwrap_or_default();
        status.job_id.is_some() && status.job_id == status.job_id_finished
    })
    .await;
    let until = Duration::from_secs(5).saturating_sub(started.elapsed());
    tokio::time::sleep(until).await;
    assert!(
        running(&items, "held").await,
        "held for 5s, beyond the 3s pickup timeout"
    );

    let succeeded = json!({ "status": {
        "phase": "Succeeded",
        "phaseTransitionTime": Time(Timestamp::now()),
    }});
    installations
        .patch_status(
            "mock-edge",
            &PatchParams::default(),
            &Patch::Merge(&succeeded),
        )
        .await
        .expect("the pair is installed");
    let installed = tokio::time::Instant::now();
    eventually(
        "held fails once its deployer had a full pickup window",
        || async { failed_with(&items, "held", PICKUP_TIMEOUT_REASON).await },
    )
    .await;
    // A whole-second transition time: the 3s window ends at least 2s after the pair succeeded.
    assert!(
        installed.elapsed() >= Duration::from_secs(2),
        "{:?}",
        installed.elapsed()
    );
    let held = item(&items, "held").await.status.unwrap();
    let error = held.last_error.unwrap();
    assert!(
        error
            .message
            .contains("deployer mock being installed in environment edge"),
        "{}",
        error.message
    );
    let condition = find_condition(&held.conditions, WAITING_FOR_DEPLOYER).expect("condition");
    assert_eq!(condition.status, ConditionStatus::False);
    assert_eq!(condition.reason, "DeployerInstalled");
}

/// Upstream's loader state with only the deploy item controller running, on `pickup`.
async fn upstream_state(
    pickup: &str,
) -> (
    testbed::Testbed,
    Api<DeployItem>,
    tokio::sync::oneshot::Sender<()>,
) {
    let (bed, client, state) = loaded("controllers/deployitem/testdata", Loader::EnvTest).await;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let settings = settings(&format!("deployItemTimeouts: {{pickup: {pickup}}}"));
    tokio::spawn(landscaper::controllers::deploy_item::run(
        client.clone(),
        settings,
        landscaper::health::Health::new(),
        async move {
            let _ = stopped.await;
        },
    ));
    let items = Api::namespaced(client, &state.namespace);
    (bed, items, stop)
}

/// As upstream's `UpdateJobIdForDeployItem`: a new job whose start lies `seconds` back.
async fn new_job_started_ago(items: &Api<DeployItem>, name: &str, seconds: i64) -> String {
    let job = format!("job-{}", Timestamp::now().as_millisecond());
    start_job(items, name, &job, ago(seconds)).await;
    job
}

/// Upstream: "should detect pickup timeouts" (10s timeout, a job started 15s ago).
#[tokio::test]
async fn upstream_state_a_job_started_past_the_pickup_timeout_fails() {
    let (_bed, items, _stop) = upstream_state("10s").await;
    let job = new_job_started_ago(&items, "mock-di-prog", 15).await;
    eventually("mock-di-prog fails", || async {
        failed_with(&items, "mock-di-prog", PICKUP_TIMEOUT_REASON).await
    })
    .await;
    let status = item(&items, "mock-di-prog").await.status.unwrap();
    assert_eq!(status.job_id_finished.as_deref(), Some(job.as_str()));
    let message = status.last_error.unwrap().message;
    assert!(!message.contains("Target"), "{message}");
    for other in ["mock-di-succ", "mock-di-fail", "mock-di-prog-timeout"] {
        assert_eq!(
            item(&items, other).await.status.and_then(|s| s.phase),
            None,
            "{other} has no job"
        );
    }
}

/// Upstream: "should detect if the reason for a pickup timeout is a missing target".
#[tokio::test]
async fn upstream_state_a_pickup_timeout_names_the_missing_target() {
    let (_bed, items, _stop) = upstream_state("10s").await;
    let target = json!({ "spec": { "target": { "name": "null" } } });
    items
        .patch(
            "mock-di-prog",
            &PatchParams::default(),
            &Patch::Merge(&target),
        )
        .await
        .expect("the target is set");
    new_job_started_ago(&items, "mock-di-prog", 15).await;
    eventually("mock-di-prog fails", || async {
        failed_with(&items, "mock-di-prog", PICKUP_TIMEOUT_REASON).await
    })
    .await;
    let message = item(&items, "mock-di-prog")
        .await
        .status
        .unwrap()
        .last_error
        .unwrap()
        .message;
    assert!(message.contains("Target"), "{message}");
}

#[tokio::test]
async fn a_restarted_landscaper_fails_a_job_at_its_original_deadline() {
    let (mut world, items) = world("deployItemTimeouts: {pickup: 4s}").await;
    create_item(&items, "waiting", "example.com/unserved", None).await;
    start_job(&items, "waiting", "job-1", ago(1)).await;
    world.stop_landscaper().await;
    // The deadline passes while no landscaper runs.
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert!(running(&items, "waiting").await);
    world.start_landscaper().await;
    let restarted = tokio::time::Instant::now();
    eventually("waiting fails", || async {
        failed_with(&items, "waiting", PICKUP_TIMEOUT_REASON).await
    })
    .await;
    assert!(
        restarted.elapsed() < Duration::from_secs(3),
        "the timer runs from the job's start, not from the restart: {:?}",
        restarted.elapsed()
    );
}

#[tokio::test]
async fn an_execution_whose_item_no_deployer_picks_up_fails_naming_it() {
    let (world, _items) = world("deployItemTimeouts: {pickup: 2s}").await;
    let executions: Api<Execution> = Api::namespaced(world.landscaper_cluster().client(), NS);
    let execution: Execution = serde_json::from_value(json!({
        "apiVersion": "landscaper.gardener.cloud/v1alpha1",
        "kind": "Execution",
        "metadata": { "name": "exec" },
        "spec": { "deployItems": [{
            "name": "orphan", "type": "example.com/unserved", "config": {},
        }] },
    }))
    .expect("an Execution");
    executions
        .create(&PostParams::default(), &execution)
        .await
        .expect("the Execution is created");
    executions
        .patch_status(
            "exec",
            &PatchParams::default(),
            &Patch::Merge(json!({ "status": { "jobID": "job-1" } })),
        )
        .await
        .expect("the job is started");
    eventually("the execution fails", || async {
        let status = executions
            .get("exec")
            .await
            .expect("read")
            .status
            .unwrap_or_default();
        status.job_id_finished.as_deref() == Some("job-1")
            && status.phase == Some(ExecutionPhase::Failed)
    })
    .await;
    let error = executions
        .get("exec")
        .await
        .unwrap()
        .status
        .unwrap()
        .last_error
        .unwrap();
    assert!(
        error.message.contains("orphan")
            && error.message.contains("no deployer picked up job job-1"),
        "{}",
        error.message
    );
}
