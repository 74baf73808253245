//! The kubeconfig template functions in running installations: the installation controller
//! resolves the Target a template passes (inline kubeconfig, or a Secret in the installation's
//! namespace) and asks the cluster behind it for a ServiceAccount token
//! (`getServiceAccountKubeconfig…`) or, through Gardener's API, for a shoot's admin kubeconfig
//! (`getShootAdminKubeconfig…`, against the testbed's test double of Gardener's Shoots).
//! `getOidcKubeconfig` needs no request. The kubeconfigs are checked by using them: their
//! credentials authenticate as the ServiceAccount or the shoot admin, and RBAC applies.

use base64::Engine as _;
use k8s_openapi::api::authentication::v1::SelfSubjectReview;
use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use landscaper_api::core::{Execution, Installation, Target};
use landscaper_e2e::blueprints::{blueprint_filesystem, mock_item_template};
use landscaper_e2e::installations::{create_root, failed, succeeded};
use landscaper_e2e::objects::create;
use landscaper_e2e::{World, flow};
use serde_json::{Value, json};

const CLUSTER_TARGET: &str = "landscaper.gardener.cloud/kubernetes-cluster";

/// A blueprint importing the Target `cluster` whose one mock item exports what `exports`
/// (a YAML map of GoTemplate expressions, indented for the item's `export`) renders.
fn blueprint(exports: &str) -> Value {
    let template = mock_item_template("Succeeded", &format!("    export:\n{exports}"));
    blueprint_filesystem(json!({
        "imports": [{"name": "cluster", "type": "target", "targetType": CLUSTER_TARGET}],
        "deployExecutions": [{"name": "main", "type": "GoTemplate", "template": template}],
    }))
}

/// Creates the root installation `name` importing the Target `target` as `cluster`.
async fn install(api: &Api<Installation>, name: &str, target: &str, exports: &str) {
    create_root(
        api,
        name,
        json!({
            "blueprint": {"inline": {"filesystem": blueprint(exports)}},
            "imports": {"targets": [{"name": "cluster", "target": target}]},
        }),
    )
    .await;
}

async fn target(client: &kube::Client, namespace: &str, name: &str, spec: Value) {
    let targets = Api::<Target>::namespaced(client.clone(), namespace);
    create(&targets, json!({"metadata": {"name": name}, "spec": spec})).await;
}

fn inline(kubeconfig: &str) -> Value {
    json!({"type": CLUSTER_TARGET, "config": {"kubeconfig": kubeconfig}})
}

/// What the installation's template put into its deploy item's `export`.
async fn rendered(client: &kube::Client, namespace: &str, name: &str) -> Value {
    let installations: Api<Installation> = Api::namespaced(client.clone(), namespace);
    succeeded(&installations, name).await;
    let execution = Api::<Execution>::namespaced(client.clone(), namespace)
        .get(name)
        .await
        .expect("the installation's Execution");
    execution.spec.deploy_items[0].config["export"].clone()
}

fn decoded(base64_text: &Value) -> String {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(base64_text.as_str().expect("a base64 string"))
        .expect("standard base64");
    String::from_utf8(bytes).expect("a UTF-8 kubeconfig")
}

async fn client_of(kubeconfig: &str) -> kube::Client {
    let parsed = Kubeconfig::from_yaml(kubeconfig).expect("the kubeconfig parses");
    let config = kube::Config::from_custom_kubeconfig(parsed, &KubeConfigOptions::default())
        .await
        .expect("a client configuration");
    kube::Client::try_from(config).expect("a client")
}

