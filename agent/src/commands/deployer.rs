//! `landscaper-agent deployer manifest|mock|helm`: runs one deployer (the library's manifest or
//! mock deployer, or the helm deployer) standalone against a landscaper cluster, as
//! registrations install them into environments. Settings come from the deployer
//! `Configuration` file (`--config`, as the deployer charts mount it),
//! overridden by flags.

use std::future::Future;
use std::path::{Path, PathBuf};

use crate::health::{self, DeployerHealth};
use crate::host::Host;

use landscaper_api::config::OciConfiguration;
use landscaper_api::constants::{
    HELM_API_VERSION, MANIFEST_API_VERSION, MOCK_API_VERSION, annotations,
};
use landscaper_api::core::{Requirement, SelectorOperator, TargetSelector};
use landscaper_api::decode::config_from_yaml;
use landscaper_api::deployer::{DEPLOYER_CONFIGURATION_KIND, DeployerConfiguration};
use landscaper_deployer::client_config::with_bounded_reads;
use landscaper_deployer::controller::{DeployerConfig, progressing_default};
use landscaper_deployer::deployers::{manifest, mock};
use landscaper_helm_deployer as helm;
use landscaper_helm_deployer::HelmDeployer;
use landscaper_helm_deployer::source::{SourceSettings, Sources};

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

    /// The deployer `Configuration` (identity, targetSelector, oci, controller.workers,
    /// deployItemTimeouts); flags win over it.
    #[arg(long, env = "LANDSCAPER_DEPLOYER_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Kubeconfig of the landscaper cluster (DeployItems, Targets); in-cluster or the
    /// default kubeconfig when unset.
    #[arg(long, env = "LANDSCAPER_KUBECONFIG", value_name = "FILE")]
    pub landscaper_kubeconfig: Option<PathBuf>,

    /// Kubeconfig of the cluster where Secrets referenced by Targets live (the agent's host
    /// cluster); the landscaper cluster when unset.
    #[arg(long, value_name = "FILE")]
    pub secrets_kubeconfig: Option<PathBuf>,

    /// A target selector as YAML or JSON (`{annotations: [{key: k, operator: "=", values: [v]}]}`);
    /// repeatable, any one must match. Replaces the configuration's `targetSelector`; without
    /// any selector the deployer serves every target.
    #[arg(long = "target-selector", value_name = "SELECTOR")]
    pub target_selectors: Vec<String>,

    /// Serve the targets of this environment (annotation
    /// `landscaper.gardener.cloud/environment`); adds a target selector.
    #[arg(long, value_name = "ENV")]
    pub environment: Option<String>,

    /// Watch only this namespace of the landscaper cluster.
    #[arg(long)]
    pub namespace: Option<String>,

    /// Leave the DeployItems of this namespace alone; repeatable. A registered helm deployer
    /// gets the namespaces the environment's agent serves (its pair's `excludedNamespaces`
    /// import), so that one helm deployer works on each item.
    #[arg(long = "exclude-namespace", value_name = "NAMESPACE")]
    pub excluded_namespaces: Vec<String>,

    /// Identity written to `status.deployer.identity` (default: the configuration's
    /// `identity`, else the deployer's name).
    #[arg(long)]
    pub identity: Option<String>,

    /// Items reconciled at the same time (default: the configuration's `controller.workers`,
    /// else 8).
    #[arg(long)]
    pub workers: Option<u16>,

    /// Address of `/healthz`, `/readyz` (the deployer is set up) and `/metrics` (Prometheus:
    /// its reconciles and DeployItems): HOST:PORT, or :PORT for every address (IPv6 and IPv4);
    /// empty to serve none. An in-process run serves none and reports readiness to its host.
    #[arg(
        long,
        env = "LANDSCAPER_DEPLOYER_HEALTH_ADDRESS",
        default_value = ":8081",
        value_name = "HOST:PORT"
    )]
    pub health_address: String,
}

/// Items reconciled at the same time when neither the flag nor the configuration says.
pub const DEFAULT_WORKERS: u16 = 8;

