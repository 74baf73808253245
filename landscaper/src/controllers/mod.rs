//! The landscaper's controllers, one module per kind they reconcile.

pub mod context;
pub mod deployer_registration;
pub mod environment;
pub mod execution;
pub mod installation;

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
    // Every controller stops on the same signal.
    let shutdown = shutdown.boxed().shared();
    let registrations = settings
        .deployer_management
        .then(|| deployer_registration::run(client.clone(), settings.clone(), shutdown.clone()));
    let workers = settings.execution_workers;
    let contexts = Arc::new(context::ContextController::new(
        client.clone(),
        settings.default_context.clone(),
    ));
    let context = Arc::new(environment::Context::new(client.clone(), settings.clone()));
    let flow = async {
        futures::join!(
            environment::run(context, shutdown.clone()),
            installation::run(client.clone(), &settings, shutdown.clone()),
            execution::run(client.clone(), workers, shutdown.clone()),
            context::run(contexts, shutdown.clone()),
        );
    };
    match registrations {
        Some(registrations) => {
            futures::join!(flow, registrations);
        }
        None => flow.await,
    }
}
