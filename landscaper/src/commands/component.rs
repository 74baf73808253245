//! `landscaper component push`: publishes the component versions of a `type: local`
//! repository folder (descriptors as files, blobs under `blobs/`) to an OCI registry, laid out
//! as the blueprint library reads them.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use landscaper_blueprint::{LocalRepository, RegistryAccess, RegistryOptions};

/// `landscaper component` subcommands.
#[derive(clap::Subcommand, Debug)]
pub enum Command {
    /// Publish every component version of a local repository folder to an OCI registry.
    Push(PushArgs),
}

/// Arguments of `landscaper component push`.
#[derive(clap::Args, Debug)]
pub struct PushArgs {
    /// The local repository folder: every plain file a component descriptor, blobs under
    /// `blobs/` (e.g. examples/components).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// The OCI repository to publish to, `oci://HOST[:PORT]/PATH`; a version lands at
    /// `HOST/PATH/component-descriptors/<name>:<version>`.
    #[arg(long, value_name = "oci://HOST/PATH")]
    pub repository: String,
    /// Speak plain HTTP to the registry (a local test registry).
    #[arg(long)]
    pub plain_http: bool,
    /// Docker `config.json` files with registry credentials; repeatable.
    #[arg(long = "registry-config", value_name = "FILE")]
    pub registry_configs: Vec<PathBuf>,
}

/// Runs a `landscaper component` subcommand.
pub async fn run(command: &Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Push(args) => push(args).await,
    }
}

/// `HOST/PATH` of `oci://HOST/PATH`, or why it is not one.
pub fn base_url(repository: &str) -> anyhow::Result<String> {
    let Some(rest) = repository.strip_prefix("oci://") else {
        bail!("--repository {repository:?}: expected oci://HOST/PATH");
    };
    let rest = rest.trim_end_matches('/');
    match rest.split_once('/') {
        Some((host, path)) if !host.is_empty() && !path.is_empty() => Ok(rest.to_string()),
        _ => bail!("--repository {repository:?}: expected oci://HOST/PATH, with a path"),
    }
}

async fn push(args: &PushArgs) -> anyhow::Result<ExitCode> {
    let base_url = base_url(&args.repository)?;
    let local = LocalRepository::open(&args.dir)?;
    if local.descriptors().is_empty() {
        bail!("{}: no component descriptor to push", args.dir.display());
    }
    let host = base_url.split('/').next().unwrap_or_default().to_string();
    let docker_configs = args
        .registry_configs
        .iter()
        .map(|path| {
            std::fs::read_to_string(path)
                .with_context(|| format!("--registry-config {}", path.display()))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let access = RegistryAccess::new(RegistryOptions {
        plain_http: if args.plain_http {
            vec![host]
        } else {
            Vec::new()
        },
        docker_configs,
        ..Default::default()
    });
    let pushed = access
        .push_local_repository(&local, &base_url)
        .await
        .with_context(|| format!("pushing {} to {}", args.dir.display(), args.repository))?;
    for descriptor in &pushed {
        tracing::info!(
            component = descriptor.name(),
            version = descriptor.version(),
            repository = %base_url,
            "pushed"
        );
        println!(
            "{base_url}/component-descriptors/{}:{}",
            descriptor.name(),
            descriptor.version()
        );
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_repository_must_be_an_oci_url_with_a_path() {
        assert_eq!(
            base_url("oci://localhost:5000/components/").unwrap(),
            "localhost:5000/components"
        );
        for bad in ["localhost:5000/x", "oci://localhost:5000", "oci:///x"] {
            let error = base_url(bad).unwrap_err().to_string();
            assert!(
                error.starts_with(&format!("--repository {bad:?}")),
                "{error}"
            );
        }
    }
}
