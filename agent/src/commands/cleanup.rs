//! `landscaper-agent cleanup`: the chart's pre-delete hook.

use std::future::Future;
use std::time::Duration;

use crate::host::Host;

use crate::cleanup::Cleanup;
use crate::names::Names;
use crate::registration::host::HostRegistration;

use super::run::SettingsArgs;

/// Arguments of `landscaper-agent cleanup`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    settings: SettingsArgs,
    /// How long to wait for the landscaper to release the Environment (Go duration).
    #[arg(long, default_value = "5m")]
    timeout: String,
    /// When the landscaper does not release the Environment in time, remove its finalizers
    /// anyway (the landscaper may then leave deployer installations behind).
    #[arg(long)]
    force: bool,
}

/// Removes the environment and the deployer identity; `shutdown` interrupts it.
pub async fn run(
    args: Args,
    on: &Host,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    tokio::select! {
        result = cleanup(args, on) => result,
        () = shutdown => Err(anyhow::anyhow!("cleanup interrupted by shutdown")),
    }
}

async fn cleanup(args: Args, on: &Host) -> anyhow::Result<()> {
    let settings = args.settings.settings_on(on)?;
    let timeout: Duration = landscaper_api::parse_go_duration(&args.timeout)
        .map_err(|e| anyhow::anyhow!("--timeout: {e}"))?;
    let (host, landscaper) = args.settings.connect(&settings, on).await?;
    let names = Names::new(&settings.name);
    let cleanup = Cleanup {
        landscaper: &landscaper.client,
        host: HostRegistration {
            client: &host.client,
            endpoint: &host.endpoint,
            names: &names,
            namespace: &settings.namespace,
            token_lifetime: settings.token_lifetime,
        },
        landscaper_namespace: &settings.landscaper_namespace,
        names: &names,
        timeout,
        force: args.force,
    };
    Ok(
        tokio::time::timeout(timeout + Duration::from_secs(30), cleanup.run())
            .await
            .map_err(|_| {
                anyhow::anyhow!(
                    "cleanup did not finish within {:?}",
                    timeout + Duration::from_secs(30)
                )
            })??,
    )
}
