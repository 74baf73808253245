//! The kubelet mode of the workload simulator: containers of registered images run
//! in-process instead of being simulated.
//!
//! A test or dev mode registers a [`ContainerRunner`] for an image name on a cluster
//! ([`crate::Cluster::add_container_runner`], [`crate::Builder::container_runner`]). From then
//! on, while the workload simulator is on, every Deployment whose pod template has a container
//! of that image gets one Pod object per replica, and each Pod's container is handed to the
//! runner as a [`Container`]: its arguments and environment, the files of its mounted
//! Secret, ConfigMap, projected and emptyDir volumes materialised in a private temporary
//! directory (container paths mapped by [`Container::host_path`], arguments rewritten by
//! [`Container::host_args`]), and a kubeconfig that reaches this cluster as the pod's
//! ServiceAccount. The runner reports readiness through [`Container::ready`] and stops when
//! [`Container::stop`] is cancelled; a run that ends on its own is restarted with a growing
//! backoff, as a kubelet restarts a crashing container. The testbed knows nothing of what a
//! runner runs.

use std::collections::BTreeMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub use tokio_util::sync::CancellationToken;

/// The future of one container run: `Ok` when it exited with status 0, else why it failed.
pub type ContainerRun = Pin<Box<dyn Future<Output = Result<(), String>> + Send + 'static>>;

/// Runs the containers of one image in-process.
pub trait ContainerRunner: Send + Sync + 'static {
    /// Starts one run of `container`; the returned future ends when the run ends, which must
    /// be soon after `container.stop` is cancelled.
    fn run(&self, container: Container) -> ContainerRun;
}

/// One mounted path of a container: where the container sees it and where its files are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    /// The `mountPath` of the volume mount.
    pub container_path: PathBuf,
    /// Where the files are on this machine.
    pub host_path: PathBuf,
}

/// What a runner is given for one container of one pod.
#[derive(Debug, Clone)]
pub struct Container {
    /// The pod's namespace.
    pub namespace: String,
    /// The pod's name.
    pub pod: String,
    /// The container's name.
    pub name: String,
    /// The image as written in the pod template.
    pub image: String,
    /// The container's `command` (the image's entrypoint when empty).
    pub command: Vec<String>,
    /// The container's `args`, as written.
    pub args: Vec<String>,
    /// The container's environment: `value`s, `fieldRef`s of the pod's metadata and
    /// `secretKeyRef`/`configMapKeyRef` values, resolved.
    pub env: BTreeMap<String, String>,
    /// The volume mounts, longest container path first.
    pub mounts: Vec<Mount>,
    /// A kubeconfig of this cluster authenticated as the pod's ServiceAccount ("in-cluster"
    /// access).
    pub kubeconfig: PathBuf,
    /// The pod's private directory; removed when the pod goes away.
    pub root: PathBuf,
    /// Cancelled when the pod's container is to stop.
    pub stop: CancellationToken,
    /// Where the run reports readiness; a pod is Ready only while its container reports ready.
    pub ready: Readiness,
}

impl Container {
    /// Where a container path is on this machine: under the longest mount that holds it, else
    /// `None`.
    pub fn host_path(&self, container_path: &Path) -> Option<PathBuf> {
        self.mounts.iter().find_map(|m| {
            let rest = container_path.strip_prefix(&m.container_path).ok()?;
            Some(if rest.as_os_str().is_empty() {
                m.host_path.clone()
            } else {
                m.host_path.join(rest)
            })
        })
    }

    /// The arguments with every mounted container path replaced by its host path: a whole
    /// argument (`/etc/x/config`) or the value of a `--flag=/etc/x/config`.
    pub fn host_args(&self) -> Vec<String> {
        self.args.iter().map(|a| self.host_arg(a)).collect()
    }

    fn host_arg(&self, arg: &str) -> String {
        let mapped = |text: &str| {
            text.starts_with('/')
                .then(|| self.host_path(Path::new(text)))
                .flatten()
                .map(|p| p.display().to_string())
        };
        if let Some(p) = mapped(arg) {
            return p;
        }
        if let Some((flag, value)) = arg.split_once('=')
            && flag.starts_with('-')
            && let Some(p) = mapped(value)
        {
            return format!("{flag}={p}");
        }
        arg.to_owned()
    }
}

/// A container run's readiness, as its readiness probe would report it.
#[derive(Debug, Clone)]
pub struct Readiness {
    sender: Arc<tokio::sync::watch::Sender<bool>>,
}

impl Readiness {
    /// A readiness, not ready, and the receiver that sees what is set on it.
    pub fn new() -> (Self, tokio::sync::watch::Receiver<bool>) {
        let (sender, receiver) = tokio::sync::watch::channel(false);
        (
            Self {
                sender: Arc::new(sender),
            },
            receiver,
        )
    }

