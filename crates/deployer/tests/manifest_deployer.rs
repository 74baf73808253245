//! The manifest deployer on two testbed clusters: apply, update and prune, delete, keep,
//! delete-without-uninstall, exports.

mod common;

use common::*;
use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use landscaper_api::constants::{annotations, deploy_item_types::MANIFEST, finalizers};
use landscaper_api::core::DeployItemStatus;
use landscaper_api::deployer::ManifestProviderStatus;
use landscaper_deployer::deployers::manifest::DEPLOY_ITEM_LABEL;
use serde_json::json;
use testbed::{Fault, Matcher};

fn managed(status: &DeployItemStatus) -> Vec<(String, String, Option<String>)> {
    let ps: ManifestProviderStatus =
        serde_json::from_value(status.provider_status.clone().unwrap()).unwrap();
    ps.managed_resources
        .into_iter()
        .map(|m| {
            (
                m.resource.kind.unwrap(),
                m.resource.name.unwrap(),
                m.resource.namespace,
            )
        })
        .collect()
}

#[tokio::test]
async fn a_manifest_item_is_applied_labelled_and_succeeds() {
    let env = env_with_target().await;
    let deployer = env.start_manifest_deployer();
    env.manifest_item("app", vec![
            configmap("app", "one", json!({"k": "1"}), "manage"),
            json!({"manifest": {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "app"}}}),
            json!({"manifest": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "defaulted"}, "data": {"k": "2"}}}),
        ]).await;
    let di = env.finished("app", "job-1").await;
    let status = di.status.clone().unwrap();
    assert_succeeded(&status);
    assert_eq!(status.job_id_finished, status.job_id);
    assert_eq!(status.observed_generation, di.metadata.generation);
    assert_eq!(status.deployer.as_ref().unwrap().name, "test-deployer");
    assert!(status.last_reconcile_time.is_some());
    assert!(
        di.metadata
            .finalizers
            .clone()
            .unwrap()
            .contains(&finalizers::LANDSCAPER.to_string())
    );
    // The Namespace went first, although it was listed second.
    assert_eq!(
        managed(&status),
        vec![
            ("Namespace".into(), "app".into(), None),
            ("ConfigMap".into(), "one".into(), Some("app".into())),
            (
                "ConfigMap".into(),
                "defaulted".into(),
                Some("default".into())
            ),
        ]
    );
    let one = env
        .configmap("app", "one")
        .await
        .expect("ConfigMap app/one exists");
    assert_eq!(
        one.metadata
            .labels
            .unwrap()
            .get(DEPLOY_ITEM_LABEL)
            .map(String::as_str),
        Some("app")
    );
    assert!(env.configmap("default", "defaulted").await.is_some());
    deployer.stop().await;
}

#[tokio::test]
async fn changing_manifests_updates_objects_and_deletes_dropped_ones() {
    let env = env_with_target().await;
    let _deployer = env.start_manifest_deployer();
    env.manifest_item(
        "app",
        vec![
            configmap("default", "stays", json!({"v": "old"}), "manage"),
            configmap("default", "goes", json!({}), "manage"),
            configmap("default", "kept", json!({}), "keep"),
        ],
    )
    .await;
    env.finished("app", "job-1").await;
    let stays = configmap("default", "stays", json!({"v": "new"}), "manage");
    env.reconfigure("app", manifests(vec![stays]), "job-2")
        .await;
    let status = env.succeeded("app", "job-2").await;
    assert_eq!(
        managed(&status),
        vec![("ConfigMap".into(), "stays".into(), Some("default".into()))]
    );
    let stays = env.configmap("default", "stays").await.unwrap();
    assert_eq!(stays.data.unwrap()["v"], "new");
    assert!(env.configmap("default", "goes").await.is_none());
    assert!(
        env.configmap("default", "kept").await.is_some(),
        "keep objects are never pruned"
    );
}

#[tokio::test]
async fn deleting_the_item_removes_everything_but_keep_objects() {
    let env = env_with_target().await;
    let _deployer = env.start_manifest_deployer();
    env.manifest_item("app", vec![
            json!({"manifest": {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "gone"}}}),
            configmap("gone", "a", json!({}), "manage"),
            configmap("default", "kept", json!({}), "keep"),
            configmap("default", "immutable", json!({}), "immutable"),
        ]).await;
    env.finished("app", "job-1").await;
    env.delete_item("app").await;
    assert!(env.configmap("gone", "a").await.is_none());
    assert!(env.configmap("default", "immutable").await.is_none());
    assert!(env.configmap("default", "kept").await.is_some());
    let ns: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(env.target.clone());
    let gone = ns.get_opt("gone").await.unwrap();
    assert!(gone.is_none() || gone.unwrap().metadata.deletion_timestamp.is_some());
}

