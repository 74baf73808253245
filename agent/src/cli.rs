//! The agent's command line, callable in-process: [`run`] parses arguments with clap and runs
//! the command until a shutdown future completes, exactly as the binary's `main` does. What
//! the binary reads from its process (environment variables for clap's `env` settings, the
//! in-cluster configuration, the mounted ServiceAccount namespace) an in-process run takes
//! from a [`Host`] instead, and it installs no logging, signal handler or probe listener: its
//! events go to the caller's subscriber, its readiness to [`Host::on_ready`].

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::future::Future;

use clap::{Parser, Subcommand};

use crate::commands;
pub use crate::host::{Host, ReadyReporter};

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
    let Some(env) = host.env() else {
        return C::try_parse_from(args);
    };
    let mut command = C::command();
    // Built, so every argument says how many values it takes.
    command.build();
    let flags = env_flags(&command, &args, env);
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
    use std::path::PathBuf;

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
