//! `landscaper run`: the controllers, until SIGTERM or Ctrl-C.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use futures::FutureExt;
use kube::config::{KubeConfigOptions, Kubeconfig};
use landscaper::settings::Settings;
use landscaper::{leader, own_environment};
use landscaper_deployer::client_config::with_bounded_reads;

/// Arguments of `landscaper run`.
#[derive(clap::Args, Debug)]
pub struct Args {
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
    #[arg(long, env = "LANDSCAPER_HEARTBEAT_TOLERANCE", default_value_t = landscaper::settings::DEFAULT_HEARTBEAT_TOLERANCE)]
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
}

/// Runs the controllers.
pub async fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let configuration = super::read_configuration(args.config.as_deref())?;
    let mut settings = Settings::from_configuration(&configuration);
    if let Some(namespace) = &args.namespace {
        settings.namespace = namespace.clone();
    }
    settings.heartbeat_tolerance = args.heartbeat_tolerance.max(1);
    let config = match &args.kubeconfig {
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
    let client = kube::Client::try_from(with_bounded_reads(config.clone()))
        .context("building the client of the landscaper cluster")?;
    let shutdown = landscaper_process::shutdown::signal().shared();
    let election = args.leader_elect.then(|| {
        leader::Election::new(
            client.clone(),
            &settings.namespace,
            &args.leader_election_id,
            &leader::replica_identity(),
        )
    });
    let work = async {
        let controllers = landscaper::controllers::run(client, settings, shutdown.clone());
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
    Ok(ExitCode::SUCCESS)
}
