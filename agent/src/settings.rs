//! The agent's settings: the `AgentConfiguration` file, overridden by environment variables
//! and flags, validated once at start so a bad value stops the agent with a clear message.

use std::path::PathBuf;
use std::time::Duration;

use landscaper_api::config::{AgentConfiguration, OciConfiguration};
use landscaper_api::constants::annotations;
use landscaper_api::core::{Requirement, SelectorOperator, TargetSelector};
use landscaper_api::decode::config_from_yaml;
use landscaper_deployer::controller::progressing_default;

use crate::names::{validate_environment_name, validate_namespace_name};

/// Namespace (in either cluster) when none is configured and, for the host namespace, the
/// agent's own namespace is unknown (it runs outside a cluster).
pub const DEFAULT_NAMESPACE: &str = "ls-system";
/// Heartbeat period when none is configured.
pub const DEFAULT_HEARTBEAT_PERIOD: Duration = Duration::from_secs(30);
/// Lifetime of the deployer identity's token when none is configured.
pub const DEFAULT_TOKEN_LIFETIME: Duration = Duration::from_secs(3600);
/// The shortest token lifetime the TokenRequest API grants.
const MIN_TOKEN_LIFETIME: Duration = Duration::from_secs(600);

/// Values given on the command line or in the environment; they win over the file.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    /// Environment name.
    pub name: Option<String>,
    /// Host namespace for deployers; empty: the agent's own namespace.
    pub namespace: Option<String>,
    /// The namespace the agent runs in (the pod's), if known. Not an override: it is what an
    /// empty or unset `namespace` means.
    pub own_namespace: Option<String>,
    /// Kubeconfig file of the landscaper cluster.
    pub landscaper_kubeconfig: Option<PathBuf>,
    /// Namespace in the landscaper cluster.
    pub landscaper_namespace: Option<String>,
    /// Heartbeat period (Go duration).
    pub heartbeat_period: Option<String>,
    /// Lifetime of the deployer token (Go duration).
    pub token_lifetime: Option<String>,
}

/// The validated settings the agent runs with.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// Environment name.
    pub name: String,
    /// Host namespace where deployers (and the deployer identity) live.
    pub namespace: String,
    /// Kubeconfig file of the landscaper cluster.
    pub landscaper_kubeconfig: PathBuf,
    /// Namespace in the landscaper cluster for the heartbeat Lease and deployer objects.
    pub landscaper_namespace: String,
    /// Target selectors of the environment.
    pub target_selectors: Vec<TargetSelector>,
    /// How often the heartbeat is renewed.
    pub heartbeat_period: Duration,
    /// Lifetime of the deployer identity's token; it is renewed at 80%.
    pub token_lifetime: Duration,
    /// Namespaces of the landscaper cluster whose helm DeployItems the embedded deployer
    /// serves, and the only ones where it reads DeployItems, Targets, Contexts and Secrets.
    pub deploy_item_namespaces: Vec<String>,
    /// The progressing timeout of helm items without `spec.timeout`; none: no timeout.
    pub progressing_default: Option<Duration>,
    /// How the embedded helm deployer reaches OCI registries (`oci`).
    pub oci: OciConfiguration,
}

/// A setting that is missing or invalid, naming the key.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// The configuration file could not be read.
    #[error("reading the configuration file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The configuration file is not a valid AgentConfiguration.
    #[error("{0}")]
    Decode(#[from] landscaper_api::decode::DecodeError),
    /// A key has a bad value or is missing.
    #[error("configuration key {key}: {message}")]
    Invalid {
        /// The key, as in the file (and the matching flag).
        key: &'static str,
        /// What is wrong.
        message: String,
    },
}

