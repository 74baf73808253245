//! The embedded helm deployer: serves the helm DeployItems of the namespaces it is configured
//! for whose Target matches this environment's target selectors. Target `secretRef`s are
//! resolved in the host cluster, where `<env>-target-access` holds the kubeconfig of
//! `deployer-<env>`, so every write to the fenced cluster is made as that identity, never as
//! the agent's own ServiceAccount. Charts from OCI registries are fetched as the
//! configuration's `oci` section says (plain HTTP, TLS verification, credential files, cache).

use std::future::Future;
use std::sync::Arc;

use futures::FutureExt;
use landscaper_deployer::controller::DeployerConfig;
use landscaper_helm_deployer::source::{SourceSettings, Sources};
use landscaper_helm_deployer::{self as helm, HelmDeployer};
use tokio::sync::watch;

use crate::Agent;
use crate::settings::Settings;

/// The identity (and name) the embedded helm deployer writes to `status.deployer`.
pub fn identity(environment: &str) -> String {
    format!("agent-helm-deployer-{environment}")
}

/// The deployer configurations of the embedded helm deployer: one per namespace it serves,
/// so that it only ever lists and watches within those namespaces (the landscaper-side RBAC
/// of an agent grants nothing cluster-wide but its own Environment).
pub fn configs(settings: &Settings, workers: u16) -> Vec<DeployerConfig> {
    settings
        .deploy_item_namespaces
        .iter()
        .map(|namespace| {
            let mut config = DeployerConfig::new("", &identity(&settings.name));
            config.target_selectors = settings.target_selectors.clone();
            config.namespace = Some(namespace.clone());
            config.workers = workers.max(1);
            config.progressing_default = settings.progressing_default;
            config
        })
        .collect()
}

/// The helm deployer of these settings: chart sources with their `oci` section applied,
/// shared by the deployers of every served namespace.
pub fn deployer(settings: &Settings) -> HelmDeployer {
    HelmDeployer {
        sources: Arc::new(Sources::new(
            SourceSettings::default().with_oci(&settings.oci),
        )),
    }
}

/// Runs `deployer` for every configuration until `shutdown` completes; `landscaper` reads
/// DeployItems and Targets, `host` reads the Secrets Targets refer to.
pub async fn run(
    landscaper: kube::Client,
    host: kube::Client,
    configs: Vec<DeployerConfig>,
    deployer: HelmDeployer,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) {
    let shutdown = shutdown.boxed().shared();
    let deployers = configs.into_iter().map(|config| {
        tracing::info!(identity = %config.info.identity, namespace = ?config.namespace, workers = config.workers, "starting the embedded helm deployer");
        landscaper_deployer::run(
            helm::setup_with(landscaper.clone(), host.clone(), config, deployer.clone()),
            shutdown.clone(),
        )
    });
    futures::future::join_all(deployers).await;
}

/// Runs `agent` (registration, heartbeat, token renewal) and its embedded helm deployer with
/// `workers` workers per served namespace side by side until `shutdown` completes: what
/// `landscaper-agent run` does, and what dev mode and the end-to-end tests run in-process.
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
        configs(agent.settings(), workers),
        deployer(agent.settings()),
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
