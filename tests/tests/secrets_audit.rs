//! No secret leaks into what operators read: while an agent registers (its target-access
//! kubeconfig Secret), a DeployerRegistration makes a pair (its landscaper-cluster kubeconfig
//! Secret with a token) and installations import a value from a Secret (one succeeds and
//! exports it, one fails on the import's schema), no token, kubeconfig or Secret value
//! appears in any log line of the processes (captured at debug level), in any Event or in any
//! status.
//!
//! One test in this binary: the log capture is the process's global subscriber.

use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, ListParams, PostParams};
use kube::{Client, ResourceExt};
use landscaper_api::constants::annotations;
use landscaper_api::core::{
    DeployItem, DeployerRegistration, Environment, Execution, Installation, InstallationPhase,
};
use landscaper_e2e::blueprints::{blueprint_filesystem, mock_item_template};
use landscaper_e2e::flow::namespace_with_mock_deployer;
use landscaper_e2e::logs::Captured;
use landscaper_e2e::registrations::registration;
use landscaper_e2e::{World, eventually, spawn_agent};
use serde_json::{Value, json};

/// The namespace of the installations.
const NS: &str = "audited";
/// The value of the Secret the installations import.
const SECRET_VALUE: &str = "s3cr3t-value-that-must-not-leak-4f9a2c";

/// Captures every log line of the process at debug level, as JSON (fields and spans included).
fn capture_logs() -> Captured {
    let captured = Captured::default();
    tracing_subscriber::fmt()
        .json()
        .with_max_level(tracing_subscriber::filter::LevelFilter::DEBUG)
        .with_writer(captured.clone())
        .try_init()
        .expect("the only subscriber of this test binary");
    captured
}

/// An Installation importing `password` from the Secret `credentials` with `schema`; its mock
/// item exports the value.
fn installation(name: &str, schema: Value) -> Installation {
    let template = mock_item_template(
        "Succeeded",
        "    export:\n      password: {{ .imports.password | quote }}\n",
    );
    let blueprint = blueprint_filesystem(json!({
        "imports": [{"name": "password", "schema": schema}],
        "deployExecutions": [{"name": "main", "type": "GoTemplate", "template": template}],
    }));
    serde_json::from_value(json!({
        "apiVersion": "landscaper.gardener.cloud/v1alpha1",
        "kind": "Installation",
        "metadata": {"name": name, "annotations": {annotations::OPERATION: "reconcile"}},
        "spec": {
            "blueprint": {"inline": {"filesystem": blueprint}},
            "imports": {"data": [{
                "name": "password",
                "secretRef": {"name": "credentials", "key": "password"},
            }]},
        },
    }))
    .expect("an Installation")
}

/// The phase the installation's first job ends in.
async fn finished(installations: &Api<Installation>, name: &str) -> InstallationPhase {
    let phase = || async {
        let status = installations
            .get(name)
            .await
            .expect("read")
            .status
            .unwrap_or_default();
        status
            .phase
            .filter(|_| status.job_id.is_some() && status.job_id == status.job_id_finished)
    };
    eventually(&format!("Installation {name} finishes its job"), || async {
        phase().await.is_some()
    })
    .await;
    phase().await.expect("a phase")
}

/// The tokens in a kubeconfig's users.
fn kubeconfig_tokens(kubeconfig: &str) -> Vec<String> {
    let parsed: Value = serde_yaml_ng::from_str(kubeconfig).expect("a kubeconfig");
    parsed["users"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|user| user["user"]["token"].as_str())
        .map(str::to_owned)
        .collect()
}

/// The kubeconfig in `key` of the Secret `name` (in whichever namespace), once it exists.
async fn kubeconfig_in(client: &Client, name: &str, key: &str) -> String {
    let secrets: Api<Secret> = Api::all(client.clone());
    let named = ListParams::default().fields(&format!("metadata.name={name}"));
    let find = || async {
        secrets
            .list(&named)
            .await
            .expect("Secrets listed")
            .items
            .into_iter()
            .next()
    };
    eventually(&format!("Secret {name} exists"), || async {
        find().await.is_some()
    })
    .await;
    let secret = find().await.expect("the Secret");
    let bytes = secret
        .data
        .and_then(|mut data| data.remove(key))
        .unwrap_or_else(|| panic!("Secret {name} has no key {key}"));
    String::from_utf8(bytes.0).expect("UTF-8")
}

