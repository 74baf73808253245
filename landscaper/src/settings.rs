//! Settings of the landscaper's controllers, derived from the `LandscaperConfiguration`.

use std::time::Duration;

use landscaper_api::config::LandscaperConfiguration;

use crate::controllers::context::DefaultContext;

/// Namespace of deployer management objects when the configuration names none.
pub const DEFAULT_NAMESPACE: &str = "ls-system";
/// How many heartbeat periods an agent may miss before its environment turns Unknown.
pub const DEFAULT_HEARTBEAT_TOLERANCE: u32 = 5;

/// How long a pair's landscaper cluster token lives (renewed at 80%).
pub const DEFAULT_PAIR_TOKEN_LIFETIME: Duration = Duration::from_secs(24 * 3600);

/// What the controllers need to know.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// Namespace in the landscaper cluster for Targets, RBAC and Installations of deployers.
    pub namespace: String,
    /// Heartbeat periods an agent may miss before its environment turns Unknown.
    pub heartbeat_tolerance: u32,
    /// Whether DeployerRegistrations are turned into per-environment installations
    /// (`deployerManagement.disable` turns it off).
    pub deployer_management: bool,
    /// Lifetime of the token in each pair's Target to the landscaper cluster.
    pub pair_token_lifetime: Duration,
    /// Executions reconciled at once (`controllers.executions.workers`).
    pub execution_workers: u16,
    /// Installations reconciled at once (`controllers.installations.workers`); 0: no limit.
    pub installation_workers: u16,
    /// The Context `default` of every namespace (`controllers.contexts.config`).
    pub default_context: DefaultContext,
}

/// Executions reconciled at once when the configuration names no number.
pub const DEFAULT_EXECUTION_WORKERS: u16 = 5;

impl Default for Settings {
    fn default() -> Self {
        Self {
            namespace: DEFAULT_NAMESPACE.to_owned(),
            heartbeat_tolerance: DEFAULT_HEARTBEAT_TOLERANCE,
            deployer_management: true,
            pair_token_lifetime: DEFAULT_PAIR_TOKEN_LIFETIME,
            execution_workers: DEFAULT_EXECUTION_WORKERS,
            installation_workers: 0,
            default_context: DefaultContext::from_config(None),
        }
    }
}

impl Settings {
    /// Settings from a configuration file's content; unset fields take their defaults.
    pub fn from_configuration(config: &LandscaperConfiguration) -> Self {
        let namespace = config
            .deployer_management
            .as_ref()
            .and_then(|dm| dm.namespace.clone())
            .filter(|ns| !ns.is_empty())
            .unwrap_or_else(|| DEFAULT_NAMESPACE.to_owned());
        let disabled = config
            .deployer_management
            .as_ref()
            .and_then(|dm| dm.disable)
            .unwrap_or(false);
        let execution_workers = config
            .controllers
            .as_ref()
            .and_then(|c| c.executions.as_ref())
            .and_then(|e| e.workers)
            .and_then(|w| u16::try_from(w).ok())
            .filter(|w| *w > 0)
            .unwrap_or(DEFAULT_EXECUTION_WORKERS);
        let installation_workers = config
            .controllers
            .as_ref()
            .and_then(|c| c.installations.as_ref())
            .and_then(|i| i.workers)
            .and_then(|w| u16::try_from(w).ok())
            .unwrap_or(0);
        let default_context = DefaultContext::from_config(
            config
                .controllers
                .as_ref()
                .and_then(|c| c.contexts.as_ref())
                .and_then(|c| c.config.as_ref()),
        );
        Self {
            namespace,
            deployer_management: !disabled,
            execution_workers,
            installation_workers,
            default_context,
            ..Self::default()
        }
    }
}
