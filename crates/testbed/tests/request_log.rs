//! The request log: who did what to which object, with which answer.

use futures::StreamExt;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::authentication::v1::TokenRequest;
use k8s_openapi::api::core::v1::{ConfigMap, ServiceAccount};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchParams};
use serde_json::json;
use std::time::Duration;
use testbed::{Fault, Matcher, RequestRecord, Testbed};

fn cm(value: serde_json::Value) -> ConfigMap {
    serde_json::from_value(value).unwrap()
}

/// `(verb, resource, subresource, namespace, name, code)` of a record, for compact asserts.
fn brief(r: &RequestRecord) -> (&str, &str, &str, &str, &str, u16) {
    (
        &r.verb,
        &r.resource,
        &r.subresource,
        &r.namespace,
        &r.name,
        r.code,
    )
}

#[tokio::test]
async fn records_user_verb_target_and_code_of_every_request() {
    let bed = Testbed::start().await.unwrap();
    let cluster = bed.cluster();
    let admin = cluster.client();
    let cms: Api<ConfigMap> = Api::namespaced(admin.clone(), "default");
    cluster.reset_requests();

    let created = cms
        .create(
            &PostParams::default(),
            &cm(json!({"metadata": {"generateName": "gen-"}})),
        )
        .await
        .unwrap();
    let generated = created.metadata.name.unwrap();
    cms.create(
        &PostParams::default(),
        &cm(json!({"metadata": {"name": "a"}})),
    )
    .await
    .unwrap();
    let again = cms
        .create(
            &PostParams::default(),
            &cm(json!({"metadata": {"name": "a"}})),
        )
        .await;
    assert!(again.is_err(), "the second create of `a` conflicts");
    cms.get("a").await.unwrap();
    assert!(cms.get("missing").await.is_err());
    cms.list(&ListParams::default().labels("x=y"))
        .await
        .unwrap();
    cms.patch(
        "a",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"k": "v"}})),
    )
    .await
    .unwrap();
    let mut current = cms.get("a").await.unwrap();
    current.data = None;
    cms.replace("a", &PostParams::default(), &current)
        .await
        .unwrap();
    cms.delete("a", &DeleteParams::default()).await.unwrap();
    cms.delete_collection(&DeleteParams::default(), &ListParams::default())
        .await
        .unwrap();

    let user = "testbed-admin";
    let records = cluster.requests();
    assert!(records.iter().all(|r| r.user == user), "{records:?}");
    assert!(
        records
            .iter()
            .all(|r| r.group.is_empty() && r.version == "v1")
    );
    let got: Vec<_> = records.iter().map(brief).collect();
    assert_eq!(
        got,
        [
            (
                "create",
                "configmaps",
                "",
                "default",
                generated.as_str(),
                201
            ),
            ("create", "configmaps", "", "default", "a", 201),
            ("create", "configmaps", "", "default", "a", 409),
            ("get", "configmaps", "", "default", "a", 200),
            ("get", "configmaps", "", "default", "missing", 404),
            ("list", "configmaps", "", "default", "", 200),
            ("patch", "configmaps", "", "default", "a", 200),
            ("get", "configmaps", "", "default", "a", 200),
            ("update", "configmaps", "", "default", "a", 200),
            ("delete", "configmaps", "", "default", "a", 200),
            ("deletecollection", "configmaps", "", "default", "", 200),
        ]
    );
    let writes: Vec<_> = cluster.writes().iter().map(|r| r.verb.clone()).collect();
    assert_eq!(
        writes,
        [
            "create",
            "create",
            "create",
            "patch",
            "update",
            "delete",
            "deletecollection"
        ]
    );
    // The counters keep counting alongside the log.
    assert_eq!(cluster.counters().writes(Some(user)), 7);

    cluster.reset_requests();
    assert!(cluster.requests().is_empty());
    assert_eq!(cluster.counters().writes(None), 0);
}