impl Settings {
    /// Reads the configuration file (if any), applies the overrides and validates the result.
    pub fn load(
        file: Option<&std::path::Path>,
        overrides: Overrides,
    ) -> Result<Self, SettingsError> {
        let config = match file {
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|source| SettingsError::Read {
                    path: path.to_owned(),
                    source,
                })?;
                config_from_yaml::<AgentConfiguration>(&text, &path.display().to_string())?
            }
            None => AgentConfiguration::default(),
        };
        Self::resolve(config, overrides)
    }

    /// Applies the overrides to a configuration and validates the result.
    pub fn resolve(
        config: AgentConfiguration,
        overrides: Overrides,
    ) -> Result<Self, SettingsError> {
        let invalid = |key, message: String| SettingsError::Invalid { key, message };
        let name = overrides
            .name
            .or(config.name)
            .ok_or_else(|| invalid("name", "the environment name is required".to_owned()))?;
        validate_environment_name(&name).map_err(|message| invalid("name", message))?;
        // Empty means unset, as in upstream's chart: the agent's own namespace.
        let namespace = overrides
            .namespace
            .or(config.namespace)
            .filter(|namespace| !namespace.is_empty())
            .or(overrides.own_namespace)
            .unwrap_or_else(|| DEFAULT_NAMESPACE.to_owned());
        validate_namespace_name(&namespace).map_err(|message| invalid("namespace", message))?;
        let landscaper_namespace = overrides
            .landscaper_namespace
            .or(config.landscaper_namespace)
            .filter(|namespace| !namespace.is_empty())
            .unwrap_or_else(|| DEFAULT_NAMESPACE.to_owned());
        validate_namespace_name(&landscaper_namespace)
            .map_err(|message| invalid("landscaperNamespace", message))?;
        let deploy_item_namespaces = match config.deploy_item_namespaces {
            Some(namespaces) if !namespaces.is_empty() => {
                for (i, namespace) in namespaces.iter().enumerate() {
                    validate_namespace_name(namespace).map_err(|message| {
                        invalid("deployItemNamespaces", format!("[{i}]: {message}"))
                    })?;
                }
                let mut namespaces = namespaces;
                namespaces.sort();
                namespaces.dedup();
                namespaces
            }
            _ => vec![landscaper_namespace.clone()],
        };
        let landscaper_kubeconfig = overrides
            .landscaper_kubeconfig
            .or(config.landscaper_cluster_kubeconfig.map(PathBuf::from))
            .ok_or_else(|| {
                invalid(
                    "landscaperClusterKubeconfig",
                    "the kubeconfig file of the landscaper cluster is required".to_owned(),
                )
            })?;
        let heartbeat_period = duration(
            overrides.heartbeat_period,
            config.heartbeat_period,
            DEFAULT_HEARTBEAT_PERIOD,
        )
        .map_err(|message| invalid("heartbeatPeriod", message))?;
        if heartbeat_period < Duration::from_secs(1) {
            return Err(invalid("heartbeatPeriod", "must be at least 1s".to_owned()));
        }
        let token_lifetime = duration(overrides.token_lifetime, None, DEFAULT_TOKEN_LIFETIME)
            .map_err(|message| invalid("tokenLifetime", message))?;
        if token_lifetime < MIN_TOKEN_LIFETIME {
            return Err(invalid(
                "tokenLifetime",
                "must be at least 10m, the shortest lifetime the TokenRequest API grants"
                    .to_owned(),
            ));
        }
        let target_selectors = match config.target_selectors {
            Some(selectors) if !selectors.is_empty() => {
                check_selectors(&selectors)
                    .map_err(|message| invalid("targetSelectors", message))?;
                selectors
            }
            _ => default_target_selectors(&name),
        };
        Ok(Self {
            name,
            namespace,
            landscaper_kubeconfig,
            landscaper_namespace,
            target_selectors,
            heartbeat_period,
            token_lifetime,
            deploy_item_namespaces,
            progressing_default: progressing_default(config.deploy_item_timeouts.as_ref()),
            oci: config.oci.unwrap_or_default(),
        })
    }
}

fn duration(
    flag: Option<String>,
    file: Option<landscaper_api::Duration>,
    default: Duration,
) -> Result<Duration, String> {
    match flag {
        Some(text) => landscaper_api::parse_go_duration(&text).map_err(|e| e.to_string()),
        None => Ok(file.map(|d| d.as_std()).unwrap_or(default)),
    }
}

