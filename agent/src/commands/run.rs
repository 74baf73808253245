//! `landscaper-agent run`: register the environment, keep it registered, and serve its helm
//! DeployItems with the embedded helm deployer.

use std::path::PathBuf;

use std::future::Future;
use std::time::Duration;

use crate::Agent;
use crate::clients::ClusterAccess;
use crate::health;
use crate::host::Host;
use crate::settings::{Overrides, Settings};

/// Where the agent's settings come from: the file, overridden by environment variables,
/// overridden by flags.
#[derive(clap::Args, Debug)]
pub struct SettingsArgs {
    /// AgentConfiguration file (config.landscaper.gardener.cloud/v1alpha1), as the chart renders it;
    /// every key is shown and explained in the repository's config/agent.yaml.
    #[arg(long, env = "LANDSCAPER_AGENT_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Kubeconfig of the host cluster; in-cluster configuration (or KUBECONFIG) when not given.
    #[arg(long, env = "LANDSCAPER_AGENT_KUBECONFIG", value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// Environment name (configuration key `name`).
    #[arg(long, env = "LANDSCAPER_AGENT_NAME")]
    pub name: Option<String>,
    /// Host namespace for deployers (key `namespace`; empty or unset: the agent's own).
    #[arg(long, env = "LANDSCAPER_AGENT_NAMESPACE")]
    pub namespace: Option<String>,
    /// The namespace the agent runs in, which an empty `namespace` means; the chart sets it
    /// from the pod (downward API). Unset: the namespace of the pod's ServiceAccount token,
    /// if mounted, else ls-system.
    #[arg(long, env = "POD_NAMESPACE")]
    pub pod_namespace: Option<String>,
    /// Kubeconfig of the landscaper cluster (key `landscaperClusterKubeconfig`).
    #[arg(
        long,
        env = "LANDSCAPER_AGENT_LANDSCAPER_KUBECONFIG",
        value_name = "FILE"
    )]
    pub landscaper_kubeconfig: Option<PathBuf>,
    /// Namespace in the landscaper cluster (key `landscaperNamespace`, default ls-system).
    #[arg(long, env = "LANDSCAPER_AGENT_LANDSCAPER_NAMESPACE")]
    pub landscaper_namespace: Option<String>,
    /// Heartbeat period, a Go duration (key `heartbeatPeriod`, default 30s).
    #[arg(long, env = "LANDSCAPER_AGENT_HEARTBEAT_PERIOD")]
    pub heartbeat_period: Option<String>,
    /// Lifetime of the deployer identity's token, a Go duration (default 1h; renewed at 80%).
    #[arg(long, env = "LANDSCAPER_AGENT_TOKEN_LIFETIME")]
    pub token_lifetime: Option<String>,
}

impl SettingsArgs {
    /// Loads and validates the settings (the binary's process as host).
    pub fn settings(&self) -> anyhow::Result<Settings> {
        self.settings_on(&Host::process())
    }

    /// Loads and validates the settings; the mounted ServiceAccount namespace comes from `host`.
    pub fn settings_on(&self, host: &Host) -> anyhow::Result<Settings> {
        let overrides = Overrides {
            name: self.name.clone(),
            namespace: self.namespace.clone(),
            own_namespace: self
                .pod_namespace
                .clone()
                .filter(|namespace| !namespace.is_empty())
                .or_else(|| host.service_account_namespace()),
            landscaper_kubeconfig: self.landscaper_kubeconfig.clone(),
            landscaper_namespace: self.landscaper_namespace.clone(),
            heartbeat_period: self.heartbeat_period.clone(),
            token_lifetime: self.token_lifetime.clone(),
        };
        let mut settings = Settings::load(self.config.as_deref(), overrides)?;
        // A path the configuration file names is a container path in an in-process run.
        settings.landscaper_kubeconfig = host.path(&settings.landscaper_kubeconfig);
        Ok(settings)
    }

