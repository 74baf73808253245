//! Deployers in the testbed's kubelet mode: a Deployment of the agent's image with
//! `deployer mock` arguments in the fenced cluster runs the mock deployer in-process, with its
//! landscaper kubeconfig from a mounted Secret; it drives a mock DeployItem in the landscaper
//! cluster to Succeeded, and once scaled to 0 it picks up nothing more. The repository's
//! mock deployer chart runs as well, installed by the agent's helm deployer or by real helm
//! (and stops with `helm uninstall`).

use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, Patch, PatchParams, PostParams};
use landscaper_api::core::Target;
use landscaper_api::core::{DeployItem, DeployItemPhase};
use landscaper_e2e::charts::{HelmRelease, archive_raw, helm, helm_deploy_item, run_helm_async};
use landscaper_e2e::deploy_items::{finished_by, mock_item, start_job};
use landscaper_e2e::{LS_NAMESPACE, World, eventually, eventually_within};
use serde_json::json;

/// Where the items live in the landscaper cluster.
const ITEMS: &str = "mock-items";
/// Where the deployer runs in the fenced cluster.
const DEPLOYERS: &str = "deployers";
/// Who the deployer is in the landscaper cluster.
const DEPLOYER_USER: &str = "mock-deployer";

fn mock_deployer() -> Deployment {
    serde_json::from_value(json!({
        "metadata": {"name": "mock-deployer", "namespace": DEPLOYERS},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "mock-deployer"}},
            "template": {"metadata": {"labels": {"app": "mock-deployer"}}, "spec": {
                "containers": [{"name": "deployer", "image": "landscaper-agent:0.1.0",
                    "args": ["deployer", "mock",
                        "--landscaper-kubeconfig", "/etc/landscaper/kubeconfig",
                        "--namespace", ITEMS, "--identity", "mock-in-kubelet"],
                    "volumeMounts": [{"name": "landscaper", "mountPath": "/etc/landscaper", "readOnly": true}]}],
                "volumes": [{"name": "landscaper", "secret": {"secretName": "landscaper-cluster"}}]}}}
    }))
    .expect("valid Deployment")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mock_deployer_deployment_runs_in_process_until_scaled_to_zero() {
    let world = World::start().await;
    let fenced = world.fenced_cluster();
    fenced.set_simulate_workloads(true);
    world.create_namespace(fenced, DEPLOYERS).await;
    world
        .create_namespace(world.landscaper_cluster(), ITEMS)
        .await;
    let token = world
        .landscaper_cluster()
        .add_user(DEPLOYER_USER, &["system:masters"]);
    let secret: Secret = serde_json::from_value(json!({
        "metadata": {"name": "landscaper-cluster", "namespace": DEPLOYERS},
        "stringData": {"kubeconfig": world.landscaper_cluster().kubeconfig_yaml_for(&token)}
    }))
    .expect("valid Secret");
    Api::<Secret>::namespaced(fenced.client(), DEPLOYERS)
        .create(&PostParams::default(), &secret)
        .await
        .expect("Secret created");
    let deployments: Api<Deployment> = Api::namespaced(fenced.client(), DEPLOYERS);
    deployments
        .create(&PostParams::default(), &mock_deployer())
        .await
        .expect("Deployment created");

    let items: Api<DeployItem> = Api::namespaced(world.landscaper_cluster().client(), ITEMS);
    start_job(&items, &mock_item("first"), "job-1").await;
    finished_by(&items, "first", "job-1", "mock-in-kubelet").await;
    eventually("the deployer's Deployment is available", || async {
        let d = deployments.get("mock-deployer").await.expect("Deployment");
        d.status.and_then(|s| s.available_replicas) == Some(1)
    })
    .await;

    deployments
        .patch(
            "mock-deployer",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 0}})),
        )
        .await
        .expect("scaled to 0");
    eventually("the deployer's container has stopped", || async {
        fenced.running_containers() == 0
    })
    .await;
    // Nothing of the stopped deployer keeps watching: with every watch ended, none comes back.
    world.landscaper_cluster().reset_requests();
    world.landscaper_cluster().faults().drop_watches();
    start_job(&items, &mock_item("second"), "job-1").await;
    // A running deployer finishes a mock item within a fraction of this.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let status = items
        .get("second")
        .await
        .expect("item")
        .status
        .unwrap_or_default();
    assert_eq!(
        status.job_id_finished, None,
        "a stopped deployer picked up an item: {status:?}"
    );
    assert_eq!(status.phase, None);
    let requests: Vec<_> = world
        .landscaper_cluster()
        .requests()
        .into_iter()
        .filter(|r| r.user == DEPLOYER_USER)
        .collect();
    assert!(
        requests.is_empty(),
        "the stopped deployer still sent {requests:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deployer_installed_by_the_helm_deployer_runs_in_process() {
    const ENVIRONMENT: &str = "kubelet";
    const HELM_ITEMS: &str = "helm-mock-items";
    let world = World::start().await;
    world.fenced_cluster().set_simulate_workloads(true);
    let landscaper = world.landscaper_cluster();
    world.create_namespace(landscaper, HELM_ITEMS).await;
    let agent = world.agent(world.agent_settings(ENVIRONMENT)).await;
    // The agent with its embedded helm deployer, as `landscaper-agent run` runs it.
    let _agent = tokio::spawn(landscaper_agent::helm_deployer::run_with_agent(
        agent,
        2,
        std::future::pending(),
    ));
    let targets: Api<Target> = Api::namespaced(landscaper.client(), LS_NAMESPACE);
    eventually(
        "the landscaper created the environment's Target",
        || async {
            targets
                .get_opt(ENVIRONMENT)
                .await
                .expect("Target read")
                .is_some()
        },
    )
    .await;

    // The repository's mock deployer chart, as a registration installs it.
    let chart =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../charts/mock-deployer");
    let raw = archive_raw(&chart);
    let release = HelmRelease {
        name: "mock-deployer",
        namespace: DEPLOYERS,
        raw: &raw,
        values: json!({"deployer": {
            "identity": "helm-installed-mock",
            "landscaperClusterKubeconfig": {"kubeconfig": landscaper.kubeconfig_yaml()}
        }}),
    };
    let installation = helm_deploy_item("mock-deployer", ENVIRONMENT, release);
    let helm_items: Api<DeployItem> = Api::namespaced(landscaper.client(), LS_NAMESPACE);
    helm_items
        .create(&PostParams::default(), &installation)
        .await
        .expect("helm item created");
    // The helm deployer waits for the deployer's Deployment to be ready, which it is only
    // once the container runs.
    eventually_within(
        "the helm item installed the deployer",
        Duration::from_secs(60),
        || async {
            let status = helm_items
                .get("mock-deployer")
                .await
                .expect("item")
                .status
                .unwrap_or_default();
            status.job_id.is_some()
                && status.job_id == status.job_id_finished
                && status.phase == Some(DeployItemPhase::Succeeded)
        },
    )
    .await;

    let items: Api<DeployItem> = Api::namespaced(landscaper.client(), HELM_ITEMS);
    start_job(&items, &mock_item("user-item"), "job-1").await;
    // The identity comes from the chart's Configuration, read from its mounted Secret.
    finished_by(&items, "user-item", "job-1", "helm-installed-mock").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deployer_chart_installed_with_helm_runs_in_process_until_uninstalled() {
    const HELM_CLI_ITEMS: &str = "helm-cli-items";
    let Some(helm) = helm() else { return };
    let world = World::start().await;
    let fenced = world.fenced_cluster();
    fenced.set_simulate_workloads(true);
    let landscaper = world.landscaper_cluster();
    world.create_namespace(landscaper, HELM_CLI_ITEMS).await;
    let values = world.dir.path().join("mock-values.yaml");
    let values_yaml = serde_yaml_ng::to_string(&json!({"deployer": {
        "identity": "helm-cli-mock",
        "landscaperClusterKubeconfig": {"kubeconfig": landscaper.kubeconfig_yaml()},
    }}))
    .expect("values as YAML");
    std::fs::write(&values, values_yaml).expect("values written");
    let chart =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../charts/mock-deployer");
    let kubeconfig = fenced.kubeconfig_path().display().to_string();
    let (ok, output) = run_helm_async(
        &helm,
        &[
            "install",
            "mock",
            chart.to_str().unwrap(),
            "--kubeconfig",
            &kubeconfig,
            "--namespace",
            DEPLOYERS,
            "--create-namespace",
            "--values",
            values.to_str().unwrap(),
        ],
    )
    .await;
    assert!(ok, "helm install failed: {output}");

    let items: Api<DeployItem> = Api::namespaced(landscaper.client(), HELM_CLI_ITEMS);
    start_job(&items, &mock_item("user-item"), "job-1").await;
    finished_by(&items, "user-item", "job-1", "helm-cli-mock").await;

    let (ok, output) = run_helm_async(
        &helm,
        &[
            "uninstall",
            "mock",
            "--kubeconfig",
            &kubeconfig,
            "--namespace",
            DEPLOYERS,
        ],
    )
    .await;
    assert!(ok, "helm uninstall failed: {output}");
    let pods: Api<k8s_openapi::api::core::v1::Pod> = Api::namespaced(fenced.client(), DEPLOYERS);
    eventually("the deployer's pod is gone", || async {
        pods.list(&Default::default())
            .await
            .expect("pods listed")
            .items
            .is_empty()
    })
    .await;
    // Stopped: a new job stays untouched.
    start_job(&items, &mock_item("after-uninstall"), "job-2").await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let status = items
        .get("after-uninstall")
        .await
        .expect("item")
        .status
        .unwrap_or_default();
    assert!(
        status.job_id_finished.is_none() && status.deployer.is_none(),
        "the uninstalled deployer still worked: {status:?}"
    );
}
