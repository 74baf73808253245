//! The landscaper chart: it renders with our engine exactly as with helm for several values
//! files, passes `helm lint`, its configuration is a LandscaperConfiguration the landscaper
//! loads, and the landscaper works with exactly the RBAC it grants.

use std::path::{Path, PathBuf};

use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, PostParams};
use landscaper_api::config::LandscaperConfiguration;
use landscaper_api::core::{DeployerRegistration, Installation, Target};
use landscaper_api::decode::config_from_yaml;
use landscaper_e2e::charts::{ValuesInput, helm, render_chart, run_helm};
use landscaper_e2e::installations::create_root;
use landscaper_e2e::rbac::{create_all, documents, service_account_token};
use landscaper_e2e::{LS_NAMESPACE, World, eventually, spawn_agent};
use serde_json::{Value, json};

const RELEASE: &str = "landscaper";

fn chart_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../charts/landscaper")
}

fn values_file(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("tests/landscaper_chart/{name}"))
}

/// The values files the chart is checked with; `None` is the chart's defaults.
const VALUES_FILES: &[Option<&str>] = &[
    None,
    Some("single-replica.yaml"),
    Some("all-deployers.yaml"),
];

/// Our render, as `helm template landscaper CHART -n NAMESPACE [-f FILE]`.
fn render_ours(namespace: &str, file: Option<&Path>) -> Result<String, String> {
    let files: Vec<&Path> = file.into_iter().collect();
    let values = ValuesInput {
        files: &files,
        sets: &[],
    };
    render_chart(&chart_dir(), RELEASE, namespace, values)
}

#[test]
fn our_template_equals_helm_template_and_helm_lint_passes() {
    let Some(helm) = helm() else { return };
    let dir = chart_dir();
    let dir = dir.to_str().unwrap();
    for file in VALUES_FILES {
        let file = file.map(values_file);
        let mut template = vec!["template", RELEASE, dir, "--namespace", LS_NAMESPACE];
        let mut lint = vec!["lint", dir, "--strict"];
        if let Some(file) = &file {
            template.extend(["-f", file.to_str().unwrap()]);
            lint.extend(["-f", file.to_str().unwrap()]);
        }
        let (ok, helm_output) = run_helm(&helm, &template);
        assert!(ok, "helm template failed: {helm_output}");
        assert_eq!(
            render_ours(LS_NAMESPACE, file.as_deref()).unwrap(),
            helm_output,
            "our render differs from helm's for {file:?}"
        );
        let (ok, lint_output) = run_helm(&helm, &lint);
        assert!(ok, "helm lint failed for {file:?}: {lint_output}");
    }
}

fn kind<'a>(documents: &'a [Value], kind: &str) -> Vec<&'a Value> {
    documents.iter().filter(|d| d["kind"] == kind).collect()
}

#[test]
fn the_configuration_is_what_the_values_say() {
    let rendered =
        documents(&render_ours(LS_NAMESPACE, Some(&values_file("single-replica.yaml"))).unwrap());
    let secret = kind(&rendered, "Secret")[0];
    let text = secret["stringData"]["config.yaml"]
        .as_str()
        .expect("config.yaml");
    let configuration: LandscaperConfiguration =
        config_from_yaml(text, "config.yaml").expect("a valid LandscaperConfiguration");
    let settings = landscaper::settings::Settings::from_configuration(&configuration);
    assert_eq!(settings.namespace, "deployers");
    assert_eq!(settings.execution_workers, 7);
    assert_eq!(settings.installation_workers, 5);
    assert_eq!(settings.deploy_item_workers, 3);
    assert!(settings.deployer_management);
    let deployment: Deployment =
        serde_json::from_value(kind(&rendered, "Deployment")[0].clone()).unwrap();
    let spec = deployment.spec.unwrap();
    assert_eq!(spec.replicas, Some(1));
    let container = &spec.template.spec.unwrap().containers[0];
    let args = container.args.clone().unwrap();
    assert!(!args.iter().any(|a| a == "--leader-elect"), "{args:?}");
    assert!(
        args.contains(&"--health-address=:8081".to_owned()),
        "{args:?}"
    );
    assert_eq!(container.image.as_deref(), Some("landscaper:v9.9.9"));
    assert!(
        kind(&rendered, "Service").is_empty(),
        "metrics.service.enabled=false"
    );
    // The registration asked for, and only that one.
    let registrations = kind(&rendered, "DeployerRegistration");
    assert_eq!(registrations.len(), 1);
    let mock: DeployerRegistration = serde_json::from_value(registrations[0].clone()).unwrap();
    assert_eq!(mock.metadata.name.as_deref(), Some("mock"));
    assert_eq!(
        mock.spec.types,
        vec!["landscaper.gardener.cloud/mock".to_owned()]
    );
    let template = serde_json::to_value(&mock.spec.installation_template).unwrap();
    assert_eq!(
        template["componentDescriptor"]["ref"]["componentName"],
        "github.com/gardener/landscaper/mock-deployer"
    );
    assert_eq!(template["componentDescriptor"]["ref"]["version"], "v1.2.3");
    assert_eq!(
        template["blueprint"]["ref"]["resourceName"],
        "mock-deployer-blueprint"
    );
    assert_eq!(
        template["importDataMappings"]["values"],
        json!({"replicas": 2})
    );
    // The leader election Lease and the pairs live in the deployer management namespace.
    assert_eq!(
        kind(&rendered, "Role")[0]["metadata"]["namespace"],
        "deployers"
    );
}

