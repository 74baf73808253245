//! `landscaper-agent deployer manifest|mock|helm`: runs one of the library's deployers standalone
//! against a landscaper cluster, as registrations install them into environments.

use std::future::Future;
use std::path::PathBuf;

use crate::cli::Host;

use landscaper_api::constants::annotations;
use landscaper_api::core::{Requirement, SelectorOperator, TargetSelector};
use landscaper_deployer::client_config::with_bounded_reads;
use landscaper_deployer::controller::DeployerConfig;
use landscaper_deployer::{helm, manifest_deployer, mock_deployer};

/// Which deployer to run.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `landscaper.gardener.cloud/kubernetes-manifest` items.
    Manifest,
    /// `landscaper.gardener.cloud/mock` items.
    Mock,
    /// `landscaper.gardener.cloud/helm` items.
    Helm,
}

/// Arguments of `deployer`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The deployer to run.
    #[arg(value_enum)]
    pub kind: Kind,

    /// Kubeconfig of the landscaper cluster (DeployItems, Targets); in-cluster or the
    /// default kubeconfig when unset.
    #[arg(long, env = "LANDSCAPER_KUBECONFIG", value_name = "FILE")]
    pub landscaper_kubeconfig: Option<PathBuf>,

    /// Kubeconfig of the cluster where Secrets referenced by Targets live (the agent's host
    /// cluster); the landscaper cluster when unset.
    #[arg(long, value_name = "FILE")]
    pub secrets_kubeconfig: Option<PathBuf>,

    /// A target selector as YAML or JSON (`{annotations: [{key: k, operator: "=", values: [v]}]}`);
    /// repeatable, any one must match. Without selectors the deployer serves every target.
    #[arg(long = "target-selector", value_name = "SELECTOR")]
    pub target_selectors: Vec<String>,

    /// Serve the targets of this environment (annotation
    /// `landscaper.gardener.cloud/environment`); adds a target selector.
    #[arg(long, value_name = "ENV")]
    pub environment: Option<String>,

    /// Watch only this namespace of the landscaper cluster.
    #[arg(long)]
    pub namespace: Option<String>,

    /// Identity written to `status.deployer.identity` (default: the deployer's name).
    #[arg(long)]
    pub identity: Option<String>,

    /// Items reconciled at the same time.
    #[arg(long, default_value_t = 8)]
    pub workers: u16,
}

/// Runs the deployer until `shutdown` completes.
pub async fn run(
    args: Args,
    on: &Host,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) -> anyhow::Result<()> {
    serve(args, on, shutdown).await.map_err(anyhow::Error::msg)
}

/// Parses the selectors of the command line; the error names the flag.
pub fn selectors(args: &Args) -> Result<Vec<TargetSelector>, String> {
    let mut out = Vec::new();
    for (i, text) in args.target_selectors.iter().enumerate() {
        let s: TargetSelector = serde_yaml_ng::from_str(text)
            .map_err(|e| format!("--target-selector #{}: {e}", i + 1))?;
        out.push(s);
    }
    if let Some(env) = &args.environment {
        out.push(TargetSelector {
            annotations: vec![Requirement {
                key: annotations::ENVIRONMENT.into(),
                operator: Some(SelectorOperator::Equals),
                values: vec![env.clone()],
            }],
            ..Default::default()
        });
    }
    Ok(out)
}

async fn client(path: Option<&PathBuf>, flag: &str, on: &Host) -> Result<kube::Client, String> {
    let path = path.map(PathBuf::as_path).or(on.in_cluster_kubeconfig());
    let config = match path {
        Some(p) => {
            let kubeconfig = kube::config::Kubeconfig::read_from(p)
                .map_err(|e| format!("{flag} {}: {e}", p.display()))?;
            kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
                .await
                .map_err(|e| format!("{flag} {}: {e}", p.display()))?
        }
        None => kube::Config::infer().await.map_err(|e| {
            format!("{flag} is not set and no cluster configuration was found: {e}")
        })?,
    };
    kube::Client::try_from(with_bounded_reads(config)).map_err(|e| format!("{flag}: {e}"))
}

async fn serve(
    args: Args,
    on: &Host,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) -> Result<(), String> {
    let target_selectors = selectors(&args)?;
    let ls = client(
        args.landscaper_kubeconfig.as_ref(),
        "--landscaper-kubeconfig",
        on,
    )
    .await?;
    let secrets = match &args.secrets_kubeconfig {
        Some(p) => client(Some(p), "--secrets-kubeconfig", on).await?,
        None => ls.clone(),
    };
    let name = match args.kind {
        Kind::Manifest => "manifest-deployer",
        Kind::Mock => "mock-deployer",
        Kind::Helm => "helm-deployer",
    };
    let mut config = DeployerConfig::new("", name);
    config.target_selectors = target_selectors;
    config.namespace = args.namespace.clone();
    config.workers = args.workers.max(1);
    if let Some(identity) = &args.identity {
        config.info.identity = identity.clone();
    }
    tracing::info!(deployer = name, namespace = ?args.namespace, "starting");
    // Set up and about to serve: what an in-process run's host counts as ready.
    on.report_ready(true);
    let shutdown = async move {
        shutdown.await;
        tracing::info!(deployer = name, "shutting down");
    };
    match args.kind {
        Kind::Manifest => {
            landscaper_deployer::run(manifest_deployer::setup(ls, secrets, config), shutdown).await
        }
        Kind::Mock => {
            landscaper_deployer::run(mock_deployer::setup(ls, secrets, config), shutdown).await
        }
        Kind::Helm => landscaper_deployer::run(helm::setup(ls, secrets, config), shutdown).await,
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }

    #[test]
    fn selectors_come_from_flags_and_the_environment() {
        let cli = Cli::parse_from([
            "x",
            "manifest",
            "--target-selector",
            r#"{targets: [{name: t, namespace: ns}]}"#,
            "--environment",
            "a",
        ]);
        let s = selectors(&cli.args).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].targets[0].name, "t");
        assert_eq!(s[1].annotations[0].key, annotations::ENVIRONMENT);
        assert_eq!(s[1].annotations[0].values, vec!["a".to_string()]);
    }

    #[test]
    fn a_bad_selector_names_the_flag() {
        let cli = Cli::parse_from(["x", "mock", "--target-selector", "targets: 5"]);
        assert!(
            selectors(&cli.args)
                .unwrap_err()
                .starts_with("--target-selector #1")
        );
    }
}
