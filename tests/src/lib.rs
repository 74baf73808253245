//! Fixtures for end-to-end tests: a landscaper cluster with the Landscaper CRDs and the
//! landscaper's controllers running, and a fenced cluster for agents, both on one testbed;
//! agents deployed with exactly the RBAC the agent chart and the documented landscaper-cluster
//! RBAC grant; real charts packaged as Helm packages them.

pub mod blueprints;
pub mod charts;
pub mod deploy_items;
pub mod flow;
pub mod http;
pub mod installations;
pub mod logs;
pub mod objects;
pub mod process;
pub mod rbac;
pub mod registrations;
pub mod states;
pub mod tools;

use std::future::Future;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use kube::api::Api;
use landscaper_agent::Agent;
use landscaper_agent::clients::ClusterAccess;
use landscaper_agent::settings::{Overrides, Settings};
use landscaper_api::config::AgentConfiguration;
use landscaper_api::core::Environment;
use testbed::{Cluster, Testbed};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// The namespace of deployer management objects in the landscaper cluster.
pub const LS_NAMESPACE: &str = "ls-system";

/// Two clusters and, optionally, the landscaper's controllers.
pub struct World {
    /// The testbed holding both clusters.
    pub bed: Testbed,
    /// Where kubeconfigs and other files of the test live.
    pub dir: tempfile::TempDir,
    landscaper: Option<(oneshot::Sender<()>, JoinHandle<()>)>,
    settings: landscaper::settings::Settings,
    files: AtomicUsize,
}

impl World {
    /// Starts both clusters, installs the CRDs and starts the landscaper.
    pub async fn start() -> Self {
        Self::start_with(Self::default_settings()).await
    }

    /// The landscaper's settings in a [`World`]: its namespace is [`LS_NAMESPACE`].
    pub fn default_settings() -> landscaper::settings::Settings {
        landscaper::settings::Settings {
            namespace: LS_NAMESPACE.to_owned(),
            ..Default::default()
        }
    }

    /// Like [`World::start`], with the landscaper running on `settings`.
    pub async fn start_with(settings: landscaper::settings::Settings) -> Self {
        let mut world = Self::start_without_landscaper_with(settings).await;
        world.start_landscaper().await;
        world
    }

    /// Starts both clusters and installs the CRDs; the landscaper is left to the test
    /// ([`World::start_landscaper_with`]).
    pub async fn start_without_landscaper() -> Self {
        Self::start_without_landscaper_with(Self::default_settings()).await
    }

    /// Like [`World::start`], on the two clusters of `clusters` (a builder from
    /// `landscaper::dev::two_clusters()` with more options, such as Gardener's Shoots).
    pub async fn start_on(clusters: testbed::Builder) -> Self {
        let mut world = Self::start_without_landscaper_on(clusters, Self::default_settings()).await;
        world.start_landscaper().await;
        world
    }

    /// Like [`World::start_without_landscaper`], for a landscaper to run on `settings`.
    async fn start_without_landscaper_with(settings: landscaper::settings::Settings) -> Self {
        Self::start_without_landscaper_on(landscaper::dev::two_clusters(), settings).await
    }

    async fn start_without_landscaper_on(
        clusters: testbed::Builder,
        settings: landscaper::settings::Settings,
    ) -> Self {
        let bed = clusters.start().await.expect("testbed starts");
        let world = Self {
            bed,
            dir: tempfile::tempdir().expect("temp dir"),
            landscaper: None,
            settings,
            files: AtomicUsize::new(0),
        };
        landscaper::dev::prepare_landscaper_cluster(
            &world.landscaper_cluster().client(),
            &world.settings.namespace,
        )
        .await
        .expect("the landscaper cluster is prepared");
        world.wait_for_crds().await;
        world
    }

    /// The landscaper cluster.
    pub fn landscaper_cluster(&self) -> &Cluster {
        self.bed
            .cluster_named(landscaper::dev::LANDSCAPER_CLUSTER)
            .expect("landscaper cluster")
    }

    /// The fenced cluster.
    pub fn fenced_cluster(&self) -> &Cluster {
        self.bed
            .cluster_named(landscaper::dev::FENCED_CLUSTER)
            .expect("fenced cluster")
    }

    /// Waits until the API server serves the CRDs just installed.
    async fn wait_for_crds(&self) {
        let environments: Api<Environment> = Api::all(self.landscaper_cluster().client());
        eventually("the Environment CRD is served", || async {
            environments.list(&Default::default()).await.is_ok()
        })
        .await;
    }

    /// Creates a namespace unless it exists.
    pub async fn create_namespace(&self, cluster: &Cluster, name: &str) {
        objects::ensure_namespace(&cluster.client(), name).await;
    }

    /// Creates the namespace `name` on the landscaper cluster unless it exists, for a test of
    /// its own; returns a client of that cluster.
    pub async fn landscaper_namespace(&self, name: &str) -> kube::Client {
        let client = self.landscaper_cluster().client();
        objects::ensure_namespace(&client, name).await;
        client
    }

    /// Starts the landscaper's controllers (again, after [`World::stop_landscaper`]).
    pub async fn start_landscaper(&mut self) {
        let client = self.landscaper_cluster().client();
        self.start_landscaper_with(client, landscaper::health::Health::new());
    }

