//! The landscaper's controllers, one module per kind they reconcile.

pub mod environment;

use std::future::Future;
use std::sync::Arc;

use crate::settings::Settings;

/// Runs every controller until `shutdown` completes.
pub async fn run(
    client: kube::Client,
    settings: Settings,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) {
    let context = Arc::new(environment::Context::new(client, settings));
    environment::run(context, shutdown).await;
}
