//! Metadata-only answers (`Accept: application/json;as=PartialObjectMetadata[List];g=meta.k8s.io;v=v1`)
//! through kube-rs' metadata API — `get_metadata`, `list_metadata`, `watch_metadata` and a
//! reflector fed by `watcher` on an `Api<PartialObjectMeta<K>>` (kube 5's replacement of the
//! deprecated `metadata_watcher`, with the same requests) — on ConfigMaps, Secrets and a custom
//! resource, their raw bytes, and the 406 refusals.

use futures::{Stream, StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{
    Api, ApiResource, DynamicObject, ListParams, Patch, PatchParams, PostParams, VersionMatch,
    WatchEvent, WatchParams,
};
use kube::core::PartialObjectMeta;
use kube::runtime::reflector::{self, Lookup, Store};
use kube::runtime::watcher::{self, watcher};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::time::Duration;
use testbed::Testbed;

const META: &str = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
const META_LIST: &str = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
/// A Secret value that must never appear in a metadata answer, and its base64 form.
const SECRET: &str = "s3cret-password";
const SECRET_B64: &str = "czNjcmV0LXBhc3N3b3Jk";
const MEDIA_TYPES: &str = "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf";

/// A GET of `path` with `Accept: accept`: the body, or the refusal's code, reason and message.
async fn raw(
    client: &kube::Client,
    path: &str,
    accept: &str,
) -> Result<String, (u16, String, String)> {
    let req = http::Request::get(path)
        .header(http::header::ACCEPT, accept)
        .body(Vec::new())
        .unwrap();
    match client.request_text(req).await {
        Ok(text) => Ok(text),
        Err(kube::Error::Api(s)) => Err((s.code, s.reason.clone(), s.message.clone())),
        Err(e) => panic!("GET {path}: {e}"),
    }
}

fn refusal(code: u16, reason: &str, message: &str) -> Result<String, (u16, String, String)> {
    Err((code, reason.into(), message.into()))
}

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

fn keys(doc: &Value) -> Vec<&str> {
    doc.as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect()
}

fn configmap(name: &str, tier: &str) -> ConfigMap {
    serde_json::from_value(json!({
        "metadata": {"name": name, "labels": {"tier": tier}},
        "data": {"config": "visible-config"}
    }))
    .unwrap()
}

fn secret(name: &str) -> Secret {
    serde_json::from_value(json!({
        "metadata": {"name": name, "labels": {"app": "web"}},
        "stringData": {"password": SECRET}
    }))
    .unwrap()
}

/// A testbed holding [`secret`] `name` in `default`, and the Secrets there.
async fn with_secret(name: &str) -> (Testbed, Api<Secret>) {
    let bed = Testbed::start().await.unwrap();
    let secrets: Api<Secret> = Api::namespaced(bed.cluster().client(), "default");
    secrets
        .create(&PostParams::default(), &secret(name))
        .await
        .unwrap();
    (bed, secrets)
}

fn names<K: kube::Resource>(items: &[K]) -> Vec<String> {
    items
        .iter()
        .map(|i| i.meta().name.clone().unwrap_or_default())
        .collect()
}

#[tokio::test]
async fn get_and_list_of_secrets_carry_only_metadata() {
    let bed = Testbed::start().await.unwrap();
    let client = bed.cluster().client();
    let secrets: Api<Secret> = Api::namespaced(client.clone(), "default");
    let created = secrets
        .create(&PostParams::default(), &secret("s"))
        .await
        .unwrap();

    let got = secrets.get_metadata("s").await.unwrap();
    let types = got.types.expect("kind and apiVersion");
    assert_eq!(
        (types.kind.as_str(), types.api_version.as_str()),
        ("PartialObjectMetadata", "meta.k8s.io/v1")
    );
    assert_eq!(got.metadata.uid, created.metadata.uid);
    assert_eq!(
        got.metadata.resource_version,
        created.metadata.resource_version
    );
    assert_eq!(
        got.metadata.creation_timestamp,
        created.metadata.creation_timestamp
    );
    assert_eq!(got.metadata.labels, created.metadata.labels);

    let one = raw(&client, "/api/v1/namespaces/default/secrets/s", META)
        .await
        .unwrap();
    assert!(!one.contains(SECRET_B64) && !one.contains(SECRET), "{one}");
    let doc = json_of(&one);
    assert_eq!(keys(&doc), ["kind", "apiVersion", "metadata"]);
    assert!(doc["metadata"].get("managedFields").is_some(), "{one}");

    let list = secrets.list_metadata(&ListParams::default()).await.unwrap();
    assert_eq!(list.types.kind, "PartialObjectMetadataList");
    assert_eq!(list.types.api_version, "meta.k8s.io/v1");
    assert_eq!(names(&list.items), ["s"]);
    let all = raw(&client, "/api/v1/secrets", META_LIST).await.unwrap();
    assert!(!all.contains(SECRET_B64), "{all}");
    let doc = json_of(&all);
    assert_eq!(keys(&doc), ["kind", "apiVersion", "metadata", "items"]);
    for item in doc["items"].as_array().unwrap() {
        assert_eq!(keys(item), ["kind", "apiVersion", "metadata"]);
        assert_eq!(item["kind"], "PartialObjectMetadata");
    }
    // The full answer holds what the metadata answer left out.
    let full = raw(&client, "/api/v1/secrets", "application/json")
        .await
        .unwrap();
    assert!(full.contains(SECRET_B64));
}

#[tokio::test]
async fn list_metadata_pages_selects_and_reads_at_revisions_like_full_lists() {
    let bed = Testbed::start().await.unwrap();
    let client = bed.cluster().client();
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    for i in 0..5 {
        let tier = if i % 2 == 0 { "even" } else { "odd" };
        cms.create(&PostParams::default(), &configmap(&format!("c{i}"), tier))
            .await
            .unwrap();
    }

    // Paging matches a full list read at the same revision (the namespace also holds
    // kube-root-ca.crt, published by the testbed's controller).
    let first = cms
        .list_metadata(&ListParams::default().limit(2))
        .await
        .unwrap();
    let rv = first.metadata.resource_version.clone().unwrap();
    let at_rv = ListParams::default().at(&rv).matching(VersionMatch::Exact);
    let full_first = cms.list(&at_rv.clone().limit(2)).await.unwrap();
    assert_eq!(names(&first.items), names(&full_first.items));
    assert_eq!(first.metadata.continue_, full_first.metadata.continue_);
    let everything = cms.list(&at_rv).await.unwrap();
    assert_eq!(
        first.metadata.remaining_item_count,
        Some(everything.items.len() as i64 - 2)
    );
    let token = first.metadata.continue_.clone().expect("a continue token");
    let mut paged = names(&first.items);
    let mut next_token = Some(token);
    while let Some(token) = next_token {
        let page = cms
            .list_metadata(&ListParams::default().limit(2).continue_token(&token))
            .await
            .unwrap();
        assert_eq!(page.metadata.resource_version.as_deref(), Some(rv.as_str()));
        paged.extend(names(&page.items));
        next_token = page.metadata.continue_;
    }
    assert_eq!(paged, names(&everything.items));

    let even = cms
        .list_metadata(&ListParams::default().labels("tier=even"))
        .await
        .unwrap();
    assert_eq!(names(&even.items), ["c0", "c2", "c4"]);
    let named = cms
        .list_metadata(&ListParams::default().fields("metadata.name=c3"))
        .await
        .unwrap();
    assert_eq!(names(&named.items), ["c3"]);

    // An exact revision reads history: c0 is deleted since.
    cms.delete("c0", &Default::default()).await.unwrap();
    let then = cms
        .list_metadata(&at_rv.clone().labels("tier"))
        .await
        .unwrap();
    assert_eq!(names(&then.items), ["c0", "c1", "c2", "c3", "c4"]);
    assert_eq!(then.metadata.resource_version.as_deref(), Some(rv.as_str()));

    // No items: `null`, as Go writes a nil slice, with no empty `continue`.
    let none = raw(
        &client,
        "/api/v1/namespaces/default/configmaps?labelSelector=tier%3Dnone",
        META_LIST,
    )
    .await
    .unwrap();
    let doc = json_of(&none);
    assert_eq!(doc["items"], Value::Null, "{none}");
    assert_eq!(keys(&doc["metadata"]), ["resourceVersion"]);
    let empty = cms
        .list_metadata(&ListParams::default().labels("tier=none"))
        .await
        .unwrap();
    assert!(empty.items.is_empty());
}

/// The next event of `stream`, which must come.
async fn next<T>(stream: &mut (impl Stream<Item = kube::Result<T>> + Unpin)) -> T {
    tokio::time::timeout(Duration::from_secs(10), stream.next())
        .await
        .expect("an event")
        .expect("the watch goes on")
        .expect("a decodable event")
}

fn partial_name<K>(event: &WatchEvent<PartialObjectMeta<K>>) -> (String, String) {
    let (kind, obj) = match event {
        WatchEvent::Added(o) => ("ADDED", o),
        WatchEvent::Modified(o) => ("MODIFIED", o),
        WatchEvent::Deleted(o) => ("DELETED", o),
        other => panic!("unexpected {other:?}"),
    };
    let types = obj.types.as_ref().expect("kind and apiVersion");
    assert_eq!(types.kind, "PartialObjectMetadata");
    (kind.into(), obj.metadata.name.clone().unwrap_or_default())
}

#[tokio::test]
async fn watch_metadata_sends_initial_events_changes_and_bookmarks_as_metadata() {
    let bed = Testbed::start().await.unwrap();
    let client = bed.cluster().client();
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    cms.create(&PostParams::default(), &configmap("old", "a"))
        .await
        .unwrap();

    // Without a revision the watch starts with the existing objects.
    let mut initial = cms
        .watch_metadata(&WatchParams::default(), "0")
        .await
        .unwrap()
        .boxed();
    loop {
        let (kind, name) = partial_name(&next(&mut initial).await);
        assert_eq!(kind, "ADDED");
        if name == "old" {
            break;
        }
    }

    let rv = cms
        .list_metadata(&ListParams::default())
        .await
        .unwrap()
        .metadata
        .resource_version
        .unwrap();
    let mut changes = cms
        .watch_metadata(&WatchParams::default(), &rv)
        .await
        .unwrap()
        .boxed();
    cms.create(&PostParams::default(), &configmap("new", "a"))
        .await
        .unwrap();
    cms.patch(
        "new",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"config": "changed"}})),
    )
    .await
    .unwrap();
    cms.delete("new", &Default::default()).await.unwrap();
    let mut seen = Vec::new();
    for _ in 0..3 {
        seen.push(partial_name(&next(&mut changes).await));
    }
    let new = |kind: &str| (kind.to_string(), "new".to_string());
    assert_eq!(seen, [new("ADDED"), new("MODIFIED"), new("DELETED")]);
}

