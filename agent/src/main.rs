//! `landscaper-agent`: the Landscaper agent for fenced environments. This file only parses
//! the command line and hands over to one module per subcommand.

mod commands;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// jemalloc, with transparent huge pages for its heap (settings in `.cargo/config.toml`): a
/// `template` run of a large chart allocates tens of megabytes within milliseconds, and
/// faulting them in one 4 KiB page at a time was a fifth of its time.
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// The Landscaper agent for fenced environments.
#[derive(Parser)]
#[command(name = "landscaper-agent", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        // Rendering needs no runtime, and prints its errors exactly as helm does.
        Command::Template(args) => return commands::template::run(*args),
        Command::Run(args) => runtime().block_on(commands::run::run(args)),
        Command::Cleanup(args) => runtime().block_on(commands::cleanup::run(args)),
        Command::Deployer(args) => runtime().block_on(commands::deployer::run(args)),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!("{error:#}");
            eprintln!("Error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// The runtime of the long-running subcommands, with logging set up.
fn runtime() -> tokio::runtime::Runtime {
    landscaper_agent::logging::init();
    match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("Error: starting the async runtime: {error}");
            std::process::exit(1);
        }
    }
}
