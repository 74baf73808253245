//! The landscaper's controllers, one module per kind they reconcile.

pub mod context;
pub mod environment;
pub mod execution;

use std::future::Future;
use std::sync::Arc;

use futures::FutureExt;

use crate::settings::Settings;

/// Runs every controller until `shutdown` completes.
pub async fn run(
    client: kube::Client,
    settings: Settings,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) {
    let shutdown = shutdown.boxed().shared();
    let executions = Arc::new(execution::Context::new(client.clone(), &settings));
    let workers = settings.execution_workers;
    let contexts = Arc::new(context::ContextController::new(
        client.clone(),
        settings.default_context.clone(),
    ));
    let context = Arc::new(environment::Context::new(client, settings));
    futures::join!(
        environment::run(context, shutdown.clone()),
        execution::run(executions, workers, shutdown.clone()),
        context::run(contexts, shutdown),
    );
}
