//! The agent's image in the testbed's kubelet mode: a container of the `landscaper-agent`
//! image runs its arguments through [`crate::cli::run`], the binary's code path, in-process.
//! Only with the `kubelet` feature, which dev mode and tests turn on; the binary never links
//! the testbed.

use std::collections::BTreeMap;
use std::future::Future;
use std::path::Path;

use testbed::kubelet::CancellationToken;
use testbed::{Container, ContainerRun, ContainerRunner};

use crate::cli::{self, Host};

/// The image name the agent chart runs (`image.repository`), which the runner is registered for.
pub const IMAGE: &str = "landscaper-agent";

/// Runs containers of the agent's image in-process.
#[derive(Debug, Default, Clone, Copy)]
pub struct AgentImage;

impl ContainerRunner for AgentImage {
    fn run(&self, container: Container) -> ContainerRun {
        run_in_process(&container, IMAGE, |args, host, stop| {
            cli::run(args, host, stop.cancelled_owned())
        })
    }
}

/// Runs the command line of `container`, of an image whose program is `program`, in-process
/// through `run`: a binary's `cli::run`, given the arguments, what the container sees of its
/// process, and the token cancelled when the container is stopped.
pub fn run_in_process<F, Fut>(container: &Container, program: &str, run: F) -> ContainerRun
where
    F: FnOnce(Vec<String>, Host, CancellationToken) -> Fut,
    Fut: Future<Output = anyhow::Result<()>> + Send + 'static,
{
    let running = run(
        command_line(container, program),
        host(container),
        container.stop.clone(),
    );
    Box::pin(async move { running.await.map_err(|e| format!("{e:#}")) })
}

/// What a container sees of its process, for a command line run in-process: its environment
/// (values naming mounted files pointing at their host copies), the pod's kubeconfig and
/// namespace, its mounts, and readiness reported to the kubelet mode.
fn host(container: &Container) -> Host {
    let ready = container.ready.clone();
    Host::in_process(
        environment(container),
        container.kubeconfig.clone(),
        container.namespace.clone(),
    )
    .with_mounts(
        container
            .mounts
            .iter()
            .map(|m| (m.container_path.clone(), m.host_path.clone())),
    )
    .on_ready(move |r| ready.set(r))
}

/// The command line of a container of an image whose program is `program`: the program (the
/// image's entrypoint, or the container's `command`, which names it either way) and its
/// arguments, mounted paths mapped.
fn command_line(container: &Container, program: &str) -> Vec<String> {
    let mut args = vec![program.to_owned()];
    args.extend(container.command.iter().skip(1).cloned());
    args.extend(container.host_args());
    args
}

/// The container's environment; values naming mounted files point at their host copies, as
/// arguments do.
fn environment(container: &Container) -> BTreeMap<String, String> {
    container
        .env
        .iter()
        .map(|(k, v)| {
            let mapped = v
                .starts_with('/')
                .then(|| container.host_path(Path::new(v)))
                .flatten();
            (
                k.clone(),
                mapped.map_or_else(|| v.clone(), |p| p.display().to_string()),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use testbed::kubelet::{Mount, Readiness};

    #[test]
    fn the_command_line_and_environment_point_at_the_mounted_files() {
        let (ready, _) = Readiness::new();
        let container = Container {
            namespace: "ns".into(),
            pod: "p".into(),
            name: "deployer".into(),
            image: "landscaper-agent:0.1.0".into(),
            command: vec!["/landscaper-agent".into()],
            args: vec![
                "deployer".into(),
                "mock".into(),
                "--landscaper-kubeconfig=/etc/landscaper/kubeconfig".into(),
            ],
            env: [
                (
                    "LANDSCAPER_AGENT_CONFIG".to_owned(),
                    "/etc/landscaper/config.yaml".to_owned(),
                ),
                ("RUST_LOG".to_owned(), "info".to_owned()),
            ]
            .into(),
            mounts: vec![Mount {
                container_path: "/etc/landscaper".into(),
                host_path: "/tmp/pod/volumes/ls".into(),
            }],
            kubeconfig: "/tmp/pod/kubeconfig".into(),
            root: "/tmp/pod".into(),
            stop: CancellationToken::new(),
            ready,
        };
        assert_eq!(
            command_line(&container, IMAGE),
            [
                "landscaper-agent",
                "deployer",
                "mock",
                "--landscaper-kubeconfig=/tmp/pod/volumes/ls/kubeconfig"
            ]
        );
        let env = environment(&container);
        assert_eq!(
            env["LANDSCAPER_AGENT_CONFIG"],
            "/tmp/pod/volumes/ls/config.yaml"
        );
        assert_eq!(env["RUST_LOG"], "info");
    }
}
