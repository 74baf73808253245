//! Kubernetes Events for the state changes a person looks for, as `kubectl get events` shows
//! them through the Events API: a failed install names its reason on the Installation, its
//! Execution and its DeployItem, and failing again the same way counts up one Event instead of
//! adding another; an environment's heartbeat lost and recovered; a deployer installed in an
//! environment.

use k8s_openapi::api::events::v1::Event;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use landscaper_api::core::{DeployerRegistration, Installation, InstallationPhase};
use landscaper_e2e::blueprints::mock_blueprint;
use landscaper_e2e::flow::namespace_with_mock_deployer;
use landscaper_e2e::installations::{
    create_root, finished, finished_after, phase, request_reconcile,
};
use landscaper_e2e::registrations::{create_environment, registration};
use landscaper_e2e::{LS_NAMESPACE, World, eventually, spawn_agent};
use serde_json::json;

/// The namespace of the failing installation.
const NS: &str = "events";

/// The Events about the object `kind`/`name` in `namespace`.
async fn events_about(client: &Client, namespace: &str, kind: &str, name: &str) -> Vec<Event> {
    let events: Api<Event> = Api::namespaced(client.clone(), namespace);
    events
        .list(&ListParams::default())
        .await
        .expect("Events listed")
        .items
        .into_iter()
        .filter(|event| {
            event.regarding.as_ref().is_some_and(|regarding| {
                regarding.kind.as_deref() == Some(kind) && regarding.name.as_deref() == Some(name)
            })
        })
        .collect()
}

/// The one Event about `kind`/`name` with `reason`, once there is one.
async fn event_with_reason(
    client: &Client,
    namespace: &str,
    kind: &str,
    name: &str,
    reason: &str,
) -> Event {
    let what = format!("a {reason} Event about {kind} {name}");
    eventually(&what, || async {
        events_about(client, namespace, kind, name)
            .await
            .iter()
            .any(|event| event.reason.as_deref() == Some(reason))
    })
    .await;
    let mut found: Vec<Event> = events_about(client, namespace, kind, name)
        .await
        .into_iter()
        .filter(|event| event.reason.as_deref() == Some(reason))
        .collect();
    assert_eq!(found.len(), 1, "one Event per reason: {found:#?}");
    found.remove(0)
}

#[tokio::test]
async fn a_failed_install_is_reported_with_its_reason_on_each_object_once() {
    let world = World::start().await;
    let client = namespace_with_mock_deployer(&world, NS).await;
    let installations: Api<Installation> = Api::namespaced(client.clone(), NS);
    // One mock item that fails.
    let spec = json!({"blueprint": {"inline": {"filesystem": mock_blueprint("Failed")}}});
    create_root(&installations, "broken", spec).await;
    let first = finished(&installations, "broken").await;
    assert_eq!(phase(&first), Some(InstallationPhase::Failed));

    let started = event_with_reason(&client, NS, "Installation", "broken", "JobStarted").await;
    assert_eq!(started.type_.as_deref(), Some("Normal"));
    let failed = event_with_reason(&client, NS, "Installation", "broken", "SubobjectsFailed").await;
    assert_eq!(failed.type_.as_deref(), Some("Warning"));
    let note = failed.note.clone().unwrap_or_default();
    assert!(
        note.contains("Installation events/broken") && note.contains("Execution broken"),
        "{note}"
    );
    let installation = installations.get("broken").await.expect("read");
    let regarding = failed.regarding.clone().expect("regarding");
    assert_eq!(
        regarding.uid,
        installation.uid(),
        "kubectl describe finds it by uid"
    );
    assert_eq!(
        failed.reporting_controller.as_deref(),
        Some("landscaper-installation-controller")
    );

    let execution = event_with_reason(&client, NS, "Execution", "broken", "DeployItemFailed").await;
    assert_eq!(execution.type_.as_deref(), Some("Warning"));
    let note = execution.note.unwrap_or_default();
    assert!(
        note.contains("Execution events/broken") && note.contains("DeployItem broken-item"),
        "{note}"
    );
    let item = event_with_reason(&client, NS, "DeployItem", "broken-item", "MockFailed").await;
    assert_eq!(item.type_.as_deref(), Some("Warning"));

    // The same failure again is the same Event, counted, as `kubectl get events` expects.
    let first_job = first.status.and_then(|status| status.job_id);
    request_reconcile(&installations, "broken").await;
    let second = finished_after(&installations, "broken", first_job.as_deref()).await;
    assert_eq!(phase(&second), Some(InstallationPhase::Failed));
    eventually("the failure Event counts two", || async {
        let again =
            event_with_reason(&client, NS, "Installation", "broken", "SubobjectsFailed").await;
        again.series.is_some_and(|series| series.count >= 2)
    })
    .await;
}

#[tokio::test]
async fn a_deployer_installed_in_an_environment_is_an_event_on_its_registration() {
    let world = World::start().await;
    let client = world.landscaper_cluster().client();
    create_environment(&world, "edge").await;
    let registration = registration("mock", &["landscaper.gardener.cloud/mock"], json!({}));
    Api::<DeployerRegistration>::all(client.clone())
        .create(&PostParams::default(), &registration)
        .await
        .expect("registration created");

    // The pair's Installation finishes its job Succeeded, as when its deployer came up (the
    // component it names is not reachable here, so the test writes the outcome).
    let installations: Api<Installation> = Api::namespaced(client.clone(), LS_NAMESPACE);
    let job = finished(&installations, "mock-edge")
        .await
        .status
        .and_then(|status| status.job_id);
    installations
        .patch_status(
            "mock-edge",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {
                "phase": "Succeeded",
                "jobIDFinished": job,
                "lastError": null,
            }})),
        )
        .await
        .expect("pair Installation Succeeded");

    // A cluster-scoped object's Events live in `default`.
    let installed = event_with_reason(
        &client,
        "default",
        "DeployerRegistration",
        "mock",
        "DeployerInstalled",
    )
    .await;
    assert_eq!(installed.type_.as_deref(), Some("Normal"));
    let note = installed.note.unwrap_or_default();
    assert!(
        note.contains("environment edge") && note.contains("mock-edge"),
        "{note}"
    );
}

#[tokio::test]
async fn a_lost_and_recovered_heartbeat_are_events_on_the_environment() {
    let world = World::start().await;
    let client = world.landscaper_cluster().client();
    let settings = world.agent_settings("edge");
    let (stop, task) = spawn_agent(world.agent(settings.clone()).await);
    let ready = event_with_reason(&client, "default", "Environment", "edge", "AgentReady").await;
    assert_eq!(ready.type_.as_deref(), Some("Normal"));

    let _ = stop.send(());
    task.await.expect("the agent stopped");
    let stopped = Timestamp::now();
    let lost = event_with_reason(&client, "default", "Environment", "edge", "HeartbeatLost").await;
    assert_eq!(lost.type_.as_deref(), Some("Warning"));
    let note = lost.note.unwrap_or_default();
    assert!(note.contains("has not renewed Lease"), "{note}");
    assert!(
        lost.event_time.is_some_and(|t| t.0 >= stopped),
        "reported after the agent stopped"
    );

    let (_stop, _task) = spawn_agent(world.agent(settings).await);
    let recovered = event_with_reason(
        &client,
        "default",
        "Environment",
        "edge",
        "HeartbeatRecovered",
    )
    .await;
    assert_eq!(recovered.type_.as_deref(), Some("Normal"));
}
