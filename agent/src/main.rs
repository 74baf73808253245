//! `landscaper-agent`: the Landscaper agent for fenced environments. This file only parses
//! the command line and hands over to one module per subcommand.

mod commands;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The Landscaper agent for fenced environments.
#[derive(Parser)]
#[command(name = "landscaper-agent", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Render a Helm chart locally and print the manifests, exactly as `helm template` does.
    Template(commands::template::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Template(args) => commands::template::run(args),
    }
}
