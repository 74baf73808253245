//! The agent chart: it renders with our engine exactly as with helm, passes `helm lint`,
//! installs with helm beside the documented landscaper-side RBAC in one cluster, and the RBAC
//! each grants is exactly enough for the agent to register its environment, and no more.

use std::path::PathBuf;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Pod, Probe, Secret};
use k8s_openapi::api::rbac::v1::ClusterRole;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::api::Api;
use landscaper_agent::Agent;
use landscaper_agent::clients::ClusterAccess;
use landscaper_agent::settings::{Overrides, Settings};
use landscaper_api::core::{Environment, Target};
use landscaper_chart::formats::tree::Map;
use landscaper_chart::helm::chart;
use landscaper_chart::helm::render::{self, TemplateOptions};
use landscaper_e2e::charts::{ValuesInput, assert_renders_as_helm_does, helm, run_helm_async};
use landscaper_e2e::rbac::{
    create_all, documented_landscaper_rbac, documents, install_agent_chart_rbac,
    service_account_token,
};
use landscaper_e2e::{LS_NAMESPACE, World, eventually};

const RELEASE: &str = "my-env";
const RELEASE_NAMESPACE: &str = "agent-system";

fn chart_dir() -> PathBuf {
    landscaper_e2e::rbac::agent_chart_dir()
}

/// Renders the chart with our engine, as `helm template my-env CHART -n agent-system --set …`.
fn render_ours(sets: &[&str]) -> String {
    landscaper_e2e::rbac::render_agent_chart(RELEASE, RELEASE_NAMESPACE, sets)
}

const VALUE_VARIANTS: &[&[&str]] = &[
    &["agent.landscaperClusterKubeconfig.secretRef.name=landscaper-kubeconfig"],
    &[
        "agent.landscaperClusterKubeconfig.kubeconfig=apiVersion: v1",
        "agent.name=fenced-1",
        "cleanup.force=true",
        "serviceAccount.name=custom",
        "image.tag=v9.9.9",
    ],
];

#[test]
fn our_template_equals_helm_template_and_helm_lint_passes() {
    let Some(helm) = helm() else { return };
    let variants: Vec<ValuesInput<'_>> = VALUE_VARIANTS
        .iter()
        .map(|sets| ValuesInput { files: &[], sets })
        .collect();
    assert_renders_as_helm_does(&helm, &chart_dir(), RELEASE, RELEASE_NAMESPACE, &variants);
}

#[test]
fn chart_without_landscaper_kubeconfig_fails_with_a_clear_message() {
    let chart = chart::load(&chart_dir()).unwrap();
    let options = TemplateOptions::default();
    let error = render::install(&chart, &Map::default(), &options)
        .unwrap_err()
        .message;
    assert!(
        error.contains("agent.landscaperClusterKubeconfig: set secretRef.name or kubeconfig"),
        "{error}"
    );
}

#[test]
fn the_probes_ask_the_port_the_agent_serves_them_on() {
    let rendered = render_ours(&[
        "agent.landscaperClusterKubeconfig.secretRef.name=landscaper-kubeconfig",
        "agent.healthPort=9090",
    ]);
    let deployment = documents(&rendered)
        .into_iter()
        .find(|d| d["kind"] == "Deployment")
        .expect("a Deployment");
    let deployment: Deployment = serde_json::from_value(deployment).unwrap();
    let pod = deployment.spec.unwrap().template.spec.unwrap();
    let agent = &pod.containers[0];
    let args = agent.args.clone().unwrap();
    assert!(
        args.contains(&"--health-address=:9090".to_owned()),
        "{args:?}"
    );
    let port = &agent.ports.as_ref().unwrap()[0];
    assert_eq!(
        (port.name.as_deref(), port.container_port),
        (Some("health"), 9090)
    );
    let probe_of = |probe: &Option<Probe>| {
        let get = probe.as_ref().unwrap().http_get.clone().unwrap();
        (get.path.unwrap(), get.port)
    };
    let health = IntOrString::String("health".to_owned());
    assert_eq!(
        probe_of(&agent.liveness_probe),
        ("/healthz".to_owned(), health.clone())
    );
    assert_eq!(
        probe_of(&agent.readiness_probe),
        ("/readyz".to_owned(), health)
    );
}

