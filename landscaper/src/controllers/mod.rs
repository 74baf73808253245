//! The landscaper's controllers, one module per kind they reconcile.

pub mod environment;
pub mod installation;

use std::future::Future;
use std::sync::Arc;

use crate::settings::Settings;

/// Runs every controller until `shutdown` completes.
pub async fn run(
    client: kube::Client,
    settings: Settings,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) {
    let installations = Arc::new(installation::Context::new(client.clone(), &settings));
    let context = Arc::new(environment::Context::new(client, settings));
    let (stop, stopped) = tokio::sync::watch::channel(());
    let installation_shutdown = async move {
        let mut stopped = stopped;
        let _ = stopped.changed().await;
    };
    let shutdown = async move {
        shutdown.await;
        drop(stop);
    };
    tokio::join!(
        environment::run(context, shutdown),
        installation::run(installations, installation_shutdown)
    );
}
