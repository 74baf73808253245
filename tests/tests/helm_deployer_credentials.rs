//! Chart credentials through the agent's embedded helm deployer with production RBAC: the
//! agent chart's RBAC in the fenced cluster and the documented RBAC in the landscaper cluster.
//! A chart from a Helm repository behind basic auth (credentials from the item's Context via
//! a Secret) and an OCI chart (the Context's `registryPullSecrets`) reach Succeeded; the
//! deployer read the Context and both Secrets as the agent's landscaper identity and was never
//! refused.
//!
//! The deployer is the one `landscaper-agent run` starts (its configuration, its clients),
//! except that its chart sources speak plain HTTP to the loopback registry, which the binary
//! takes from `$LANDSCAPER_PLAIN_HTTP_REGISTRIES`. Without that variable, an agent whose
//! configuration file says `oci.allowPlainHttp` reaches the plain-HTTP registry all the same.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, Patch, PatchParams, PostParams};
use landscaper_agent::settings::{Overrides, Settings};
use landscaper_api::core::{Context, DeployItem, DeployItemPhase, Target};
use landscaper_e2e::charts::{helm_config, helm_deploy_item_of};
use landscaper_e2e::{
    LS_NAMESPACE, World, eventually, eventually_within, spawn_agent, spawn_helm_deployer,
};
use landscaper_helm_deployer::source::{SourceSettings, Sources};
use landscaper_helm_deployer::{self as helm, HelmDeployer};
use serde_json::{Value, json};
use testbed::fixtures::chart_repository::{self, ChartRepository, RepoChart, RepoOptions};
use testbed::fixtures::registry::Registry;

const ENVIRONMENT: &str = "creds";
/// Rendering in a debug build on a shared machine, with RBAC on every request.
const JOB_LIMIT: Duration = Duration::from_secs(120);

/// A one-ConfigMap chart `demo` at 0.1.0.
fn demo_chart() -> Vec<u8> {
    chart_repository::package(&[
        (
            "demo/Chart.yaml",
            "apiVersion: v2\nname: demo\nversion: 0.1.0\n",
        ),
        ("demo/values.yaml", "greeting: hello\n"),
        (
            "demo/templates/configmap.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-config\ndata:\n  greeting: {{ .Values.greeting | quote }}\n",
        ),
    ])
}

/// Pushes [`demo_chart`] as `<registry>/charts/demo:0.1.0` over plain HTTP; its reference
/// without the tag.
async fn push_demo_chart(registry: &Registry) -> String {
    let reference = format!("{}/charts/demo", registry.address());
    let config = br#"{"apiVersion":"v2","name":"demo","version":"0.1.0"}"#.to_vec();
    let plain_http = landscaper_chart::fetch::FetchOptions {
        plain_http: true,
        ..Default::default()
    };
    landscaper_chart::fetch::push(&reference, "0.1.0", demo_chart(), config, &plain_http)
        .await
        .expect("chart pushed");
    reference
}

async fn create_secret(world: &World, name: &str, type_: &str, data: Value) {
    let secret: Secret = serde_json::from_value(json!({
        "metadata": { "name": name, "namespace": LS_NAMESPACE },
        "type": type_,
        "stringData": data,
    }))
    .unwrap();
    Api::<Secret>::namespaced(world.landscaper_cluster().client(), LS_NAMESPACE)
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();
}

/// Waits until the item's first job finished and asserts it succeeded.
async fn succeeded(world: &World, name: &str) {
    let items: Api<DeployItem> = Api::namespaced(world.landscaper_cluster().client(), LS_NAMESPACE);
    eventually_within(
        &format!("DeployItem {name} finished"),
        JOB_LIMIT,
        || async {
            let status = items.get(name).await.unwrap().status.unwrap_or_default();
            status.job_id.is_some() && status.job_id == status.job_id_finished
        },
    )
    .await;
    let status = items.get(name).await.unwrap().status.unwrap_or_default();
    assert_eq!(
        status.phase,
        Some(DeployItemPhase::Succeeded),
        "{name}: {:?}",
        status.last_error
    );
}