#[tokio::test]
async fn a_discovery_failure_during_deletion_is_retried_not_taken_for_a_vanished_kind() {
    let env = env_with_target().await;
    let deployer = env.start_manifest_deployer();
    env.manifest_item(
        "app",
        vec![configmap("default", "doomed", json!({}), "manage")],
    )
    .await;
    env.succeeded("app", "job-1").await;
    deployer.stop().await;

    // A new deployer knows no kinds yet, and the cluster's discovery fails once.
    env.target_cluster().faults().fail_next(
        1,
        Matcher::any().verb("get").resource("/api/v1"),
        Fault::InternalError,
    );
    let _deployer = env.start_manifest_deployer();
    env.delete_item("app").await;
    let failed = answered_with(env.target_cluster(), 500);
    assert_eq!(failed, 1, "the injected fault met a request");
    assert!(env.configmap("default", "doomed").await.is_none());
}

#[tokio::test]
async fn an_apply_the_cluster_never_answers_ends_at_the_items_timeout() {
    let env = env_with_target().await;
    env.never_answer("patch", "configmaps", "stuck");
    let _deployer = env.start_manifest_deployer();
    // Without a bound the apply would wait for the client's read timeout (minutes), far
    // beyond `finished`'s patience.
    env.item_with_timeout(
        "app",
        MANIFEST,
        Some("cluster"),
        manifests(vec![configmap("default", "stuck", json!({}), "manage")]),
        "2s",
    )
    .await;
    let error = env.failed("app", "job-1").await;
    assert_eq!(error.reason, "ProgressingTimeout");
    assert!(
        error.message.contains("ConfigMap default/stuck")
            && error
                .message
                .contains("did not finish within its timeout of 2s"),
        "{}",
        error.message
    );
    env.answer_again();
}

#[tokio::test]
async fn delete_without_uninstall_removes_nothing() {
    let env = env_with_target().await;
    let _deployer = env.start_manifest_deployer();
    env.manifest_item("app", vec![configmap("default", "a", json!({}), "manage")])
        .await;
    env.finished("app", "job-1").await;
    env.annotate("app", annotations::DELETE_WITHOUT_UNINSTALL, "true")
        .await;
    env.delete_item("app").await;
    assert!(env.configmap("default", "a").await.is_some());
}

#[tokio::test]
async fn exports_land_in_the_export_secret() {
    let env = env_with_target().await;
    let _deployer = env.start_manifest_deployer();
    let mut cfg = manifests(vec![configmap(
        "default",
        "src",
        json!({"url": "https://x"}),
        "manage",
    )]);
    cfg["exports"] = json!({"exports": [
        {"key": "url", "jsonPath": ".data.url", "fromResource": {"apiVersion": "v1", "kind": "ConfigMap", "name": "src", "namespace": "default"}},
        {"key": "all", "jsonPath": "{.data}", "fromResource": {"apiVersion": "v1", "kind": "ConfigMap", "name": "src", "namespace": "default"}},
    ]});
    env.item("app", MANIFEST, Some("cluster"), cfg).await;
    let status = env.succeeded("app", "job-1").await;
    let export_ref = status.export_ref.expect("exportRef is set");
    assert_eq!(export_ref.name, "app-export");
    let secret = Api::<Secret>::namespaced(env.ls.clone(), NS)
        .get("app-export")
        .await
        .unwrap();
    let config: serde_json::Value =
        serde_json::from_slice(&secret.data.unwrap()["config"].0).unwrap();
    assert_eq!(
        config,
        json!({"url": "https://x", "all": {"url": "https://x"}})
    );
}

#[tokio::test]
async fn an_invalid_manifest_fails_with_a_configuration_error_naming_the_field() {
    let env = env_with_target().await;
    let _deployer = env.start_manifest_deployer();
    env.manifest_item(
        "bad",
        vec![json!({"manifest": {"apiVersion": "v1", "metadata": {"name": "x"}}})],
    )
    .await;
    let err = env.failed("bad", "job-1").await;
    assert_eq!(err.reason, "InvalidManifest");
    assert!(
        err.message
            .contains("manifests[0].manifest: kind is missing"),
        "{}",
        err.message
    );
    assert_eq!(
        err.codes,
        vec![landscaper_api::core::ErrorCode::ConfigurationProblem]
    );
}
