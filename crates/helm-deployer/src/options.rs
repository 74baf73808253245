//! The options of Helm's operations in `helmDeploymentConfig` (`install`, `upgrade`,
//! `uninstall`), as upstream Landscaper passes them to Helm: `timeout` (a Go duration, Helm's
//! five minutes when unset) bounds each hook, and `atomic` (Helm 4's `--rollback-on-failure`)
//! uninstalls a failed install or rolls a failed upgrade back.

use landscaper_api::deployer::HelmProviderConfiguration;
use landscaper_deployer::error::Error;
use serde_json::Value;
use std::time::Duration;

/// Helm's default `--timeout` for an operation's hooks.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

/// The operation whose options apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// `helmDeploymentConfig.install`.
    Install,
    /// `helmDeploymentConfig.upgrade`.
    Upgrade,
    /// `helmDeploymentConfig.uninstall`.
    Uninstall,
}

impl Operation {
    fn field(self) -> &'static str {
        match self {
            Operation::Install => "install",
            Operation::Upgrade => "upgrade",
            Operation::Uninstall => "uninstall",
        }
    }
}

/// One option of `operation`, with the error for a bad value naming its field.
fn option<'a>(
    config: &'a HelmProviderConfiguration,
    operation: Operation,
    key: &str,
    item: &str,
) -> (Option<&'a Value>, impl Fn(String) -> Error) {
    let value = config
        .helm_deployment_config
        .as_ref()
        .and_then(|c| match operation {
            Operation::Install => c.install.as_ref(),
            Operation::Upgrade => c.upgrade.as_ref(),
            Operation::Uninstall => c.uninstall.as_ref(),
        })
        .and_then(|o| o.get(key));
    let field = format!(
        "DeployItem {item} spec.config.helmDeploymentConfig.{}.{key}",
        operation.field()
    );
    let invalid = move |why: String| {
        Error::config(
            "Reconcile",
            "InvalidProviderConfiguration",
            format!("{field}: {why}"),
        )
    };
    (value, invalid)
}

/// The hook timeout of `operation`.
pub fn timeout(
    config: &HelmProviderConfiguration,
    operation: Operation,
    item: &str,
) -> Result<Duration, Error> {
    let (value, invalid) = option(config, operation, "timeout", item);
    match value {
        None | Some(Value::Null) => Ok(DEFAULT_TIMEOUT),
        Some(Value::String(s)) => match landscaper_api::parse_go_duration(s) {
            Ok(d) if d.is_zero() => Err(invalid("must be longer than zero".into())),
            Ok(d) => Ok(d),
            Err(e) => Err(invalid(e.to_string())),
        },
        Some(other) => Err(invalid(format!(
            "expected a duration string such as \"5m\", got {other}"
        ))),
    }
}

/// Whether a failure of `operation` is undone (`atomic`).
pub fn atomic(
    config: &HelmProviderConfiguration,
    operation: Operation,
    item: &str,
) -> Result<bool, Error> {
    let (value, invalid) = option(config, operation, "atomic", item);
    match value {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(other) => Err(invalid(format!("expected true or false, got {other}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn config(options: Value) -> HelmProviderConfiguration {
        serde_json::from_value(json!({
            "name": "r", "namespace": "n", "chart": {"ref": "x"},
            "helmDeploymentConfig": options
        }))
        .unwrap()
    }

    #[test]
    fn timeouts_come_from_the_operation_and_default_to_helms() {
        let config = config(json!({"install": {"timeout": "30s"}, "upgrade": {"timeout": 5}}));
        assert_eq!(
            timeout(&config, Operation::Install, "ns/i").unwrap(),
            Duration::from_secs(30)
        );
        assert_eq!(
            timeout(&config, Operation::Uninstall, "ns/i").unwrap(),
            DEFAULT_TIMEOUT
        );
        let e = timeout(&config, Operation::Upgrade, "ns/i").unwrap_err();
        assert!(
            e.message
                .contains("spec.config.helmDeploymentConfig.upgrade.timeout"),
            "{}",
            e.message
        );
    }

    #[test]
    fn atomic_is_a_boolean_per_operation() {
        let config = config(json!({"install": {"atomic": true}, "upgrade": {"atomic": "yes"}}));
        assert!(atomic(&config, Operation::Install, "ns/i").unwrap());
        assert!(!atomic(&config, Operation::Uninstall, "ns/i").unwrap());
        let e = atomic(&config, Operation::Upgrade, "ns/i").unwrap_err();
        assert!(
            e.message
                .contains("spec.config.helmDeploymentConfig.upgrade.atomic"),
            "{}",
            e.message
        );
    }
}