async fn greeting(world: &World, release: &str) -> Option<String> {
    Api::<ConfigMap>::namespaced(world.fenced_cluster().client(), "apps")
        .get_opt(&format!("{release}-config"))
        .await
        .unwrap()
        .and_then(|c| c.data)
        .and_then(|d| d.get("greeting").cloned())
}

#[tokio::test]
async fn context_credentials_are_read_with_the_documented_rbac() {
    let registry = Registry::binary_or_skip().map(|b| Registry::start(&b).expect("registry"));
    let world = World::start().await;
    let agent = world.production_agent(ENVIRONMENT).await;
    let landscaper_user = agent.landscaper_user.clone();

    let sources = Sources::new(SourceSettings {
        cache_dir: Some(world.dir.path().join("charts")),
        plain_http_registries: registry.iter().map(|r| r.address().to_owned()).collect(),
        ..SourceSettings::default()
    });
    // The agent serves one namespace, its landscaper namespace.
    let [config] = <[_; 1]>::try_from(landscaper_agent::helm_deployer::configs(
        agent.agent.settings(),
        2,
    ))
    .expect("one served namespace");
    let mut setup = helm::setup(
        agent.agent.landscaper().client.clone(),
        agent.agent.host().client.clone(),
        config,
    );
    setup.deployer = HelmDeployer {
        sources: Arc::new(sources),
    };
    let (stop_deployer, deployer_stopped) = tokio::sync::oneshot::channel::<()>();
    let deployer = tokio::spawn(landscaper_deployer::run(setup, async move {
        let _ = deployer_stopped.await;
    }));
    let (stop_agent, agent_task) = spawn_agent(agent.agent);
    let targets: Api<Target> = Api::namespaced(world.landscaper_cluster().client(), LS_NAMESPACE);
    eventually(
        "the landscaper created the environment's Target",
        || async { targets.get_opt(ENVIRONMENT).await.unwrap().is_some() },
    )
    .await;

    // The Context `default` of the items' namespace: a repository header from a Secret, and a
    // registry login from a docker config Secret.
    let repository = ChartRepository::serve(
        vec![RepoChart {
            name: "demo".into(),
            version: "0.1.0".into(),
            archive: demo_chart(),
        }],
        RepoOptions {
            basic_auth: Some(("alice".into(), "s3cret".into())),
            tls: true,
            ..RepoOptions::default()
        },
    )
    .expect("repository serves");
    let header = format!("Basic {}", STANDARD.encode("alice:s3cret"));
    create_secret(&world, "repo-auth", "Opaque", json!({ "header": header })).await;
    let registry_host = registry.as_ref().map_or("none", |r| r.address());
    let docker_config =
        json!({ "auths": { registry_host: { "auth": STANDARD.encode("puller:pw") } } });
    create_secret(
        &world,
        "pull",
        "kubernetes.io/dockerconfigjson",
        json!({ ".dockerconfigjson": docker_config.to_string() }),
    )
    .await;
    let context: Context = serde_json::from_value(json!({
        "metadata": { "name": "default", "namespace": LS_NAMESPACE },
        "configurations": { "helmChartRepoCredentials": { "auths": [{
            "url": repository.url(),
            "customCAData": repository.ca_pem().unwrap(),
            "secretRef": { "name": "repo-auth", "key": "header" },
        }] } },
        "registryPullSecrets": [{ "name": "pull" }],
    }))
    .unwrap();
    // The landscaper's Context controller may have written `default` already: take it over.
    Api::<Context>::namespaced(world.landscaper_cluster().client(), LS_NAMESPACE)
        .patch(
            "default",
            &PatchParams::apply("test").force(),
            &Patch::Apply(&context),
        )
        .await
        .unwrap();

    let items: Api<DeployItem> = Api::namespaced(world.landscaper_cluster().client(), LS_NAMESPACE);
    let from_repository = json!({ "helmChartRepo": {
        "helmChartRepoUrl": repository.url(),
        "helmChartName": "demo",
        "helmChartVersion": "0.1.0",
    } });
    let config = helm_config(
        "repo",
        "apps",
        from_repository,
        json!({ "greeting": "repo" }),
    );
    items
        .create(
            &PostParams::default(),
            &helm_deploy_item_of("repo", ENVIRONMENT, config),
        )
        .await
        .unwrap();
    succeeded(&world, "repo").await;
    assert_eq!(greeting(&world, "repo").await.as_deref(), Some("repo"));

    let mut secrets_read = vec!["repo-auth"];
    if let Some(registry) = &registry {
        let reference = push_demo_chart(registry).await;
        let from_registry = json!({ "ref": format!("{reference}:0.1.0") });
        let config = helm_config("oci", "apps", from_registry, json!({ "greeting": "oci" }));
        items
            .create(
                &PostParams::default(),
                &helm_deploy_item_of("oci", ENVIRONMENT, config),
            )
            .await
            .unwrap();
        succeeded(&world, "oci").await;
        assert_eq!(greeting(&world, "oci").await.as_deref(), Some("oci"));
        secrets_read.push("pull");
    }

    // The Context and its Secrets were read as the agent's landscaper identity, and nothing it
    // asked for was refused.
    let log = world.landscaper_cluster().requests();
    let ours: Vec<_> = log.iter().filter(|r| r.user == landscaper_user).collect();
    let refused: Vec<_> = ours.iter().filter(|r| r.code == 403).collect();
    assert!(refused.is_empty(), "refused: {refused:#?}");
    let read = |resource: &str, name: &str| {
        ours.iter().any(|r| {
            r.verb == "get"
                && r.resource == resource
                && r.namespace == LS_NAMESPACE
                && r.name == name
                && r.code == 200
        })
    };
    assert!(read("contexts", "default"), "Context default was not read");
    for name in secrets_read {
        assert!(read("secrets", name), "Secret {name} was not read");
    }

    stop_deployer.send(()).unwrap();
    deployer.await.unwrap();
    stop_agent.send(()).unwrap();
    agent_task.await.unwrap();
}

