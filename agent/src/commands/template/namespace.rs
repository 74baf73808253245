//! The release namespace `helm template` uses when it renders: what Helm's settings and
//! client-go's deferred kubeconfig loading give, read from files and the environment only
//! (no cluster is contacted).

use std::path::Path;

use kube::config::{Kubeconfig, KubeconfigError};

use crate::host::{SERVICE_ACCOUNT, mounted_namespace};

/// The namespace for a render: `--namespace`, else `$HELM_NAMESPACE` (empty counts as none),
/// else the namespace of the kubeconfig context (`--kube-context`, else `$HELM_KUBECONTEXT`,
/// else the current one; the kubeconfig `--kubeconfig`, else from `$KUBECONFIG` or
/// `~/.kube/config`), else, in a pod, `$POD_NAMESPACE` or the service account's namespace,
/// else `default`.
pub fn release_namespace(
    flag: Option<&str>,
    context: Option<&str>,
    kubeconfig: Option<&Path>,
) -> String {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let given = match flag {
        Some(namespace) => Some(namespace.to_string()).filter(|n| !n.is_empty()),
        None => env("HELM_NAMESPACE"),
    };
    if let Some(namespace) = given {
        return namespace;
    }
    // A flag given, even empty, wins over the variable.
    let context = match context {
        Some(context) => Some(context.to_string()).filter(|c| !c.is_empty()),
        None => env("HELM_KUBECONTEXT"),
    };
    let kube = match kubeconfig.filter(|path| !path.as_os_str().is_empty()) {
        // A kubeconfig named explicitly must be there.
        Some(path) => match Kubeconfig::read_from(path) {
            Ok(config) => kubeconfig_namespace(Ok(config), context.as_deref()),
            Err(_) => Kube::Unusable,
        },
        None => kubeconfig_namespace(read_kubeconfig(), context.as_deref()),
    };
    match kube {
        Kube::Namespace(namespace) => namespace,
        Kube::Unusable => "default".to_string(),
        Kube::NoNamespace => in_cluster_namespace(&env, Path::new(SERVICE_ACCOUNT))
            .unwrap_or_else(|| "default".to_string()),
    }
}

/// The kubeconfig as client-go loads it: the files `$KUBECONFIG` lists (those missing
/// skipped) merged, first one winning, else `~/.kube/config`.
fn read_kubeconfig() -> Result<Kubeconfig, KubeconfigError> {
    let Some(list) = std::env::var_os("KUBECONFIG").filter(|list| !list.is_empty()) else {
        return Kubeconfig::read();
    };
    let mut merged: Option<Kubeconfig> = None;
    for path in std::env::split_paths(&list).filter(|p| !p.as_os_str().is_empty()) {
        if !path.exists() {
            continue;
        }
        let config = Kubeconfig::read_from(&path)?;
        merged = Some(match merged {
            Some(earlier) => earlier.merge(config)?,
            None => config,
        });
    }
    Ok(merged.unwrap_or_default())
}

/// What the kubeconfig says about the namespace.
#[derive(Debug, PartialEq)]
enum Kube {
    /// Its context names one.
    Namespace(String),
    /// There is none, or its context names no namespace.
    NoNamespace,
    /// It cannot be read, or names a context it lacks: client-go fails, and Helm then uses
    /// `default`.
    Unusable,
}

/// The namespace of `context` (or the current context) in the kubeconfig read as `read`.
fn kubeconfig_namespace(read: Result<Kubeconfig, KubeconfigError>, context: Option<&str>) -> Kube {
    let config = match read {
        Ok(config) => config,
        Err(KubeconfigError::FindPath) => return Kube::NoNamespace,
        Err(KubeconfigError::ReadConfig(e, _)) if e.kind() == std::io::ErrorKind::NotFound => {
            return Kube::NoNamespace;
        }
        Err(_) => return Kube::Unusable,
    };
    let current = config.current_context.as_deref().filter(|c| !c.is_empty());
    let Some(name) = context.or(current) else {
        return Kube::NoNamespace;
    };
    let Some(named) = config.contexts.iter().find(|c| c.name == name) else {
        return Kube::Unusable;
    };
    match named.context.as_ref().and_then(|c| c.namespace.clone()) {
        Some(namespace) if !namespace.is_empty() => Kube::Namespace(namespace),
        _ => Kube::NoNamespace,
    }
}

/// client-go's in-cluster namespace, when its in-cluster configuration is possible (the
/// service host and port are set and the token is mounted): `$POD_NAMESPACE`, else the one
/// mounted beside the token, else `default`.
fn in_cluster_namespace(env: &dyn Fn(&str) -> Option<String>, account: &Path) -> Option<String> {
    let possible = env("KUBERNETES_SERVICE_HOST").is_some()
        && env("KUBERNETES_SERVICE_PORT").is_some()
        && account.join("token").is_file();
    if !possible {
        return None;
    }
    Some(
        env("POD_NAMESPACE")
            .or_else(|| mounted_namespace(account))
            .unwrap_or_else(|| "default".to_string()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(yaml: &str) -> Result<Kubeconfig, KubeconfigError> {
        Kubeconfig::from_yaml(yaml)
    }

    const CONFIG: &str = "current-context: a\ncontexts:\n- name: a\n  context: {cluster: c, namespace: team-a}\n- name: b\n  context: {cluster: c}\n";

    #[test]
    fn the_kubeconfig_context_names_the_namespace() {
        assert_eq!(
            kubeconfig_namespace(config(CONFIG), None),
            Kube::Namespace("team-a".into())
        );
        assert_eq!(
            kubeconfig_namespace(config(CONFIG), Some("b")),
            Kube::NoNamespace
        );
        assert_eq!(
            kubeconfig_namespace(config(CONFIG), Some("x")),
            Kube::Unusable
        );
        assert_eq!(kubeconfig_namespace(config("{}"), None), Kube::NoNamespace);
        assert_eq!(
            kubeconfig_namespace(Err(KubeconfigError::FindPath), None),
            Kube::NoNamespace
        );
        assert_eq!(kubeconfig_namespace(config("a: ["), None), Kube::Unusable);
    }

    #[test]
    fn in_a_pod_the_service_account_names_the_namespace() {
        let account = tempfile::tempdir().expect("scratch folder");
        let in_pod = |name: &str| match name {
            "KUBERNETES_SERVICE_HOST" => Some("10.0.0.1".to_string()),
            "KUBERNETES_SERVICE_PORT" => Some("443".to_string()),
            _ => None,
        };
        // Without a mounted token in-cluster configuration is not possible.
        assert_eq!(in_cluster_namespace(&in_pod, account.path()), None);
        std::fs::write(account.path().join("token"), "t").expect("token");
        assert_eq!(
            in_cluster_namespace(&in_pod, account.path()),
            Some("default".into())
        );
        std::fs::write(account.path().join("namespace"), "apps\n").expect("namespace");
        assert_eq!(
            in_cluster_namespace(&in_pod, account.path()),
            Some("apps".into())
        );
        let with_pod_namespace = |name: &str| match name {
            "POD_NAMESPACE" => Some("pods".to_string()),
            other => in_pod(other),
        };
        assert_eq!(
            in_cluster_namespace(&with_pod_namespace, account.path()),
            Some("pods".into())
        );
        let outside = |_: &str| None;
        assert_eq!(in_cluster_namespace(&outside, account.path()), None);
    }
}
