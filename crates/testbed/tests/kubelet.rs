//! The workload simulator's kubelet mode: containers of a registered image run in-process,
//! one per replica, their readiness gating the Deployment's availability.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Pod, Secret};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use testbed::{Container, ContainerRun, ContainerRunner, RestartBackoff, Testbed};
use tokio::sync::watch;

/// What one start of a container saw.
#[derive(Debug, Clone)]
struct Start {
    pod: String,
    config: Result<String, String>,
    namespace_env: Option<String>,
    in_cluster: bool,
}

/// A runner that reads its `--config=` file, reports ready while `ready` says so, and runs
/// until stopped, or fails at once with `fail`.
struct Fake {
    starts: Arc<Mutex<Vec<Start>>>,
    active: Arc<AtomicUsize>,
    ready: watch::Receiver<bool>,
    fail: Option<String>,
}

/// Counts a run as active until dropped.
struct Active(Arc<AtomicUsize>);

impl Drop for Active {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl ContainerRunner for Fake {
    fn run(&self, c: Container) -> ContainerRun {
        let starts = self.starts.clone();
        let active = self.active.clone();
        let mut ready = self.ready.clone();
        let fail = self.fail.clone();
        Box::pin(async move {
            active.fetch_add(1, Ordering::SeqCst);
            let _active = Active(active);
            let config = c
                .host_args()
                .iter()
                .find_map(|a| a.strip_prefix("--config=").map(str::to_owned))
                .ok_or_else(|| "no --config".to_owned())
                .and_then(|p| std::fs::read_to_string(&p).map_err(|e| format!("{p}: {e}")));
            // The in-cluster kubeconfig reaches the cluster as the pod's ServiceAccount.
            let in_cluster = match kube::config::Kubeconfig::read_from(&c.kubeconfig) {
                Ok(k) => {
                    let config = kube::Config::from_custom_kubeconfig(k, &Default::default())
                        .await
                        .map_err(|e| e.to_string())?;
                    let client = kube::Client::try_from(config).map_err(|e| e.to_string())?;
                    let pods: Api<Pod> = Api::namespaced(client, &c.namespace);
                    // The default ServiceAccount may not read pods: a 403 proves who we are.
                    matches!(pods.list(&ListParams::default()).await,
                        Err(kube::Error::Api(e)) if e.code == 403 && e.message.contains("system:serviceaccount:default:default"))
                }
                Err(_) => false,
            };
            starts.lock().unwrap().push(Start {
                pod: c.pod.clone(),
                config,
                namespace_env: c.env.get("POD_NAMESPACE").cloned(),
                in_cluster,
            });
            if let Some(message) = fail {
                return Err(message);
            }
            loop {
                c.ready.set(*ready.borrow_and_update());
                tokio::select! {
                    () = c.stop.cancelled() => return Ok(()),
                    changed = ready.changed() => if changed.is_err() { std::future::pending::<()>().await },
                }
            }
        })
    }
}

struct Setup {
    bed: Testbed,
    starts: Arc<Mutex<Vec<Start>>>,
    active: Arc<AtomicUsize>,
    ready: watch::Sender<bool>,
}

async fn setup(fail: Option<&str>) -> Setup {
    let (ready, ready_rx) = watch::channel(false);
    let starts = Arc::new(Mutex::new(Vec::new()));
    let active = Arc::new(AtomicUsize::new(0));
    let fake = Fake {
        starts: starts.clone(),
        active: active.clone(),
        ready: ready_rx,
        fail: fail.map(str::to_owned),
    };
    let bed = Testbed::builder()
        .simulate_workloads(true)
        .container_runner("fake", Arc::new(fake))
        .start()
        .await
        .unwrap();
    bed.cluster().set_restart_backoff(RestartBackoff {
        initial: Duration::from_millis(100),
        max: Duration::from_millis(400),
    });
    let secrets: Api<Secret> = Api::namespaced(bed.cluster().client(), "default");
    let secret = serde_json::from_value(json!({
        "metadata": {"name": "cfg"}, "stringData": {"config.yaml": "hello from the secret"}
    }))
    .unwrap();
    secrets
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();
    Setup {
        bed,
        starts,
        active,
        ready,
    }
}

fn deployment(name: &str, replicas: i32, image: &str) -> Deployment {
    serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": {
                "containers": [{"name": "main", "image": image,
                    "args": ["serve", "--config=/etc/app/config/config.yaml"],
                    "env": [{"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}],
                    "volumeMounts": [{"name": "config", "mountPath": "/etc/app/config", "readOnly": true}]}],
                "volumes": [{"name": "config", "secret": {"secretName": "cfg"}}]}}}
    }))
    .unwrap()
}