#[tokio::test]
async fn agent_registers_with_exactly_the_rbac_the_chart_grants() {
    let world = World::start().await;
    world
        .create_namespace(world.fenced_cluster(), RELEASE_NAMESPACE)
        .await;
    let admin = world.fenced_cluster().client();
    let account = install_agent_chart_rbac(
        &admin,
        RELEASE,
        RELEASE_NAMESPACE,
        &[
            "agent.landscaperClusterKubeconfig.secretRef.name=landscaper-kubeconfig",
            "agent.name=charted",
        ],
    )
    .await;
    let token = service_account_token(&admin, RELEASE_NAMESPACE, &account).await;

    let agent = world
        .agent_with_host_token(world.agent_settings("charted"), &token)
        .await;
    agent
        .register()
        .await
        .expect("the chart's RBAC is enough to register");
    let targets: Api<Target> = Api::namespaced(
        world.landscaper_cluster().client(),
        landscaper_e2e::LS_NAMESPACE,
    );
    eventually("the landscaper created Target charted", || async {
        targets.get_opt("charted").await.unwrap().is_some()
    })
    .await;

    // The agent's identity can do what registration needs and nothing beyond it.
    let pods: Api<Pod> = Api::namespaced(world.fenced_cluster().client_as(&token), "default");
    let denied = pods.list(&Default::default()).await.unwrap_err();
    assert!(
        matches!(denied, kube::Error::Api(ref s) if s.code == 403),
        "{denied:?}"
    );
}

#[tokio::test]
async fn documented_landscaper_rbac_is_enough_for_the_agent() {
    let world = World::start().await;
    let admin = world.landscaper_cluster().client();
    create_all(
        &admin,
        &documents(&documented_landscaper_rbac("default")),
        "ls-system",
    )
    .await;
    let token = service_account_token(&admin, "ls-system", "agent-default").await;
    let mut settings = world.agent_settings("default");
    let kubeconfig = world.dir.path().join("least-privilege.yaml");
    std::fs::write(
        &kubeconfig,
        world.landscaper_cluster().kubeconfig_yaml_for(&token),
    )
    .unwrap();
    settings.landscaper_kubeconfig = kubeconfig;

    let (stop, task) = landscaper_e2e::spawn_agent(world.agent(settings.clone()).await);
    let environments: Api<landscaper_api::core::Environment> =
        Api::all(world.landscaper_cluster().client());
    eventually(
        "the least-privileged agent reports its heartbeat",
        || async {
            environments
                .get_opt("default")
                .await
                .unwrap()
                .and_then(|e| e.status)
                .and_then(|s| s.agent)
                .is_some()
        },
    )
    .await;
    stop.send(()).unwrap();
    task.await.unwrap();

    let host = world.access(world.fenced_cluster(), None).await;
    let landscaper = landscaper_agent::clients::ClusterAccess::from_kubeconfig_file(
        &settings.landscaper_kubeconfig,
        "landscaper",
    )
    .await
    .unwrap();
    let names = landscaper_agent::names::Names::new("default");
    let cleanup = landscaper_agent::cleanup::Cleanup {
        landscaper: &landscaper.client,
        host: landscaper_agent::registration::host::HostRegistration {
            client: &host.client,
            endpoint: &host.endpoint,
            names: &names,
            namespace: "ls-system",
            token_lifetime: settings.token_lifetime,
        },
        landscaper_namespace: "ls-system",
        names: &names,
        timeout: std::time::Duration::from_secs(30),
        force: false,
    };
    cleanup
        .run()
        .await
        .expect("cleanup works with the documented RBAC");
    assert!(environments.get_opt("default").await.unwrap().is_none());
}

