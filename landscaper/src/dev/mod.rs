//! Dev mode: the whole system in one process. In-process clusters (the landscaper cluster with
//! our CRDs, and one fenced cluster per environment), the landscaper's controllers, an agent
//! per environment with its embedded helm deployer, and the examples applied: the
//! DeployerRegistrations, whose deployers the landscaper installs into every environment (the
//! testbed's kubelet mode runs them), then the user's Installations and DeployItems.

pub mod board;
pub mod examples;
mod progress;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use kube::api::Api;
use landscaper_agent::Agent;
use landscaper_agent::cleanup::Cleanup;
use landscaper_agent::clients::ClusterAccess;
use landscaper_agent::names::Names;
use landscaper_agent::registration::host::HostRegistration;
use landscaper_agent::settings::{Overrides, Settings as AgentSettings};
use landscaper_api::config::AgentConfiguration;
use landscaper_api::core::Target;
use landscaper_deployer::error::describe_kube_error;
use testbed::Testbed;
use tokio::sync::oneshot;
use tokio::task::{JoinHandle, JoinSet};
use tokio::time::Instant;
use tracing::info;

use crate::settings::Settings;
use board::Board;
use examples::Applied;

/// Workers of the agents' embedded helm deployers (the agent's default).
const HELM_WORKERS: u16 = 8;
/// How long the agents may take to register their environments.
const REGISTRATION_LIMIT: Duration = Duration::from_secs(60);
/// The name of the landscaper cluster.
pub const LANDSCAPER_CLUSTER: &str = "landscaper";
/// The name of the fenced cluster (the agent's host) in the two-cluster world of the tests.
pub const FENCED_CLUSTER: &str = "fenced";
/// The environments dev mode registers when none are given.
pub const ENVIRONMENTS: [&str; 2] = ["default", "edge"];

/// The two-cluster world the end-to-end tests run on: the landscaper cluster and the fenced
/// cluster [`FENCED_CLUSTER`], for the caller to finish configuring and start.
pub fn two_clusters() -> testbed::Builder {
    clusters(&[FENCED_CLUSTER])
}

/// A testbed with the landscaper cluster and the named fenced clusters. While the workload
/// simulator is on, Deployments of the agent's and the landscaper's images run in-process (the
/// testbed's kubelet mode), so deployers that the helm deployer installs, and a landscaper
/// installed with its chart, actually run.
pub fn clusters(fenced: &[&str]) -> testbed::Builder {
    let names: Vec<&str> = std::iter::once(LANDSCAPER_CLUSTER)
        .chain(fenced.iter().copied())
        .collect();
    Testbed::builder()
        .named(&names)
        .container_runner(
            landscaper_agent::kubelet::IMAGE,
            std::sync::Arc::new(landscaper_agent::kubelet::AgentImage),
        )
        .container_runner(
            crate::kubelet::IMAGE,
            std::sync::Arc::new(crate::kubelet::LandscaperImage),
        )
}

/// Makes the landscaper cluster ready for the landscaper's controllers: the Landscaper CRDs
/// and the deployer management namespace.
pub async fn prepare_landscaper_cluster(
    client: &kube::Client,
    namespace: &str,
) -> Result<(), DevError> {
    crate::crds::ensure(client)
        .await
        .map_err(api("installing the Landscaper CRDs"))?;
    info!("installed the Landscaper CRDs into the landscaper cluster");
    examples::ensure_namespace(client, namespace).await
}

/// What dev mode is started with.
#[derive(Clone, Debug)]
pub struct Options {
    /// Where the clusters' kubeconfigs are written.
    pub dir: PathBuf,
    /// Manifests to apply to the landscaper cluster (a file or folder); none when `None`.
    pub examples: Option<PathBuf>,
    /// The folder that relative `filePath`s of local component repositories in the examples
    /// are resolved against (the repository root).
    pub base: PathBuf,
    /// The environments: an agent and a fenced cluster of the same name each.
    pub environments: Vec<String>,
    /// The agents' heartbeat period (Go duration).
    pub heartbeat_period: String,
    /// The landscaper's settings (`landscaper dev --config`).
    pub settings: Settings,
}

impl Options {
    /// Dev mode as `landscaper dev` runs it by default: the environments [`ENVIRONMENTS`] and
    /// the examples of `examples` in the current directory, kubeconfigs in `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            examples: Some(PathBuf::from("examples")),
            base: PathBuf::from("."),
            environments: ENVIRONMENTS.iter().map(|e| (*e).to_owned()).collect(),
            heartbeat_period: "10s".to_owned(),
            settings: Settings::default(),
        }
    }
}