#[tokio::test]
async fn watched_secrets_and_bookmarks_carry_only_metadata_on_the_wire() {
    let (bed, _) = with_secret("s").await;
    let client = bed.cluster().client();

    // A bookmark is due 2 s before the watch's end; the body is read until that end.
    let body = raw(
        &client,
        "/api/v1/namespaces/default/secrets?watch=1&resourceVersion=0&allowWatchBookmarks=true&timeoutSeconds=3",
        META,
    )
    .await
    .unwrap();
    assert!(!body.contains(SECRET_B64), "{body}");
    let events: Vec<Value> = body.lines().map(json_of).collect();
    assert_eq!(events[0]["type"], "ADDED");
    assert_eq!(
        keys(&events[0]["object"]),
        ["kind", "apiVersion", "metadata"]
    );
    assert_eq!(events[0]["object"]["metadata"]["name"], "s");
    let bookmark = events
        .iter()
        .find(|e| e["type"] == "BOOKMARK")
        .unwrap_or_else(|| panic!("a bookmark in {body}"));
    let rv = events[0]["object"]["metadata"]["resourceVersion"].clone();
    assert_eq!(
        bookmark["object"],
        json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
               "metadata": {"resourceVersion": rv, "creationTimestamp": null}})
    );
}

/// Drives `events` until `done` holds for `store`.
async fn reflect_until<K: Lookup + Clone + 'static>(
    events: &mut (impl Stream<Item = Result<watcher::Event<K>, watcher::Error>> + Unpin),
    store: &Store<K>,
    done: impl Fn(&Store<K>) -> bool,
) where
    K::DynamicType: Eq + std::hash::Hash + Clone,
{
    tokio::time::timeout(Duration::from_secs(10), async {
        while !done(store) {
            events
                .try_next()
                .await
                .expect("the watch goes on")
                .expect("the stream goes on");
        }
    })
    .await
    .expect("the store catches up");
}

