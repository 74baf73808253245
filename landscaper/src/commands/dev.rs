//! `landscaper dev`: the whole system in one process, for trying it out.

use std::path::PathBuf;
use std::process::ExitCode;

use landscaper::dev::{DevMode, Options};
use landscaper::settings::Settings;

/// Arguments of `landscaper dev`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Where to write the kubeconfigs of both clusters (for kubectl).
    #[arg(long, default_value = ".dev", value_name = "DIR")]
    dir: PathBuf,
    /// Manifests to apply to the landscaper cluster (a file or folder).
    #[arg(long, default_value = "examples", value_name = "PATH")]
    examples: PathBuf,
    /// Do not apply any example manifests.
    #[arg(long)]
    no_examples: bool,
    /// The agent's heartbeat period (Go duration).
    #[arg(long, default_value = "10s")]
    heartbeat_period: String,
    /// LandscaperConfiguration file for the landscaper's controllers (workers, deploy item
    /// timeouts, ...), as for `landscaper run`; the defaults when not given.
    #[arg(long, env = "LANDSCAPER_CONFIG", value_name = "FILE")]
    config: Option<PathBuf>,
}

/// Runs dev mode until Ctrl-C.
pub async fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let examples = (!args.no_examples && args.examples.exists()).then(|| args.examples.clone());
    let options = Options {
        dir: args.dir.clone(),
        examples,
        heartbeat_period: args.heartbeat_period.clone(),
        settings: Settings::from_configuration(&super::read_configuration(args.config.as_deref())?),
    };
    let dev = DevMode::start(&options).await?;
    eprintln!();
    eprintln!("Dev mode is running. Look around with kubectl:");
    eprintln!(
        "  kubectl --kubeconfig {} get environments,targets,deployitems -A",
        dev.landscaper_kubeconfig().display()
    );
    eprintln!(
        "  kubectl --kubeconfig {} get serviceaccounts,secrets -n ls-system",
        dev.fenced_kubeconfig().display()
    );
    eprintln!(
        "  kubectl --kubeconfig {} get deployments,services,configmaps,secrets -n hello",
        dev.fenced_kubeconfig().display()
    );
    eprintln!("Press Ctrl-C to stop.");
    eprintln!();
    landscaper_process::shutdown::signal().await;
    drop(dev);
    Ok(ExitCode::SUCCESS)
}
