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

/// What the client wrote, as the answer's managedFields records it: `(manager, subresource,
/// fieldsV1)` of each entry.
fn owners(answer: &serde_json::Value) -> Vec<(String, String, serde_json::Value)> {
    answer["metadata"]["managedFields"]
        .as_array()
        .map(|entries| {
            entries
                .iter()
                .map(|e| {
                    (
                        e["manager"].as_str().unwrap_or_default().to_string(),
                        e["subresource"].as_str().unwrap_or_default().to_string(),
                        e["fieldsV1"].clone(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn token_requests_and_reviews_echo_the_writers_managed_fields() {
    let bed = Testbed::start().await.unwrap();
    let client = bed.cluster().client();
    let sas: Api<ServiceAccount> = Api::namespaced(client.clone(), "default");
    sas.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": "sa1"}})).unwrap(),
    )
    .await
    .unwrap();
    let post = |path: &str, body: serde_json::Value| {
        let request = http::Request::post(format!("{path}?fieldManager=tester"))
            .header("content-type", "application/json")
            .body(serde_json::to_vec(&body).unwrap())
            .unwrap();
        let client = client.clone();
        async move { client.request::<serde_json::Value>(request).await.unwrap() }
    };

    // The lifetime is defaulted before ownership is recorded; the audiences are not.
    let token = post(
        "/api/v1/namespaces/default/serviceaccounts/sa1/token",
        json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}}),
    )
    .await;
    assert_eq!(
        owners(&token),
        [(
            "tester".to_string(),
            "token".to_string(),
            json!({"f:spec": {"f:expirationSeconds": {}}})
        )]
    );
    assert!(token["spec"]["audiences"].is_array(), "{token}");

    let review = post(
        "/apis/authorization.k8s.io/v1/namespaces/default/localsubjectaccessreviews",
        json!({"apiVersion": "authorization.k8s.io/v1", "kind": "LocalSubjectAccessReview",
            "spec": {"user": "u", "groups": ["g"], "resourceAttributes":
                {"namespace": "default", "verb": "get", "group": "", "resource": "configmaps"}}}),
    )
    .await;
    assert_eq!(
        owners(&review),
        [(
            "tester".to_string(),
            String::new(),
            json!({"f:spec": {"f:groups": {}, "f:user": {},
                "f:resourceAttributes": {".": {}, "f:namespace": {}, "f:resource": {}, "f:verb": {}}}})
        )]
    );
    assert_eq!(review["metadata"]["creationTimestamp"], json!(null));
    assert_eq!(review["status"]["allowed"], json!(false));

    // A SelfSubjectReview has no spec, so nobody owns anything.
    let whoami = post(
        "/apis/authentication.k8s.io/v1/selfsubjectreviews",
        json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}),
    )
    .await;
    assert_eq!(owners(&whoami), []);
    assert!(whoami["metadata"]["creationTimestamp"].is_string());
}

/// One part of a JWT, decoded.
fn jwt_part(token: &str, index: usize) -> serde_json::Value {
    use base64::Engine as _;
    let part = token.split('.').nth(index).expect("a JWT part");
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(part)
        .expect("base64url");
    serde_json::from_slice(&bytes).expect("JSON")
}

#[tokio::test]
async fn service_accounts_discover_the_issuer_and_the_keys_of_their_tokens() {
    let bed = Testbed::start().await.unwrap();
    let cluster = bed.cluster();
    let token = service_account_token(cluster.client(), "default", "discoverer").await;
    let client = cluster.client_as(&token);
    let get = |path: &str| http::Request::get(path).body(Vec::new()).unwrap();

    let configuration: serde_json::Value = client
        .request(get("/.well-known/openid-configuration"))
        .await
        .unwrap();
    let claims = jwt_part(&token, 1);
    assert_eq!(configuration["issuer"], claims["iss"]);
    let jwks_uri = configuration["jwks_uri"].as_str().unwrap();
    assert!(jwks_uri.ends_with("/openid/v1/jwks"), "{jwks_uri}");
    assert_eq!(
        configuration["id_token_signing_alg_values_supported"],
        json!(["ES256"])
    );

    let keys: serde_json::Value = client.request(get("/openid/v1/jwks")).await.unwrap();
    let header = jwt_part(&token, 0);
    assert_eq!(keys["keys"][0]["kid"], header["kid"]);
    assert_eq!(keys["keys"][0]["alg"], header["alg"]);

    // system:service-account-issuer-discovery is bound to ServiceAccounts only: another
    // user is refused, an unknown token not even authenticated.
    let alice = cluster.client_as(&cluster.add_user("alice", &[]));
    let refused = alice
        .request::<serde_json::Value>(get("/openid/v1/jwks"))
        .await
        .unwrap_err();
    let (code, _, message) = api_error(refused);
    assert_eq!(code, 403);
    assert!(
        message.contains("cannot get path \"/openid/v1/jwks\""),
        "{message}"
    );
    let stranger = cluster.client_as("not-a-token");
    let refused = stranger
        .request::<serde_json::Value>(get("/openid/v1/jwks"))
        .await
        .unwrap_err();
    assert_eq!(api_error(refused).0, 401);
}
