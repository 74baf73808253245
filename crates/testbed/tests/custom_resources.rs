//! Custom resources beyond one version: serving several versions of a CRD with the `None`
//! conversion (objects keep their fields, `apiVersion` follows the request), moving the
//! storage version, and the `scale` subresource from the CRD's replica and selector paths.

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::autoscaling::v1::Scale;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{
    Api, ApiResource, DynamicObject, ListParams, Patch, PatchParams, PostParams, WatchEvent,
    WatchParams,
};
use serde_json::{Value, json};
use std::time::Duration;
use testbed::Testbed;

fn widget_versions(storage: &str) -> Value {
    let schema = json!({"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {
            "replicas": {"type": "integer", "minimum": 0},
            "selector": {"type": "string"}}},
        "status": {"type": "object", "properties": {
            "count": {"type": "integer"}, "labels": {"type": "string"}}}}}});
    let subresources = json!({"status": {}, "scale": {
        "specReplicasPath": ".spec.replicas",
        "statusReplicasPath": ".status.count",
        "labelSelectorPath": ".status.labels"}});
    json!([
        {"name": "v1beta1", "served": true, "storage": storage == "v1beta1",
         "schema": schema, "subresources": subresources},
        {"name": "v1", "served": true, "storage": storage == "v1",
         "schema": schema, "subresources": subresources},
        {"name": "v1alpha1", "served": false, "storage": false, "schema": schema}
    ])
}

async fn install_widgets(client: &kube::Client) -> Api<CustomResourceDefinition> {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let crd = json!({
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": widget_versions("v1")}
    });
    crds.create(
        &PostParams::default(),
        &serde_json::from_value(crd).unwrap(),
    )
    .await
    .unwrap();
    wait_served(client, "v1").await;
    crds
}