/// Why dev mode could not start or stop.
#[derive(Debug, thiserror::Error)]
pub enum DevError {
    /// The options are contradictory.
    #[error("{0}")]
    Options(String),
    /// The testbed did not start.
    #[error("starting the in-process clusters: {0}")]
    Testbed(String),
    /// A request failed.
    #[error("{action}: {}", describe_kube_error(.source))]
    Api {
        /// What was being done.
        action: String,
        /// The failure.
        #[source]
        source: kube::Error,
    },
    /// An example could not be read or applied.
    #[error("example {file}: {message}")]
    Example {
        /// The file.
        file: String,
        /// What is wrong.
        message: String,
    },
    /// An agent could not be set up or cleaned up.
    #[error("agent of environment {environment}: {message}")]
    Agent {
        /// The environment.
        environment: String,
        /// What is wrong.
        message: String,
    },
}

/// An agent running in-process for one environment.
struct RunningAgent {
    settings: AgentSettings,
    host: ClusterAccess,
    landscaper: ClusterAccess,
    stop: oneshot::Sender<()>,
    task: JoinHandle<()>,
}

/// The running system; dropping it stops everything.
pub struct DevMode {
    bed: Testbed,
    tasks: JoinSet<()>,
    agents: BTreeMap<String, RunningAgent>,
    environments: Vec<String>,
    applied: Vec<Applied>,
}

impl DevMode {
    /// Starts the clusters, the landscaper, the agents and the progress log, applies the
    /// registrations of the examples, waits until every environment is registered, and
    /// applies the user's examples.
    pub async fn start(options: &Options) -> Result<Self, DevError> {
        check_environments(&options.environments)?;
        let fenced: Vec<&str> = options.environments.iter().map(String::as_str).collect();
        let bed = clusters(&fenced)
            .kubeconfig_dir(&options.dir)
            .simulate_workloads(true)
            .start()
            .await
            .map_err(|e| DevError::Testbed(e.to_string()))?;
        let mut dev = Self {
            bed,
            tasks: JoinSet::new(),
            agents: BTreeMap::new(),
            environments: options.environments.clone(),
            applied: Vec::new(),
        };
        let landscaper = dev.landscaper_client();
        let settings = options.settings.clone();
        prepare_landscaper_cluster(&landscaper, &settings.namespace).await?;
        progress::spawn_all(&mut dev.tasks, &landscaper);
        dev.tasks.spawn(crate::controllers::run(
            landscaper.clone(),
            settings,
            std::future::pending(),
        ));
        info!("the landscaper's controllers are running");
        for environment in &options.environments {
            dev.start_agent(environment, &options.heartbeat_period)
                .await?;
        }
        let files = match &options.examples {
            Some(path) => examples::files(path)?,
            None => examples::Examples::default(),
        };
        dev.applied = examples::apply(&landscaper, &files.registrations, &options.base).await?;
        dev.wait_for_environments(&options.settings.namespace)
            .await?;
        let user = examples::apply(&landscaper, &files.user, &options.base).await?;
        dev.applied.extend(user);
        Ok(dev)
    }

    /// The kubeconfig of the landscaper cluster.
    pub fn landscaper_kubeconfig(&self) -> &Path {
        self.cluster(LANDSCAPER_CLUSTER).kubeconfig_path()
    }

    /// A client of the landscaper cluster (admin).
    pub fn landscaper_client(&self) -> kube::Client {
        self.cluster(LANDSCAPER_CLUSTER).client()
    }

    /// The environments, each with a fenced cluster of the same name.
    pub fn environments(&self) -> &[String] {
        &self.environments
    }

    /// The kubeconfig of an environment's fenced cluster.
    pub fn kubeconfig(&self, environment: &str) -> Option<&Path> {
        self.environment_cluster(environment)
            .map(testbed::Cluster::kubeconfig_path)
    }

    /// A client of an environment's fenced cluster (admin).
    pub fn client(&self, environment: &str) -> Option<kube::Client> {
        self.environment_cluster(environment)
            .map(testbed::Cluster::client)
    }

    /// The objects the examples applied.
    pub fn applied(&self) -> &[Applied] {
        &self.applied
    }

    /// The current state of every deployer and example.
    pub async fn board(&self) -> Result<Board, DevError> {
        Board::observe(&self.landscaper_client(), &self.environments, &self.applied)
            .await
            .map_err(api("reading the state of deployers and examples"))
    }