/// Every Event's note in the cluster, and with `landscaper_kinds` every status of the
/// landscaper's kinds, as text.
async fn events_and_statuses(client: &Client, landscaper_kinds: bool) -> Vec<(String, String)> {
    let mut texts = Vec::new();
    for event in Api::<Event>::all(client.clone())
        .list(&ListParams::default())
        .await
        .expect("Events")
    {
        let about = event
            .regarding
            .as_ref()
            .map(|r| format!("{:?} {:?}", r.kind, r.name))
            .unwrap_or_default();
        texts.push((
            format!("Event {about} {:?}", event.reason),
            event.note.unwrap_or_default(),
        ));
    }
    async fn statuses<K>(client: &Client, texts: &mut Vec<(String, String)>)
    where
        K: kube::Resource<DynamicType = ()>
            + Clone
            + std::fmt::Debug
            + serde::de::DeserializeOwned
            + serde::Serialize,
    {
        for object in Api::<K>::all(client.clone())
            .list(&ListParams::default())
            .await
            .expect("list")
        {
            let value = serde_json::to_value(&object).expect("JSON");
            texts.push((
                format!("{} {} status", K::kind(&()), object.name_any()),
                value["status"].to_string(),
            ));
        }
    }
    if !landscaper_kinds {
        return texts;
    }
    statuses::<Installation>(client, &mut texts).await;
    statuses::<Execution>(client, &mut texts).await;
    statuses::<DeployItem>(client, &mut texts).await;
    statuses::<Environment>(client, &mut texts).await;
    statuses::<DeployerRegistration>(client, &mut texts).await;
    texts
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_token_kubeconfig_or_secret_value_reaches_logs_events_or_statuses() {
    let logs = capture_logs();
    let world = World::start().await;
    let landscaper = world.landscaper_cluster().client();

    // An agent registers its environment: the target-access kubeconfig in the fenced cluster.
    let settings = world.agent_settings("edge");
    let agent_kubeconfig =
        std::fs::read_to_string(&settings.landscaper_kubeconfig).expect("agent kubeconfig");
    let (_stop_agent, _agent) = spawn_agent(world.agent(settings).await);

    // A registration makes a pair with a token of its own.
    let registration = registration("mock", &["landscaper.gardener.cloud/mock"], json!({}));
    Api::<DeployerRegistration>::all(landscaper.clone())
        .create(&PostParams::default(), &registration)
        .await
        .expect("registration created");

    // Installations import a Secret's value: one exports it, one fails on its schema.
    namespace_with_mock_deployer(&world, NS).await;
    let secret: Secret = serde_json::from_value(json!({
        "metadata": {"name": "credentials"},
        "stringData": {"password": SECRET_VALUE},
    }))
    .expect("a Secret");
    Api::<Secret>::namespaced(landscaper.clone(), NS)
        .create(&PostParams::default(), &secret)
        .await
        .expect("Secret created");
    let installations: Api<Installation> = Api::namespaced(landscaper.clone(), NS);
    for (name, schema) in [
        ("exports-it", json!({"type": "string"})),
        ("wrong-schema", json!({"type": "integer"})),
    ] {
        installations
            .create(&PostParams::default(), &installation(name, schema))
            .await
            .expect("Installation created");
    }
    assert_eq!(
        finished(&installations, "exports-it").await,
        InstallationPhase::Succeeded
    );
    assert_eq!(
        finished(&installations, "wrong-schema").await,
        InstallationPhase::Failed
    );

    // The value went through the flow (into the item's configuration, where the user put
    // it), and the failure is the schema's.
    let item = Api::<DeployItem>::namespaced(landscaper.clone(), NS)
        .get("exports-it-item")
        .await
        .expect("the item");
    assert!(
        serde_json::to_string(&item.spec.config)
            .expect("JSON")
            .contains(SECRET_VALUE)
    );
    let failure = installations
        .get("wrong-schema")
        .await
        .expect("read")
        .status
        .and_then(|s| s.last_error)
        .expect("a last error");
    assert!(failure.message.contains("password"), "{}", failure.message);

    let target_access = kubeconfig_in(
        &world.fenced_cluster().client(),
        "edge-target-access",
        "kubeconfig",
    )
    .await;
    let pair_access =
        kubeconfig_in(&landscaper, "mock-edge-landscaper-cluster", "kubeconfig").await;
    let mut secrets = vec![(
        "the imported Secret's value".to_owned(),
        SECRET_VALUE.to_owned(),
    )];
    for (what, kubeconfig) in [
        ("the agent's target-access token", &target_access),
        ("the pair's landscaper-cluster token", &pair_access),
        ("the agent's landscaper-cluster token", &agent_kubeconfig),
    ] {
        let tokens = kubeconfig_tokens(kubeconfig);
        assert!(!tokens.is_empty(), "{what}: a kubeconfig with a token");
        secrets.extend(tokens.into_iter().map(|token| (what.to_owned(), token)));
    }

    let mut places = events_and_statuses(&landscaper, true).await;
    places.extend(events_and_statuses(&world.fenced_cluster().client(), false).await);
    let logs = logs.text();
    assert!(
        logs.contains("exports-it")
            && logs.contains("wrong-schema")
            && logs.contains("\"level\":\"DEBUG\""),
        "the logs were captured at debug level"
    );
    places.extend(
        logs.lines()
            .enumerate()
            .map(|(n, line)| (format!("log line {n}"), line.to_owned())),
    );
    for (what, secret) in &secrets {
        for (place, text) in &places {
            assert!(
                !text.contains(secret.as_str()),
                "{what} appears in {place}: {text}"
            );
        }
    }
}