impl Kind {
    /// The deployer's name: its default identity.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Manifest => "manifest-deployer",
            Kind::Mock => "mock-deployer",
            Kind::Helm => "helm-deployer",
        }
    }

    /// The `apiVersion`s of this deployer's `Configuration` (upstream's manifest deployer
    /// knows two).
    fn config_api_versions(self) -> &'static [&'static str] {
        match self {
            Kind::Manifest => &[
                MANIFEST_API_VERSION,
                "manifest.deployer.landscaper.gardener.cloud/v1alpha1",
            ],
            Kind::Mock => &[MOCK_API_VERSION],
            Kind::Helm => &[HELM_API_VERSION],
        }
    }
}

/// What a deployer process runs with: the library's settings and, for the helm deployer, how
/// it reaches registries.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The deployer library's settings.
    pub config: DeployerConfig,
    /// The configuration's `oci` section.
    pub oci: OciConfiguration,
}

/// Reads the `Configuration` file of the `kind` deployer strictly: unknown fields, a wrong
/// `apiVersion` or `kind` are errors naming the file and the field.
pub fn read_config(kind: Kind, path: &Path) -> Result<DeployerConfiguration, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("reading the configuration file {}: {e}", path.display()))?;
    let source = path.display().to_string();
    let config: DeployerConfiguration =
        config_from_yaml(&text, &source).map_err(|e| e.to_string())?;
    if let Some(api_version) = config.api_version.as_deref()
        && !kind.config_api_versions().contains(&api_version)
    {
        return Err(format!(
            "{source}: field .apiVersion: {api_version:?} is not a {} configuration (expected {})",
            kind.name(),
            kind.config_api_versions().join(" or ")
        ));
    }
    if let Some(found) = config.kind.as_deref()
        && found != DEPLOYER_CONFIGURATION_KIND
    {
        return Err(format!(
            "{source}: field .kind: {found:?}, expected {DEPLOYER_CONFIGURATION_KIND:?}"
        ));
    }
    Ok(config)
}