async fn who_am_i(client: &kube::Client) -> Value {
    let review = Api::<SelfSubjectReview>::all(client.clone())
        .create(&PostParams::default(), &SelfSubjectReview::default())
        .await
        .expect("a SelfSubjectReview");
    serde_json::to_value(review.status.expect("a status").user_info).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn service_account_and_oidc_kubeconfigs_of_a_target_in_the_cluster() {
    let world = World::start().await;
    let client = flow::namespace_with_mock_deployer(&world, "kubeconfigs").await;
    let fenced = world.fenced_cluster();
    world.create_namespace(fenced, "team").await;
    Api::<ServiceAccount>::namespaced(fenced.client(), "team")
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "reader"}})).unwrap(),
        )
        .await
        .expect("the ServiceAccount is created");
    // The Target reads its kubeconfig from a Secret in the installation's namespace.
    let secret: Secret = serde_json::from_value(json!({
        "metadata": {"name": "fenced-access"},
        "stringData": {"kubeconfig": fenced.kubeconfig_yaml()},
    }))
    .unwrap();
    Api::<Secret>::namespaced(client.clone(), "kubeconfigs")
        .create(&PostParams::default(), &secret)
        .await
        .expect("the Secret is created");
    target(
        &client,
        "kubeconfigs",
        "fenced",
        json!({"type": CLUSTER_TARGET, "secretRef": {"name": "fenced-access", "key": "kubeconfig"}}),
    )
    .await;
    let installations: Api<Installation> = Api::namespaced(client.clone(), "kubeconfigs");
    install(
        &installations,
        "reader",
        "fenced",
        "      issued: {{ getServiceAccountKubeconfigWithExpirationTimestamp \"reader\" \"team\" 3600 .imports.cluster | toJson }}\n      plain: {{ getServiceAccountKubeconfig \"reader\" \"team\" 3600.0 .imports.cluster | quote }}\n      oidc: {{ getOidcKubeconfig \"https://issuer.example\" \"landscaper\" .imports.cluster | quote }}\n",
    )
    .await;
    let export = rendered(&client, "kubeconfigs", "reader").await;

    let issued = &export["issued"];
    let kubeconfig = decoded(&issued["kubeconfig"]);
    let parsed = Kubeconfig::from_yaml(&kubeconfig).unwrap();
    assert_eq!(parsed.auth_infos.len(), 1, "{kubeconfig}");
    assert_eq!(parsed.auth_infos[0].name, "reader");
    assert_eq!(
        parsed.contexts[0].context.as_ref().unwrap().user.as_deref(),
        Some("reader")
    );
    assert_eq!(
        parsed.clusters[0]
            .cluster
            .as_ref()
            .unwrap()
            .server
            .as_deref(),
        Some(fenced.url().as_str())
    );
    let sa = client_of(&kubeconfig).await;
    assert_eq!(
        who_am_i(&sa).await["username"],
        "system:serviceaccount:team:reader"
    );
    // RBAC applies to the ServiceAccount: it was granted nothing.
    match Api::<Secret>::namespaced(sa, "team")
        .list(&Default::default())
        .await
    {
        Err(kube::Error::Api(status)) => assert_eq!(status.code, 403, "{status:?}"),
        other => panic!("a ServiceAccount without roles lists Secrets: {other:?}"),
    }
    let expires = issued["expirationTimestamp"]
        .as_i64()
        .expect("unix seconds");
    assert_eq!(
        issued["expirationTimestampReadable"],
        jiff::Timestamp::from_second(expires)
            .unwrap()
            .strftime("%Y-%m-%dT%H:%M:%SZ")
            .to_string()
    );
    // The float lifetime is accepted as upstream's toInt64 accepts it.
    let plain = decoded(&export["plain"]);
    assert!(
        plain.contains("- name: reader\n  user:\n    token: "),
        "{plain}"
    );

    // The OIDC kubeconfig is the Target's, reduced, with kubectl's oidc-login plugin.
    let ca = base64::engine::general_purpose::STANDARD.encode(fenced.ca_pem());
    let name = fenced.name();
    let expected = format!(
        "apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: {ca}
    server: {url}
  name: {name}
contexts:
- context:
    cluster: {name}
    user: {name}-admin
  name: {name}
current-context: {name}
kind: Config
preferences: {{}}
users:
- name: {name}-admin
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      args:
      - oidc-login
      - get-token
      - --oidc-issuer-url=https://issuer.example
      - --oidc-client-id=landscaper
      - --oidc-extra-scope=email
      - --oidc-extra-scope=profile
      - --oidc-extra-scope=offline_access
      - --oidc-use-pkce
      - --grant-type=auto
      command: kubectl
      env: null
      provideClusterInfo: false
",
        url = fenced.url()
    );
    assert_eq!(decoded(&export["oidc"]), expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kubeconfig_function_that_fails_names_the_function_the_target_and_the_cause() {
    let world = World::start().await;
    let client = flow::namespace_with_mock_deployer(&world, "failing").await;
    let fenced = world.fenced_cluster();
    world.create_namespace(fenced, "team").await;
    let nobody = fenced.add_user("nobody", &[]);
    target(
        &client,
        "failing",
        "no-secret",
        json!({"type": CLUSTER_TARGET, "secretRef": {"name": "missing"}}),
    )
    .await;
    target(
        &client,
        "failing",
        "unreachable",
        inline(
            &fenced
                .kubeconfig_yaml()
                .replace(&fenced.url(), "https://127.0.0.1:1"),
        ),
    )
    .await;
    target(
        &client,
        "failing",
        "forbidden",
        inline(&fenced.kubeconfig_yaml_for(&nobody)),
    )
    .await;
    target(
        &client,
        "failing",
        "admin",
        inline(&fenced.kubeconfig_yaml()),
    )
    .await;
    let call = "      k: {{ getServiceAccountKubeconfig \"reader\" \"team\" 600 .imports.cluster | quote }}\n";
    let installations: Api<Installation> = Api::namespaced(client.clone(), "failing");
    let cases = [
        (
            "no-secret",
            "Target failing/no-secret: could not resolve target: spec.secretRef: Secret failing/missing not found",
        ),
        (
            "unreachable",
            "Target failing/unreachable: token request failed: ServiceAccount team/reader: the cluster is not reachable",
        ),
        (
            "forbidden",
            "Target failing/forbidden: token request failed: ServiceAccount team/reader: 403 Forbidden",
        ),
        (
            "admin",
            "Target failing/admin: token request failed: ServiceAccount team/reader: 404 NotFound: serviceaccounts \"reader\" not found",
        ),
        ("gone", "Target failing/gone"),
    ];
    for (name, _) in &cases {
        install(&installations, name, name, call).await;
    }
    for (name, expected) in cases {
        let message = failed(&installations, name).await;
        assert!(message.contains(expected), "{name}: {message}");
        if name != "gone" {
            assert!(
                message.contains("templating function getServiceAccountKubeconfig: "),
                "{name}: {message}"
            );
        }
        assert!(!message.contains(&nobody), "{name}: the token is not shown");
    }
}

fn shoots() -> ApiResource {
    ApiResource {
        group: "core.gardener.cloud".into(),
        version: "v1beta1".into(),
        api_version: "core.gardener.cloud/v1beta1".into(),
        kind: "Shoot".into(),
        plural: "shoots".into(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shoots_admin_kubeconfig_comes_from_gardeners_adminkubeconfig_subresource() {
    let world = World::start_on(landscaper::dev::two_clusters().with_gardener_shoots()).await;
    let client = flow::namespace_with_mock_deployer(&world, "shooted").await;
    let garden = world.landscaper_cluster();
    let fenced = world.fenced_cluster();
    world.create_namespace(garden, "garden-dev").await;
    let shoots: Api<DynamicObject> = Api::namespaced_with(garden.client(), "garden-dev", &shoots());
    let shoot: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "core.gardener.cloud/v1beta1",
        "kind": "Shoot",
        "metadata": {"name": "dev"},
        "spec": {"region": "local"},
    }))
    .unwrap();
    shoots
        .create(&PostParams::default(), &shoot)
        .await
        .expect("the Shoot is created");
    shoots
        .patch_status(
            "dev",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"advertisedAddresses": [
                {"name": "external", "url": fenced.url()},
            ]}})),
        )
        .await
        .expect("the Shoot's status is written");
    target(
        &client,
        "shooted",
        "garden",
        inline(&garden.kubeconfig_yaml()),
    )
    .await;
    let installations: Api<Installation> = Api::namespaced(client.clone(), "shooted");
    install(
        &installations,
        "admin",
        "garden",
        "      issued: {{ getShootAdminKubeconfigWithExpirationTimestamp \"dev\" \"garden-dev\" 600 .imports.cluster | toJson }}\n",
    )
    .await;
    install(
        &installations,
        "missing",
        "garden",
        "      k: {{ getShootAdminKubeconfig \"missing\" \"garden-dev\" 600 .imports.cluster | quote }}\n",
    )
    .await;
    let export = rendered(&client, "shooted", "admin").await;
    let kubeconfig = decoded(&export["issued"]["kubeconfig"]);
    let parsed = Kubeconfig::from_yaml(&kubeconfig).unwrap();
    assert_eq!(
        parsed.clusters[0]
            .cluster
            .as_ref()
            .unwrap()
            .server
            .as_deref(),
        Some(fenced.url().as_str()),
        "the admin kubeconfig is for the shoot's advertised address"
    );
    let admin = client_of(&kubeconfig).await;
    let user = who_am_i(&admin).await;
    assert_eq!(user["username"], "gardener.cloud:admin:testbed-admin");
    assert!(
        user["groups"]
            .as_array()
            .unwrap()
            .contains(&json!("system:masters"))
    );
    assert!(export["issued"]["expirationTimestamp"].is_i64());

    let message = failed(&installations, "missing").await;
    assert!(
        message.contains(
            "templating function getShootAdminKubeconfig: Target shooted/garden: admin kubeconfig request failed: Shoot garden-dev/missing: 404 NotFound: shoots.core.gardener.cloud \"missing\" not found"
        ),
        "{message}"
    );
}