/// `landscaper-agent run` with `oci.allowPlainHttp: true` in its configuration file, and no
/// `$LANDSCAPER_PLAIN_HTTP_REGISTRIES`: a helm item whose chart is in a registry that only
/// speaks plain HTTP succeeds.
#[tokio::test]
async fn the_agents_oci_configuration_reaches_a_plain_http_registry() {
    let Some(binary) = Registry::binary_or_skip() else {
        return;
    };
    assert!(
        std::env::var_os(landscaper_helm_deployer::source::PLAIN_HTTP_REGISTRIES_ENV).is_none()
    );
    let registry = Registry::start(&binary).expect("registry starts");
    let reference = push_demo_chart(&registry).await;

    let world = World::start().await;
    let environment = "plain";
    let kubeconfig = world.agent_settings(environment).landscaper_kubeconfig;
    let config_file = world.dir.path().join("agent-config.yaml");
    std::fs::write(
        &config_file,
        format!(
            "apiVersion: config.landscaper.gardener.cloud/v1alpha1\nkind: AgentConfiguration\n\
             name: {environment}\nlandscaperClusterKubeconfig: {}\noci:\n  allowPlainHttp: true\n",
            kubeconfig.display()
        ),
    )
    .unwrap();
    let overrides = Overrides {
        heartbeat_period: Some("1s".into()),
        ..Overrides::default()
    };
    let settings = Settings::load(Some(&config_file), overrides).expect("valid configuration");
    let agent = world.agent(settings).await;
    let (stop, running) = spawn_helm_deployer(agent, 2);
    let targets: Api<Target> = Api::namespaced(world.landscaper_cluster().client(), LS_NAMESPACE);
    eventually(
        "the landscaper created the environment's Target",
        || async { targets.get_opt(environment).await.unwrap().is_some() },
    )
    .await;

    let chart = json!({ "ref": format!("oci://{reference}:0.1.0") });
    let config = helm_config("oci", "apps", chart, json!({ "greeting": "plain" }));
    Api::<DeployItem>::namespaced(world.landscaper_cluster().client(), LS_NAMESPACE)
        .create(
            &PostParams::default(),
            &helm_deploy_item_of("oci", environment, config),
        )
        .await
        .unwrap();
    succeeded(&world, "oci").await;
    assert_eq!(greeting(&world, "oci").await.as_deref(), Some("plain"));

    stop.send(()).unwrap();
    running.await.unwrap();
}
