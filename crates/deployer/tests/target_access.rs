//! Target access: secretRefs resolved in another cluster, kubeconfigs that would run commands
//! rejected, and the policies and update strategies of the applier.

mod common;

use common::*;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::Api;
use kube::api::PostParams;
use landscaper_api::constants::{deploy_item_types::MANIFEST, target_types};
use landscaper_api::core::{Target, TargetSpec};
use landscaper_deployer::client_config;
use landscaper_deployer::deployers::manifest::{self, DEPLOY_ITEM_LABEL};
use landscaper_deployer::target_access::TargetAccess;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

#[tokio::test]
async fn a_secret_ref_is_resolved_in_the_deployers_own_cluster() {
    let env = env().await;
    // The kubeconfig stays in the target (host) cluster, as the agent keeps it.
    let secret: Secret = serde_json::from_value(json!({
        "metadata": {"name": "default-target-access", "namespace": "default"},
        "stringData": {"kubeconfig": env.target_cluster().kubeconfig_yaml()}
    }))
    .unwrap();
    Api::<Secret>::namespaced(env.target.clone(), "default")
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();
    let target = Target::new(
        "host",
        TargetSpec {
            type_: target_types::KUBERNETES_CLUSTER.into(),
            config: None,
            secret_ref: Some(
                serde_json::from_value(json!({"name": "default-target-access", "namespace": "default", "key": "kubeconfig"}))
                    .unwrap(),
            ),
        },
    );
    env.create_target(&target).await;
    let _d = start(manifest::setup(
        env.ls.clone(),
        env.target.clone(),
        config(MANIFEST),
    ));
    env.item(
        "app",
        MANIFEST,
        Some("host"),
        manifests(vec![configmap("default", "a", json!({}), "manage")]),
    )
    .await;
    env.succeeded("app", "job-1").await;
    assert!(env.configmap("default", "a").await.is_some());
}

