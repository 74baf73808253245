//! `testbed serve`: runs in-process Kubernetes API servers until stopped, writing a
//! kubeconfig per cluster, for kubectl and manual use.

use clap::{Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "testbed",
    about = "In-process Kubernetes API servers for tests and dev mode"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve clusters on loopback until interrupted.
    Serve {
        /// Where to write `<cluster>.kubeconfig` files.
        #[arg(long)]
        kubeconfig_dir: PathBuf,
        /// How many clusters to run.
        #[arg(long, default_value_t = 1)]
        clusters: usize,
        /// Let Deployments, StatefulSets, DaemonSets, ReplicaSets and Jobs become ready.
        #[arg(long)]
        simulate_workloads: bool,
    },
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let Command::Serve {
        kubeconfig_dir,
        clusters,
        simulate_workloads,
    } = Cli::parse().command;
    let builder = if clusters == 1 {
        testbed::Testbed::builder()
    } else {
        testbed::Testbed::builder().clusters(clusters)
    };
    let bed = builder
        .simulate_workloads(simulate_workloads)
        .kubeconfig_dir(&kubeconfig_dir)
        .start()
        .await?;
    for c in bed.clusters() {
        println!("{} {} {}", c.name(), c.url(), c.kubeconfig_path().display());
    }
    tokio::signal::ctrl_c().await?;
    Ok(())
}