/// Targets annotated `landscaper.gardener.cloud/environment: <name>`.
pub fn default_target_selectors(name: &str) -> Vec<TargetSelector> {
    vec![TargetSelector {
        annotations: vec![Requirement {
            key: annotations::ENVIRONMENT.to_owned(),
            operator: Some(SelectorOperator::Equals),
            values: vec![name.to_owned()],
        }],
        ..Default::default()
    }]
}

fn check_selectors(selectors: &[TargetSelector]) -> Result<(), String> {
    for (i, selector) in selectors.iter().enumerate() {
        for (field, requirements) in [
            ("annotations", &selector.annotations),
            ("labels", &selector.labels),
        ] {
            for (j, requirement) in requirements.iter().enumerate() {
                if requirement.operator.is_none() {
                    return Err(format!(
                        "[{i}].{field}[{j}].operator is required (key {:?})",
                        requirement.key
                    ));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> AgentConfiguration {
        AgentConfiguration {
            name: Some("fenced".into()),
            landscaper_cluster_kubeconfig: Some("/ls/kubeconfig".into()),
            ..Default::default()
        }
    }

    #[test]
    fn defaults_fill_what_the_file_leaves_out() {
        let settings = Settings::resolve(base(), Overrides::default()).unwrap();
        assert_eq!(settings.namespace, "ls-system");
        assert_eq!(settings.landscaper_namespace, "ls-system");
        assert_eq!(settings.heartbeat_period, Duration::from_secs(30));
        assert_eq!(
            settings.target_selectors,
            default_target_selectors("fenced")
        );
        assert_eq!(settings.deploy_item_namespaces, vec!["ls-system"]);
    }

    #[test]
    fn an_empty_namespace_is_the_agents_own() {
        let in_pod = |namespace: Option<&str>| Overrides {
            own_namespace: Some("agents".into()),
            namespace: namespace.map(str::to_owned),
            ..Default::default()
        };
        for (config, overrides) in [
            (None, in_pod(None)),
            (Some(""), in_pod(None)),
            (None, in_pod(Some(""))),
        ] {
            let config = AgentConfiguration {
                namespace: config.map(str::to_owned),
                ..base()
            };
            let settings = Settings::resolve(config, overrides).unwrap();
            assert_eq!(settings.namespace, "agents");
        }
        let explicit = AgentConfiguration {
            namespace: Some("deployers".into()),
            ..base()
        };
        let settings = Settings::resolve(explicit, in_pod(None)).unwrap();
        assert_eq!(settings.namespace, "deployers");
        let outside_a_cluster = AgentConfiguration {
            namespace: Some(String::new()),
            ..base()
        };
        let settings = Settings::resolve(outside_a_cluster, Overrides::default()).unwrap();
        assert_eq!(settings.namespace, "ls-system");
    }

    #[test]
    fn deploy_item_namespaces_default_to_the_landscaper_namespace() {
        let config = AgentConfiguration {
            landscaper_namespace: Some("landscaper".into()),
            ..base()
        };
        let settings = Settings::resolve(config, Overrides::default()).unwrap();
        assert_eq!(settings.deploy_item_namespaces, vec!["landscaper"]);
        let config = AgentConfiguration {
            deploy_item_namespaces: Some(vec!["team-b".into(), "team-a".into(), "team-b".into()]),
            ..base()
        };
        let settings = Settings::resolve(config, Overrides::default()).unwrap();
        assert_eq!(settings.deploy_item_namespaces, vec!["team-a", "team-b"]);
        let config = AgentConfiguration {
            deploy_item_namespaces: Some(vec!["team.a".into()]),
            ..base()
        };
        let message = Settings::resolve(config, Overrides::default())
            .unwrap_err()
            .to_string();
        assert!(
            message.starts_with("configuration key deployItemNamespaces: [0]: \"team.a\""),
            "{message}"
        );
    }

    #[test]
    fn the_progressing_default_is_read_from_the_deploy_item_timeouts() {
        let text = "name: fenced\nlandscaperClusterKubeconfig: /ls/kubeconfig\ndeployItemTimeouts:\n  progressingDefault: 2s\n";
        let config: AgentConfiguration = config_from_yaml(text, "agent.yaml").unwrap();
        let settings = Settings::resolve(config, Overrides::default()).unwrap();
        assert_eq!(settings.progressing_default, Some(Duration::from_secs(2)));
        let text = "name: fenced\nlandscaperClusterKubeconfig: /ls/kubeconfig\ndeployItemTimeouts: {progressingDefault: none}\n";
        let config: AgentConfiguration = config_from_yaml(text, "agent.yaml").unwrap();
        let settings = Settings::resolve(config, Overrides::default()).unwrap();
        assert_eq!(settings.progressing_default, None);
        let settings = Settings::resolve(base(), Overrides::default()).unwrap();
        assert_eq!(
            settings.progressing_default,
            Some(landscaper_deployer::controller::DEFAULT_TIMEOUT)
        );
        for config in crate::helm_deployer::configs(&settings, 1) {
            assert_eq!(config.progressing_default, settings.progressing_default);
        }
    }

    #[test]
    fn overrides_win_over_the_file() {
        let overrides = Overrides {
            name: Some("other".into()),
            heartbeat_period: Some("5s".into()),
            ..Default::default()
        };
        let settings = Settings::resolve(base(), overrides).unwrap();
        assert_eq!(settings.name, "other");
        assert_eq!(settings.heartbeat_period, Duration::from_secs(5));
    }

    #[test]
    fn invalid_values_name_the_key() {
        let missing = AgentConfiguration {
            landscaper_cluster_kubeconfig: None,
            ..base()
        };
        let message = Settings::resolve(missing, Overrides::default())
            .unwrap_err()
            .to_string();
        assert_eq!(
            message,
            "configuration key landscaperClusterKubeconfig: the kubeconfig file of the landscaper cluster is required"
        );
        let bad_name = Overrides {
            name: Some("Bad_Name".into()),
            ..Default::default()
        };
        let message = Settings::resolve(base(), bad_name).unwrap_err().to_string();
        assert!(
            message.starts_with("configuration key name: \"Bad_Name\" is not a valid object name"),
            "{message}"
        );
        let bad_period = Overrides {
            heartbeat_period: Some("soon".into()),
            ..Default::default()
        };
        let message = Settings::resolve(base(), bad_period)
            .unwrap_err()
            .to_string();
        assert!(
            message.starts_with("configuration key heartbeatPeriod: invalid duration \"soon\""),
            "{message}"
        );
        // A namespace name is a DNS-1123 label: no dots, as an object name would allow.
        let dotted = Overrides {
            namespace: Some("ls.system".into()),
            ..Default::default()
        };
        let message = Settings::resolve(base(), dotted).unwrap_err().to_string();
        assert!(
            message.starts_with(
                "configuration key namespace: \"ls.system\" is not a valid namespace name"
            ),
            "{message}"
        );
    }

    #[test]
    fn unknown_keys_in_the_file_are_rejected() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.yaml");
        std::fs::write(&path, "apiVersion: config.landscaper.gardener.cloud/v1alpha1\nkind: AgentConfiguration\nname: a\nnamspace: x\n").unwrap();
        let message = Settings::load(Some(&path), Overrides::default())
            .unwrap_err()
            .to_string();
        assert!(
            message.ends_with("unknown field .namspace, did you mean \"namespace\"?"),
            "{message}"
        );
    }

    #[test]
    fn selector_without_operator_is_rejected() {
        let config = AgentConfiguration {
            target_selectors: Some(vec![TargetSelector {
                annotations: vec![Requirement {
                    key: "k".into(),
                    operator: None,
                    values: vec!["v".into()],
                }],
                ..Default::default()
            }]),
            ..base()
        };
        let message = Settings::resolve(config, Overrides::default())
            .unwrap_err()
            .to_string();
        assert_eq!(
            message,
            "configuration key targetSelectors: [0].annotations[0].operator is required (key \"k\")"
        );
    }
}
