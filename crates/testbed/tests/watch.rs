//! Watches: events from a resourceVersion, selectors, 410 Gone, dropped watches.

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use serde_json::json;
use testbed::Testbed;

fn cm(name: &str, labels: serde_json::Value) -> ConfigMap {
    serde_json::from_value(
        json!({"metadata": {"name": name, "labels": labels}, "data": {"k": "v"}}),
    )
    .unwrap()
}

fn describe(ev: &WatchEvent<ConfigMap>) -> (String, String) {
    match ev {
        WatchEvent::Added(o) => ("ADDED".into(), o.metadata.name.clone().unwrap_or_default()),
        WatchEvent::Modified(o) => (
            "MODIFIED".into(),
            o.metadata.name.clone().unwrap_or_default(),
        ),
        WatchEvent::Deleted(o) => (
            "DELETED".into(),
            o.metadata.name.clone().unwrap_or_default(),
        ),
        WatchEvent::Bookmark(_) => ("BOOKMARK".into(), String::new()),
        WatchEvent::Error(e) => ("ERROR".into(), e.code.to_string()),
    }
}

#[tokio::test]
async fn watch_from_a_revision_sees_every_change_in_order() {
    let bed = Testbed::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(bed.cluster().client(), "default");
    let start = bed.cluster().resource_version().to_string();
    let stream = api
        .watch(&WatchParams::default().timeout(5), &start)
        .await
        .unwrap();
    let pp = PostParams::default();
    api.create(&pp, &cm("w1", json!({}))).await.unwrap();
    api.patch(
        "w1",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"k": "2"}})),
    )
    .await
    .unwrap();
    api.delete("w1", &DeleteParams::default()).await.unwrap();
    let events: Vec<_> = stream.take(3).try_collect().await.unwrap();
    let seen: Vec<_> = events.iter().map(describe).collect();
    assert_eq!(
        seen,
        vec![
            ("ADDED".into(), "w1".into()),
            ("MODIFIED".into(), "w1".into()),
            ("DELETED".into(), "w1".into())
        ]
    );
    if let WatchEvent::Deleted(last) = &events[2] {
        assert_eq!(
            last.data.as_ref().unwrap()["k"],
            "2",
            "DELETED carries the last state"
        );
    }
}

#[tokio::test]
async fn label_watch_reports_objects_leaving_and_entering_the_selection() {
    let bed = Testbed::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(bed.cluster().client(), "default");
    let start = bed.cluster().resource_version().to_string();
    let stream = api
        .watch(&WatchParams::default().labels("app=x").timeout(5), &start)
        .await
        .unwrap();
    api.create(&PostParams::default(), &cm("a", json!({"app": "x"})))
        .await
        .unwrap();
    api.create(&PostParams::default(), &cm("b", json!({"app": "y"})))
        .await
        .unwrap();
    let pp = PatchParams::default();
    api.patch(
        "a",
        &pp,
        &Patch::Merge(json!({"metadata": {"labels": {"app": "y"}}})),
    )
    .await
    .unwrap();
    api.patch(
        "b",
        &pp,
        &Patch::Merge(json!({"metadata": {"labels": {"app": "x"}}})),
    )
    .await
    .unwrap();
    let events: Vec<_> = stream.take(3).try_collect().await.unwrap();
    let seen: Vec<_> = events.iter().map(describe).collect();
    assert_eq!(
        seen,
        vec![
            ("ADDED".into(), "a".into()),
            ("DELETED".into(), "a".into()),
            ("ADDED".into(), "b".into())
        ]
    );
}

#[tokio::test]
async fn compacted_history_gives_410_gone() {
    let bed = Testbed::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(bed.cluster().client(), "default");
    let old = bed.cluster().resource_version().to_string();
    api.create(&PostParams::default(), &cm("c", json!({})))
        .await
        .unwrap();
    bed.cluster().faults().compact();
    let mut stream = api
        .watch(&WatchParams::default().timeout(5), &old)
        .await
        .unwrap()
        .boxed();
    let first = stream.try_next().await.unwrap().unwrap();
    assert_eq!(describe(&first), ("ERROR".into(), "410".into()));
}

#[tokio::test]
async fn dropped_watches_end_their_streams() {
    let bed = Testbed::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(bed.cluster().client(), "default");
    let start = bed.cluster().resource_version().to_string();
    let mut stream = api
        .watch(&WatchParams::default().timeout(60), &start)
        .await
        .unwrap()
        .boxed();
    api.create(&PostParams::default(), &cm("d", json!({})))
        .await
        .unwrap();
    assert!(stream.try_next().await.unwrap().is_some());
    bed.cluster().faults().drop_watches();
    assert!(
        stream.try_next().await.unwrap().is_none(),
        "the stream ends after the drop"
    );
}
