//! Settings of the landscaper's controllers, derived from the `LandscaperConfiguration`.

use std::time::Duration;

use landscaper_api::config::{ControllerSettings, LandscaperConfiguration};
use serde_json::Value;

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
    /// Installations reconciled at once (`controllers.installations.workers`).
    pub installation_workers: u16,
    /// Executions reconciled at once (`controllers.executions.workers`).
    pub execution_workers: u16,
    /// DeployItems reconciled at once (`controllers.deployItems.workers`).
    pub deploy_item_workers: u16,
    /// The pickup and abort timeouts of deploy items (`deployItemTimeouts`).
    pub deploy_item_timeouts: DeployItemTimeouts,
    /// The Context `default` of every namespace (`controllers.contexts.config`).
    pub default_context: DefaultContext,
}

/// The timeouts the landscaper's deploy-item controller enforces; `None` turns one off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeployItemTimeouts {
    /// How long a job may wait for a deployer to pick it up (`deployItemTimeouts.pickup`).
    pub pickup: Option<Duration>,
    /// How long a deployer may take to end a job after an abort (`deployItemTimeouts.abort`).
    pub abort: Option<Duration>,
}

/// Upstream's default of both deploy item timeouts: five minutes.
pub const DEFAULT_DEPLOY_ITEM_TIMEOUT: Duration = Duration::from_secs(5 * 60);

impl Default for DeployItemTimeouts {
    fn default() -> Self {
        Self {
            pickup: Some(DEFAULT_DEPLOY_ITEM_TIMEOUT),
            abort: Some(DEFAULT_DEPLOY_ITEM_TIMEOUT),
        }
    }
}

/// Objects reconciled at once by a controller whose configuration names no number.
pub const DEFAULT_WORKERS: u16 = 5;
/// Executions reconciled at once when the configuration names no number.
pub const DEFAULT_EXECUTION_WORKERS: u16 = DEFAULT_WORKERS;

impl Default for Settings {
    fn default() -> Self {
        Self {
            namespace: DEFAULT_NAMESPACE.to_owned(),
            heartbeat_tolerance: DEFAULT_HEARTBEAT_TOLERANCE,
            deployer_management: true,
            pair_token_lifetime: DEFAULT_PAIR_TOKEN_LIFETIME,
            installation_workers: DEFAULT_WORKERS,
            execution_workers: DEFAULT_EXECUTION_WORKERS,
            deploy_item_workers: DEFAULT_WORKERS,
            deploy_item_timeouts: DeployItemTimeouts::default(),
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
        let controllers = config.controllers.as_ref();
        let default_context = DefaultContext::from_config(
            controllers
                .and_then(|c| c.contexts.as_ref())
                .and_then(|c| c.config.as_ref()),
        );
        let timeouts = config.deploy_item_timeouts.as_ref();
        // `none` (zero) turns a timeout off; an unset one takes upstream's default.
        let timeout = |value: Option<&landscaper_api::Duration>| match value {
            None => Some(DEFAULT_DEPLOY_ITEM_TIMEOUT),
            Some(duration) if duration.is_none() => None,
            Some(duration) => Some(duration.as_std()),
        };
        Self {
            namespace,
            deployer_management: !disabled,
            installation_workers: workers(controllers.and_then(|c| c.installations.as_ref())),
            execution_workers: workers(controllers.and_then(|c| c.executions.as_ref())),
            deploy_item_workers: workers(controllers.and_then(|c| c.deploy_items.as_ref())),
            deploy_item_timeouts: DeployItemTimeouts {
                pickup: timeout(timeouts.and_then(|t| t.pickup.as_ref())),
                abort: timeout(timeouts.and_then(|t| t.abort.as_ref())),
            },
            default_context,
            ..Self::default()
        }
    }
}

/// A controller's `workers`, or [`DEFAULT_WORKERS`] when unset or not a positive number.
fn workers(settings: Option<&ControllerSettings>) -> u16 {
    settings
        .and_then(|s| s.workers)
        .and_then(|w| u16::try_from(w).ok())
        .filter(|w| *w > 0)
        .unwrap_or(DEFAULT_WORKERS)
}

/// What the default Context of each namespace holds, from the configuration.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DefaultContext {
    /// Whether default Contexts are managed at all.
    pub disabled: bool,
    /// Namespaces that get no default Context.
    pub excluded_namespaces: Vec<String>,
    /// The repository context written into each default Context.
    pub repository_context: Option<Value>,
}

// JSON values hold no NaN (serde_json numbers are finite), so equality is an equivalence.
impl Eq for DefaultContext {}

impl DefaultContext {
    /// Reads `controllers.contexts.config.default` (upstream's layout); absent: enabled,
    /// `kube-system` excluded, no repository context.
    pub fn from_config(config: Option<&Value>) -> Self {
        let default = config.and_then(|c| c.get("default"));
        let field = |name: &str| default.and_then(|d| d.get(name));
        Self {
            disabled: field("disable").and_then(Value::as_bool).unwrap_or(false),
            excluded_namespaces: field("excludedNamespaces")
                .and_then(Value::as_array)
                .map(|list| {
                    list.iter()
                        .filter_map(|v| v.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_else(|| vec!["kube-system".to_owned()]),
            repository_context: field("repositoryContext").cloned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use landscaper_api::decode::config_from_yaml;

    fn settings(text: &str) -> Settings {
        let config: LandscaperConfiguration =
            config_from_yaml(text, "config.yaml").expect("valid configuration");
        Settings::from_configuration(&config)
    }

    #[test]
    fn workers_are_read_per_controller() {
        let read = settings(
            "controllers: {installations: {workers: 30}, executions: {workers: 7}, deployItems: {workers: 2}}",
        );
        assert_eq!(read.installation_workers, 30);
        assert_eq!(read.execution_workers, 7);
        assert_eq!(read.deploy_item_workers, 2);
        let unset = settings("controllers: {deployItems: {workers: 0}}");
        assert_eq!(unset.installation_workers, DEFAULT_WORKERS);
        assert_eq!(unset.deploy_item_workers, DEFAULT_WORKERS);
    }

    #[test]
    fn deploy_item_timeouts_default_to_five_minutes_and_none_turns_them_off() {
        let unset = settings("kind: LandscaperConfiguration");
        assert_eq!(unset.deploy_item_timeouts, DeployItemTimeouts::default());
        assert_eq!(
            unset.deploy_item_timeouts.pickup,
            Some(Duration::from_secs(300))
        );
        let read = settings("deployItemTimeouts: {pickup: 2s, abort: none}");
        assert_eq!(
            read.deploy_item_timeouts,
            DeployItemTimeouts {
                pickup: Some(Duration::from_secs(2)),
                abort: None,
            }
        );
    }
}