#[tokio::test]
async fn chart_and_documented_rbac_install_in_one_cluster_and_the_agent_serves_from_its_release_namespace()
 {
    let Some(helm) = helm() else { return };
    // The agent's host cluster is the landscaper cluster itself.
    let world = World::start().await;
    let cluster = world.landscaper_cluster();
    let admin = cluster.client();
    create_all(
        &admin,
        &documents(&documented_landscaper_rbac("default")),
        LS_NAMESPACE,
    )
    .await;
    let chart = chart_dir();
    let kubeconfig = cluster.kubeconfig_path().display().to_string();
    // Upstream's values: `agent.namespace` left empty.
    let (ok, output) = run_helm_async(
        &helm,
        &[
            "install",
            "default",
            chart.to_str().unwrap(),
            "--kubeconfig",
            &kubeconfig,
            "--namespace",
            RELEASE_NAMESPACE,
            "--create-namespace",
            "--set",
            "agent.landscaperClusterKubeconfig.secretRef.name=landscaper-kubeconfig",
            "--set",
            "agent.namespace=",
        ],
    )
    .await;
    assert!(ok, "helm install failed: {output}");
    let roles: Api<ClusterRole> = Api::all(admin.clone());
    for name in [
        "landscaper:agent:default:host",
        "landscaper:agent:default:landscaper",
    ] {
        assert!(roles.get_opt(name).await.unwrap().is_some(), "{name}");
    }

    // The pod learns its namespace from the downward API.
    let deployment = Api::<Deployment>::namespaced(admin.clone(), RELEASE_NAMESPACE)
        .get("default-landscaper-agent")
        .await
        .unwrap();
    let container = deployment.spec.unwrap().template.spec.unwrap().containers[0].clone();
    let pod_namespace = container
        .env
        .unwrap_or_default()
        .into_iter()
        .find(|e| e.name == "POD_NAMESPACE")
        .and_then(|e| e.value_from)
        .and_then(|from| from.field_ref)
        .map(|field| field.field_path);
    assert_eq!(pod_namespace.as_deref(), Some("metadata.namespace"));

    // The agent with the configuration helm installed, as the chart's ServiceAccount in the
    // host cluster and the documented one in the landscaper cluster.
    let config = Api::<Secret>::namespaced(admin.clone(), RELEASE_NAMESPACE)
        .get("default-landscaper-agent-config")
        .await
        .unwrap()
        .data
        .unwrap()
        .remove("config.yaml")
        .unwrap()
        .0;
    let config_path = world.dir.path().join("installed-config.yaml");
    std::fs::write(&config_path, config).unwrap();
    let landscaper_token = service_account_token(&admin, LS_NAMESPACE, "agent-default").await;
    let host_token =
        service_account_token(&admin, RELEASE_NAMESPACE, "default-landscaper-agent").await;
    let overrides = Overrides {
        landscaper_kubeconfig: Some(world.kubeconfig_file(cluster, Some(&landscaper_token))),
        own_namespace: Some(RELEASE_NAMESPACE.to_owned()),
        ..Default::default()
    };
    let settings = Settings::load(Some(&config_path), overrides).expect("the installed config");
    assert_eq!(settings.namespace, RELEASE_NAMESPACE);
    let landscaper = ClusterAccess::from_kubeconfig_file(&settings.landscaper_kubeconfig, "ls")
        .await
        .unwrap();
    let host = world.access(cluster, Some(&host_token)).await;
    let agent = Agent::new(settings, host, landscaper, "v0.0.0-test");
    agent
        .register()
        .await
        .expect("the chart's and the documented RBAC are enough to register");

    let environment = Api::<Environment>::all(admin.clone())
        .get("default")
        .await
        .unwrap();
    assert_eq!(environment.spec.namespace, RELEASE_NAMESPACE);
    let secret_ref = environment.spec.host_target.secret_ref.unwrap();
    assert_eq!(secret_ref.namespace.as_deref(), Some(RELEASE_NAMESPACE));
    let access = Api::<Secret>::namespaced(admin.clone(), RELEASE_NAMESPACE)
        .get_opt(&secret_ref.name)
        .await
        .unwrap();
    assert!(
        access.is_some(),
        "{} in {RELEASE_NAMESPACE}",
        secret_ref.name
    );
}