/// Waits until `version` of the widgets answers.
async fn wait_served(client: &kube::Client, version: &str) {
    let widgets = widgets(client, version);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while widgets.list(&ListParams::default()).await.is_err() {
        assert!(tokio::time::Instant::now() < deadline, "{version} served");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn widgets(client: &kube::Client, version: &str) -> Api<DynamicObject> {
    let ar = ApiResource {
        group: "example.com".into(),
        version: version.into(),
        api_version: format!("example.com/{version}"),
        kind: "Widget".into(),
        plural: "widgets".into(),
    };
    Api::namespaced_with(client.clone(), "default", &ar)
}

fn widget(version: &str, name: &str, replicas: i64) -> DynamicObject {
    serde_json::from_value(
        json!({"apiVersion": format!("example.com/{version}"), "kind": "Widget",
        "metadata": {"name": name}, "spec": {"replicas": replicas, "selector": "app=w"}}),
    )
    .unwrap()
}

fn api_version(obj: &DynamicObject) -> String {
    obj.types
        .as_ref()
        .map(|t| t.api_version.clone())
        .unwrap_or_default()
}

#[tokio::test]
async fn every_served_version_reads_and_writes_the_same_objects() {
    let bed = Testbed::start().await.unwrap();
    let client = bed.cluster().client();
    install_widgets(&client).await;
    let (beta, v1) = (widgets(&client, "v1beta1"), widgets(&client, "v1"));

    let created = beta
        .create(&PostParams::default(), &widget("v1beta1", "a", 2))
        .await
        .unwrap();
    assert_eq!(api_version(&created), "example.com/v1beta1");
    let managed = created.metadata.managed_fields.clone().unwrap_or_default();
    assert_eq!(
        managed[0].api_version.as_deref(),
        Some("example.com/v1beta1"),
        "ownership is recorded in the writer's version"
    );
    let read = v1.get("a").await.unwrap();
    assert_eq!(api_version(&read), "example.com/v1");
    assert_eq!(
        read.data["spec"],
        json!({"replicas": 2, "selector": "app=w"})
    );

    v1.create(&PostParams::default(), &widget("v1", "b", 1))
        .await
        .unwrap();
    let listed = beta.list(&ListParams::default()).await.unwrap();
    let versions: Vec<String> = listed.items.iter().map(api_version).collect();
    assert_eq!(versions, ["example.com/v1beta1", "example.com/v1beta1"]);

    let mut events = beta
        .watch(&WatchParams::default().timeout(2), "0")
        .await
        .unwrap()
        .boxed();
    let mut seen = Vec::new();
    while let Some(ev) = events.try_next().await.unwrap() {
        if let WatchEvent::Added(o) = ev {
            seen.push(api_version(&o));
        }
        if seen.len() == 2 {
            break;
        }
    }
    assert_eq!(seen, ["example.com/v1beta1", "example.com/v1beta1"]);

    let patched = beta
        .patch(
            "b",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 4}})),
        )
        .await
        .unwrap();
    assert_eq!(api_version(&patched), "example.com/v1beta1");
    assert_eq!(v1.get("b").await.unwrap().data["spec"]["replicas"], 4);

    let unserved = widgets(&client, "v1alpha1");
    match unserved.get("a").await.unwrap_err() {
        kube::Error::Api(s) => assert_eq!(s.code, 404),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn objects_of_an_old_storage_version_are_served_in_the_requested_one() {
    let bed = Testbed::start().await.unwrap();
    let client = bed.cluster().client();
    let crds = install_widgets(&client).await;
    widgets(&client, "v1")
        .create(&PostParams::default(), &widget("v1", "old", 1))
        .await
        .unwrap();

    crds.patch(
        "widgets.example.com",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"versions": widget_versions("v1beta1")}})),
    )
    .await
    .unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let crd = crds.get("widgets.example.com").await.unwrap();
        let stored = crd.status.and_then(|s| s.stored_versions);
        if stored.as_deref() == Some(&["v1".to_string(), "v1beta1".to_string()][..]) {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "storedVersions: {stored:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // Stored as v1, now read through the storage version v1beta1 and through v1.
    let beta = widgets(&client, "v1beta1");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let read = beta.get("old").await.unwrap();
        if api_version(&read) == "example.com/v1beta1" {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "served as {}",
            api_version(&read)
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let listed = beta.list(&ListParams::default()).await.unwrap();
    assert_eq!(api_version(&listed.items[0]), "example.com/v1beta1");
    let v1 = widgets(&client, "v1").get("old").await.unwrap();
    assert_eq!(api_version(&v1), "example.com/v1");
}

#[tokio::test]
async fn scale_subresource_follows_the_crd_paths() {
    let bed = Testbed::start().await.unwrap();
    let client = bed.cluster().client();
    install_widgets(&client).await;
    let v1 = widgets(&client, "v1");
    let created = v1
        .create(&PostParams::default(), &widget("v1", "s", 3))
        .await
        .unwrap();
    v1.patch_status(
        "s",
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"count": 2, "labels": "app=w"}})),
    )
    .await
    .unwrap();

    let scale: Scale = v1.get_scale("s").await.unwrap();
    assert_eq!(scale.spec.and_then(|s| s.replicas), Some(3));
    let status = scale.status.unwrap();
    assert_eq!(
        (status.replicas, status.selector.as_deref()),
        (2, Some("app=w"))
    );
    assert_eq!(scale.metadata.uid, created.metadata.uid);

    let scaled = v1
        .patch_scale(
            "s",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 5}})),
        )
        .await
        .unwrap();
    assert_eq!(scaled.spec.and_then(|s| s.replicas), Some(5));
    let after = v1.get("s").await.unwrap();
    assert_eq!(after.data["spec"]["replicas"], 5);
    assert_eq!(after.metadata.generation, Some(2), "a spec change");

    // A Scale with a stale resourceVersion conflicts; a negative count is invalid.
    let stale: Scale = serde_json::from_value(json!({"apiVersion": "autoscaling/v1", "kind": "Scale",
        "metadata": {"name": "s", "namespace": "default", "resourceVersion": created.metadata.resource_version},
        "spec": {"replicas": 1}}))
    .unwrap();
    match v1
        .replace_scale("s", &PostParams::default(), &stale)
        .await
        .unwrap_err()
    {
        kube::Error::Api(s) => assert_eq!((s.code, s.reason.as_str()), (409, "Conflict")),
        other => panic!("{other:?}"),
    }
    match v1
        .patch_scale(
            "s",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": -1}})),
        )
        .await
        .unwrap_err()
    {
        kube::Error::Api(s) => {
            assert_eq!((s.code, s.reason.as_str()), (422, "Invalid"));
            assert!(s.message.contains("spec.replicas"), "{}", s.message);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(v1.get("s").await.unwrap().data["spec"]["replicas"], 5);

    // Through another served version the same scale is seen.
    let beta_scale: Scale = widgets(&client, "v1beta1").get_scale("s").await.unwrap();
    assert_eq!(beta_scale.spec.and_then(|s| s.replicas), Some(5));
}
