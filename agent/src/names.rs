//! Names of the objects the agent owns, derived from the environment name in one place.

/// Names of everything an agent creates for one environment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Names {
    /// The environment (also the name of the Environment and of its heartbeat Lease).
    pub environment: String,
}

impl Names {
    /// Names for the given environment.
    pub fn new(environment: &str) -> Self {
        Self {
            environment: environment.to_owned(),
        }
    }

    /// The ServiceAccount deployers of this environment act as in the host cluster.
    pub fn deployer_service_account(&self) -> String {
        format!("deployer-{}", self.environment)
    }

    /// The ClusterRole (and ClusterRoleBinding) of the deployer identity: one per environment,
    /// never shared between agents.
    pub fn deployer_cluster_role(&self) -> String {
        format!("landscaper:agent:{}:deployer", self.environment)
    }

    /// The kubeconfig Secret the host Target points at (`default-target-access` for `default`).
    pub fn target_access_secret(&self) -> String {
        format!("{}-target-access", self.environment)
    }

    /// The heartbeat Lease in the landscaper cluster.
    pub fn heartbeat_lease(&self) -> String {
        self.environment.clone()
    }
}

/// Longest label value Kubernetes accepts; the environment name is one.
const MAX_LABEL_VALUE: usize = 63;

/// Checks that `name` can name the Environment and the objects derived from it: a DNS-1123
/// subdomain that still fits when prefixed with `deployer-` and suffixed with `-target-access`,
/// and a label value (the environment label on every object the agent and landscaper make).
pub fn validate_environment_name(name: &str) -> Result<(), String> {
    const LONGEST_AFFIX: usize = "-target-access".len();
    let valid_chars = name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.');
    let valid_ends = name
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphanumeric())
        && name
            .bytes()
            .last()
            .is_some_and(|b| b.is_ascii_alphanumeric());
    if name.is_empty() || !valid_chars || !valid_ends {
        return Err(format!(
            "{name:?} is not a valid object name: it must consist of lower case alphanumeric characters, '-' or '.', \
             and start and end with an alphanumeric character"
        ));
    }
    if name.len() + LONGEST_AFFIX > 253 {
        return Err(format!(
            "{name:?} is too long: derived names such as \"{name}-target-access\" exceed 253 characters"
        ));
    }
    if name.len() > MAX_LABEL_VALUE {
        return Err(format!(
            "{name:?} is too long: it is also a label value, at most {MAX_LABEL_VALUE} characters"
        ));
    }
    Ok(())
}

/// Checks that `name` can name a namespace: a DNS-1123 label (lower case alphanumeric
/// characters or '-', starting and ending with an alphanumeric one, at most 63 characters).
pub fn validate_namespace_name(name: &str) -> Result<(), String> {
    let valid_chars = name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    let valid_ends = name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric());
    if !valid_chars || !valid_ends || name.len() > MAX_LABEL_VALUE {
        return Err(format!(
            "{name:?} is not a valid namespace name: it must consist of at most {MAX_LABEL_VALUE} lower case \
             alphanumeric characters or '-', and start and end with an alphanumeric character"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_names_follow_the_environment() {
        let names = Names::new("default");
        assert_eq!(names.deployer_service_account(), "deployer-default");
        assert_eq!(names.target_access_secret(), "default-target-access");
        assert_eq!(
            names.deployer_cluster_role(),
            "landscaper:agent:default:deployer"
        );
        assert_eq!(names.heartbeat_lease(), "default");
    }

    #[test]
    fn invalid_environment_names_are_explained() {
        assert!(validate_environment_name("fenced-1").is_ok());
        for bad in ["", "My_Env", "-a", "a-", "UPPER"] {
            let message = validate_environment_name(bad).unwrap_err();
            assert!(
                message.contains("not a valid object name"),
                "{bad}: {message}"
            );
        }
        for long in [250, 64] {
            assert!(
                validate_environment_name(&"a".repeat(long))
                    .unwrap_err()
                    .contains("too long"),
                "{long} characters"
            );
        }
        assert!(validate_environment_name(&"a".repeat(63)).is_ok());
    }

    #[test]
    fn invalid_namespace_names_are_explained() {
        assert!(validate_namespace_name("ls-system").is_ok());
        assert!(validate_namespace_name(&"a".repeat(63)).is_ok());
        for bad in ["", "ls.system", "-a", "a-", "UPPER", &"a".repeat(64)] {
            let message = validate_namespace_name(bad).unwrap_err();
            assert!(
                message.contains("not a valid namespace name"),
                "{bad}: {message}"
            );
        }
    }
}
