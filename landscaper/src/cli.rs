//! `landscaper run`, callable in-process: [`run`] parses a command line with clap and runs
//! the controllers until a shutdown future completes, on the binary's code path. What the
//! binary reads from its process (environment variables for clap's `env` settings, the
//! in-cluster configuration, `POD_NAME`) an in-process run takes from a [`Host`] (the agent's),
//! and it opens no probe listener: its readiness goes to [`Host::on_ready`]. The other
//! subcommands stay in the binary.

use std::ffi::OsString;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::{Parser, Subcommand};
use futures::FutureExt;
use kube::config::{KubeConfigOptions, Kubeconfig};
use landscaper_api::config::LandscaperConfiguration;
use landscaper_api::decode::config_from_yaml;
use landscaper_deployer::client_config::with_bounded_reads;
use landscaper_process::probes::Probes as _;

pub use landscaper_agent::cli::Host;

use crate::health::Health;
use crate::settings::Settings;
use crate::{leader, own_environment};

/// The part of the landscaper's command line that runs in-process.
#[derive(Parser, Debug)]
#[command(name = "landscaper")]
pub struct InProcess {
    /// What to run.
    #[command(subcommand)]
    pub command: InProcessCommand,
}

/// The subcommands an in-process run knows.
#[derive(Subcommand, Debug)]
pub enum InProcessCommand {
    /// Run the landscaper's controllers against the landscaper cluster.
    Run(RunArgs),
}

/// Arguments of `landscaper run`.
#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// LandscaperConfiguration file (config.landscaper.gardener.cloud/v1alpha1); every key is
    /// shown and explained in the repository's config/landscaper.yaml.
    #[arg(long, env = "LANDSCAPER_CONFIG", value_name = "FILE")]
    config: Option<PathBuf>,
    /// Kubeconfig of the landscaper cluster; in-cluster configuration (or KUBECONFIG) when not given.
    #[arg(long, env = "LANDSCAPER_KUBECONFIG", value_name = "FILE")]
    kubeconfig: Option<PathBuf>,
    /// Namespace for deployer management objects (overrides deployerManagement.namespace; default ls-system).
    #[arg(long, env = "LANDSCAPER_NAMESPACE")]
    namespace: Option<String>,
    /// Heartbeat periods an agent may miss before its Environment turns Unknown.
    #[arg(long, env = "LANDSCAPER_HEARTBEAT_TOLERANCE", default_value_t = crate::settings::DEFAULT_HEARTBEAT_TOLERANCE)]
    heartbeat_tolerance: u32,
    /// Take part in leader election, so that of several replicas only one reconciles: a Lease
    /// in the deployer management namespace; the others wait and take over when it is not
    /// renewed. A replica that loses the Lease exits (with status 1) to start over cleanly.
    #[arg(long, env = "LANDSCAPER_LEADER_ELECT")]
    leader_elect: bool,
    /// Name of the leader election Lease.
    #[arg(
        long,
        env = "LANDSCAPER_LEADER_ELECTION_ID",
        default_value = "landscaper-leader"
    )]
    leader_election_id: String,
    /// Address of `/healthz` (the process answers), `/readyz` (every controller's cache is
    /// synced, or this replica waits for the leader election Lease) and `/metrics`
    /// (Prometheus): HOST:PORT, or :PORT for every address (IPv6 and IPv4); empty to serve none.
    #[arg(
        long,
        env = "LANDSCAPER_HEALTH_ADDRESS",
        default_value = ":8081",
        value_name = "HOST:PORT"
    )]
    health_address: String,
    /// The pod's name, the start of this replica's leader election identity (the chart sets
    /// it from the downward API); else the host name.
    #[arg(long, env = "POD_NAME", hide = true)]
    pod_name: Option<String>,
}

/// How often an in-process run reports its readiness to its host.
const READINESS_PERIOD: Duration = Duration::from_millis(500);

/// Parses `args` (the first is the program name) and runs the command until `shutdown`
/// completes: the binary's code path, for in-process runs (the testbed's kubelet mode).
pub async fn run<I, T>(
    args: I,
    host: Host,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) -> anyhow::Result<()>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString>,
{
    let cli: InProcess = landscaper_agent::cli::parse_as(args, &host)
        .map_err(|e| anyhow::anyhow!("{}", e.render()))?;
    let InProcessCommand::Run(args) = cli.command;
    // On the heap: the controllers' futures are large, and a debug build's worker thread
    // (2 MiB of stack) that polls them inline overflows.
    Box::pin(run_command(args, &host, shutdown)).await
}

/// The LandscaperConfiguration in `path`, or the defaults when no file is given.
pub fn read_configuration(path: Option<&Path>) -> anyhow::Result<LandscaperConfiguration> {
    let Some(path) = path else {
        return Ok(LandscaperConfiguration::default());
    };
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    Ok(config_from_yaml::<LandscaperConfiguration>(
        &text,
        &path.display().to_string(),
    )?)
}