    /// Uninstalls an environment's agent as its chart's pre-delete hook does: the agent's
    /// cleanup deletes the Environment and waits until the landscaper has removed the
    /// environment's deployers and released it, then the agent stops.
    pub async fn remove_environment(
        &mut self,
        environment: &str,
        timeout: Duration,
    ) -> Result<(), DevError> {
        let agent = self.agents.remove(environment).ok_or_else(|| {
            DevError::Options(format!("no agent runs for environment {environment}"))
        })?;
        let names = Names::new(&agent.settings.name);
        let cleanup = Cleanup {
            landscaper: &agent.landscaper.client,
            host: HostRegistration {
                client: &agent.host.client,
                endpoint: &agent.host.endpoint,
                names: &names,
                namespace: &agent.settings.namespace,
                token_lifetime: agent.settings.token_lifetime,
            },
            landscaper_namespace: &agent.settings.landscaper_namespace,
            names: &names,
            timeout,
            force: false,
        };
        let result = cleanup.run().await;
        let _ = agent.stop.send(());
        let _ = agent.task.await;
        self.environments.retain(|e| e != environment);
        result.map_err(|e| DevError::Agent {
            environment: environment.to_owned(),
            message: e.to_string(),
        })
    }

    /// Waits until the landscaper has made every environment's Target, which the user's
    /// examples import.
    async fn wait_for_environments(&self, namespace: &str) -> Result<(), DevError> {
        let targets: Api<Target> = Api::namespaced(self.landscaper_client(), namespace);
        let deadline = Instant::now() + REGISTRATION_LIMIT;
        for environment in &self.environments {
            while targets
                .get_opt(environment)
                .await
                .map_err(api("reading the environments' Targets"))?
                .is_none()
            {
                if Instant::now() >= deadline {
                    return Err(DevError::Agent {
                        environment: environment.clone(),
                        message: format!(
                            "the landscaper made no Target {namespace}/{environment} within {REGISTRATION_LIMIT:?}: \
                             did the agent register its Environment? (see the log)"
                        ),
                    });
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            info!(%environment, "the environment is registered");
        }
        Ok(())
    }

    fn cluster(&self, name: &str) -> &testbed::Cluster {
        // The clusters are created in `start`, so the lookup cannot miss.
        self.bed
            .cluster_named(name)
            .unwrap_or_else(|| self.bed.cluster())
    }

    fn environment_cluster(&self, environment: &str) -> Option<&testbed::Cluster> {
        (environment != LANDSCAPER_CLUSTER)
            .then(|| self.bed.cluster_named(environment))
            .flatten()
    }

    /// Starts the agent of `environment` with its embedded helm deployer, hosted in the
    /// fenced cluster of the same name.
    async fn start_agent(
        &mut self,
        environment: &str,
        heartbeat_period: &str,
    ) -> Result<(), DevError> {
        let failed = |message: String| DevError::Agent {
            environment: environment.to_owned(),
            message,
        };
        let config = AgentConfiguration {
            name: Some(environment.to_owned()),
            landscaper_cluster_kubeconfig: Some(self.landscaper_kubeconfig().display().to_string()),
            ..Default::default()
        };
        let overrides = Overrides {
            heartbeat_period: Some(heartbeat_period.to_owned()),
            ..Default::default()
        };
        let settings =
            AgentSettings::resolve(config, overrides).map_err(|e| failed(e.to_string()))?;
        let host_kubeconfig = self
            .kubeconfig(environment)
            .ok_or_else(|| failed("it has no fenced cluster".into()))?
            .to_owned();
        let host = ClusterAccess::from_kubeconfig_file(&host_kubeconfig, "fenced cluster")
            .await
            .map_err(|e| failed(e.to_string()))?;
        let landscaper =
            ClusterAccess::from_kubeconfig_file(self.landscaper_kubeconfig(), "landscaper cluster")
                .await
                .map_err(|e| failed(e.to_string()))?;
        let agent = Agent::new(
            settings.clone(),
            host.clone(),
            landscaper.clone(),
            env!("CARGO_PKG_VERSION"),
        );
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(landscaper_agent::helm_deployer::run_with_agent(
            agent,
            HELM_WORKERS,
            async move {
                let _ = stopped.await;
            },
        ));
        info!(%environment, "the agent and its helm deployer are running in the environment's fenced cluster");
        self.agents.insert(
            environment.to_owned(),
            RunningAgent {
                settings,
                host,
                landscaper,
                stop,
                task,
            },
        );
        Ok(())
    }
}

/// Environments need distinct names, none of them the landscaper cluster's.
fn check_environments(environments: &[String]) -> Result<(), DevError> {
    if environments.is_empty() {
        return Err(DevError::Options(
            "dev mode needs at least one environment".into(),
        ));
    }
    let mut seen = std::collections::BTreeSet::new();
    for environment in environments {
        if environment == LANDSCAPER_CLUSTER {
            return Err(DevError::Options(format!(
                "environment name {environment:?} is taken by the landscaper cluster"
            )));
        }
        if !seen.insert(environment) {
            return Err(DevError::Options(format!(
                "environment {environment:?} is given twice"
            )));
        }
    }
    Ok(())
}

fn api(action: &str) -> impl FnOnce(kube::Error) -> DevError + '_ {
    move |source| DevError::Api {
        action: action.to_owned(),
        source,
    }
}
