//! The landscaper chart installed with the real helm into a testbed cluster: the testbed's
//! kubelet mode runs its Deployment's `landscaper run` containers in-process (two replicas
//! under leader election, with the chart's ServiceAccount, RBAC and configuration Secret), the
//! landscaper they bring up runs an installation's job to Succeeded, and `helm uninstall`
//! removes it.

use std::path::Path;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::rbac::v1::ClusterRole;
use kube::api::{Api, PostParams};
use landscaper_api::core::{DataObject, Installation, InstallationPhase};
use landscaper_e2e::charts::{helm, run_helm_async};
use landscaper_e2e::flow::{namespace_with_mock_deployer, root_installation};
use landscaper_e2e::{LS_NAMESPACE, World, eventually_within, leader};
use serde_json::json;

const RELEASE: &str = "landscaper";
/// The chart's Deployment: `<release>` (the release is named as the chart).
const DEPLOYMENT: &str = "landscaper";
/// The namespace of the installation the installed landscaper runs.
const NS: &str = "demo";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn helm_installs_a_working_landscaper_and_uninstalls_it() {
    let Some(helm) = helm() else { return };
    let world = World::start_without_landscaper().await;
    let cluster = world.landscaper_cluster();
    cluster.set_simulate_workloads(true);
    let admin = cluster.client();
    let chart = Path::new(env!("CARGO_MANIFEST_DIR")).join("../charts/landscaper");
    let kubeconfig = cluster.kubeconfig_path().display().to_string();
    let (ok, output) = run_helm_async(
        &helm,
        &[
            "install",
            RELEASE,
            chart.to_str().expect("a UTF-8 path"),
            "--kubeconfig",
            &kubeconfig,
            "--namespace",
            LS_NAMESPACE,
            // No registration: they would fetch upstream's deployers' components.
            "--set",
            "deployers.registrations.manifest.enabled=false",
        ],
    )
    .await;
    assert!(ok, "helm install failed: {output}");

    let deployments: Api<Deployment> = Api::namespaced(admin.clone(), LS_NAMESPACE);
    let limit = std::time::Duration::from_secs(60);
    eventually_within("both replicas are ready", limit, || async {
        deployments
            .get_opt(DEPLOYMENT)
            .await
            .expect("read")
            .and_then(|d| d.status)
            .is_some_and(|s| s.ready_replicas == Some(2))
    })
    .await;
    assert_eq!(cluster.running_containers(), 2);
    eventually_within("one replica leads", limit, || async {
        leader(&admin, LS_NAMESPACE)
            .await
            .is_some_and(|holder| holder.starts_with("landscaper-"))
    })
    .await;

    // The installed landscaper runs a job: a root installation with two subinstallations.
    namespace_with_mock_deployer(&world, NS).await;
    let data_objects: Api<DataObject> = Api::namespaced(admin.clone(), NS);
    let greeting: DataObject = serde_json::from_value(json!({
        "apiVersion": "landscaper.gardener.cloud/v1alpha1",
        "kind": "DataObject",
        "metadata": {"name": "greeting-in"},
        "data": "hello",
    }))
    .expect("a DataObject");
    data_objects
        .create(&PostParams::default(), &greeting)
        .await
        .expect("DataObject created");
    let installations: Api<Installation> = Api::namespaced(admin.clone(), NS);
    let root: Installation =
        serde_json::from_value(root_installation("root", "greeting-in", "flow-result"))
            .expect("an Installation");
    installations
        .create(&PostParams::default(), &root)
        .await
        .expect("Installation created");
    eventually_within("the root installation succeeds", limit, || async {
        installations
            .get("root")
            .await
            .expect("read")
            .status
            .is_some_and(|s| {
                s.phase == Some(InstallationPhase::Succeeded)
                    && s.job_id.is_some()
                    && s.job_id == s.job_id_finished
            })
    })
    .await;

    let (ok, output) = run_helm_async(
        &helm,
        &[
            "uninstall",
            RELEASE,
            "--kubeconfig",
            &kubeconfig,
            "--namespace",
            LS_NAMESPACE,
        ],
    )
    .await;
    assert!(ok, "helm uninstall failed: {output}");
    eventually_within("the landscaper's containers stop", limit, || async {
        cluster.running_containers() == 0
    })
    .await;
    assert!(deployments.get_opt(DEPLOYMENT).await.unwrap().is_none());
    let roles: Api<ClusterRole> = Api::all(admin);
    let role = format!("landscaper:{LS_NAMESPACE}:{RELEASE}");
    assert!(
        roles.get_opt(&role).await.unwrap().is_none(),
        "{role} is removed"
    );
}
