//! Where a run of the agent's command line gets what a process gets from its surroundings:
//! the binary reads its own process (environment, in-cluster configuration, the mounted
//! ServiceAccount files); an in-process run is given them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::clients::ClusterAccess;

/// Where Kubernetes mounts a pod's ServiceAccount token and namespace.
pub(crate) const SERVICE_ACCOUNT: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// Reports readiness (as the `/readyz` probe would).
pub type ReadyReporter = Arc<dyn Fn(bool) + Send + Sync>;

/// Where a run of the command line gets what a process gets from its surroundings.
#[derive(Clone, Default)]
pub struct Host {
    /// `None`: the binary, reading its own process.
    inside: Option<Inside>,
    ready: Option<ReadyReporter>,
}

/// What an in-process run is given instead of its process's state.
#[derive(Clone, Debug)]
struct Inside {
    env: BTreeMap<String, String>,
    in_cluster_kubeconfig: PathBuf,
    namespace: String,
    /// `(container path, host path)`, longest container path first.
    mounts: Vec<(PathBuf, PathBuf)>,
}

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Environment values may hold secrets: only their names are shown.
        let env: Vec<&String> = self.inside.iter().flat_map(|i| i.env.keys()).collect();
        f.debug_struct("Host")
            .field("in_process", &self.inside.is_some())
            .field("env", &env)
            .finish_non_exhaustive()
    }
}

impl Host {
    /// The binary's host: its process's environment, in-cluster configuration and mounted
    /// ServiceAccount files, probes on their own listener.
    pub fn process() -> Self {
        Self::default()
    }

    /// An in-process host: `env` stands for the environment variables, `in_cluster_kubeconfig`
    /// for the in-cluster configuration, `namespace` for the pod's namespace (the mounted
    /// ServiceAccount's); no listener is opened.
    pub fn in_process(
        env: BTreeMap<String, String>,
        in_cluster_kubeconfig: PathBuf,
        namespace: String,
    ) -> Self {
        Self {
            inside: Some(Inside {
                env,
                in_cluster_kubeconfig,
                namespace,
                mounts: Vec::new(),
            }),
            ready: None,
        }
    }

    /// Where the files of container paths are: `(container path, host path)` pairs. Paths
    /// that configuration files name (such as an AgentConfiguration's
    /// `landscaperClusterKubeconfig`) are looked up there.
    pub fn with_mounts(mut self, mounts: impl IntoIterator<Item = (PathBuf, PathBuf)>) -> Self {
        if let Some(inside) = &mut self.inside {
            inside.mounts = mounts.into_iter().collect();
            inside
                .mounts
                .sort_by_key(|(c, _)| std::cmp::Reverse(c.as_os_str().len()));
        }
        self
    }

    /// Where a path a command was given is on this machine: itself for the binary, its
    /// host copy for an in-process run when a mount holds it.
    pub fn path(&self, path: &Path) -> PathBuf {
        let mounted = self
            .inside
            .iter()
            .flat_map(|i| &i.mounts)
            .find_map(|(c, h)| {
                let rest = path.strip_prefix(c).ok()?;
                Some(if rest.as_os_str().is_empty() {
                    h.clone()
                } else {
                    h.join(rest)
                })
            });
        mounted.unwrap_or_else(|| path.to_owned())
    }

    /// Reports readiness to `ready` (an in-process run has no `/readyz` listener).
    pub fn on_ready(mut self, ready: impl Fn(bool) + Send + Sync + 'static) -> Self {
        self.ready = Some(Arc::new(ready));
        self
    }

    /// Whether this is the binary's own process.
    pub fn is_process(&self) -> bool {
        self.inside.is_none()
    }

    /// Reports readiness, if someone listens.
    pub fn report_ready(&self, ready: bool) {
        if let Some(report) = &self.ready {
            report(ready);
        }
    }

    /// The namespace of the pod's ServiceAccount, if mounted.
    pub fn service_account_namespace(&self) -> Option<String> {
        match &self.inside {
            None => mounted_namespace(Path::new(SERVICE_ACCOUNT)),
            Some(inside) => Some(inside.namespace.clone()).filter(|n| !n.is_empty()),
        }
    }

    /// Connects with the in-cluster configuration (the binary also falls back to
    /// `KUBECONFIG`); `what` names the cluster in errors.
    pub async fn in_cluster(
        &self,
        what: &str,
    ) -> Result<ClusterAccess, crate::clients::ClientError> {
        match &self.inside {
            None => ClusterAccess::infer(what).await,
            Some(inside) => {
                ClusterAccess::from_kubeconfig_file(&inside.in_cluster_kubeconfig, what).await
            }
        }
    }

    /// The environment variables an in-process run is given; `None` for the binary, which
    /// reads its process's.
    pub(crate) fn env(&self) -> Option<&BTreeMap<String, String>> {
        self.inside.as_ref().map(|i| &i.env)
    }

    /// The in-cluster kubeconfig of an in-process run; `None` for the binary.
    pub fn in_cluster_kubeconfig(&self) -> Option<&Path> {
        self.inside
            .as_ref()
            .map(|i| i.in_cluster_kubeconfig.as_path())
    }
}

/// The namespace mounted in the service account folder `account`.
pub(crate) fn mounted_namespace(account: &Path) -> Option<String> {
    std::fs::read_to_string(account.join("namespace"))
        .ok()
        .map(|text| text.trim().to_string())
        .filter(|namespace| !namespace.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_under_mounts_are_their_host_copies() {
        let host = Host::in_process(BTreeMap::new(), PathBuf::new(), String::new()).with_mounts([
            ("/etc/a".into(), "/tmp/a".into()),
            ("/etc/a/b".into(), "/tmp/b".into()),
        ]);
        assert_eq!(
            host.path(Path::new("/etc/a/b/kubeconfig")),
            Path::new("/tmp/b/kubeconfig")
        );
        assert_eq!(
            host.path(Path::new("/etc/a/config.yaml")),
            Path::new("/tmp/a/config.yaml")
        );
        assert_eq!(host.path(Path::new("/etc/other")), Path::new("/etc/other"));
        assert_eq!(
            Host::process().path(Path::new("/etc/a")),
            Path::new("/etc/a")
        );
    }
}