/// The labels of the object `name` in `store`, if it holds it.
fn labels_of<K>(store: &Store<K>, name: &str) -> Option<BTreeMap<String, String>>
where
    K: Lookup + kube::Resource + Clone + 'static,
    <K as Lookup>::DynamicType: Eq + std::hash::Hash + Clone,
{
    store
        .state()
        .iter()
        .map(|o| kube::Resource::meta(&**o))
        .find(|m| m.name.as_deref() == Some(name))
        .map(|m| m.labels.clone().unwrap_or_default())
}

#[tokio::test]
async fn metadata_reflector_follows_secrets() {
    let (bed, secrets) = with_secret("before").await;
    let client = bed.cluster().client();
    let (store, writer) = reflector::store();
    let mut events = reflector::reflector(
        writer,
        watcher(
            Api::<PartialObjectMeta<Secret>>::namespaced(client.clone(), "default"),
            watcher::Config::default(),
        ),
    )
    .boxed();
    reflect_until(&mut events, &store, |s| labels_of(s, "before").is_some()).await;

    secrets
        .create(&PostParams::default(), &secret("after"))
        .await
        .unwrap();
    secrets.delete("before", &Default::default()).await.unwrap();
    reflect_until(&mut events, &store, |s| {
        labels_of(s, "after").is_some() && labels_of(s, "before").is_none()
    })
    .await;
    assert_eq!(
        labels_of(&store, "after").unwrap(),
        BTreeMap::from([("app".to_string(), "web".to_string())])
    );
}