#[test]
fn the_defaults_run_two_replicas_under_leader_election() {
    let rendered = documents(&render_ours(LS_NAMESPACE, None).unwrap());
    let deployment = kind(&rendered, "Deployment")[0];
    assert_eq!(deployment["spec"]["replicas"], 2);
    let args = &deployment["spec"]["template"]["spec"]["containers"][0]["args"];
    assert!(
        args.as_array().unwrap().contains(&json!("--leader-elect")),
        "{args}"
    );
    let service = kind(&rendered, "Service")[0];
    assert_eq!(service["spec"]["ports"][0]["targetPort"], "health");
    let registrations: Vec<&str> = kind(&rendered, "DeployerRegistration")
        .iter()
        .map(|r| r["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(registrations, ["manifest"]);
}

#[test]
fn two_replicas_without_leader_election_fail_with_a_clear_message() {
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(
        file.path(),
        "landscaper:\n  leaderElection:\n    enabled: false\n",
    )
    .unwrap();
    let error = render_ours(LS_NAMESPACE, Some(file.path())).unwrap_err();
    assert!(
        error.contains(
            "landscaper.replicas: more than 1 replica needs landscaper.leaderElection.enabled"
        ),
        "{error}"
    );
}

/// The landscaper's own requests refused with 403.
fn forbidden(world: &World, user: &str) -> Vec<String> {
    world
        .landscaper_cluster()
        .requests()
        .into_iter()
        .filter(|r| r.user == user && r.code == 403)
        .map(|r| {
            format!(
                "{} {}/{} in {:?}",
                r.verb,
                r.full_resource(),
                r.name,
                r.namespace
            )
        })
        .collect()
}

#[tokio::test]
async fn the_landscaper_works_with_exactly_the_rbac_the_chart_grants() {
    let mut world = World::start_without_landscaper().await;
    let admin = world.landscaper_cluster().client();
    let rbac: Vec<Value> = documents(&render_ours(LS_NAMESPACE, None).unwrap())
        .into_iter()
        .filter(|d| {
            matches!(
                d["kind"].as_str(),
                Some(
                    "ServiceAccount"
                        | "ClusterRole"
                        | "ClusterRoleBinding"
                        | "Role"
                        | "RoleBinding"
                )
            )
        })
        .collect();
    create_all(&admin, &rbac, LS_NAMESPACE).await;
    let token = service_account_token(&admin, LS_NAMESPACE, RELEASE).await;
    let user = format!("system:serviceaccount:{LS_NAMESPACE}:{RELEASE}");
    world.start_landscaper_with(
        world.landscaper_cluster().client_as(&token),
        landscaper::health::Health::new(),
    );

    // An environment, a registration installed into it, and an installation with its job.
    let agent = world.agent(world.agent_settings("charted")).await;
    let (_stop_agent, _agent) = spawn_agent(agent);
    let registrations: Api<DeployerRegistration> = Api::all(admin.clone());
    let registration: DeployerRegistration = serde_json::from_value(json!({
        "apiVersion": "landscaper.gardener.cloud/v1alpha1",
        "kind": "DeployerRegistration",
        "metadata": { "name": "charted" },
        "spec": {
            "types": ["example.com/charted"],
            "installationTemplate": { "blueprint": { "ref": { "resourceName": "charted-blueprint" } } },
        },
    }))
    .unwrap();
    registrations
        .create(&PostParams::default(), &registration)
        .await
        .unwrap();
    let installations: Api<Installation> = Api::namespaced(admin.clone(), "default");
    create_root(
        &installations,
        "charted",
        json!({"blueprint": {"inline": {"filesystem": {"blueprint.yaml": "kind: Blueprint\n"}}}}),
    )
    .await;

    let targets: Api<Target> = Api::namespaced(admin.clone(), LS_NAMESPACE);
    eventually("the environment's Target and the pair's Target", || async {
        targets.get_opt("charted").await.unwrap().is_some()
            && targets.get_opt("charted-charted").await.unwrap().is_some()
    })
    .await;
    let pair_installations: Api<Installation> = Api::namespaced(admin.clone(), LS_NAMESPACE);
    eventually("the pair's Installation", || async {
        pair_installations
            .get_opt("charted-charted")
            .await
            .unwrap()
            .is_some()
    })
    .await;
    eventually("the installation's job ends", || async {
        installations
            .get("charted")
            .await
            .unwrap()
            .status
            .is_some_and(|s| s.job_id.is_some() && s.job_id == s.job_id_finished)
    })
    .await;
    assert_eq!(forbidden(&world, &user), Vec::<String>::new());
    // The default Context of a namespace, written by the Context controller.
    let contexts: Api<landscaper_api::core::Context> = Api::namespaced(admin, "default");
    eventually("the default Context", || async {
        contexts.get_opt("default").await.unwrap().is_some()
    })
    .await;
    assert_eq!(forbidden(&world, &user), Vec::<String>::new());
}
