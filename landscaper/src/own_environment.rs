//! The landscaper's own cluster as an environment: with `deployerManagement.agent` set (and not
//! disabled), `landscaper run` also runs an agent whose host is the landscaper cluster, so
//! registered deployers are installed next to the landscaper without a separate agent install,
//! as upstream's deployer lifecycle management intends.

use std::future::Future;
use std::path::PathBuf;

use landscaper_agent::Agent;
use landscaper_agent::clients::ClusterAccess;
use landscaper_agent::settings::{Overrides, Settings as AgentSettings, SettingsError};
use landscaper_api::config::LandscaperConfiguration;

/// Helm releases the embedded agent's helm deployer renders at once.
pub const HELM_WORKERS: u16 = 4;

/// The agent `configuration` asks for, if any: `deployerManagement.agent` present and its
/// `disable` not true.
pub fn agent_settings(
    configuration: &LandscaperConfiguration,
) -> Result<Option<AgentSettings>, SettingsError> {
    let Some(agent) = configuration
        .deployer_management
        .as_ref()
        .filter(|management| management.disable != Some(true))
        .and_then(|management| management.agent.clone())
        .filter(|agent| agent.disable != Some(true))
    else {
        return Ok(None);
    };
    // The agent reaches the landscaper cluster through the landscaper's own connection (see
    // [`run`]), never through a kubeconfig file of its own.
    let overrides = Overrides {
        landscaper_kubeconfig: Some(PathBuf::from("(the landscaper's own connection)")),
        ..Overrides::default()
    };
    AgentSettings::resolve(agent, overrides).map(Some)
}

/// Runs the agent of the landscaper's own cluster and its helm deployer until `shutdown`;
/// `cluster` is the landscaper cluster, host and landscaper cluster at once.
pub async fn run(
    settings: AgentSettings,
    cluster: kube::Config,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), kube::Error> {
    let host = ClusterAccess::from_config(cluster.clone())?;
    let landscaper = ClusterAccess::from_config(cluster)?;
    tracing::info!(environment = %settings.name, "running the agent of the landscaper's own cluster");
    let agent = Agent::new(settings, host, landscaper, env!("CARGO_PKG_VERSION"));
    landscaper_agent::helm_deployer::run_with_agent(agent, HELM_WORKERS, shutdown).await;
    Ok(())
}