fn gadgets(client: &kube::Client, version: &str) -> (Api<DynamicObject>, ApiResource) {
    let ar = ApiResource {
        group: "example.com".into(),
        version: version.into(),
        api_version: format!("example.com/{version}"),
        kind: "Gadget".into(),
        plural: "gadgets".into(),
    };
    (Api::namespaced_with(client.clone(), "default", &ar), ar)
}

/// Installs the Gadget CRD (served as v1 and v1beta1, stored as v1) and waits until it answers.
async fn install_gadgets(client: &kube::Client) {
    let schema = json!({"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"secret": {"type": "string"}}}}}});
    let crd = json!({
        "metadata": {"name": "gadgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
            "versions": [
                {"name": "v1", "served": true, "storage": true, "schema": schema},
                {"name": "v1beta1", "served": true, "storage": false, "schema": schema}]}
    });
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    crds.create(
        &PostParams::default(),
        &serde_json::from_value(crd).unwrap(),
    )
    .await
    .unwrap();
    let (api, _) = gadgets(client, "v1beta1");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while api.list(&ListParams::default()).await.is_err() {
        assert!(tokio::time::Instant::now() < deadline, "gadgets served");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn gadget(name: &str) -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": "example.com/v1", "kind": "Gadget",
        "metadata": {"name": name, "labels": {"state": "new"}},
        "spec": {"secret": SECRET}
    }))
    .unwrap()
}

#[tokio::test]
async fn custom_resources_answer_metadata_in_every_served_version() {
    let bed = Testbed::start().await.unwrap();
    let client = bed.cluster().client();
    install_gadgets(&client).await;
    let (v1, ar) = gadgets(&client, "v1");
    v1.create(&PostParams::default(), &gadget("g1"))
        .await
        .unwrap();

    let writer = reflector::store::Writer::new(ar.clone());
    let store = writer.as_reader();
    let mut events = reflector::reflector(
        writer,
        watcher(
            Api::<PartialObjectMeta<DynamicObject>>::namespaced_with(
                client.clone(),
                "default",
                &ar,
            ),
            watcher::Config::default(),
        ),
    )
    .boxed();
    reflect_until(&mut events, &store, |s| labels_of(s, "g1").is_some()).await;
    v1.patch(
        "g1",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"labels": {"state": "changed"}}})),
    )
    .await
    .unwrap();
    reflect_until(&mut events, &store, |s| {
        labels_of(s, "g1").is_some_and(|l| l["state"] == "changed")
    })
    .await;

    // A version other than the storage version reduces to the same metadata.
    let (beta, _) = gadgets(&client, "v1beta1");
    let listed = beta.list_metadata(&ListParams::default()).await.unwrap();
    assert_eq!(names(&listed.items), ["g1"]);
    for path in [
        "/apis/example.com/v1beta1/namespaces/default/gadgets/g1",
        "/apis/example.com/v1/namespaces/default/gadgets/g1",
    ] {
        let body = raw(&client, path, META).await.unwrap();
        assert!(!body.contains(SECRET), "{body}");
        assert_eq!(json_of(&body)["kind"], "PartialObjectMetadata");
    }
    let list = raw(&client, "/apis/example.com/v1/gadgets", META_LIST)
        .await
        .unwrap();
    assert!(!list.contains(SECRET), "{list}");
    // Unlike full custom resource lists, no empty `continue`.
    assert_eq!(keys(&json_of(&list)["metadata"]), ["resourceVersion"]);
}

