//! The public API for tests and dev mode: start clusters, get clients and kubeconfigs,
//! inject faults, read counters and the request log.

use crate::cluster::ClusterState;
use crate::controllers;
use crate::counters::Counters;
use crate::faults::{Fault, Matcher};
use crate::ids;
use crate::kubeconfig;
use crate::kubelet::{ContainerRunner, RestartBackoff};
use crate::pipeline::Pipeline;
use crate::request_log::RequestRecord;
use crate::server::{self, tls::Tls};
use crate::users::UserInfo;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

/// Why a testbed could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// Certificates could not be made.
    #[error(transparent)]
    Tls(#[from] server::tls::TlsError),
    /// The ServiceAccount token key could not be made.
    #[error(transparent)]
    Token(#[from] crate::token::TokenError),
    /// Binding a port or writing a kubeconfig failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// A container runner to register on every cluster of a testbed.
#[derive(Clone)]
struct Registered {
    image: String,
    runner: Arc<dyn ContainerRunner>,
}

impl std::fmt::Debug for Registered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registered")
            .field("image", &self.image)
            .finish_non_exhaustive()
    }
}

/// How to start a testbed.
#[derive(Debug, Clone)]
pub struct Builder {
    names: Vec<String>,
    simulate_workloads: bool,
    kubeconfig_dir: Option<PathBuf>,
    runners: Vec<Registered>,
    gardener_shoots: bool,
}

impl Default for Builder {
    fn default() -> Self {
        Self {
            names: vec!["testbed".into()],
            simulate_workloads: false,
            kubeconfig_dir: None,
            runners: Vec::new(),
            gardener_shoots: false,
        }
    }
}

impl Builder {
    /// `n` clusters named `cluster-0`, `cluster-1`, ...
    pub fn clusters(mut self, n: usize) -> Self {
        self.names = (0..n.max(1)).map(|i| format!("cluster-{i}")).collect();
        self
    }

    /// Clusters with these names (one per name).
    pub fn named(mut self, names: &[&str]) -> Self {
        if !names.is_empty() {
            self.names = names.iter().map(|s| s.to_string()).collect();
        }
        self
    }

    /// Turns the workload simulator on in every cluster.
    pub fn simulate_workloads(mut self, on: bool) -> Self {
        self.simulate_workloads = on;
        self
    }

    /// Writes kubeconfigs to this directory (kept) instead of a temporary one (removed).
    pub fn kubeconfig_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.kubeconfig_dir = Some(dir.into());
        self
    }

    /// Runs containers of the image named `image` in-process with `runner` in every cluster
    /// (the workload simulator's kubelet mode; see [`crate::kubelet`]).
    pub fn container_runner(mut self, image: &str, runner: Arc<dyn ContainerRunner>) -> Self {
        self.runners.push(Registered {
            image: image.to_owned(),
            runner,
        });
        self
    }

    /// Serves Gardener's `Shoot` kind and its `adminkubeconfig` subresource in every cluster
    /// (a test double of Gardener's API, not of kube-apiserver, checked as gardener-apiserver
    /// checks requests); a Shoot's admin kubeconfig
    /// is for the cluster of this testbed its advertised address names.
    pub fn with_gardener_shoots(mut self) -> Self {
        self.gardener_shoots = true;
        self
    }

    /// Starts the clusters, each on its own loopback port.
    pub async fn start(self) -> Result<Testbed, StartError> {
        let tls = Tls::generate()?;
        let (dir, temporary) = match self.kubeconfig_dir {
            Some(d) => (d, false),
            None => {
                let mut b = [0u8; 6];
                ids::random_bytes(&mut b);
                let suffix: String = b.iter().map(|x| format!("{x:02x}")).collect();
                (
                    std::env::temp_dir().join(format!("testbed-{}-{suffix}", std::process::id())),
                    true,
                )
            }
        };
        std::fs::create_dir_all(&dir)?;
        let acceptor = TlsAcceptor::from(tls.server_config.clone());
        let mut clusters = Vec::new();
        for name in &self.names {
            let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
            let addr = listener.local_addr()?;
            let state = Arc::new(ClusterState::new(name, addr, tls.ca_pem.clone())?);
            for r in &self.runners {
                state.runners.add(&r.image, r.runner.clone());
            }
            state
                .simulate_workloads
                .store(self.simulate_workloads, Ordering::Relaxed);
            if self.gardener_shoots {
                state
                    .registry
                    .add_builtin(crate::gardener::shoot_resource());
            }
            controllers::bootstrap(&state);
            controllers::spawn_all(&state);
            tokio::spawn(server::serve(
                listener,
                acceptor.clone(),
                Arc::new(Pipeline(state.clone())),
                state.control.clone(),
            ));
            let path = dir.join(format!("{name}.kubeconfig"));
            std::fs::write(
                &path,
                kubeconfig::render(
                    name,
                    &format!("https://{addr}"),
                    &state.ca_pem,
                    &state.admin_token,
                ),
            )?;
            tracing::info!(cluster = %name, %addr, kubeconfig = %path.display(), "cluster serving");
            clusters.push(Cluster {
                state,
                kubeconfig_path: path,
            });
        }
        if self.gardener_shoots {
            let states: Vec<Arc<ClusterState>> =
                clusters.iter().map(|c: &Cluster| c.state.clone()).collect();
            for state in &states {
                // Set once, right after start: a fresh OnceLock cannot be full.
                let _ = state.gardener.set(crate::cluster::Garden::new(&states));
            }
        }
        Ok(Testbed {
            clusters,
            dir,
            temporary,
        })
    }
}

