//! The opt-in test double of Gardener's Shoot API: `shoots/adminkubeconfig` answers an
//! `AdminKubeconfigRequest` with a kubeconfig for the testbed cluster the Shoot advertises,
//! and refuses what gardener-apiserver refuses, with its status codes.

use base64::Engine as _;
use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use serde_json::{Value, json};
use testbed::Testbed;

fn shoots() -> ApiResource {
    ApiResource {
        group: "core.gardener.cloud".into(),
        version: "v1beta1".into(),
        api_version: "core.gardener.cloud/v1beta1".into(),
        kind: "Shoot".into(),
        plural: "shoots".into(),
    }
}

async fn shoot(api: &Api<DynamicObject>, name: &str, addresses: Value) {
    let shoot: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "core.gardener.cloud/v1beta1",
        "kind": "Shoot",
        "metadata": {"name": name},
        "spec": {"region": "local"},
    }))
    .unwrap();
    api.create(&PostParams::default(), &shoot).await.unwrap();
    api.patch_status(
        name,
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"advertisedAddresses": addresses}})),
    )
    .await
    .unwrap();
}

async fn request(api: &Api<DynamicObject>, name: &str, body: Value) -> Result<Value, kube::Error> {
    api.create_subresource("adminkubeconfig", name, &PostParams::default(), &body)
        .await
}

fn status_of(result: Result<Value, kube::Error>) -> (u16, String, String) {
    match result {
        Err(kube::Error::Api(status)) => (status.code, status.reason, status.message),
        other => panic!("expected an API error, got {other:?}"),
    }
}

#[tokio::test]
async fn admin_kubeconfig_requests_are_answered_and_checked_as_gardener_does() {
    let bed = Testbed::builder()
        .named(&["garden", "shoot"])
        .with_gardener_shoots()
        .start()
        .await
        .unwrap();
    let garden = bed.cluster_named("garden").unwrap();
    let target = bed.cluster_named("shoot").unwrap();
    let api: Api<DynamicObject> = Api::namespaced_with(garden.client(), "default", &shoots());
    shoot(
        &api,
        "dev",
        json!([{"name": "external", "url": target.url()}]),
    )
    .await;
    shoot(
        &api,
        "asleep",
        json!([{"name": "service-account-issuer", "url": "https://issuer"}]),
    )
    .await;

    let answer = request(
        &api,
        "dev",
        json!({"apiVersion": "authentication.gardener.cloud/v1alpha1", "kind": "AdminKubeconfigRequest", "spec": {"expirationSeconds": 900}}),
    )
    .await
    .expect("an admin kubeconfig");
    assert_eq!(answer["kind"], "AdminKubeconfigRequest");
    assert_eq!(answer["spec"]["expirationSeconds"], 900);
    assert!(answer["status"]["expirationTimestamp"].as_str().is_some());
    let text = base64::engine::general_purpose::STANDARD
        .decode(answer["status"]["kubeconfig"].as_str().unwrap())
        .unwrap();
    let kubeconfig = Kubeconfig::from_yaml(std::str::from_utf8(&text).unwrap()).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .unwrap();
    assert_eq!(config.cluster_url.to_string(), format!("{}/", target.url()));
    // The shoot admin may do anything in the shoot's cluster.
    let admin = kube::Client::try_from(config).unwrap();
    Api::<k8s_openapi::api::core::v1::Namespace>::all(admin)
        .list(&Default::default())
        .await
        .expect("the admin lists namespaces");

    // No lifetime: an hour; more than a day: a day.
    let defaulted = request(&api, "dev", json!({"spec": {}})).await.unwrap();
    assert_eq!(defaulted["spec"]["expirationSeconds"], 3600);
    let capped = request(&api, "dev", json!({"spec": {"expirationSeconds": 999_999}}))
        .await
        .unwrap();
    assert_eq!(capped["spec"]["expirationSeconds"], 86_400);

    let missing = status_of(request(&api, "gone", json!({"spec": {}})).await);
    assert_eq!(
        missing,
        (
            404,
            "NotFound".into(),
            "shoots.core.gardener.cloud \"gone\" not found".into()
        )
    );
    let short = status_of(request(&api, "dev", json!({"spec": {"expirationSeconds": 599}})).await);
    assert_eq!(
        short,
        (
            422,
            "Invalid".into(),
            "AdminKubeconfigRequest.authentication.gardener.cloud \"\" is invalid: spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes".into()
        )
    );
    let (code, reason, _) =
        status_of(request(&api, "dev", json!({"spec": {"expirationSeconds": "1h"}})).await);
    assert_eq!((code, reason.as_str()), (400, "BadRequest"));
    let (code, reason, _) = status_of(
        request(
            &api,
            "dev",
            json!({"apiVersion": "v1", "kind": "ConfigMap"}),
        )
        .await,
    );
    assert_eq!((code, reason.as_str()), (400, "BadRequest"));
    let (code, reason, message) = status_of(request(&api, "asleep", json!({"spec": {}})).await);
    assert_eq!((code, reason.as_str()), (422, "Invalid"));
    assert!(
        message.contains("no suitable advertised address for kube-apiserver"),
        "{message}"
    );

    // RBAC applies to the subresource: a user without a role may not ask.
    let nobody = garden.client_as(&garden.add_user("nobody", &[]));
    let forbidden = status_of(
        request(
            &Api::namespaced_with(nobody, "default", &shoots()),
            "dev",
            json!({"spec": {}}),
        )
        .await,
    );
    assert_eq!(forbidden.0, 403);
}

#[tokio::test]
async fn without_the_option_no_shoots_are_served() {
    let bed = Testbed::start().await.unwrap();
    let api: Api<DynamicObject> =
        Api::namespaced_with(bed.cluster().client(), "default", &shoots());
    let (code, _, _) = status_of(request(&api, "dev", json!({"spec": {}})).await);
    assert_eq!(code, 404);
}
