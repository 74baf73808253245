//! Fault injection: failing requests, restarts, hanging requests.

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};
use serde_json::json;
use std::time::Duration;
use testbed::{Fault, Matcher, Testbed};

fn cm(name: &str) -> ConfigMap {
    serde_json::from_value(json!({"metadata": {"name": name}})).unwrap()
}

fn code(e: kube::Error) -> u16 {
    match e {
        kube::Error::Api(s) => s.code,
        other => panic!("expected an API error, got {other:?}"),
    }
}

#[tokio::test]
async fn the_next_matching_requests_fail_as_asked() {
    let bed = Testbed::start().await.unwrap();
    let cluster = bed.cluster();
    let api: Api<ConfigMap> = Api::namespaced(cluster.client(), "default");
    let faults = cluster.faults();
    faults.fail_next(
        1,
        Matcher::any().verb("create").resource("configmaps"),
        Fault::InternalError,
    );
    assert_eq!(
        code(
            api.create(&PostParams::default(), &cm("a"))
                .await
                .unwrap_err()
        ),
        500
    );
    // kube's client honours Retry-After, so a 429 shows as a second request that succeeds.
    faults.fail_next(
        1,
        Matcher::any().verb("create").resource("configmaps"),
        Fault::TooManyRequests { retry_after: 1 },
    );
    api.create(&PostParams::default(), &cm("a")).await.unwrap();
    assert_eq!(
        cluster
            .counters()
            .count(Some("create"), Some("configmaps"), None),
        3
    );
    faults.fail_next(1, Matcher::any().verb("get").name("a"), Fault::Conflict);
    assert_eq!(code(api.get("a").await.unwrap_err()), 409);
    api.get("a").await.unwrap();
}

#[tokio::test]
async fn restart_ends_hanging_requests_and_keeps_data() {
    let bed = Testbed::start().await.unwrap();
    let cluster = bed.cluster();
    let api: Api<ConfigMap> = Api::namespaced(cluster.client(), "default");
    api.create(&PostParams::default(), &cm("kept"))
        .await
        .unwrap();
    cluster
        .faults()
        .fail_next(1, Matcher::any().verb("get").name("kept"), Fault::Hang);
    let hanging = tokio::spawn({
        let api = api.clone();
        async move { api.get("kept").await }
    });
    // The hanging request has been counted once the server holds it.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while cluster
        .counters()
        .count(Some("get"), Some("configmaps"), None)
        == 0
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the request never arrived"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    cluster.faults().restart();
    assert!(
        hanging.await.unwrap().is_err(),
        "the hanging request fails when connections close"
    );
    let again: Api<ConfigMap> = Api::namespaced(cluster.client(), "default");
    assert!(again.get("kept").await.is_ok(), "data survives a restart");
}
