//! The embedded helm deployer: serves helm DeployItems whose Target matches this
//! environment's target selectors. Target `secretRef`s are resolved in the host cluster, where
//! `<env>-target-access` holds the kubeconfig of `deployer-<env>`, so every write to the
//! fenced cluster is made as that identity, never as the agent's own ServiceAccount.

use std::future::Future;

use landscaper_deployer::controller::DeployerConfig;
use landscaper_deployer::helm;
use tokio::sync::watch;

use crate::Agent;
use crate::settings::Settings;

/// The identity (and name) the embedded helm deployer writes to `status.deployer`.
pub fn identity(environment: &str) -> String {
    format!("agent-helm-deployer-{environment}")
}

/// The deployer configuration of the embedded helm deployer.
pub fn config(settings: &Settings, workers: u16) -> DeployerConfig {
    let mut config = DeployerConfig::new("", &identity(&settings.name));
    config.target_selectors = settings.target_selectors.clone();
    config.workers = workers.max(1);
    config
}

/// Runs the helm deployer until `shutdown` completes; `landscaper` reads DeployItems and
/// Targets, `host` reads the Secrets Targets refer to. Dev mode calls this too.
pub async fn run(
    landscaper: kube::Client,
    host: kube::Client,
    config: DeployerConfig,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) {
    tracing::info!(identity = %config.info.identity, workers = config.workers, "starting the embedded helm deployer");
    landscaper_deployer::run(helm::setup(landscaper, host, config), shutdown).await;
}

/// Runs `agent` (registration, heartbeat, token renewal) and its embedded helm deployer with
/// `workers` workers side by side until `shutdown` completes: what `landscaper-agent run`
/// does, and what dev mode and the end-to-end tests run in-process.
pub async fn run_with_agent(
    agent: Agent,
    workers: u16,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    // One shutdown signal for both halves; each gets its own waiter.
    let (stop, stopped) = watch::channel(false);
    let until_stopped = |mut stopped: watch::Receiver<bool>| async move {
        let _ = stopped.wait_for(|s| *s).await;
    };
    let helm = run(
        agent.landscaper().client.clone(),
        agent.host().client.clone(),
        config(agent.settings(), workers),
        until_stopped(stopped.clone()),
    );
    let registration = agent.run(until_stopped(stopped));
    let signal = async move {
        shutdown.await;
        let _ = stop.send(true);
    };
    tokio::join!(registration, helm, signal);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_identity_names_the_environment() {
        assert_eq!(identity("prod"), "agent-helm-deployer-prod");
    }
}
