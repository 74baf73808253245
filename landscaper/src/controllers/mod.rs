//! The landscaper's controllers, one module per kind they reconcile.

pub mod context;
pub mod deploy_item;
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
    let installations = Arc::new(installation::Context::new(client.clone(), &settings));
    let executions = Arc::new(execution::Context::new(client.clone(), &settings));
    let execution_workers = settings.execution_workers;
    let installation_workers = settings.installation_workers;
    let deploy_items = deploy_item::run(client.clone(), settings.clone(), shutdown.clone());
    let contexts = Arc::new(context::ContextController::new(
        client.clone(),
        settings.default_context.clone(),
    ));
    let context = Arc::new(environment::Context::new(client, settings));
    let flow = async {
        futures::join!(
            environment::run(context, shutdown.clone()),
            installation::run(installations, installation_workers, shutdown.clone()),
            execution::run(executions, execution_workers, shutdown.clone()),
            deploy_items,
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
