//! The deployer contract on two testbed clusters: readiness with timeout and abort,
//! responsibility (zero writes to foreign items, with RBAC), faults, continuous reconcile,
//! operation annotations and the mock deployer.

mod common;

use common::*;
use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use kube::api::{DeleteParams, PostParams};
use landscaper_api::config::LandscaperConfiguration;
use landscaper_api::constants::{
    annotations,
    deploy_item_types::{MANIFEST, MOCK},
};
use landscaper_api::core::{DeployItemPhase, ErrorCode, Operation, Target};
use landscaper_api::decode::config_from_yaml;
use landscaper_deployer::controller::progressing_default;
use landscaper_deployer::deployers::{manifest, mock};
use serde_json::json;
use std::time::Duration;
use testbed::{Fault, Matcher};

fn deployment(name: &str, never_ready: bool) -> serde_json::Value {
    let annotations = if never_ready {
        json!({"testbed.landscaper.gardener.cloud/never-ready": "true"})
    } else {
        json!({})
    };
    json!({"manifest": {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default", "annotations": annotations},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
        }
    }})
}

#[tokio::test]
async fn readiness_waits_for_the_workload_to_become_ready() {
    let env = env_with_workloads().await;
    let _d = env.start_manifest_deployer();
    env.manifest_item("web", vec![deployment("web", false)])
        .await;
    env.succeeded("web", "job-1").await;
}

#[tokio::test]
async fn a_workload_that_never_becomes_ready_fails_with_a_timeout() {
    let env = env_with_workloads().await;
    let _d = env.start_manifest_deployer();
    let mut cfg = manifests(vec![deployment("stuck", true)]);
    cfg["readinessChecks"] = json!({});
    env.item_with_timeout("stuck", MANIFEST, Some("cluster"), cfg, "1s")
        .await;
    let err = env.failed("stuck", "job-1").await;
    assert_eq!(err.codes, vec![ErrorCode::Timeout]);
    assert!(
        err.message.contains("Deployment default/stuck"),
        "{}",
        err.message
    );
}

/// A one-replica Deployment of `image`.
fn web(image: &str) -> serde_json::Value {
    json!({"manifest": {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": image}]}}
        }
    }})
}

#[tokio::test]
async fn an_upgrade_to_an_image_that_never_gets_ready_is_not_done_while_the_old_pod_serves() {
    let env = env().await;
    env.target_cluster().set_simulate_workloads(true);
    env.target_cluster().set_never_ready_image("web:broken");
    env.target("cluster", &[]).await;
    let _d = env.start_manifest_deployer();
    env.item_with_timeout(
        "web",
        MANIFEST,
        Some("cluster"),
        manifests(vec![web("web:1")]),
        "3s",
    )
    .await;
    env.succeeded("web", "job-1").await;

    // The rollout stops with the old pod available next to the new one that never starts:
    // updated, ready and available replicas all equal spec.replicas, and yet not done.
    env.reconfigure("web", manifests(vec![web("web:broken")]), "job-2")
        .await;
    let err = env.failed("web", "job-2").await;
    assert_eq!(err.codes, vec![ErrorCode::Timeout]);
    assert!(
        err.message
            .contains("Deployment default/web: 1 old replicas pending termination"),
        "{}",
        err.message
    );

    // An upgrade to an image that starts finishes as before.
    env.reconfigure("web", manifests(vec![web("web:2")]), "job-3")
        .await;
    env.succeeded("web", "job-3").await;
}

#[tokio::test]
async fn a_failing_item_is_retried_no_later_than_its_timeout() {
    let env = env().await;
    // The Secret this Target names does not exist: every attempt fails transiently.
    let target: Target = serde_json::from_value(json!({
        "metadata": {"name": "no-secret", "namespace": NS},
        "spec": {"type": "landscaper.gardener.cloud/kubernetes-cluster",
                 "secretRef": {"name": "missing", "namespace": NS, "key": "kubeconfig"}}
    }))
    .unwrap();
    env.create_target(&target).await;
    // A first retry two minutes away: only a retry cut short by the deadline ends the job
    // within the test's wait.
    let mut cfg = config(MANIFEST);
    cfg.retry_initial = Duration::from_secs(120);
    cfg.retry_max = Duration::from_secs(120);
    let _d = start(manifest::setup(env.ls.clone(), env.ls.clone(), cfg));
    let started = std::time::Instant::now();
    env.item_with_timeout(
        "app",
        MANIFEST,
        Some("no-secret"),
        manifests(vec![configmap("default", "a", json!({}), "manage")]),
        "2s",
    )
    .await;
    let err = env.failed("app", "job-1").await;
    let took = started.elapsed();
    assert_eq!(err.codes, vec![ErrorCode::Timeout]);
    assert!(err.message.contains("not found"), "{}", err.message);
    assert!(took < Duration::from_secs(30), "failed after {took:?}");
}

