//! Finalizers, garbage collection, namespace deletion and CRDs through `kube::Client`.

use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, Patch, PatchParams, PostParams,
    PropagationPolicy,
};
use serde_json::json;
use std::future::Future;
use std::time::Duration;
use testbed::Testbed;

/// Polls `check` until it holds; controllers act asynchronously, like in a cluster.
async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !check().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for: {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn cm(value: serde_json::Value) -> ConfigMap {
    serde_json::from_value(value).unwrap()
}

#[tokio::test]
async fn finalizers_hold_deletion_until_removed() {
    let bed = Testbed::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(bed.cluster().client(), "default");
    api.create(
        &PostParams::default(),
        &cm(json!({"metadata": {"name": "f", "finalizers": ["example.com/hold"]}})),
    )
    .await
    .unwrap();
    api.delete("f", &DeleteParams::default()).await.unwrap();
    let held = api.get("f").await.unwrap();
    assert!(held.metadata.deletion_timestamp.is_some());
    let err = api
        .patch(
            "f",
            &PatchParams::default(),
            &Patch::Merge(
                json!({"metadata": {"finalizers": ["example.com/hold", "example.com/more"]}}),
            ),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(err, kube::Error::Api(ref s) if s.code == 422),
        "{err:?}"
    );
    api.patch(
        "f",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await
    .unwrap();
    assert!(
        api.get_opt("f").await.unwrap().is_none(),
        "removing the last finalizer deletes the object"
    );
}

#[tokio::test]
async fn owner_deletion_collects_dependents_unless_orphaned() {
    let bed = Testbed::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(bed.cluster().client(), "default");
    let owner = api
        .create(
            &PostParams::default(),
            &cm(json!({"metadata": {"name": "owner"}})),
        )
        .await
        .unwrap();
    let uid = owner.metadata.uid.unwrap();
    let child = |name: &str| {
        cm(
            json!({"metadata": {"name": name, "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": uid}]}}),
        )
    };
    api.create(&PostParams::default(), &child("child"))
        .await
        .unwrap();
    api.delete("owner", &DeleteParams::default()).await.unwrap();
    eventually("the dependent is collected", || async {
        api.get_opt("child").await.unwrap().is_none()
    })
    .await;

    let owner = api
        .create(
            &PostParams::default(),
            &cm(json!({"metadata": {"name": "owner2"}})),
        )
        .await
        .unwrap();
    let uid2 = owner.metadata.uid.unwrap();
    api.create(
        &PostParams::default(),
        &cm(json!({"metadata": {"name": "kept", "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner2", "uid": uid2}]}})),
    )
    .await
    .unwrap();
    let orphan = DeleteParams {
        propagation_policy: Some(PropagationPolicy::Orphan),
        ..DeleteParams::default()
    };
    api.delete("owner2", &orphan).await.unwrap();
    eventually("the owner is gone", || async {
        api.get_opt("owner2").await.unwrap().is_none()
    })
    .await;
    let kept = api.get("kept").await.unwrap();
    assert!(
        kept.metadata
            .owner_references
            .unwrap_or_default()
            .is_empty(),
        "the orphan loses its ownerReference"
    );
}

#[tokio::test]
async fn namespace_deletion_removes_its_contents_first() {
    let bed = Testbed::start().await.unwrap();
    let client = bed.cluster().client();
    let namespaces: Api<Namespace> = Api::all(client.clone());
    namespaces
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "doomed"}})).unwrap(),
        )
        .await
        .unwrap();
    let api: Api<ConfigMap> = Api::namespaced(client, "doomed");
    api.create(
        &PostParams::default(),
        &cm(json!({"metadata": {"name": "content"}})),
    )
    .await
    .unwrap();
    api.create(
        &PostParams::default(),
        &cm(json!({"metadata": {"name": "held", "finalizers": ["example.com/hold"]}})),
    )
    .await
    .unwrap();
    namespaces
        .delete("doomed", &DeleteParams::default())
        .await
        .unwrap();
    let late = api
        .create(
            &PostParams::default(),
            &cm(json!({"metadata": {"name": "late"}})),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(late, kube::Error::Api(ref s) if s.code == 403),
        "{late:?}"
    );
    eventually("the plain content is deleted", || async {
        api.get_opt("content").await.unwrap().is_none()
    })
    .await;
    assert!(
        namespaces.get_opt("doomed").await.unwrap().is_some(),
        "a held object keeps the namespace"
    );
    api.patch(
        "held",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await
    .unwrap();
    eventually("the namespace is gone", || async {
        namespaces.get_opt("doomed").await.unwrap().is_none()
    })
    .await;
    assert!(api.get_opt("content").await.unwrap().is_none());
}

#[tokio::test]
async fn crds_become_served_validate_and_clean_up() {
    let bed = Testbed::start().await.unwrap();
    let client = bed.cluster().client();
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let crd = json!({
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": ["wg"]},
            "versions": [{"name": "v1", "served": true, "storage": true, "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "required": ["size"], "properties": {
                        "size": {"type": "integer", "minimum": 1}, "color": {"type": "string", "default": "blue"}}},
                    "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}]}
    });
    crds.create(
        &PostParams::default(),
        &serde_json::from_value(crd).unwrap(),
    )
    .await
    .unwrap();
    eventually("the CRD is established", || async {
        let c = crds.get("widgets.example.com").await.unwrap();
        c.status
            .and_then(|s| s.conditions)
            .unwrap_or_default()
            .iter()
            .any(|c| c.type_ == "Established" && c.status == "True")
    })
    .await;
    let ar = ApiResource {
        group: "example.com".into(),
        version: "v1".into(),
        api_version: "example.com/v1".into(),
        kind: "Widget".into(),
        plural: "widgets".into(),
    };
    let widgets: Api<DynamicObject> = Api::namespaced_with(client, "default", &ar);
    let w: DynamicObject = serde_json::from_value(json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"}, "spec": {"size": 2, "bogus": 1}})).unwrap();
    let created = widgets.create(&PostParams::default(), &w).await.unwrap();
    assert_eq!(
        created.data["spec"],
        json!({"size": 2, "color": "blue"}),
        "defaulted and pruned"
    );
    let bad: DynamicObject = serde_json::from_value(json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w2"}, "spec": {"size": 0}})).unwrap();
    let err = widgets
        .create(&PostParams::default(), &bad)
        .await
        .unwrap_err();
    match err {
        kube::Error::Api(s) => assert_eq!(
            s.message,
            "Widget.example.com \"w2\" is invalid: spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1"
        ),
        other => panic!("{other:?}"),
    }
    crds.delete("widgets.example.com", &DeleteParams::default())
        .await
        .unwrap();
    eventually("the CRD and its objects are gone", || async {
        crds.get_opt("widgets.example.com").await.unwrap().is_none()
    })
    .await;
}
