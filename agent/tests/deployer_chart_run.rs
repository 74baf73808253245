//! The manifest deployer chart installed with the real helm into a testbed cluster, its pod run
//! as a kubelet would run it: the container's arguments given to this binary, each mounted
//! Secret written as files at its mount path. The deployer then serves a manifest DeployItem of
//! its Targets, as the identity the chart configured. Without helm the test is skipped, except
//! under `CI=true`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, PostParams};
use landscaper_api::core::{DeployItem, DeployItemPhase, Target};
use serde_json::json;
use testbed::Testbed;

const NAMESPACE: &str = "ls-system";
const RELEASE: &str = "ls";

fn helm() -> Option<PathBuf> {
    let found = std::env::var_os("HELM")
        .map(PathBuf::from)
        .filter(|p| p.exists());
    assert!(
        found.is_some() || std::env::var("CI").as_deref() != Ok("true"),
        "CI=true but HELM is not installed"
    );
    if found.is_none() {
        eprintln!("skipped: no helm binary (set HELM, see .ci/install-tools)");
    }
    found
}

/// The deployer process; killed when the test ends, however it ends.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + Duration::from_secs(90);
    while !check().await {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn install_crds(client: &kube::Client) {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    for crd in landscaper_api::crd::all() {
        crds.create(&PostParams::default(), &crd)
            .await
            .expect("the CRD is created");
    }
    let items: Api<DeployItem> = Api::namespaced(client.clone(), NAMESPACE);
    eventually("DeployItems are served", || async {
        items.list(&Default::default()).await.is_ok()
    })
    .await;
}

/// What a kubelet does with the pod of `deployment`: every Secret volume's keys as files
/// under `root` + its mount path; the container's arguments with those paths.
async fn kubelet_files(client: &kube::Client, deployment: &Deployment, root: &Path) -> Vec<String> {
    let pod = deployment.spec.clone().unwrap().template.spec.unwrap();
    let container = &pod.containers[0];
    let secrets: Api<Secret> = Api::namespaced(client.clone(), NAMESPACE);
    let mut mounts = BTreeMap::new();
    for mount in container.volume_mounts.clone().unwrap_or_default() {
        let volume = pod
            .volumes
            .iter()
            .flatten()
            .find(|v| v.name == mount.name)
            .expect("the mounted volume");
        let name = volume.secret.as_ref().unwrap().secret_name.clone().unwrap();
        let secret = secrets.get(&name).await.expect("the mounted Secret exists");
        let dir = root.join(mount.mount_path.trim_start_matches('/'));
        std::fs::create_dir_all(&dir).unwrap();
        for (key, value) in secret.data.unwrap_or_default() {
            std::fs::write(dir.join(key), value.0).unwrap();
        }
        mounts.insert(mount.mount_path.clone(), dir);
    }
    container
        .args
        .clone()
        .unwrap()
        .into_iter()
        .map(|arg| {
            mounts.iter().fold(arg, |arg, (path, dir)| {
                arg.replace(path.as_str(), &dir.display().to_string())
            })
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_manifest_deployer_chart_runs_a_deployer_that_serves_its_targets() {
    let Some(helm) = helm() else { return };
    let bed = Testbed::start().await.expect("testbed starts");
    let cluster = bed.cluster();
    let client = cluster.client();
    install_crds(&client).await;
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("landscaper.kubeconfig");
    std::fs::write(&kubeconfig, cluster.kubeconfig_yaml()).unwrap();
    let chart = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../charts/manifest-deployer");
    let args: Vec<String> = [
        "install",
        RELEASE,
        chart.to_str().unwrap(),
        "--kubeconfig",
        cluster.kubeconfig_path().to_str().unwrap(),
        "--namespace",
        NAMESPACE,
        "--create-namespace",
        "--set",
        "deployer.identity=manifest-default",
        "--set",
        "deployer.targetSelector[0].targets[0].name=default",
        "--set",
        &format!("deployer.targetSelector[0].targets[0].namespace={NAMESPACE}"),
        "--set-file",
        &format!(
            "deployer.landscaperClusterKubeconfig.kubeconfig={}",
            kubeconfig.display()
        ),
    ]
    .map(str::to_owned)
    .to_vec();
    let home = dir.path().join("home");
    let helm_home = home.clone();
    let output = tokio::task::spawn_blocking(move || {
        Command::new(helm)
            .args(&args)
            .env("HOME", helm_home)
            .output()
            .expect("helm runs")
    })
    .await
    .unwrap();
    assert!(
        output.status.success(),
        "helm install: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );

    let deployment = Api::<Deployment>::namespaced(client.clone(), NAMESPACE)
        .get(&format!("{RELEASE}-manifest-deployer"))
        .await
        .expect("helm installed the Deployment");
    let args = kubelet_files(&client, &deployment, &dir.path().join("pod")).await;
    assert_eq!(args[..2], ["deployer".to_owned(), "manifest".to_owned()]);
    let _deployer = Running(
        Command::new(env!("CARGO_BIN_EXE_landscaper-agent"))
            .args(&args)
            .env("RUST_LOG", "warn")
            .spawn()
            .expect("the deployer starts"),
    );

    // A Target the selector names, one it does not, and an item for each.
    for name in ["default", "other"] {
        let target: Target = serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": NAMESPACE},
            "spec": {"type": "landscaper.gardener.cloud/kubernetes-cluster",
                "config": {"kubeconfig": cluster.kubeconfig_yaml()}},
        }))
        .unwrap();
        Api::<Target>::namespaced(client.clone(), NAMESPACE)
            .create(&PostParams::default(), &target)
            .await
            .unwrap();
        let item: DeployItem = serde_json::from_value(json!({
            "metadata": {"name": format!("hello-{name}"), "namespace": NAMESPACE,
                "annotations": {"landscaper.gardener.cloud/operation": "reconcile"}},
            "spec": {"type": "landscaper.gardener.cloud/kubernetes-manifest",
                "target": {"name": name, "namespace": NAMESPACE},
                "config": {"apiVersion": "manifest.deployer.landscaper.gardener.cloud/v1alpha2",
                    "kind": "ProviderConfiguration", "updateStrategy": "update",
                    "manifests": [{"policy": "manage", "manifest": {"apiVersion": "v1",
                        "kind": "ConfigMap", "metadata": {"name": format!("hello-{name}"),
                        "namespace": "default"}, "data": {"from": name}}}]}},
        }))
        .unwrap();
        Api::<DeployItem>::namespaced(client.clone(), NAMESPACE)
            .create(&PostParams::default(), &item)
            .await
            .unwrap();
    }
    let items: Api<DeployItem> = Api::namespaced(client.clone(), NAMESPACE);
    eventually("the selected item succeeds", || async {
        let status = items.get("hello-default").await.unwrap().status;
        status.and_then(|s| s.phase) == Some(DeployItemPhase::Succeeded)
    })
    .await;
    let status = items.get("hello-default").await.unwrap().status.unwrap();
    assert_eq!(status.deployer.unwrap().identity, "manifest-default");
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    assert!(
        config_maps
            .get_opt("hello-default")
            .await
            .unwrap()
            .is_some()
    );
    // The other Target is not this deployer's: its item is left alone (given a moment in
    // which a deployer ignoring its selectors would have taken it too).
    tokio::time::sleep(Duration::from_secs(1)).await;
    let other = items.get("hello-other").await.unwrap();
    assert!(
        other.status.and_then(|s| s.phase).is_none(),
        "{:?}",
        other.metadata
    );
    assert!(config_maps.get_opt("hello-other").await.unwrap().is_none());
}