/// Runs the controllers until `shutdown` completes. The binary answers probes on
/// `--health-address`; an in-process run reports readiness to its host instead.
pub async fn run_command(
    args: RunArgs,
    on: &Host,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) -> anyhow::Result<()> {
    let config_path = args.config.as_deref().map(|path| on.path(path));
    let configuration = read_configuration(config_path.as_deref())?;
    let mut settings = Settings::from_configuration(&configuration);
    if let Some(namespace) = &args.namespace {
        settings.namespace = namespace.clone();
    }
    settings.heartbeat_tolerance = args.heartbeat_tolerance.max(1);
    let kubeconfig = args
        .kubeconfig
        .clone()
        .or_else(|| on.in_cluster_kubeconfig().map(Path::to_owned));
    let config = match &kubeconfig {
        Some(path) => {
            let kubeconfig = Kubeconfig::read_from(path)
                .with_context(|| format!("reading kubeconfig {}", path.display()))?;
            kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
                .await
                .with_context(|| format!("kubeconfig {}", path.display()))?
        }
        None => kube::Config::infer()
            .await
            .context("no kubeconfig given and none found (in-cluster or KUBECONFIG)")?,
    };
    tracing::info!(server = %config.cluster_url, namespace = %settings.namespace, "starting the landscaper");
    let own_agent =
        own_environment::agent_settings(&configuration).context("deployerManagement.agent")?;
    let health = Health::new();
    // Probes and metrics are answered until the landscaper has stopped.
    let probes = match args.health_address.as_str() {
        _ if !on.is_process() => None,
        "" => None,
        address => {
            let listener = landscaper_process::probes::bind(address).await?;
            Some(tokio::spawn(landscaper_process::probes::serve(
                listener,
                health.clone(),
            )))
        }
    };
    let readiness = (!on.is_process()).then(|| {
        let health = health.clone();
        let on = on.clone();
        tokio::spawn(async move {
            loop {
                on.report_ready(health.ready().is_ok());
                tokio::time::sleep(READINESS_PERIOD).await;
            }
        })
    });
    let result = Box::pin(run_controllers(
        &args, settings, config, own_agent, health, shutdown,
    ))
    .await;
    for task in probes.into_iter().chain(readiness) {
        task.abort();
    }
    result
}

/// Runs the controllers (and the own cluster's agent), under leader election if asked.
async fn run_controllers(
    args: &RunArgs,
    settings: Settings,
    config: kube::Config,
    own_agent: Option<landscaper_agent::settings::Settings>,
    health: Arc<Health>,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) -> anyhow::Result<()> {
    let client = kube::Client::try_from(with_bounded_reads(config.clone()))
        .context("building the client of the landscaper cluster")?;
    let shutdown = shutdown.boxed().shared();
    if args.leader_elect {
        health.standby();
    }
    let election = args.leader_elect.then(|| {
        leader::Election::new(
            client.clone(),
            &settings.namespace,
            &args.leader_election_id,
            &leader::replica_identity_of(args.pod_name.as_deref()),
        )
    });
    let work = async {
        let controllers = Box::pin(crate::controllers::run_with_health(
            client,
            settings,
            health.clone(),
            shutdown.clone(),
        ));
        match own_agent {
            Some(agent) => {
                let (_, agent) = futures::join!(
                    controllers,
                    own_environment::run(agent, config, shutdown.clone())
                );
                agent.context("connecting the agent of the landscaper's own cluster")
            }
            None => {
                controllers.await;
                Ok(())
            }
        }
    };
    match election {
        None => work.await?,
        Some(election) => {
            let mut result = Ok(());
            let outcome = tokio::select! {
                outcome = election.run(async { result = work.await }) => outcome,
                // Stopped while waiting to lead.
                () = shutdown.clone() => leader::Outcome::Finished,
            };
            if outcome == leader::Outcome::Lost {
                anyhow::bail!("lost the leader election Lease {}", args.leader_election_id);
            }
            result?;
        }
    }
    tracing::info!("landscaper stopped");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn an_in_process_run_reads_its_settings_from_the_hosts_environment() {
        let env: BTreeMap<String, String> = [
            ("POD_NAME", "landscaper-0"),
            ("LANDSCAPER_LEADER_ELECT", "true"),
            ("LANDSCAPER_NAMESPACE", "from-env"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        let host = Host::in_process(env, "/k".into(), "ns".into());
        let cli: InProcess =
            landscaper_agent::cli::parse_as(["landscaper", "run", "--namespace=from-flag"], &host)
                .unwrap();
        let InProcessCommand::Run(args) = cli.command;
        assert_eq!(args.pod_name.as_deref(), Some("landscaper-0"));
        assert!(args.leader_elect);
        assert_eq!(args.namespace.as_deref(), Some("from-flag"));
    }

    #[tokio::test]
    async fn other_subcommands_are_refused_in_process() {
        let host = Host::in_process(BTreeMap::new(), "/k".into(), "ns".into());
        let error = run(["landscaper", "crds"], host, async {})
            .await
            .unwrap_err();
        assert!(error.to_string().contains("crds"), "{error}");
    }
}