    /// Starts the landscaper's controllers with `client`, reporting their caches to `health`.
    pub fn start_landscaper_with(
        &mut self,
        client: kube::Client,
        health: std::sync::Arc<landscaper::health::Health>,
    ) {
        let (stop, stopped) = oneshot::channel::<()>();
        let settings = self.settings.clone();
        let task = tokio::spawn(landscaper::controllers::run_with_health(
            client,
            settings,
            health,
            async move {
                let _ = stopped.await;
            },
        ));
        self.landscaper = Some((stop, task));
    }

    /// Stops the landscaper's controllers and waits for them to finish.
    pub async fn stop_landscaper(&mut self) {
        if let Some((stop, task)) = self.landscaper.take() {
            let _ = stop.send(());
            let _ = task.await;
        }
    }

    /// The user name an agent for `name` acts as in both clusters (a cluster admin, as the
    /// agent chart's own RBAC grants on the host cluster).
    pub fn agent_user(name: &str) -> String {
        format!("agent-{name}")
    }

    /// Settings of an agent for `name`, acting as its own user, with a short heartbeat so
    /// tests run fast.
    pub fn agent_settings(&self, name: &str) -> Settings {
        let token = self
            .landscaper_cluster()
            .add_user(&Self::agent_user(name), &["system:masters"]);
        self.agent_settings_with_token(name, &token)
    }

    /// Settings of an agent for `name` that reaches the landscaper cluster with `token`, with
    /// a short heartbeat so tests run fast.
    pub fn agent_settings_with_token(&self, name: &str, token: &str) -> Settings {
        let path = self.dir.path().join(format!(
            "landscaper-{name}-{}.yaml",
            self.files.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::write(&path, self.landscaper_cluster().kubeconfig_yaml_for(token))
            .expect("kubeconfig written");
        let config = AgentConfiguration {
            name: Some(name.to_owned()),
            landscaper_cluster_kubeconfig: Some(path.display().to_string()),
            ..Default::default()
        };
        let overrides = Overrides {
            heartbeat_period: Some("1s".to_owned()),
            ..Default::default()
        };
        Settings::resolve(config, overrides).expect("valid settings")
    }

    /// An agent for `settings`, acting in the fenced cluster as its own admin user.
    pub async fn agent(&self, settings: Settings) -> Agent {
        let token = self
            .fenced_cluster()
            .add_user(&Self::agent_user(&settings.name), &["system:masters"]);
        self.agent_with_host_token(settings, &token).await
    }

    /// An agent for `settings`, acting in the fenced cluster with the given token.
    pub async fn agent_with_host_token(&self, settings: Settings, token: &str) -> Agent {
        let host = self.access(self.fenced_cluster(), Some(token)).await;
        let landscaper = ClusterAccess::from_kubeconfig_file(
            &settings.landscaper_kubeconfig,
            "landscaper cluster",
        )
        .await
        .expect("landscaper cluster reachable");
        Agent::new(settings, host, landscaper, "v0.0.0-test")
    }

    /// Access to a cluster as the given token (admin when `None`), through a kubeconfig file.
    pub async fn access(&self, cluster: &Cluster, token: Option<&str>) -> ClusterAccess {
        let path = self.kubeconfig_file(cluster, token);
        ClusterAccess::from_kubeconfig_file(&path, cluster.name())
            .await
            .expect("cluster reachable")
    }

    /// A new kubeconfig file for the cluster as the given token (admin when `None`).
    pub fn kubeconfig_file(&self, cluster: &Cluster, token: Option<&str>) -> PathBuf {
        let yaml = match token {
            Some(token) => cluster.kubeconfig_yaml_for(token),
            None => cluster.kubeconfig_yaml(),
        };
        let path: PathBuf = self.dir.path().join(format!(
            "{}-{}.yaml",
            cluster.name(),
            self.files.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::write(&path, yaml).expect("kubeconfig written");
        path
    }
}

/// Runs an agent in the background until the returned sender is dropped or fired.
pub fn spawn_agent(agent: Agent) -> (oneshot::Sender<()>, JoinHandle<()>) {
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(agent.run(async move {
        let _ = stopped.await;
    }));
    (stop, task)
}

/// Runs the agent's embedded helm deployer with `workers` in the background until the
/// returned sender is dropped or fired.
pub fn spawn_helm_deployer(agent: Agent, workers: u16) -> (oneshot::Sender<()>, JoinHandle<()>) {
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(landscaper_agent::helm_deployer::run_with_agent(
        agent,
        workers,
        async move {
            let _ = stopped.await;
        },
    ));
    (stop, task)
}

/// Who holds the landscaper's leader Lease (`landscaper-leader`, its default name) in
/// `namespace`, if anyone.
pub async fn leader(client: &kube::Client, namespace: &str) -> Option<String> {
    Api::<k8s_openapi::api::coordination::v1::Lease>::namespaced(client.clone(), namespace)
        .get_opt("landscaper-leader")
        .await
        .expect("read")
        .and_then(|lease| lease.spec)
        .and_then(|spec| spec.holder_identity)
}

/// Asserts that `text` contains each of `parts`; a failure names the missing part and shows
/// `text`.
#[track_caller]
pub fn assert_contains_all(text: &str, parts: &[&str]) {
    for part in parts {
        assert!(text.contains(part), "{part}: {text}");
    }
}

/// Polls `check` every 100 ms until it holds; fails the test after 30 s naming `what`.
pub async fn eventually<F, Fut>(what: &str, check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    eventually_within(what, Duration::from_secs(30), check).await;
}

/// Polls `check` every 100 ms until it holds; fails the test after `limit` naming `what`.
pub async fn eventually_within<F, Fut>(what: &str, limit: Duration, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + limit;
    while !check().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting until {what}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