#[test]
fn served_namespaces_reach_the_agents_configuration() {
    let config_of = |sets: &[&str]| -> serde_json::Value {
        let secret = documents(&render_ours(sets))
            .into_iter()
            .find(|d| {
                d["kind"] == "Secret" && d["metadata"]["name"] == "my-env-landscaper-agent-config"
            })
            .expect("the config Secret");
        documents(secret["stringData"]["config.yaml"].as_str().unwrap()).remove(0)
    };
    let kubeconfig = "agent.landscaperClusterKubeconfig.secretRef.name=landscaper-kubeconfig";
    let defaults = config_of(&[kubeconfig]);
    assert_eq!(defaults["namespace"], RELEASE_NAMESPACE);
    assert_eq!(defaults.get("deployItemNamespaces"), None);
    let chosen = config_of(&[
        kubeconfig,
        "agent.namespace=deployers",
        "agent.deployItemNamespaces={team-a,team-b}",
    ]);
    assert_eq!(chosen["namespace"], "deployers");
    assert_eq!(
        chosen["deployItemNamespaces"],
        serde_json::json!(["team-a", "team-b"])
    );
}

/// Whether `result` is the API server's 403.
fn forbidden<T: std::fmt::Debug>(result: Result<T, kube::Error>) -> bool {
    matches!(result, Err(kube::Error::Api(ref status)) if status.code == 403)
}

#[tokio::test]
async fn the_documented_rbac_keeps_an_agent_to_its_environment_and_namespaces() {
    let world = World::start().await;
    let a = world.production_agent("a").await;
    let b = world.production_agent("b").await;
    a.agent.register().await.expect("a registers");
    b.agent.register().await.expect("b registers");
    let admin = world.landscaper_cluster().client();
    world
        .create_namespace(world.landscaper_cluster(), "team-b")
        .await;
    for namespace in ["team-b", LS_NAMESPACE] {
        let secret: Secret = serde_json::from_value(serde_json::json!({
            "metadata": { "name": "credentials" },
            "stringData": { "token": "secret" },
        }))
        .unwrap();
        Api::<Secret>::namespaced(admin.clone(), namespace)
            .create(&Default::default(), &secret)
            .await
            .unwrap();
    }

    let agent_a = a.agent.landscaper().client.clone();
    let secrets = |namespace| Api::<Secret>::namespaced(agent_a.clone(), namespace);
    assert!(forbidden(secrets("team-b").get("credentials").await));
    assert!(forbidden(
        Api::<Secret>::all(agent_a.clone())
            .list(&Default::default())
            .await
    ));
    let items = Api::<landscaper_api::core::DeployItem>::all(agent_a.clone());
    assert!(forbidden(items.list(&Default::default()).await));
    let items_b = Api::<landscaper_api::core::DeployItem>::namespaced(agent_a.clone(), "team-b");
    assert!(forbidden(items_b.list(&Default::default()).await));
    let environments = Api::<Environment>::all(agent_a.clone());
    assert!(forbidden(environments.get("b").await));
    assert!(forbidden(
        environments.delete("b", &Default::default()).await
    ));
    assert!(forbidden(environments.list(&Default::default()).await));
    let leases =
        Api::<k8s_openapi::api::coordination::v1::Lease>::namespaced(agent_a.clone(), LS_NAMESPACE);
    assert!(forbidden(leases.get("b").await));

    // What agent a serves stays in reach: its namespace's Secrets and items, its Environment.
    assert!(secrets(LS_NAMESPACE).get("credentials").await.is_ok());
    let served = Api::<landscaper_api::core::DeployItem>::namespaced(agent_a, LS_NAMESPACE);
    assert!(served.list(&Default::default()).await.is_ok());
    assert!(environments.get("a").await.is_ok());
}
