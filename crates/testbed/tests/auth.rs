//! Authentication and RBAC: ServiceAccount tokens, 401 and 403 answers, role bindings.

use k8s_openapi::api::authentication::v1::TokenRequest;
use k8s_openapi::api::core::v1::{ConfigMap, ServiceAccount};
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use kube::api::{Api, PostParams};
use serde_json::json;
use testbed::Testbed;

async fn service_account_token(client: kube::Client, ns: &str, name: &str) -> String {
    let sas: Api<ServiceAccount> = Api::namespaced(client, ns);
    sas.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": name}})).unwrap(),
    )
    .await
    .unwrap();
    let req: TokenRequest =
        serde_json::from_value(json!({"spec": {"expirationSeconds": 3600}})).unwrap();
    let answer = sas
        .create_token_request(name, &PostParams::default(), &req)
        .await
        .unwrap();
    answer.status.unwrap().token
}

fn api_error(e: kube::Error) -> (u16, String, String) {
    match e {
        kube::Error::Api(s) => (s.code, s.reason, s.message),
        other => panic!("expected an API error, got {other:?}"),
    }
}

#[tokio::test]
async fn service_account_needs_a_role_binding() {
    let bed = Testbed::start().await.unwrap();
    let cluster = bed.cluster();
    let admin = cluster.client();
    let token = service_account_token(admin.clone(), "default", "reader").await;
    let as_sa: Api<ConfigMap> = Api::namespaced(cluster.client_as(&token), "default");

    let (code, reason, message) = api_error(as_sa.list(&Default::default()).await.unwrap_err());
    assert_eq!((code, reason.as_str()), (403, "Forbidden"));
    assert_eq!(
        message,
        "configmaps is forbidden: User \"system:serviceaccount:default:reader\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"default\""
    );

    let roles: Api<Role> = Api::namespaced(admin.clone(), "default");
    roles
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "read-cm"},
                "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}]}))
            .unwrap(),
        )
        .await
        .unwrap();
    let bindings: Api<RoleBinding> = Api::namespaced(admin, "default");
    bindings
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "read-cm"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "read-cm"},
                "subjects": [{"kind": "ServiceAccount", "name": "reader", "namespace": "default"}]}))
            .unwrap(),
        )
        .await
        .unwrap();
    assert!(
        as_sa.list(&Default::default()).await.is_ok(),
        "the binding allows list at once"
    );
    let (code, _, _) = api_error(
        as_sa
            .create(
                &PostParams::default(),
                &serde_json::from_value(json!({"metadata": {"name": "x"}})).unwrap(),
            )
            .await
            .unwrap_err(),
    );
    assert_eq!(code, 403, "but not create");
}

#[tokio::test]
async fn unknown_tokens_get_401_and_deleted_service_accounts_lose_access() {
    let bed = Testbed::start().await.unwrap();
    let cluster = bed.cluster();
    let bad: Api<ConfigMap> = Api::namespaced(cluster.client_as("not-a-token"), "default");
    let (code, reason, _) = api_error(bad.list(&Default::default()).await.unwrap_err());
    assert_eq!((code, reason.as_str()), (401, "Unauthorized"));

    let admin = cluster.client();
    let token = service_account_token(admin.clone(), "default", "gone").await;
    let whoami = cluster.client_as(&token);
    let sas: Api<ServiceAccount> = Api::namespaced(admin, "default");
    sas.delete("gone", &Default::default()).await.unwrap();
    let (code, _, _) = api_error(
        Api::<ConfigMap>::namespaced(whoami, "default")
            .list(&Default::default())
            .await
            .unwrap_err(),
    );
    assert_eq!(code, 401);
}

#[tokio::test]
async fn test_users_get_their_own_tokens() {
    let bed = Testbed::start().await.unwrap();
    let cluster = bed.cluster();
    let token = cluster.add_user("alice", &["system:masters"]);
    let api: Api<ConfigMap> = Api::namespaced(cluster.client_as(&token), "default");
    api.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": "by-alice"}})).unwrap(),
    )
    .await
    .unwrap();
    assert_eq!(
        cluster
            .counters()
            .count(Some("create"), Some("configmaps"), Some("alice")),
        1
    );
    assert_eq!(cluster.counters().writes(Some("alice")), 1);
}
