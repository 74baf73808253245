//! How a deployer runs: its configuration (type, identity, selectors, workers, retries,
//! timeouts) and its set-up (clients, the deployer, hooks).

use crate::continuous_reconcile;
use crate::deployer::Deployer;
use crate::hooks::Hooks;
use landscaper_api::config::DeployItemTimeouts;
use landscaper_api::core::{DeployerInformation, TargetSelector};
use std::time::Duration;

/// The progressing timeout of an item without `spec.timeout`, unless configured otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// The progressing timeout of items without `spec.timeout` that `deployItemTimeouts` sets:
/// `progressingDefault`, where `none` turns the check off, else [`DEFAULT_TIMEOUT`].
pub fn progressing_default(timeouts: Option<&DeployItemTimeouts>) -> Option<Duration> {
    match timeouts.and_then(|t| t.progressing_default.as_ref()) {
        Some(d) if d.is_none() => None,
        Some(d) => Some(d.as_std()),
        None => Some(DEFAULT_TIMEOUT),
    }
}

/// How a deployer runs.
#[derive(Debug, Clone)]
pub struct DeployerConfig {
    /// The `spec.type` the deployer serves.
    pub deploy_item_type: String,
    /// Identity, name and version written to `status.deployer`.
    pub info: DeployerInformation,
    /// Targets the deployer is responsible for; none: every target.
    pub target_selectors: Vec<TargetSelector>,
    /// Watch DeployItems and Targets of this namespace only.
    pub namespace: Option<String>,
    /// Namespaces whose DeployItems another deployer of the same type serves (a registered
    /// helm deployer leaves the agent's namespaces to the agent's embedded one).
    pub excluded_namespaces: Vec<String>,
    /// Items reconciled at the same time.
    pub workers: u16,
    /// First retry delay of a transient error; doubles per failure.
    pub retry_initial: Duration,
    /// Longest retry delay.
    pub retry_max: Duration,
    /// The progressing timeout of items without `spec.timeout`; none: no timeout.
    pub progressing_default: Option<Duration>,
}

impl DeployerConfig {
    /// A configuration with defaults for `deploy_item_type` and the deployer's name.
    pub fn new(deploy_item_type: &str, name: &str) -> Self {
        Self {
            deploy_item_type: deploy_item_type.into(),
            info: DeployerInformation {
                identity: name.into(),
                name: name.into(),
                version: env!("CARGO_PKG_VERSION").into(),
            },
            target_selectors: Vec::new(),
            namespace: None,
            excluded_namespaces: Vec::new(),
            workers: 8,
            retry_initial: Duration::from_secs(1),
            retry_max: Duration::from_secs(120),
            progressing_default: Some(DEFAULT_TIMEOUT),
        }
    }
}

/// Everything a deployer needs to run.
pub struct Setup<D> {
    /// The landscaper cluster (DeployItems, Targets, export Secrets, Events).
    pub ls_client: kube::Client,
    /// Where Secrets referenced by Targets are read (the agent: its host cluster).
    pub secrets_client: kube::Client,
    /// The concrete deployer.
    pub deployer: D,
    /// How it runs.
    pub config: DeployerConfig,
    /// Its extension hooks.
    pub hooks: Hooks,
}

impl<D: Deployer> Setup<D> {
    /// `deployer` serving `deploy_item_type`, with continuous reconcile: how the manifest,
    /// mock and helm deployers are set up.
    pub fn serving(
        deploy_item_type: &str,
        deployer: D,
        ls_client: kube::Client,
        secrets_client: kube::Client,
        mut config: DeployerConfig,
    ) -> Self {
        config.deploy_item_type = deploy_item_type.into();
        let mut hooks = Hooks::new();
        hooks.register_setup(continuous_reconcile::setup());
        Self {
            ls_client,
            secrets_client,
            deployer,
            config,
            hooks,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_progressing_default_comes_from_the_timeouts_and_none_turns_it_off() {
        let timeouts = |text: &str| DeployItemTimeouts {
            progressing_default: Some(text.parse().unwrap()),
            ..Default::default()
        };
        assert_eq!(
            progressing_default(Some(&timeouts("2s"))),
            Some(Duration::from_secs(2))
        );
        assert_eq!(progressing_default(Some(&timeouts("none"))), None);
        assert_eq!(
            progressing_default(Some(&DeployItemTimeouts::default())),
            Some(DEFAULT_TIMEOUT)
        );
        assert_eq!(progressing_default(None), Some(DEFAULT_TIMEOUT));
    }
}