/// The settings of `args`: the configuration file (if any), overridden by the flags.
pub fn resolve(args: &Args) -> Result<Resolved, String> {
    let file = match &args.config {
        Some(path) => read_config(args.kind, path)?,
        None => DeployerConfiguration::default(),
    };
    let mut config = DeployerConfig::new("", args.kind.name());
    let flag_selectors = selectors(args)?;
    config.target_selectors = if flag_selectors.is_empty() {
        file.target_selector.clone().unwrap_or_default()
    } else {
        flag_selectors
    };
    config.namespace = args.namespace.clone();
    config.excluded_namespaces = args.excluded_namespaces.clone();
    let workers = args
        .workers
        .or(file.controller.as_ref().and_then(|c| c.workers))
        .unwrap_or(DEFAULT_WORKERS);
    config.workers = workers.max(1);
    if let Some(identity) = args
        .identity
        .clone()
        .or(file.identity.clone())
        .filter(|identity| !identity.is_empty())
    {
        config.info.identity = identity;
    }
    config.progressing_default = progressing_default(file.deploy_item_timeouts.as_ref());
    Ok(Resolved {
        config,
        oci: file.oci.unwrap_or_default(),
    })
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

/// Runs the deployer of `args` until `shutdown` completes; `on` stands for the process (its
/// in-cluster configuration and readiness) in an in-process run.
pub async fn serve(
    args: Args,
    on: &Host,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) -> Result<(), String> {
    let Resolved { config, oci } = resolve(&args)?;
    let watched: Vec<PathBuf> = [&args.landscaper_kubeconfig, &args.secrets_kubeconfig]
        .into_iter()
        .flatten()
        .cloned()
        .collect();
    let contents = Contents::read(watched);
    // Bound first, so that a taken address fails the start at once.
    let probes = match args.health_address.as_str() {
        _ if !on.is_process() => None,
        "" => None,
        address => Some(health::bind(address).await.map_err(|e| format!("{e:#}"))?),
    };
    let health = DeployerHealth::new();
    // Probes and metrics are answered until the deployer has stopped.
    let _probes =
        probes.map(|listener| AbortOnDrop(tokio::spawn(health::serve(listener, health.clone()))));
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
    tracing::info!(
        deployer = args.kind.name(),
        identity = %config.info.identity,
        namespace = ?config.namespace,
        workers = config.workers,
        target_selectors = config.target_selectors.len(),
        excluded_namespaces = ?config.excluded_namespaces,
        "starting"
    );
    // Set up and about to serve: what `/readyz` and an in-process run's host count as ready.
    health.set_serving();
    on.report_ready(true);
    // A kubeconfig file that changes (a mounted Secret whose token was renewed) ends the
    // process, so that its restart reads the new token: a client keeps the token it was built
    // with.
    let (changed_tx, changed_rx) = tokio::sync::oneshot::channel::<PathBuf>();
    let stop = async move {
        tokio::select! {
            () = shutdown => {}
            file = contents.changed(KUBECONFIG_CHECK_PERIOD) => {
                tracing::warn!(file = %file.display(), "a kubeconfig file changed: stopping, a restart reads it");
                let _ = changed_tx.send(file);
            }
        }
    };
    match args.kind {
        Kind::Manifest => {
            landscaper_deployer::run(manifest::setup(ls, secrets, config), stop).await
        }
        Kind::Mock => landscaper_deployer::run(mock::setup(ls, secrets, config), stop).await,
        Kind::Helm => {
            let deployer = HelmDeployer {
                sources: std::sync::Arc::new(Sources::new(
                    SourceSettings::default().with_oci(&oci),
                )),
            };
            landscaper_deployer::run(helm::setup_with(ls, secrets, config, deployer), stop).await
        }
    }
    match changed_rx.await {
        Ok(file) => Err(format!(
            "the kubeconfig file {} changed; exiting so that a restart reads it",
            file.display()
        )),
        Err(_) => Ok(()),
    }
}

/// Aborts the probe server's task when the deployer stops.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// How often the kubeconfig files are compared with what the deployer started with.
pub const KUBECONFIG_CHECK_PERIOD: std::time::Duration = std::time::Duration::from_secs(30);

/// Files and their contents when the deployer started (none for a file it could not read).
pub struct Contents(Vec<(PathBuf, Option<Vec<u8>>)>);

impl Contents {
    /// Reads each of `files` now.
    pub fn read(files: Vec<PathBuf>) -> Self {
        Self(
            files
                .into_iter()
                .map(|file| {
                    let content = std::fs::read(&file).ok();
                    (file, content)
                })
                .collect(),
        )
    }

    /// Completes with the first file whose content differs from the one read, checking every
    /// `period`; never, when there are no files.
    pub async fn changed(self, period: std::time::Duration) -> PathBuf {
        if self.0.is_empty() {
            return std::future::pending().await;
        }
        loop {
            tokio::time::sleep(period).await;
            for (file, before) in &self.0 {
                if std::fs::read(file).ok() != *before {
                    return file.clone();
                }
            }
        }
    }
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

    fn config_file(dir: &tempfile::TempDir, text: &str) -> PathBuf {
        let path = dir.path().join("config.yaml");
        std::fs::write(&path, text).unwrap();
        path
    }

    const MANIFEST_CONFIG: &str = "apiVersion: manifest.deployer.landscaper.gardener.cloud/v1alpha2
kind: Configuration
identity: manifest-default
targetSelector:
- annotations:
  - key: landscaper.gardener.cloud/environment
    operator: \"=\"
    values: [default]
controller:
  workers: 3
deployItemTimeouts:
  progressingDefault: 2m
";

    #[test]
    fn the_configuration_file_sets_identity_selectors_workers_and_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let path = config_file(&dir, MANIFEST_CONFIG);
        let cli = Cli::parse_from(["x", "manifest", "--config", path.to_str().unwrap()]);
        let resolved = resolve(&cli.args).unwrap().config;
        assert_eq!(resolved.info.identity, "manifest-default");
        assert_eq!(resolved.info.name, "manifest-deployer");
        assert_eq!(resolved.workers, 3);
        assert_eq!(
            resolved.progressing_default,
            Some(std::time::Duration::from_secs(120))
        );
        assert_eq!(resolved.target_selectors.len(), 1);
        assert_eq!(
            resolved.target_selectors[0].annotations[0].values,
            vec!["default".to_owned()]
        );
    }

    #[test]
    fn flags_win_over_the_configuration_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = config_file(&dir, MANIFEST_CONFIG);
        let cli = Cli::parse_from([
            "x",
            "manifest",
            "--config",
            path.to_str().unwrap(),
            "--identity",
            "from-flag",
            "--workers",
            "5",
            "--environment",
            "edge",
            "--exclude-namespace",
            "ls-system",
            "--exclude-namespace",
            "team-a",
        ]);
        let resolved = resolve(&cli.args).unwrap().config;
        assert_eq!(resolved.excluded_namespaces, ["ls-system", "team-a"]);
        assert_eq!(resolved.info.identity, "from-flag");
        assert_eq!(resolved.workers, 5);
        assert_eq!(resolved.target_selectors.len(), 1);
        assert_eq!(
            resolved.target_selectors[0].annotations[0].values,
            vec!["edge".to_owned()]
        );
    }

    #[test]
    fn without_a_configuration_the_defaults_hold() {
        let cli = Cli::parse_from(["x", "mock"]);
        let resolved = resolve(&cli.args).unwrap();
        assert_eq!(resolved.config.info.identity, "mock-deployer");
        assert_eq!(resolved.config.workers, DEFAULT_WORKERS);
        assert!(resolved.config.target_selectors.is_empty());
        assert_eq!(
            resolved.config.progressing_default,
            Some(landscaper_deployer::controller::DEFAULT_TIMEOUT)
        );
        assert_eq!(resolved.oci, OciConfiguration::default());
    }

    #[test]
    fn the_helm_deployer_reads_its_oci_section() {
        let dir = tempfile::tempdir().unwrap();
        let path = config_file(
            &dir,
            "apiVersion: helm.deployer.landscaper.gardener.cloud/v1alpha1\nkind: Configuration\noci:\n  allowPlainHttp: true\n",
        );
        let cli = Cli::parse_from(["x", "helm", "--config", path.to_str().unwrap()]);
        assert_eq!(resolve(&cli.args).unwrap().oci.allow_plain_http, Some(true));
    }

    #[test]
    fn an_unknown_field_is_an_error_naming_the_file_and_the_field() {
        let dir = tempfile::tempdir().unwrap();
        let path = config_file(&dir, "kind: Configuration\nidentiy: x\n");
        let cli = Cli::parse_from(["x", "mock", "--config", path.to_str().unwrap()]);
        let error = resolve(&cli.args).unwrap_err();
        assert_eq!(
            error,
            format!(
                "{}: unknown field .identiy, did you mean \"identity\"?",
                path.display()
            )
        );
    }

    #[test]
    fn a_configuration_of_another_deployer_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = config_file(&dir, MANIFEST_CONFIG);
        let cli = Cli::parse_from(["x", "mock", "--config", path.to_str().unwrap()]);
        let error = resolve(&cli.args).unwrap_err();
        assert!(
            error.starts_with(&format!("{}: field .apiVersion: ", path.display()))
                && error.contains("not a mock-deployer configuration"),
            "{error}"
        );
        let path = config_file(&dir, "kind: ProviderConfiguration\n");
        let cli = Cli::parse_from(["x", "mock", "--config", path.to_str().unwrap()]);
        assert!(
            resolve(&cli.args)
                .unwrap_err()
                .contains("field .kind: \"ProviderConfiguration\""),
        );
    }

    #[test]
    fn a_missing_configuration_file_names_it() {
        let cli = Cli::parse_from(["x", "mock", "--config", "/nonexistent/config.yaml"]);
        assert!(
            resolve(&cli.args)
                .unwrap_err()
                .starts_with("reading the configuration file /nonexistent/config.yaml: ")
        );
    }

    #[tokio::test]
    async fn a_changed_kubeconfig_file_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::write(&a, "token: 1").unwrap();
        std::fs::write(&b, "token: 1").unwrap();
        let contents = Contents::read(vec![a.clone(), b.clone()]);
        let period = std::time::Duration::from_millis(10);
        let watch = tokio::spawn(contents.changed(period));
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        assert!(!watch.is_finished(), "nothing changed yet");
        std::fs::write(&b, "token: 2").unwrap();
        assert_eq!(watch.await.unwrap(), b);
    }
}