/// Polls `check` every 20 ms for 10 s at most, naming `what` when it never holds.
async fn until<F: FnMut() -> Fut, Fut: std::future::Future<Output = bool>>(
    what: &str,
    mut check: F,
) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !check().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting until {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn available(api: &Api<Deployment>, name: &str) -> Option<i32> {
    api.get(name)
        .await
        .unwrap()
        .status
        .and_then(|s| s.available_replicas)
}

#[tokio::test]
async fn each_replica_runs_and_is_available_only_when_ready() {
    let s = setup(None).await;
    let client = s.bed.cluster().client();
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "default");
    let pods: Api<Pod> = Api::namespaced(client, "default");
    deployments
        .create(
            &PostParams::default(),
            &deployment("app", 2, "registry.local/fake:1.0"),
        )
        .await
        .unwrap();
    until("two containers run", || async {
        s.active.load(Ordering::SeqCst) == 2 && s.starts.lock().unwrap().len() == 2
    })
    .await;
    let starts = s.starts.lock().unwrap().clone();
    let names: std::collections::BTreeSet<_> = starts.iter().map(|s| s.pod.clone()).collect();
    assert_eq!(names.len(), 2, "one container per pod: {starts:?}");
    for start in &starts {
        assert_eq!(start.config.as_deref(), Ok("hello from the secret"));
        assert_eq!(start.namespace_env.as_deref(), Some("default"));
        assert!(
            start.in_cluster,
            "the in-cluster kubeconfig acts as the pod's ServiceAccount"
        );
    }
    // Running but not ready: no replica is available.
    until("the status counts two unready pods", || async {
        let st = deployments
            .get("app")
            .await
            .unwrap()
            .status
            .unwrap_or_default();
        st.replicas == Some(2) && st.unavailable_replicas == Some(2)
    })
    .await;
    assert_eq!(available(&deployments, "app").await, None);

    s.ready.send_replace(true);
    until("both replicas are available", || async {
        available(&deployments, "app").await == Some(2)
    })
    .await;
    let listed = pods
        .list(&ListParams::default().labels("app=app"))
        .await
        .unwrap();
    assert_eq!(listed.items.len(), 2);
    for pod in &listed.items {
        let status = pod.status.clone().unwrap();
        assert_eq!(status.phase.as_deref(), Some("Running"));
        assert!(status.container_statuses.unwrap()[0].ready);
    }

    deployments
        .patch(
            "app",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 1}})),
        )
        .await
        .unwrap();
    until("one container runs after scaling down", || async {
        s.active.load(Ordering::SeqCst) == 1 && s.bed.cluster().running_containers() == 1
    })
    .await;
    until("one replica is available", || async {
        available(&deployments, "app").await == Some(1)
    })
    .await;

    // A template change replaces the pod.
    let before = s.starts.lock().unwrap().len();
    deployments
        .patch(
            "app",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"template": {"metadata": {"annotations": {"v": "2"}}}}})),
        )
        .await
        .unwrap();
    until("the new template's pod runs", || async {
        s.starts.lock().unwrap().len() == before + 1 && s.active.load(Ordering::SeqCst) == 1
    })
    .await;

    deployments
        .delete("app", &DeleteParams::default())
        .await
        .unwrap();
    until("no container runs after the deletion", || async {
        s.active.load(Ordering::SeqCst) == 0 && s.bed.cluster().running_containers() == 0
    })
    .await;
}

#[tokio::test]
async fn a_failing_container_restarts_with_backoff_and_counts_restarts() {
    let s = setup(Some("cannot reach the landscaper")).await;
    let client = s.bed.cluster().client();
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "default");
    let pods: Api<Pod> = Api::namespaced(client, "default");
    deployments
        .create(&PostParams::default(), &deployment("crash", 1, "fake"))
        .await
        .unwrap();
    until("the pod shows restarts and its back-off", || async {
        let listed = pods.list(&ListParams::default()).await.unwrap();
        let Some(status) = listed.items.first().and_then(|p| p.status.clone()) else {
            return false;
        };
        let Some(c) = status.container_statuses.and_then(|c| c.into_iter().next()) else {
            return false;
        };
        let waiting = c.state.and_then(|s| s.waiting).and_then(|w| w.reason);
        let last = c.last_state.and_then(|s| s.terminated);
        c.restart_count >= 2
            && waiting.as_deref() == Some("CrashLoopBackOff")
            && last.is_some_and(|t| {
                t.exit_code == 1 && t.message.as_deref() == Some("cannot reach the landscaper")
            })
    })
    .await;
    assert!(s.starts.lock().unwrap().len() >= 2);
    assert_eq!(available(&deployments, "crash").await, None);
    // The back-off grows: over 1 s, the 100 ms doubling to 400 ms allows a handful of starts,
    // not the dozens an immediate restart would make.
    let before = s.starts.lock().unwrap().len();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let during = s.starts.lock().unwrap().len() - before;
    assert!((1..=5).contains(&during), "{during} starts in 1 s");
}

#[tokio::test]
async fn a_missing_secret_keeps_the_container_from_starting() {
    let s = setup(None).await;
    let client = s.bed.cluster().client();
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "default");
    let pods: Api<Pod> = Api::namespaced(client, "default");
    let mut d = deployment("nosecret", 1, "fake");
    let text = serde_json::to_string(&d)
        .unwrap()
        .replace("\"cfg\"", "\"absent\"");
    d = serde_json::from_str(&text).unwrap();
    deployments
        .create(&PostParams::default(), &d)
        .await
        .unwrap();
    until("the pod says which Secret is missing", || async {
        let listed = pods.list(&ListParams::default()).await.unwrap();
        listed
            .items
            .first()
            .and_then(|p| p.status.clone())
            .and_then(|s| s.container_statuses)
            .and_then(|c| c.into_iter().next())
            .and_then(|c| c.state)
            .and_then(|s| s.waiting)
            .is_some_and(|w| {
                w.reason.as_deref() == Some("CreateContainerConfigError")
                    && w.message.as_deref()
                        == Some("volume config: secret default/absent not found")
            })
    })
    .await;
    assert!(s.starts.lock().unwrap().is_empty());
}

#[tokio::test]
async fn other_images_are_simulated_without_pods() {
    let s = setup(None).await;
    let client = s.bed.cluster().client();
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "default");
    let pods: Api<Pod> = Api::namespaced(client, "default");
    deployments
        .create(&PostParams::default(), &deployment("web", 2, "nginx:1.27"))
        .await
        .unwrap();
    until("the simulated deployment is ready", || async {
        available(&deployments, "web").await == Some(2)
    })
    .await;
    assert!(
        pods.list(&ListParams::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );
    assert!(s.starts.lock().unwrap().is_empty());
}
