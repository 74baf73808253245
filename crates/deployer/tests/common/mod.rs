//! Two testbed clusters (landscaper and target) with the Landscaper CRDs, deployers running
//! in the test process, and helpers to create and trigger DeployItems. The helm deployer's
//! tests include this module and add their own helpers.

#![allow(dead_code)]

use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Api;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use landscaper_api::constants::{deploy_item_types, target_types};
use landscaper_api::core::{
    DeployItem, DeployItemPhase, DeployItemSpec, DeployItemStatus, LastError, ObjectReference,
    Target, TargetSpec,
};
use landscaper_deployer::Deployer;
use landscaper_deployer::controller::{DeployerConfig, Setup};
use landscaper_deployer::deployers::manifest;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::time::Duration;
use testbed::Testbed;
use testbed::{Fault, Matcher};

/// The namespace of items and targets in the landscaper cluster.
pub const NS: &str = "items";
/// How long a test waits for a state before it fails: generous, because CI runs the whole
/// workspace's tests on two busy cores, and reaching a state sooner costs nothing.
pub const WAIT: Duration = Duration::from_secs(60);

/// The two clusters and their admin clients.
pub struct Env {
    /// The clusters (dropping stops them).
    pub bed: Testbed,
    /// Admin client of the landscaper cluster.
    pub ls: kube::Client,
    /// Admin client of the target cluster.
    pub target: kube::Client,
}

/// Starts both clusters, installs the CRDs and the items namespace.
pub async fn env() -> Env {
    let bed = Testbed::builder()
        .named(&["landscaper", "target"])
        .start()
        .await
        .expect("testbed starts");
    let ls = bed.cluster_named("landscaper").unwrap().client();
    let target = bed.cluster_named("target").unwrap().client();
    let crds: Api<CustomResourceDefinition> = Api::all(ls.clone());
    for crd in landscaper_api::crd::all() {
        crds.create(&PostParams::default(), &crd)
            .await
            .expect("CRD created");
    }
    let namespaces: Api<Namespace> = Api::all(ls.clone());
    namespaces
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": NS}})).unwrap(),
        )
        .await
        .unwrap();
    let items: Api<DeployItem> = Api::namespaced(ls.clone(), NS);
    let targets: Api<Target> = Api::namespaced(ls.clone(), NS);
    wait_until(|| async {
        items.list(&Default::default()).await.is_ok()
            && targets.list(&Default::default()).await.is_ok()
    })
    .await;
    Env { bed, ls, target }
}

/// [`env`] with a Target `cluster` of the target cluster (see [`Env::target`]).
pub async fn env_with_target() -> Env {
    let env = env().await;
    env.target("cluster", &[]).await;
    env
}

/// [`env_with_target`] whose target cluster makes Deployments ready as a cluster with
/// working controllers would (the testbed's workload simulator).
pub async fn env_with_workloads() -> Env {
    let env = env().await;
    env.target_cluster().set_simulate_workloads(true);
    env.target("cluster", &[]).await;
    env
}