    /// Connects to both clusters; without `--kubeconfig`, to the host cluster in-cluster.
    pub async fn connect(
        &self,
        settings: &Settings,
        on: &Host,
    ) -> anyhow::Result<(ClusterAccess, ClusterAccess)> {
        let host = match &self.kubeconfig {
            Some(path) => ClusterAccess::from_kubeconfig_file(path, "host cluster").await?,
            None => on.in_cluster("host cluster").await?,
        };
        let landscaper = ClusterAccess::from_kubeconfig_file(
            &settings.landscaper_kubeconfig,
            "landscaper cluster",
        )
        .await?;
        Ok((host, landscaper))
    }
}

/// Arguments of `landscaper-agent run`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    settings: SettingsArgs,
    /// Helm DeployItems the embedded helm deployer reconciles at the same time (chart
    /// rendering within them runs at most once per CPU core at a time).
    #[arg(long, env = "LANDSCAPER_AGENT_HELM_WORKERS", default_value_t = 8)]
    helm_workers: u16,
    /// Address of the probe endpoints `/healthz` (the agent's loop comes round) and `/readyz`
    /// (the environment is registered): HOST:PORT, or :PORT for every address (IPv6 and IPv4);
    /// empty to serve none.
    #[arg(
        long,
        env = "LANDSCAPER_AGENT_HEALTH_ADDRESS",
        default_value = ":8081",
        value_name = "HOST:PORT"
    )]
    health_address: String,
}

/// How often an in-process run reports the agent's readiness.
const READINESS_PERIOD: Duration = Duration::from_millis(500);

/// Runs the agent until `shutdown` completes. The binary answers probes on
/// `--health-address`; an in-process run reports readiness to its host instead.
pub async fn run(
    args: Args,
    on: &Host,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let settings = args.settings.settings_on(on)?;
    let probes = match args.health_address.as_str() {
        _ if !on.is_process() => None,
        "" => None,
        address => Some(health::bind(address).await?),
    };
    let (host, landscaper) = args.settings.connect(&settings, on).await?;
    tracing::info!(environment = %settings.name, host = %host.endpoint.server, landscaper = %landscaper.endpoint.server, "starting the agent");
    let agent = Agent::new(settings, host, landscaper, env!("CARGO_PKG_VERSION"));
    // Probes are answered until the agent has stopped.
    let probes = probes.map(|listener| tokio::spawn(health::serve(listener, agent.health())));
    let readiness = (!on.is_process()).then(|| {
        let health = agent.health();
        let on = on.clone();
        tokio::spawn(async move {
            use landscaper_process::probes::Probes as _;
            loop {
                on.report_ready(health.ready().is_ok());
                tokio::time::sleep(READINESS_PERIOD).await;
            }
        })
    });
    crate::helm_deployer::run_with_agent(agent, args.helm_workers, shutdown).await;
    for task in probes.into_iter().chain(readiness) {
        task.abort();
    }
    tracing::info!("agent stopped");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        settings: SettingsArgs,
    }

    #[test]
    fn an_empty_namespace_is_the_pods_namespace() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config.yaml");
        std::fs::write(
            &config,
            "apiVersion: config.landscaper.gardener.cloud/v1alpha1\nkind: AgentConfiguration\n\
             name: fenced\nnamespace: \"\"\nlandscaperClusterKubeconfig: /ls/kubeconfig\n",
        )
        .unwrap();
        let config = config.display().to_string();
        let cli = Cli::parse_from(["x", "--config", &config, "--pod-namespace", "agents"]);
        assert_eq!(cli.settings.settings().unwrap().namespace, "agents");
        let cli = Cli::parse_from([
            "x",
            "--config",
            &config,
            "--pod-namespace",
            "agents",
            "--namespace",
            "deployers",
        ]);
        assert_eq!(cli.settings.settings().unwrap().namespace, "deployers");
    }
}