#[tokio::test]
async fn a_missing_target_fails_the_item_in_one_reconcile() {
    let env = env().await;
    // Without target selectors the deployer serves every item, so the Target's absence is
    // an error of the item, not a sign that another deployer serves it.
    let _d = start(mock::setup(env.ls.clone(), env.ls.clone(), config(MOCK)));
    env.item("app", MOCK, Some("missing"), json!({})).await;
    let err = env.failed("app", "job-1").await;
    assert_eq!(
        (err.reason.as_str(), err.codes.clone()),
        ("TargetNotFound", vec![ErrorCode::ConfigurationProblem])
    );
    assert!(
        err.message.contains("Target items/missing not found"),
        "{}",
        err.message
    );
    // The test's trigger, then one job run: pickup, Progressing and the final write, with no
    // retried error in between.
    let status_writes =
        env.ls_cluster()
            .counters()
            .count(Some("patch"), Some("deployitems/status"), None);
    assert_eq!(status_writes, 4);
}

/// The writes the landscaper cluster received for the item `name`, as (verb, resource).
fn writes_of(env: &Env, name: &str) -> Vec<(String, String)> {
    env.ls_cluster()
        .writes()
        .into_iter()
        .filter(|r| r.resource == "deployitems" && r.name == name)
        .map(|r| (r.verb.clone(), r.full_resource()))
        .collect()
}

#[tokio::test]
async fn the_reconcile_time_annotation_goes_with_the_pickup_writes() {
    let env = env().await;
    for (name, annotations) in [
        ("plain", json!({})),
        (
            "timed",
            json!({annotations::RECONCILE_TIME: "2026-11-28T21:05:19Z"}),
        ),
    ] {
        let item = serde_json::from_value(json!({
            "apiVersion": "landscaper.gardener.cloud/v1alpha1", "kind": "DeployItem",
            "metadata": {"name": name, "annotations": annotations},
            "spec": {"type": MOCK, "config": {}}
        }))
        .unwrap();
        env.items()
            .create(&PostParams::default(), &item)
            .await
            .unwrap();
        env.trigger(name, "job-1").await;
    }
    let _d = start(mock::setup(env.ls.clone(), env.ls.clone(), config(MOCK)));
    for name in ["plain", "timed"] {
        env.succeeded(name, "job-1").await;
    }
    let timed = env.items().get("timed").await.unwrap();
    assert!(
        !timed
            .metadata
            .annotations
            .unwrap_or_default()
            .contains_key(annotations::RECONCILE_TIME),
        "the annotation is still there"
    );
    assert_eq!(writes_of(&env, "timed"), writes_of(&env, "plain"));
}

#[tokio::test]
async fn the_configured_progressing_default_times_out_items_without_a_timeout() {
    let env = env_with_workloads().await;
    let configuration: LandscaperConfiguration = config_from_yaml(
        "deployItemTimeouts:\n  progressingDefault: 2s\n",
        "config.yaml",
    )
    .unwrap();
    let mut cfg = config(MANIFEST);
    cfg.progressing_default = progressing_default(configuration.deploy_item_timeouts.as_ref());
    let _d = start(manifest::setup(env.ls.clone(), env.ls.clone(), cfg));
    let started = std::time::Instant::now();
    env.manifest_item("stuck", vec![deployment("stuck", true)])
        .await;
    let err = env.failed("stuck", "job-1").await;
    let took = started.elapsed();
    assert_eq!(err.codes, vec![ErrorCode::Timeout]);
    assert!(err.message.contains("timeout of 2s"), "{}", err.message);
    assert!(took >= Duration::from_secs(2), "failed after {took:?}");
    assert!(took < Duration::from_secs(30), "failed after {took:?}");
}

