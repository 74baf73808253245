//! The `landscaper` binary: manages deployers in environments and runs the installation,
//! execution and deploy-item flow.

mod commands;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The landscaper: reconciles the Environments agents register into Targets and watches the
/// agents' heartbeats.
#[derive(Parser, Debug)]
#[command(name = "landscaper", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the landscaper's controllers against the landscaper cluster.
    Run(landscaper::cli::RunArgs),
    /// Run everything in one process: in-process clusters, the landscaper, an agent per
    /// environment (`default`, `edge`), the deployers the examples register, and the examples.
    #[cfg(feature = "dev")]
    Dev(commands::dev::Args),
    /// Print the CustomResourceDefinitions of all landscaper kinds as YAML.
    Crds(commands::crds::Args),
    /// Check manifests and configuration files against the landscaper API.
    Validate(commands::validate::Args),
    /// Render or check a blueprint locally, without a cluster.
    #[command(subcommand)]
    Blueprint(commands::blueprint::Command),
    /// Publish components (descriptors, blueprints, charts) to an OCI registry.
    #[command(subcommand)]
    Component(commands::component::Command),
}

/// Logging as every command logs; dev mode's live table needs the log elsewhere.
fn init_logging(command: &Command) {
    match command {
        #[cfg(feature = "dev")]
        Command::Dev(args) => commands::dev::init_logging(args),
        _ => landscaper_process::logging::init(),
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(&cli.command);
    let result = match cli.command {
        Command::Run(args) => landscaper::cli::run_command(
            args,
            &landscaper::cli::Host::process(),
            landscaper_process::shutdown::signal(),
        )
        .await
        .map(|()| ExitCode::SUCCESS),
        #[cfg(feature = "dev")]
        Command::Dev(args) => commands::dev::run(&args).await,
        Command::Crds(args) => commands::crds::run(&args),
        Command::Validate(args) => commands::validate::run(&args),
        Command::Blueprint(command) => commands::blueprint::run(&command),
        Command::Component(command) => commands::component::run(&command).await,
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}