#[tokio::test]
async fn shapes_and_versions_it_cannot_answer_are_refused_with_406() {
    let bed = Testbed::start().await.unwrap();
    let client = bed.cluster().client();
    install_gadgets(&client).await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    cms.create(&PostParams::default(), &configmap("a", "x"))
        .await
        .unwrap();
    let (v1, _) = gadgets(&client, "v1");
    v1.create(&PostParams::default(), &gadget("g"))
        .await
        .unwrap();
    let cm_list = "/api/v1/namespaces/default/configmaps";
    let cm = "/api/v1/namespaces/default/configmaps/a";

    assert_eq!(
        raw(&client, cm_list, META).await,
        refusal(
            406,
            "NotAcceptable",
            "you requested PartialObjectMetadata, but the requested object is a list (*core.ConfigMapList)"
        )
    );
    assert_eq!(
        raw(&client, cm, META_LIST).await,
        refusal(
            406,
            "NotAcceptable",
            "you requested PartialObjectMetadataList, but the requested object is not a list (*core.ConfigMap)"
        )
    );
    assert_eq!(
        raw(&client, "/apis/example.com/v1/gadgets", META).await,
        refusal(
            406,
            "NotAcceptable",
            "you requested PartialObjectMetadata, but the requested object is a list (*unstructured.UnstructuredList)"
        )
    );
    assert_eq!(
        raw(
            &client,
            "/apis/example.com/v1/namespaces/default/gadgets/g",
            META_LIST
        )
        .await,
        refusal(
            406,
            "NotAcceptable",
            "you requested PartialObjectMetadataList, but the requested object is not a list (*unstructured.Unstructured)"
        )
    );
    // The object is read before its shape is checked.
    assert_eq!(
        raw(
            &client,
            "/api/v1/namespaces/default/configmaps/missing",
            META_LIST
        )
        .await
        .unwrap_err()
        .0,
        404
    );

    // Other groups, versions and kinds are no form the server offers: 406 unless another
    // entry of Accept is.
    for accept in [
        "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v2",
        "application/json;as=PartialObjectMetadata;g=apps;v=v1",
        "application/json;as=ConfigMap;g=meta.k8s.io;v=v1",
    ] {
        assert_eq!(
            raw(&client, cm, accept).await,
            refusal(406, "NotAcceptable", MEDIA_TYPES),
            "{accept}"
        );
        let fallback = raw(&client, cm, &format!("{accept},application/json"))
            .await
            .unwrap();
        assert_eq!(json_of(&fallback)["kind"], "ConfigMap");
    }
    let beta = raw(
        &client,
        cm,
        "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1",
    )
    .await
    .unwrap();
    assert_eq!(json_of(&beta)["apiVersion"], "meta.k8s.io/v1beta1");

    // A watch asking for lists cannot encode its first event, and ends there.
    let watch = raw(
        &client,
        &format!("{cm_list}?watch=1&timeoutSeconds=30"),
        META_LIST,
    )
    .await
    .unwrap();
    assert_eq!(watch, "");
}

#[tokio::test]
async fn writes_answer_with_metadata_when_asked() {
    let (_bed, secrets) = with_secret("s").await;
    let patched = secrets
        .patch_metadata(
            "s",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"app": "db"}}})),
        )
        .await
        .unwrap();
    assert_eq!(
        patched.types.map(|t| t.kind).as_deref(),
        Some("PartialObjectMetadata")
    );
    assert_eq!(patched.metadata.labels.unwrap()["app"], "db");
    // The write happened in full: only the answer was reduced.
    let stored = secrets.get("s").await.unwrap();
    assert_eq!(stored.metadata.labels.unwrap()["app"], "db");
    assert!(stored.data.unwrap().contains_key("password"));
}
