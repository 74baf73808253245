//! The agent's command line, callable in-process: [`run`] parses arguments with clap and runs
//! the command until a shutdown future completes, exactly as the binary's `main` does. What
//! the binary reads from its process (environment variables for clap's `env` settings, the
//! in-cluster configuration, the mounted ServiceAccount namespace) an in-process run takes
//! from a [`Host`] instead, and it installs no logging, signal handler or probe listener: its
//! events go to the caller's subscriber, its readiness to [`Host::on_ready`].

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::{Parser, Subcommand};

use crate::clients::ClusterAccess;
use crate::commands;

/// The Landscaper agent for fenced environments.
#[derive(Parser, Debug)]
#[command(name = "landscaper-agent", version, about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The agent's subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Register this cluster as an environment of the landscaper and keep it registered.
    Run(commands::run::Args),
    /// Remove the environment and everything the agent created (run before uninstall).
    Cleanup(commands::cleanup::Args),
    /// Render a Helm chart locally and print the manifests, exactly as `helm template` does.
    // Boxed: helm's many flags make it much larger than the other commands' arguments.
    Template(Box<commands::template::Args>),
    /// Run a deployer standalone: `manifest` or `mock`.
    Deployer(commands::deployer::Args),
}

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
            None => commands::template::namespace::service_account_namespace(),
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

    /// The in-cluster kubeconfig of an in-process run; `None` for the binary.
    pub fn in_cluster_kubeconfig(&self) -> Option<&Path> {
        self.inside
            .as_ref()
            .map(|i| i.in_cluster_kubeconfig.as_path())
    }
}

/// Parses `args` (the first is the program name) and runs the command until `shutdown`
/// completes: the binary's code path, for in-process runs. `template` is refused: it prints
/// to the process's standard output and is not a long-running command.
pub async fn run<I, T>(
    args: I,
    host: Host,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) -> anyhow::Result<()>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString>,
{
    let cli = parse(args, &host).map_err(|e| anyhow::anyhow!("{}", e.render()))?;
    execute(cli.command, host, shutdown).await
}

/// Runs a parsed long-running command until `shutdown` completes.
pub async fn execute(
    command: Command,
    host: Host,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) -> anyhow::Result<()> {
    match command {
        Command::Template(_) => {
            anyhow::bail!("`template` prints to the process's output: run it as a process")
        }
        Command::Run(args) => commands::run::run(args, &host, shutdown).await,
        Command::Cleanup(args) => commands::cleanup::run(args, &host, shutdown).await,
        Command::Deployer(args) => commands::deployer::run(args, &host, shutdown).await,
    }
}

/// Parses the command line; an in-process host's environment stands in for the process's.
pub fn parse<I, T>(args: I, host: &Host) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString>,
{
    parse_as::<Cli, _, _>(args, host)
}

/// Parses the command line of any clap command `C` (the landscaper's too); an in-process
/// host's environment stands in for the process's, as clap's `env` settings would read it.
pub fn parse_as<C, I, T>(args: I, host: &Host) -> Result<C, clap::Error>
where
    C: Parser,
    I: IntoIterator<Item = T>,
    T: Into<OsString>,
{
    let mut args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let Some(inside) = &host.inside else {
        return C::try_parse_from(args);
    };
    let mut command = C::command();
    // Built, so every argument says how many values it takes.
    command.build();
    let flags = env_flags(&command, &args, &inside.env);
    args.extend(flags.into_iter().map(OsString::from));
    let matches = without_env(C::command()).try_get_matches_from(args)?;
    C::from_arg_matches(&matches)
}

/// The command with no argument read from the process's environment.
fn without_env(command: clap::Command) -> clap::Command {
    command
        .mut_args(|a| a.env(None::<&str>))
        .mut_subcommands(without_env)
}

/// Flags for the arguments of the chosen subcommand that are set in `env` and not on the
/// command line, as clap's `env` settings would read them.
fn env_flags(
    command: &clap::Command,
    args: &[OsString],
    env: &BTreeMap<String, String>,
) -> Vec<String> {
    let mut current = command;
    for arg in args.iter().skip(1).filter_map(|a| a.to_str()) {
        match current.find_subcommand(arg) {
            Some(sub) => current = sub,
            None if arg.starts_with('-') => {}
            None => break,
        }
    }
    let given = |long: &str| {
        args.iter().filter_map(|a| a.to_str()).any(|a| {
            a.strip_prefix("--")
                .is_some_and(|rest| rest == long || rest.starts_with(&format!("{long}=")))
        })
    };
    let mut flags = Vec::new();
    for arg in current.get_arguments() {
        let (Some(name), Some(long)) = (arg.get_env(), arg.get_long()) else {
            continue;
        };
        let Some(value) = name.to_str().and_then(|n| env.get(n)) else {
            continue;
        };
        if given(long) {
            continue;
        }
        if arg.get_num_args().is_some_and(|n| n.takes_values()) {
            flags.push(format!("--{long}={value}"));
        } else if !matches!(
            value.as_str(),
            "" | "0" | "false" | "no" | "off" | "n" | "f"
        ) {
            flags.push(format!("--{long}"));
        }
    }
    flags
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn host(env: &[(&str, &str)]) -> Host {
        Host::in_process(
            env.iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            "/k".into(),
            "ns".into(),
        )
    }

    #[test]
    fn the_hosts_environment_stands_in_for_the_process() {
        let cli = parse(
            ["landscaper-agent", "deployer", "mock"],
            &host(&[("LANDSCAPER_KUBECONFIG", "/from/env")]),
        )
        .unwrap();
        let Command::Deployer(args) = cli.command else {
            panic!("parsed as another command");
        };
        assert_eq!(args.landscaper_kubeconfig, Some(PathBuf::from("/from/env")));
    }

    #[test]
    fn flags_win_over_the_environment() {
        let cli = parse(
            [
                "landscaper-agent",
                "deployer",
                "mock",
                "--landscaper-kubeconfig",
                "/flag",
            ],
            &host(&[("LANDSCAPER_KUBECONFIG", "/from/env")]),
        )
        .unwrap();
        let Command::Deployer(args) = cli.command else {
            panic!("parsed as another command");
        };
        assert_eq!(args.landscaper_kubeconfig, Some(PathBuf::from("/flag")));
    }

    fn env_names(command: &clap::Command) -> Vec<String> {
        let own = command
            .get_arguments()
            .filter_map(|a| a.get_env().map(|e| e.to_string_lossy().into_owned()));
        let nested = command.get_subcommands().flat_map(env_names);
        own.chain(nested).collect()
    }

    #[test]
    fn an_in_process_parse_reads_no_process_environment() {
        assert!(env_names(&Cli::command()).contains(&"LANDSCAPER_KUBECONFIG".to_owned()));
        assert_eq!(
            env_names(&without_env(Cli::command())),
            Vec::<String>::new()
        );
        let cli = parse(["landscaper-agent", "deployer", "mock"], &host(&[])).unwrap();
        let Command::Deployer(args) = cli.command else {
            panic!("parsed as another command");
        };
        assert_eq!(args.landscaper_kubeconfig, None);
    }

    #[test]
    fn paths_under_mounts_are_their_host_copies() {
        let host = host(&[]).with_mounts([
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

    #[tokio::test]
    async fn template_is_refused_in_process() {
        let error = run(
            ["landscaper-agent", "template", "chart"],
            host(&[]),
            async {},
        )
        .await
        .unwrap_err();
        assert!(error.to_string().contains("run it as a process"), "{error}");
    }
}