/// Running clusters. Dropping it stops them and removes a temporary kubeconfig directory.
pub struct Testbed {
    clusters: Vec<Cluster>,
    dir: PathBuf,
    temporary: bool,
}

impl Testbed {
    /// Starts one cluster with default settings.
    pub async fn start() -> Result<Self, StartError> {
        Builder::default().start().await
    }

    /// A builder for several clusters or other settings.
    pub fn builder() -> Builder {
        Builder::default()
    }

    /// The first cluster.
    pub fn cluster(&self) -> &Cluster {
        &self.clusters[0]
    }

    /// The cluster with this name.
    pub fn cluster_named(&self, name: &str) -> Option<&Cluster> {
        self.clusters.iter().find(|c| c.name() == name)
    }

    /// All clusters.
    pub fn clusters(&self) -> &[Cluster] {
        &self.clusters
    }

    /// The directory holding the kubeconfigs.
    pub fn kubeconfig_dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Testbed {
    fn drop(&mut self) {
        for c in &self.clusters {
            c.state.control.stop.send_replace(true);
            c.state.kubelet.stop_all();
        }
        if self.temporary {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// One running cluster.
pub struct Cluster {
    state: Arc<ClusterState>,
    kubeconfig_path: PathBuf,
}

impl Cluster {
    /// The cluster's name (its kubeconfig context).
    pub fn name(&self) -> &str {
        &self.state.name
    }

    /// `https://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("https://{}", self.state.addr)
    }

    /// The admin kubeconfig file.
    pub fn kubeconfig_path(&self) -> &Path {
        &self.kubeconfig_path
    }

    /// The admin kubeconfig as YAML.
    pub fn kubeconfig_yaml(&self) -> String {
        kubeconfig::render(
            self.name(),
            &self.url(),
            &self.state.ca_pem,
            &self.state.admin_token,
        )
    }

    /// A kubeconfig for another bearer token.
    pub fn kubeconfig_yaml_for(&self, token: &str) -> String {
        kubeconfig::render(self.name(), &self.url(), &self.state.ca_pem, token)
    }

    /// The CA certificate (PEM) the server certificate is signed by.
    pub fn ca_pem(&self) -> &str {
        &self.state.ca_pem
    }

    /// The admin's bearer token (a member of `system:masters`).
    pub fn admin_token(&self) -> &str {
        &self.state.admin_token
    }

    /// Adds a user authenticated by a new bearer token; returns the token.
    pub fn add_user(&self, name: &str, groups: &[&str]) -> String {
        self.state.tokens.issue(UserInfo::new(name, groups))
    }

    /// Fault injection.
    pub fn faults(&self) -> Faults<'_> {
        Faults { state: &self.state }
    }

    /// Request counters.
    pub fn counters(&self) -> &Counters {
        &self.state.counters
    }

    /// Every request this cluster answered since the start or the last
    /// [`reset_requests`](Self::reset_requests), oldest first: user, verb, resource,
    /// subresource, namespace, name and response code. The log keeps the last
    /// 200,000 records (`request_log::CAPACITY`).
    ///
    /// ```no_run
    /// # fn demo(cluster: &testbed::Cluster) {
    /// let sa = "system:serviceaccount:ns:agent";
    /// assert!(cluster.writes().iter().all(|r| r.user != sa || r.resource != "secrets"));
    /// # }
    /// ```
    pub fn requests(&self) -> Vec<RequestRecord> {
        self.state.requests.records()
    }

    /// The logged requests that are writes (create, update, patch, delete,
    /// deletecollection), successful or not, oldest first.
    pub fn writes(&self) -> Vec<RequestRecord> {
        self.state.requests.writes()
    }

    /// Empties the request log and resets the counters, so a test can look at the requests
    /// of one step alone.
    pub fn reset_requests(&self) {
        self.state.requests.reset();
        self.state.counters.reset();
    }

    /// Turns the workload simulator on or off.
    pub fn set_simulate_workloads(&self, on: bool) {
        self.state.simulate_workloads.store(on, Ordering::Relaxed);
        // Workloads created while it was off become ready now, not at their next change.
        if on && let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(controllers::simulator::handle(self.state.clone(), None));
        }
    }

    /// Makes the workload simulator treat pods of `image` (as written in a container) as never
    /// ready: a rollout to it stays stuck with the old pods running, as on a real cluster.
    pub fn set_never_ready_image(&self, image: &str) {
        self.state.rollouts.never_ready(image);
    }

    /// Runs containers of the image named `image` (the last path segment of a reference,
    /// without tag or digest) in-process with `runner`, while the workload simulator is on:
    /// the kubelet mode (see [`crate::kubelet`]).
    pub fn add_container_runner(&self, image: &str, runner: Arc<dyn ContainerRunner>) {
        self.state.runners.add(image, runner);
        if self.state.simulating()
            && let Ok(rt) = tokio::runtime::Handle::try_current()
        {
            rt.spawn(controllers::simulator::handle(self.state.clone(), None));
        }
    }

    /// Sets how long the kubelet mode waits before restarting a crashed container.
    pub fn set_restart_backoff(&self, backoff: RestartBackoff) {
        self.state.runners.set_backoff(backoff);
    }

    /// How many pods have a container running in-process (or waiting to restart).
    pub fn running_containers(&self) -> usize {
        self.state.kubelet.running_pods()
    }

    /// Moves the clock the cluster reads ages by forward, so objects look `by` older in
    /// tables (`kubectl get`'s AGE) without waiting.
    pub fn advance_clock(&self, by: std::time::Duration) {
        self.state.clock.advance(by);
    }

    /// The current resourceVersion of the cluster's store.
    pub fn resource_version(&self) -> u64 {
        self.state.store.current_rv()
    }

    /// A `kube::Client` authenticated as the admin (call it inside a Tokio runtime).
    #[cfg(feature = "client")]
    pub fn client(&self) -> kube::Client {
        self.client_as(&self.state.admin_token)
    }

    /// A `kube::Client` authenticated by `token` (call it inside a Tokio runtime).
    #[cfg(feature = "client")]
    pub fn client_as(&self, token: &str) -> kube::Client {
        let mut config = kube::Config::new(self.url().parse().expect("a loopback URL parses"));
        config.root_cert = Some(vec![pem_to_der(&self.state.ca_pem)]);
        config.auth_info.token = Some(secrecy::SecretString::from(token.to_string()));
        config.default_namespace = "default".into();
        kube::Client::try_from(config).expect("a client for a loopback URL with a valid CA")
    }
}

#[cfg(feature = "client")]
fn pem_to_der(pem: &str) -> Vec<u8> {
    use base64::Engine as _;
    let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    base64::engine::general_purpose::STANDARD
        .decode(body)
        .unwrap_or_default()
}

/// Fault injection for one cluster.
pub struct Faults<'a> {
    state: &'a Arc<ClusterState>,
}

impl Faults<'_> {
    /// Fails the next `count` requests matching `matcher` with `fault`.
    pub fn fail_next(&self, count: usize, matcher: Matcher, fault: Fault) {
        self.state.faults.fail_next(count, matcher, fault);
    }

    /// Removes pending fault rules.
    pub fn clear(&self) {
        self.state.faults.clear();
    }

    /// Ends every open watch.
    pub fn drop_watches(&self) {
        self.state.faults.drop_watches();
    }

    /// Closes every connection (and with them every watch and hanging request); the data
    /// stays and the server keeps listening on the same port.
    pub fn restart(&self) {
        self.state.faults.drop_watches();
        self.state.control.epoch.send_modify(|e| *e += 1);
    }

    /// Forgets the change history: watches and exact lists from older revisions get 410.
    pub fn compact(&self) {
        self.state.store.compact();
    }
}