#[tokio::test]
async fn records_service_accounts_subresources_watches_and_refusals() {
    let bed = Testbed::start().await.unwrap();
    let cluster = bed.cluster();
    let admin = cluster.client();
    let sas: Api<ServiceAccount> = Api::namespaced(admin.clone(), "default");
    sas.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": "agent"}})).unwrap(),
    )
    .await
    .unwrap();
    let token = sas
        .create_token_request(
            "agent",
            &PostParams::default(),
            &serde_json::from_value::<TokenRequest>(json!({"spec": {}})).unwrap(),
        )
        .await
        .unwrap()
        .status
        .unwrap()
        .token;
    let deployments: Api<Deployment> = Api::namespaced(admin, "default");
    deployments
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({
                "metadata": {"name": "web"},
                "spec": {"selector": {"matchLabels": {"app": "web"}},
                    "template": {"metadata": {"labels": {"app": "web"}},
                        "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}
            }))
            .unwrap(),
        )
        .await
        .unwrap();
    deployments
        .patch_status(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"replicas": 1}})),
        )
        .await
        .unwrap();
    let mut events = deployments
        .watch(&WatchParams::default().timeout(1), "0")
        .await
        .unwrap()
        .boxed();
    while events.next().await.is_some() {}

    let as_sa: Api<ConfigMap> = Api::namespaced(cluster.client_as(&token), "kube-system");
    assert!(as_sa.list(&ListParams::default()).await.is_err());
    let stranger: Api<ConfigMap> = Api::namespaced(cluster.client_as("not-a-token"), "default");
    assert!(stranger.get("x").await.is_err());

    let records = cluster.requests();
    let find = |verb: &str, sub: &str| {
        records
            .iter()
            .find(|r| r.verb == verb && r.subresource == sub)
            .unwrap_or_else(|| panic!("no {verb} {sub} in {records:?}"))
    };
    let token_request = find("create", "token");
    assert_eq!(
        brief(token_request),
        (
            "create",
            "serviceaccounts",
            "token",
            "default",
            "agent",
            201
        )
    );
    let status = find("patch", "status");
    assert_eq!(
        (status.group.as_str(), status.version.as_str()),
        ("apps", "v1")
    );
    assert_eq!(
        brief(status),
        ("patch", "deployments", "status", "default", "web", 200)
    );
    assert_eq!(
        brief(find("watch", "")),
        ("watch", "deployments", "", "default", "", 200)
    );
    let refused = records.iter().find(|r| r.code == 403).unwrap();
    assert_eq!(refused.user, "system:serviceaccount:default:agent");
    assert_eq!(
        brief(refused),
        ("list", "configmaps", "", "kube-system", "", 403)
    );
    let unauthenticated = records.iter().find(|r| r.code == 401).unwrap();
    assert_eq!(unauthenticated.user, "");
    assert_eq!(
        brief(unauthenticated),
        ("get", "configmaps", "", "default", "x", 401)
    );
    let sa_writes: Vec<_> = cluster
        .writes()
        .into_iter()
        .filter(|r| r.user.starts_with("system:serviceaccount:"))
        .collect();
    assert!(sa_writes.is_empty(), "{sa_writes:?}");
}

#[tokio::test]
async fn records_injected_faults_and_unanswered_requests() {
    let bed = Testbed::start().await.unwrap();
    let cluster = bed.cluster();
    let cms: Api<ConfigMap> = Api::namespaced(cluster.client(), "default");
    cluster.faults().fail_next(
        1,
        Matcher::any().verb("get").name("boom"),
        Fault::InternalError,
    );
    cluster
        .faults()
        .fail_next(1, Matcher::any().verb("get").name("stuck"), Fault::Hang);
    assert!(cms.get("boom").await.is_err());
    let stuck = tokio::time::timeout(Duration::from_millis(300), cms.get("stuck")).await;
    assert!(stuck.is_err(), "the hung request gets no answer");

    let got: Vec<_> = cluster
        .requests()
        .iter()
        .map(|r| (r.name.clone(), r.code))
        .collect();
    assert_eq!(got, [("boom".to_string(), 500), ("stuck".to_string(), 0)]);
}