#[tokio::test]
async fn a_kubeconfig_that_runs_a_command_is_rejected() {
    let env = env().await;
    let kubeconfig = "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: k\n  cluster:\n    server: https://127.0.0.1:1\ncontexts:\n- name: c\n  context:\n    cluster: k\n    user: u\nusers:\n- name: u\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: /bin/sh\n      args: [-c, 'touch /tmp/pwned']\n";
    let target = Target::new(
        "evil",
        TargetSpec {
            type_: target_types::KUBERNETES_CLUSTER.into(),
            config: Some(json!({"kubeconfig": kubeconfig})),
            secret_ref: None,
        },
    );
    env.create_target(&target).await;
    let _d = env.start_manifest_deployer();
    env.item(
        "app",
        MANIFEST,
        Some("evil"),
        manifests(vec![configmap("default", "a", json!({}), "manage")]),
    )
    .await;
    let err = env.failed("app", "job-1").await;
    assert_eq!(err.reason, "InvalidKubeconfig");
    assert!(
        err.message.contains("Target items/evil") && err.message.contains("exec"),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn fallback_leaves_objects_of_other_items_alone_and_ignore_skips() {
    let env = env_with_target().await;
    let cms = Api::<ConfigMap>::namespaced(env.target.clone(), "default");
    let foreign: ConfigMap = serde_json::from_value(json!({
        "metadata": {"name": "shared", "labels": {DEPLOY_ITEM_LABEL: "someone-else"}},
        "data": {"owner": "other"}
    }))
    .unwrap();
    cms.create(&PostParams::default(), &foreign).await.unwrap();
    let _d = env.start_manifest_deployer();
    env.manifest_item(
        "app",
        vec![
            configmap("default", "shared", json!({"owner": "app"}), "fallback"),
            configmap("default", "fresh", json!({}), "fallback"),
            configmap("default", "ignored", json!({}), "ignore"),
        ],
    )
    .await;
    let status = env.succeeded("app", "job-1").await;
    assert_eq!(
        cms.get("shared").await.unwrap().data.unwrap()["owner"],
        "other"
    );
    assert!(cms.get_opt("fresh").await.unwrap().is_some());
    assert!(cms.get_opt("ignored").await.unwrap().is_none());
    let managed = status.provider_status.unwrap()["managedResources"].clone();
    assert_eq!(managed.as_array().unwrap().len(), 1, "{managed}");
}

#[tokio::test]
async fn merge_keeps_live_values_and_merge_overwrite_replaces_them() {
    let env = env_with_target().await;
    let cms = Api::<ConfigMap>::namespaced(env.target.clone(), "default");
    for name in ["merged", "overwritten"] {
        let live: ConfigMap = serde_json::from_value(
            json!({"metadata": {"name": name}, "data": {"a": "live", "extra": "x"}}),
        )
        .unwrap();
        cms.create(&PostParams::default(), &live).await.unwrap();
    }
    let _d = env.start_manifest_deployer();
    for (name, strategy) in [("merged", "merge"), ("overwritten", "mergeOverwrite")] {
        let mut cfg = manifests(vec![configmap(
            "default",
            name,
            json!({"a": "desired", "b": "new"}),
            "manage",
        )]);
        cfg["updateStrategy"] = json!(strategy);
        env.item(name, MANIFEST, Some("cluster"), cfg).await;
        env.succeeded(name, "job-1").await;
    }
    let merged = cms.get("merged").await.unwrap().data.unwrap();
    assert_eq!(
        (
            merged["a"].as_str(),
            merged["b"].as_str(),
            merged["extra"].as_str()
        ),
        ("live", "new", "x")
    );
    let over = cms.get("overwritten").await.unwrap().data.unwrap();
    assert_eq!(
        (
            over["a"].as_str(),
            over["b"].as_str(),
            over["extra"].as_str()
        ),
        ("desired", "new", "x")
    );
}

#[tokio::test]
async fn server_side_apply_removes_fields_the_item_stopped_setting() {
    let env = env_with_target().await;
    let _d = env.start_manifest_deployer();
    env.manifest_item(
        "app",
        vec![configmap(
            "default",
            "cm",
            json!({"a": "1", "b": "2"}),
            "manage",
        )],
    )
    .await;
    env.finished("app", "job-1").await;
    let fewer = configmap("default", "cm", json!({"a": "1"}), "manage");
    env.reconfigure("app", manifests(vec![fewer]), "job-2")
        .await;
    env.finished("app", "job-2").await;
    let data = env.configmap_data("default", "cm").await;
    assert_eq!(data.len(), 1, "{data:?}");
    let fields = env
        .configmap("default", "cm")
        .await
        .unwrap()
        .metadata
        .managed_fields
        .unwrap();
    assert!(
        fields
            .iter()
            .any(|f| f.manager.as_deref() == Some(manifest::FIELD_MANAGER))
    );
}

#[tokio::test]
async fn a_client_with_bounded_reads_ends_a_request_the_cluster_never_answers() {
    let env = env().await;
    let kubeconfig =
        kube::config::Kubeconfig::from_yaml(&env.target_cluster().kubeconfig_yaml()).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .unwrap();
    let client = kube::Client::try_from(client_config::with_read_timeout(
        config,
        Duration::from_millis(500),
    ))
    .unwrap();
    env.never_answer("get", "configmaps", "silent");
    let configmaps = Api::<ConfigMap>::namespaced(client, "default");
    // kube's own default would wait for good; the test's patience stands for that.
    let answer = tokio::time::timeout(Duration::from_secs(20), configmaps.get("silent"))
        .await
        .expect("the read timeout ended the request");
    assert!(answer.is_err(), "{answer:?}");
    env.answer_again();
}

#[tokio::test]
async fn a_renewed_kubeconfig_replaces_the_targets_cached_client() {
    let env = env().await;
    let access = TargetAccess::new(env.target.clone());
    let mut target = env.target("cluster", &[]).await;
    let first = access.cluster(&target).await.unwrap();
    // The agent renews the token every ~48 minutes: the same Target, another kubeconfig.
    let token = env
        .target_cluster()
        .add_user("renewed", &["system:masters"]);
    target.spec.config =
        Some(json!({"kubeconfig": env.target_cluster().kubeconfig_yaml_for(&token)}));
    let renewed = access.cluster(&target).await.unwrap();
    assert!(!Arc::ptr_eq(&first.discovery, &renewed.discovery));
    assert_eq!(access.cached(), 1, "the old client was replaced");
    Api::<ConfigMap>::namespaced(renewed.client.clone(), "default")
        .list(&Default::default())
        .await
        .expect("the new client acts with the renewed token");
    let again = access.cluster(&target).await.unwrap();
    assert!(
        Arc::ptr_eq(&again.discovery, &renewed.discovery),
        "an unchanged kubeconfig reuses the client"
    );
    assert_eq!(access.cached(), 1);
}
