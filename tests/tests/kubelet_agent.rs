//! The agent chart in the testbed's kubelet mode: its Deployment runs `landscaper-agent run`
//! in-process with the chart's configuration Secret, landscaper kubeconfig Secret and
//! ServiceAccount, registers its environment, and is available only once registered.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, PostParams};
use landscaper_api::core::Environment;
use landscaper_e2e::rbac::{create_all, documents, render_agent_chart};
use landscaper_e2e::{World, eventually};
use serde_json::json;

const RELEASE: &str = "kubelet-env";
const RELEASE_NAMESPACE: &str = "agent-system";
/// The chart's Deployment: `<release>-landscaper-agent`.
const DEPLOYMENT: &str = "kubelet-env-landscaper-agent";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_chart_runs_in_process_and_registers_its_environment() {
    let world = World::start().await;
    let fenced = world.fenced_cluster();
    fenced.set_simulate_workloads(true);
    world.create_namespace(fenced, RELEASE_NAMESPACE).await;
    let secret: Secret = serde_json::from_value(json!({
        "metadata": {"name": "landscaper-kubeconfig", "namespace": RELEASE_NAMESPACE},
        "stringData": {"kubeconfig": world.landscaper_cluster().kubeconfig_yaml()}
    }))
    .expect("valid Secret");
    Api::<Secret>::namespaced(fenced.client(), RELEASE_NAMESPACE)
        .create(&PostParams::default(), &secret)
        .await
        .expect("Secret created");
    let rendered = render_agent_chart(
        RELEASE,
        RELEASE_NAMESPACE,
        &[
            "agent.landscaperClusterKubeconfig.secretRef.name=landscaper-kubeconfig",
            "agent.heartbeatPeriod=1s",
        ],
    );
    create_all(&fenced.client(), &documents(&rendered), RELEASE_NAMESPACE).await;

    let environments: Api<Environment> = Api::all(world.landscaper_cluster().client());
    eventually(
        "the in-process agent registered its environment",
        || async {
            environments
                .get_opt(RELEASE)
                .await
                .expect("Environment read")
                .is_some()
        },
    )
    .await;
    let deployments: Api<Deployment> = Api::namespaced(fenced.client(), RELEASE_NAMESPACE);
    eventually(
        "the agent's Deployment is available once registered",
        || async {
            let d = deployments.get(DEPLOYMENT).await.expect("Deployment");
            d.status.and_then(|s| s.available_replicas) == Some(1)
        },
    )
    .await;
    assert_eq!(fenced.running_containers(), 1);
}