/// Polls `check` until it holds, failing the test after [`WAIT`].
pub async fn wait_until<F, Fut>(mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let end = tokio::time::Instant::now() + WAIT;
    while !check().await {
        assert!(
            tokio::time::Instant::now() < end,
            "condition not reached within {WAIT:?}"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

impl Env {
    /// The landscaper cluster.
    pub fn ls_cluster(&self) -> &testbed::Cluster {
        self.bed.cluster_named("landscaper").unwrap()
    }

    /// Starts the manifest deployer on the landscaper cluster (items and Secrets there).
    pub fn start_manifest_deployer(&self) -> Running {
        start(manifest::setup(
            self.ls.clone(),
            self.ls.clone(),
            config(deploy_item_types::MANIFEST),
        ))
    }

    /// The target cluster.
    pub fn target_cluster(&self) -> &testbed::Cluster {
        self.bed.cluster_named("target").unwrap()
    }

    /// Makes the target cluster never answer the next `verb` request on the object `name` of
    /// `resource` (until [`Env::answer_again`]).
    pub fn never_answer(&self, verb: &str, resource: &str, name: &str) {
        self.target_cluster().faults().fail_next(
            1,
            Matcher::any().verb(verb).resource(resource).name(name),
            Fault::Hang,
        );
    }

    /// Closes the requests the target cluster left unanswered.
    pub fn answer_again(&self) {
        self.target_cluster().faults().restart();
    }

    /// Creates a kubernetes-cluster Target with the target cluster's admin kubeconfig inline.
    pub async fn target(&self, name: &str, annotations: &[(&str, &str)]) -> Target {
        let mut t = Target::new(
            name,
            TargetSpec {
                type_: target_types::KUBERNETES_CLUSTER.into(),
                config: Some(json!({ "kubeconfig": self.target_cluster().kubeconfig_yaml() })),
                secret_ref: None,
            },
        );
        t.metadata.annotations = Some(
            annotations
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        );
        self.create_target(&t).await
    }

    /// Creates `target` in the test namespace.
    pub async fn create_target(&self, target: &Target) -> Target {
        Api::<Target>::namespaced(self.ls.clone(), NS)
            .create(&PostParams::default(), target)
            .await
            .expect("target created")
    }

    /// Items of the test namespace.
    pub fn items(&self) -> Api<DeployItem> {
        Api::namespaced(self.ls.clone(), NS)
    }

    /// Creates an item and gives it a pending job, as the landscaper does.
    pub async fn item(
        &self,
        name: &str,
        type_: &str,
        target: Option<&str>,
        config: Value,
    ) -> DeployItem {
        self.create_item(new_item(name, type_, target, config))
            .await
    }

    /// Creates a manifest item of `entries` (see [`manifests`]) for the Target `cluster` and
    /// gives it a pending job.
    pub async fn manifest_item(&self, name: &str, entries: Vec<Value>) -> DeployItem {
        self.item(
            name,
            deploy_item_types::MANIFEST,
            Some("cluster"),
            manifests(entries),
        )
        .await
    }

    /// [`Env::item`] with a progressing timeout (a Go duration such as `2s`).
    pub async fn item_with_timeout(
        &self,
        name: &str,
        type_: &str,
        target: Option<&str>,
        config: Value,
        timeout: &str,
    ) -> DeployItem {
        let mut di = new_item(name, type_, target, config);
        di.spec.timeout = Some(serde_json::from_value(json!(timeout)).expect("a Go duration"));
        self.create_item(di).await
    }

    async fn create_item(&self, di: DeployItem) -> DeployItem {
        let name = di.metadata.name.clone().unwrap_or_default();
        self.items()
            .create(&PostParams::default(), &di)
            .await
            .expect("item created");
        self.trigger(&name, "job-1").await
    }

    /// Sets a new job ID, as the landscaper does to start a job.
    pub async fn trigger(&self, name: &str, job: &str) -> DeployItem {
        self.items()
            .patch_status(
                name,
                &PatchParams::default(),
                &Patch::Merge(json!({"status": {"jobID": job}})),
            )
            .await
            .expect("job triggered")
    }

    /// Waits until the item's job `job` finished and returns the item.
    pub async fn finished(&self, name: &str, job: &str) -> DeployItem {
        let end = tokio::time::Instant::now() + WAIT;
        loop {
            let di = self.items().get(name).await.unwrap();
            let s: DeployItemStatus = di.status.clone().unwrap_or_default();
            if s.job_id_finished.as_deref() == Some(job) {
                return di;
            }
            assert!(
                tokio::time::Instant::now() < end,
                "job {job} of {name} did not finish: {s:?}"
            );
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// Waits until the item's job `job` finished and asserts that it succeeded (else the
    /// failure shows its lastError); returns the item's status.
    pub async fn succeeded(&self, name: &str, job: &str) -> DeployItemStatus {
        let status = self.finished(name, job).await.status.unwrap_or_default();
        assert_succeeded(&status);
        status
    }

    /// Waits until the item's job `job` finished, asserts that it failed (else the failure
    /// shows the status) and returns its lastError.
    pub async fn failed(&self, name: &str, job: &str) -> LastError {
        let status = self.finished(name, job).await.status.unwrap_or_default();
        assert_eq!(status.phase, Some(DeployItemPhase::Failed), "{status:?}");
        status
            .last_error
            .expect("a failed item reports its lastError")
    }

    /// Gives the item a new configuration and starts job `job` with it.
    pub async fn reconfigure(&self, name: &str, config: Value, job: &str) {
        self.items()
            .patch(
                name,
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"config": config}})),
            )
            .await
            .expect("item reconfigured");
        self.trigger(name, job).await;
    }

    /// Sets the annotation `key` of the item to `value`.
    pub async fn annotate(&self, name: &str, key: &str, value: &str) {
        self.items()
            .patch(
                name,
                &PatchParams::default(),
                &Patch::Merge(json!({"metadata": {"annotations": {key: value}}})),
            )
            .await
            .expect("item annotated");
    }

    /// Deletes the item and waits until it is gone.
    pub async fn delete_item(&self, name: &str) {
        self.items()
            .delete(name, &DeleteParams::default())
            .await
            .expect("item deleted");
        wait_until(|| async { self.items().get_opt(name).await.unwrap().is_none() }).await;
    }

    /// The data of the ConfigMap `ns/name` in the target cluster, which must exist.
    pub async fn configmap_data(&self, ns: &str, name: &str) -> BTreeMap<String, String> {
        self.configmap(ns, name)
            .await
            .unwrap_or_else(|| panic!("ConfigMap {ns}/{name} exists"))
            .data
            .unwrap_or_default()
    }

    /// A ConfigMap in the target cluster, if present.
    pub async fn configmap(&self, ns: &str, name: &str) -> Option<ConfigMap> {
        Api::<ConfigMap>::namespaced(self.target.clone(), ns)
            .get_opt(name)
            .await
            .unwrap()
    }
}

/// Asserts that a finished item succeeded; otherwise the failure shows its lastError.
#[track_caller]
pub fn assert_succeeded(status: &DeployItemStatus) {
    assert_eq!(
        status.phase,
        Some(DeployItemPhase::Succeeded),
        "{:?}",
        status.last_error
    );
}

fn new_item(name: &str, type_: &str, target: Option<&str>, config: Value) -> DeployItem {
    DeployItem::new(
        name,
        DeployItemSpec {
            type_: type_.into(),
            target: target.map(|t| ObjectReference {
                name: t.into(),
                namespace: Some(NS.into()),
            }),
            config: Some(config),
            ..Default::default()
        },
    )
}

/// Adds the user `name` to `cluster` with a ClusterRole of `rules`; returns the user's token.
pub async fn user(cluster: &testbed::Cluster, name: &str, rules: Value) -> String {
    let token = cluster.add_user(name, &[]);
    grant(cluster, name, name, rules).await;
    token
}

/// Binds `user` to a new ClusterRole `role` of `rules` in `cluster`.
pub async fn grant(cluster: &testbed::Cluster, role: &str, user: &str, rules: Value) {
    let admin = cluster.client();
    let role_object: ClusterRole = serde_json::from_value(json!({
        "metadata": {"name": role}, "rules": rules,
    }))
    .expect("a ClusterRole");
    let binding: ClusterRoleBinding = serde_json::from_value(json!({
        "metadata": {"name": role},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": [{"kind": "User", "name": user, "apiGroup": "rbac.authorization.k8s.io"}],
    }))
    .expect("a ClusterRoleBinding");
    Api::<ClusterRole>::all(admin.clone())
        .create(&PostParams::default(), &role_object)
        .await
        .expect("ClusterRole created");
    Api::<ClusterRoleBinding>::all(admin)
        .create(&PostParams::default(), &binding)
        .await
        .expect("ClusterRoleBinding created");
}

/// How many requests `cluster` answered with status `code` (an injected fault, a refusal).
pub fn answered_with(cluster: &testbed::Cluster, code: u16) -> usize {
    cluster.requests().iter().filter(|r| r.code == code).count()
}

/// A manifest deployer config with short retries.
pub fn config(type_: &str) -> DeployerConfig {
    let mut c = DeployerConfig::new(type_, "test-deployer");
    c.namespace = Some(NS.into());
    c.retry_initial = Duration::from_millis(50);
    c.retry_max = Duration::from_millis(500);
    c
}

/// A running deployer; dropping the handle stops it.
pub struct Running {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Running {
    /// Stops the deployer and waits for it.
    pub async fn stop(mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.task.take() {
            let _ = t.await;
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(t) = self.task.take() {
            t.abort();
        }
    }
}

/// Starts a deployer in the background.
pub fn start<D: Deployer>(setup: Setup<D>) -> Running {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let task = tokio::spawn(landscaper_deployer::run(setup, async move {
        let _ = rx.await;
    }));
    Running {
        stop: Some(tx),
        task: Some(task),
    }
}

/// A v1alpha2 manifest configuration.
pub fn manifests(entries: Vec<Value>) -> Value {
    json!({
        "apiVersion": "manifest.deployer.landscaper.gardener.cloud/v1alpha2",
        "kind": "ProviderConfiguration",
        "manifests": entries,
    })
}

/// A manifest entry for a ConfigMap.
pub fn configmap(ns: &str, name: &str, data: Value, policy: &str) -> Value {
    json!({
        "policy": policy,
        "manifest": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns}, "data": data},
    })
}