    /// Reports the container ready or not ready.
    pub fn set(&self, ready: bool) {
        self.sender
            .send_if_modified(|r| std::mem::replace(r, ready) != ready);
    }
}

/// How long a crashed container waits before its next start: `initial`, doubled after each
/// crash up to `max`; a run that lasted `max` or longer starts the count again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RestartBackoff {
    /// The wait after the first crash.
    pub initial: Duration,
    /// The longest wait.
    pub max: Duration,
}

impl Default for RestartBackoff {
    /// Shorter than a kubelet's 10 s to 5 min, so a test or dev mode sees restarts soon.
    fn default() -> Self {
        Self {
            initial: Duration::from_secs(1),
            max: Duration::from_secs(30),
        }
    }
}

impl RestartBackoff {
    /// The wait after `previous` (`None` for the first crash).
    pub fn next(&self, previous: Option<Duration>) -> Duration {
        previous.map_or(self.initial, |p| (p * 2).min(self.max))
    }
}

/// The runners of one cluster, by image name, and the restart backoff.
#[derive(Default)]
pub struct Runners {
    by_image: Mutex<BTreeMap<String, Arc<dyn ContainerRunner>>>,
    backoff: Mutex<RestartBackoff>,
}

impl std::fmt::Debug for Runners {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let images: Vec<String> = self.lock().keys().cloned().collect();
        f.debug_struct("Runners").field("images", &images).finish()
    }
}

impl Runners {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Arc<dyn ContainerRunner>>> {
        self.by_image.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers `runner` for the image named `name` (see [`image_name`]).
    pub fn add(&self, name: &str, runner: Arc<dyn ContainerRunner>) {
        self.lock().insert(name.to_owned(), runner);
    }

    /// The runner of an image reference, if one is registered for its name.
    pub fn for_image(&self, image: &str) -> Option<Arc<dyn ContainerRunner>> {
        self.lock().get(image_name(image)).cloned()
    }

    /// Whether any runner is registered.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    /// Sets the restart backoff of crashed containers.
    pub fn set_backoff(&self, backoff: RestartBackoff) {
        *self.backoff.lock().unwrap_or_else(|e| e.into_inner()) = backoff;
    }

    /// The restart backoff of crashed containers.
    pub fn backoff(&self) -> RestartBackoff {
        *self.backoff.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The name of an image reference: its last path segment without tag or digest
/// (`eu.gcr.io/x/landscaper-agent:v1` → `landscaper-agent`).
pub fn image_name(image: &str) -> &str {
    let image = image.split_once('@').map_or(image, |(name, _)| name);
    let last = image.rsplit('/').next().unwrap_or(image);
    last.split_once(':').map_or(last, |(name, _)| name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_names_drop_registry_tag_and_digest() {
        assert_eq!(image_name("landscaper-agent"), "landscaper-agent");
        assert_eq!(image_name("landscaper-agent:0.1.0"), "landscaper-agent");
        assert_eq!(
            image_name("localhost:5000/x/landscaper-agent:v1@sha256:ab"),
            "landscaper-agent"
        );
    }

    fn container(mounts: &[(&str, &str)]) -> Container {
        let (ready, _) = Readiness::new();
        let mut mounts: Vec<Mount> = mounts
            .iter()
            .map(|(c, h)| Mount {
                container_path: c.into(),
                host_path: h.into(),
            })
            .collect();
        mounts.sort_by_key(|m| std::cmp::Reverse(m.container_path.as_os_str().len()));
        Container {
            namespace: "ns".into(),
            pod: "p".into(),
            name: "c".into(),
            image: "i".into(),
            command: vec![],
            args: vec![
                "deployer".into(),
                "--config=/etc/cfg/config.yaml".into(),
                "--landscaper-kubeconfig".into(),
                "/etc/cfg/ls/kubeconfig".into(),
                "/etcetera".into(),
            ],
            env: BTreeMap::new(),
            mounts,
            kubeconfig: "/k".into(),
            root: "/r".into(),
            stop: CancellationToken::new(),
            ready,
        }
    }

    #[test]
    fn arguments_under_mounts_point_at_the_host_files() {
        let c = container(&[("/etc/cfg", "/tmp/a"), ("/etc/cfg/ls", "/tmp/b")]);
        assert_eq!(
            c.host_args(),
            [
                "deployer",
                "--config=/tmp/a/config.yaml",
                "--landscaper-kubeconfig",
                "/tmp/b/kubeconfig",
                "/etcetera"
            ]
        );
    }

    #[test]
    fn backoff_doubles_up_to_its_limit() {
        let b = RestartBackoff {
            initial: Duration::from_secs(1),
            max: Duration::from_secs(3),
        };
        let first = b.next(None);
        let second = b.next(Some(first));
        assert_eq!(
            (first, second, b.next(Some(second))),
            (
                Duration::from_secs(1),
                Duration::from_secs(2),
                Duration::from_secs(3)
            )
        );
    }
}
