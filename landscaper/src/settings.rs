//! Settings of the landscaper's controllers, derived from the `LandscaperConfiguration`.

use landscaper_api::config::LandscaperConfiguration;

/// Namespace of deployer management objects when the configuration names none.
pub const DEFAULT_NAMESPACE: &str = "ls-system";
/// How many heartbeat periods an agent may miss before its environment turns Unknown.
pub const DEFAULT_HEARTBEAT_TOLERANCE: u32 = 5;

/// What the controllers need to know.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// Namespace in the landscaper cluster for Targets, RBAC and Installations of deployers.
    pub namespace: String,
    /// Heartbeat periods an agent may miss before its environment turns Unknown.
    pub heartbeat_tolerance: u32,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            namespace: DEFAULT_NAMESPACE.to_owned(),
            heartbeat_tolerance: DEFAULT_HEARTBEAT_TOLERANCE,
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
        Self {
            namespace,
            ..Self::default()
        }
    }
}