#[tokio::test]
async fn abort_during_a_readiness_wait_ends_failed_promptly() {
    let env = env_with_workloads().await;
    let _d = env.start_manifest_deployer();
    env.manifest_item("stuck", vec![deployment("stuck", true)])
        .await;
    let items = env.items();
    wait_until(|| {
        let items = items.clone();
        async move {
            let di = items.get("stuck").await.unwrap();
            di.status.and_then(|s| s.phase) == Some(DeployItemPhase::Progressing)
        }
    })
    .await;
    env.annotate("stuck", annotations::OPERATION, Operation::Abort.as_str())
        .await;
    // The item's timeout is the default ten minutes: ending within `WAIT`, and as Aborted,
    // shows the abort ended the wait.
    assert_eq!(env.failed("stuck", "job-1").await.reason, "Aborted");
    wait_until(|| {
        let items = items.clone();
        async move {
            let di = items.get("stuck").await.unwrap();
            !di.metadata
                .annotations
                .unwrap_or_default()
                .contains_key(annotations::OPERATION)
        }
    })
    .await;
}

/// A user allowed exactly what a deployer needs in the landscaper cluster.
async fn deployer_user(env: &Env) -> kube::Client {
    let rules = json!([
        {"apiGroups": ["landscaper.gardener.cloud"], "resources": ["deployitems", "targets"], "verbs": ["get", "list", "watch", "patch"]},
        {"apiGroups": ["landscaper.gardener.cloud"], "resources": ["deployitems/status"], "verbs": ["get", "patch"]},
        {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "create", "patch"]},
        {"apiGroups": ["events.k8s.io"], "resources": ["events"], "verbs": ["create", "patch"]}
    ]);
    let token = user(env.ls_cluster(), "manifest-deployer", rules).await;
    env.ls_cluster().client_as(&token)
}

#[tokio::test]
async fn items_of_another_type_or_environment_are_never_written() {
    let env = env().await;
    env.target("env-a", &[(annotations::ENVIRONMENT, "a")])
        .await;
    env.target("env-b", &[(annotations::ENVIRONMENT, "b")])
        .await;
    let one_cm = |name: &str| manifests(vec![configmap("default", name, json!({}), "manage")]);
    env.item("theirs", MANIFEST, Some("env-b"), one_cm("theirs"))
        .await;
    env.item("mock", MOCK, Some("env-a"), json!({})).await;
    env.item("no-target", MANIFEST, None, one_cm("no-target"))
        .await;

    let client = deployer_user(&env).await;
    let mut cfg = config(MANIFEST);
    cfg.target_selectors = serde_json::from_value(json!([
        {"annotations": [{"key": annotations::ENVIRONMENT, "operator": "=", "values": ["a"]}]}
    ]))
    .unwrap();
    let _d = start(manifest::setup(client.clone(), client, cfg));
    env.item("ours", MANIFEST, Some("env-a"), one_cm("ours"))
        .await;
    env.finished("ours", "job-1").await;

    let counters = env.ls_cluster().counters();
    let user = Some("manifest-deployer");
    // Exactly the writes of our own item's job: finalizer; pickup, Progressing, final status.
    assert_eq!(counters.count(Some("patch"), Some("deployitems"), user), 1);
    assert_eq!(
        counters.count(Some("patch"), Some("deployitems/status"), user),
        3
    );
    assert_eq!(counters.writes(user), 4);
    for name in ["theirs", "mock", "no-target"] {
        let di = env.items().get(name).await.unwrap();
        assert_eq!(
            di.status.unwrap().job_id_finished,
            None,
            "{name} was not touched"
        );
        assert!(env.configmap("default", name).await.is_none());
    }
}

#[tokio::test]
async fn faults_mid_reconcile_end_in_the_right_state_without_duplicates() {
    let env = env_with_workloads().await;
    let mut cfg = manifests(vec![
        configmap("default", "cm", json!({"k": "v"}), "manage"),
        deployment("web", false),
    ]);
    cfg["exports"] = json!({"exports": [{"key": "k", "jsonPath": ".data.k", "fromResource": {"apiVersion": "v1", "kind": "ConfigMap", "name": "cm", "namespace": "default"}}]});
    env.item("app", MANIFEST, Some("cluster"), cfg).await;
    // The item waits with a pending job; the deployer meets the faults from its first step.
    let ls = env.ls_cluster();
    ls.faults().fail_next(
        1,
        Matcher::any().verb("patch").resource("deployitems/status"),
        Fault::InternalError,
    );
    ls.faults().fail_next(
        1,
        Matcher::any().verb("patch").resource("deployitems"),
        Fault::Conflict,
    );
    ls.faults().fail_next(
        1,
        Matcher::any().verb("create").resource("secrets"),
        Fault::InternalError,
    );
    env.target_cluster().faults().fail_next(
        1,
        Matcher::any().verb("patch").resource("configmaps"),
        Fault::InternalError,
    );
    let _d = env.start_manifest_deployer();
    let items = env.items();
    wait_until(|| {
        let items = items.clone();
        async move {
            items.get("app").await.unwrap().status.and_then(|s| s.phase)
                == Some(DeployItemPhase::Progressing)
        }
    })
    .await;
    ls.faults().drop_watches();
    env.target_cluster().faults().drop_watches();
    let status = env.succeeded("app", "job-1").await;
    assert_eq!(status.last_error, None);
    assert_eq!(status.job_id_finished.as_deref(), Some("job-1"));
    let managed = status.provider_status.unwrap()["managedResources"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(managed, 2);
    let secrets = Api::<Secret>::namespaced(env.ls.clone(), NS)
        .list(&Default::default())
        .await
        .unwrap();
    assert_eq!(
        secrets
            .items
            .iter()
            .filter(|s| s.metadata.name.as_deref() == Some("app-export"))
            .count(),
        1
    );
    let cms =
        Api::<k8s_openapi::api::core::v1::ConfigMap>::namespaced(env.target.clone(), "default")
            .list(&Default::default())
            .await
            .unwrap();
    assert_eq!(
        cms.items
            .iter()
            .filter(|c| c.metadata.name.as_deref() == Some("cm"))
            .count(),
        1
    );
}

#[tokio::test]
async fn continuous_reconcile_restores_a_deleted_object_and_pauses_on_request() {
    let env = env_with_target().await;
    let _d = env.start_manifest_deployer();
    let mut cfg = manifests(vec![configmap("default", "cm", json!({}), "manage")]);
    cfg["continuousReconcile"] = json!({"every": "1s"});
    env.item("app", MANIFEST, Some("cluster"), cfg).await;
    env.finished("app", "job-1").await;
    let cms =
        Api::<k8s_openapi::api::core::v1::ConfigMap>::namespaced(env.target.clone(), "default");
    cms.delete("cm", &DeleteParams::default()).await.unwrap();
    wait_until(|| {
        let cms = cms.clone();
        async move { cms.get_opt("cm").await.unwrap().is_some() }
    })
    .await;

    env.annotate("app", annotations::CONTINUOUS_RECONCILE_ACTIVE, "false")
        .await;
    // Every re-apply stamps lastReconcileTime; once it stood still for more than two
    // intervals the pause took effect and no re-apply is under way any more.
    let items = env.items();
    let stamp = || {
        let items = items.clone();
        async move {
            let di = items.get("app").await.unwrap();
            di.status.and_then(|s| s.last_reconcile_time)
        }
    };
    let end = tokio::time::Instant::now() + WAIT;
    let (mut seen, mut since) = (stamp().await, tokio::time::Instant::now());
    while since.elapsed() <= Duration::from_millis(2500) {
        assert!(
            tokio::time::Instant::now() < end,
            "lastReconcileTime kept moving: the pause did not take effect"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
        let now = stamp().await;
        if now != seen {
            (seen, since) = (now, tokio::time::Instant::now());
        }
    }
    cms.delete("cm", &DeleteParams::default()).await.unwrap();
    // Three intervals pass without a re-apply.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(cms.get_opt("cm").await.unwrap().is_none());
    assert_eq!(stamp().await, seen, "re-applied while paused");
}

#[tokio::test]
async fn continuous_reconcile_leaves_an_item_whose_deletion_failed_alone() {
    let env = env_with_target().await;
    let _d = env.start_manifest_deployer();
    let mut cfg = manifests(vec![configmap("default", "cm", json!({}), "manage")]);
    cfg["continuousReconcile"] = json!({"every": "1s"});
    env.item_with_timeout("app", MANIFEST, Some("cluster"), cfg, "2s")
        .await;
    env.finished("app", "job-1").await;
    // The deletion runs into the item's timeout and fails for good.
    env.never_answer("delete", "configmaps", "cm");
    env.items()
        .delete("app", &DeleteParams::default())
        .await
        .unwrap();
    let items = env.items();
    let phase = || {
        let items = items.clone();
        async move {
            let di = items.get("app").await.unwrap();
            di.status.and_then(|s| s.phase)
        }
    };
    wait_until(|| async { phase().await == Some(DeployItemPhase::DeleteFailed) }).await;
    // Three intervals pass without a reconcile re-installing the item and calling it fine.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(phase().await, Some(DeployItemPhase::DeleteFailed));
    env.answer_again();
}

#[tokio::test]
async fn both_every_and_cron_is_a_configuration_error() {
    let env = env_with_target().await;
    let _d = env.start_manifest_deployer();
    let mut cfg = manifests(vec![configmap("default", "cm", json!({}), "manage")]);
    cfg["continuousReconcile"] = json!({"every": "1h", "cron": "@daily"});
    env.item("app", MANIFEST, Some("cluster"), cfg).await;
    let err = env.failed("app", "job-1").await;
    assert!(
        err.message.contains("only one of every and cron"),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn the_mock_deployer_reports_its_configured_outcome() {
    let env = env().await;
    let _d = start(mock::setup(env.ls.clone(), env.ls.clone(), config(MOCK)));
    env.item(
        "ok",
        MOCK,
        None,
        json!({"phase": "Succeeded", "providerStatus": {"a": 1}, "export": {"x": "y"}}),
    )
    .await;
    env.item("bad", MOCK, None, json!({"phase": "Failed"}))
        .await;
    let ok = env.succeeded("ok", "job-1").await;
    assert_eq!(ok.provider_status, Some(json!({"a": 1})));
    let secret = Api::<Secret>::namespaced(env.ls.clone(), NS)
        .get("ok-export")
        .await
        .unwrap();
    assert_eq!(secret.data.unwrap()["config"].0, br#"{"x":"y"}"#.to_vec());
    assert_eq!(env.failed("bad", "job-1").await.reason, "MockFailed");
}

#[tokio::test]
async fn test_reconcile_starts_a_job_on_a_standalone_item_and_is_removed() {
    let env = env().await;
    let _d = start(mock::setup(env.ls.clone(), env.ls.clone(), config(MOCK)));
    let di: landscaper_api::core::DeployItem = serde_json::from_value(json!({
        "apiVersion": "landscaper.gardener.cloud/v1alpha1", "kind": "DeployItem",
        "metadata": {"name": "solo", "annotations": {annotations::OPERATION: "test-reconcile"}},
        "spec": {"type": MOCK, "config": {}}
    }))
    .unwrap();
    env.items()
        .create(&PostParams::default(), &di)
        .await
        .unwrap();
    let items = env.items();
    wait_until(|| {
        let items = items.clone();
        async move {
            let di = items.get("solo").await.unwrap();
            let s = di.status.clone().unwrap_or_default();
            s.phase == Some(DeployItemPhase::Succeeded)
                && s.job_id.is_some()
                && s.job_id == s.job_id_finished
                && !di
                    .metadata
                    .annotations
                    .unwrap_or_default()
                    .contains_key(annotations::OPERATION)
        }
    })
    .await;
}

#[tokio::test]
async fn a_deployer_whose_landscaper_cannot_be_reached_stops_on_shutdown() {
    let env = env().await;
    let yaml = env
        .bed
        .cluster_named("landscaper")
        .unwrap()
        .kubeconfig_yaml()
        .replace(
            &env.bed.cluster_named("landscaper").unwrap().url(),
            "https://127.0.0.1:1",
        );
    let kubeconfig = kube::config::Kubeconfig::from_yaml(&yaml).unwrap();
    let unreachable = kube::Client::try_from(
        kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
            .await
            .unwrap(),
    )
    .unwrap();
    let deployer = start(manifest::setup(
        unreachable.clone(),
        unreachable,
        config(MANIFEST),
    ));
    tokio::time::sleep(Duration::from_millis(300)).await;
    tokio::time::timeout(Duration::from_secs(10), deployer.stop())
        .await
        .expect("the deployer stopped on shutdown while waiting for the landscaper");
}
