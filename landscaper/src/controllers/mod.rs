//! The landscaper's controllers, one module per kind they reconcile.

pub mod context;
pub mod deploy_item;
pub mod deployer_registration;
pub mod environment;
pub mod execution;
pub mod installation;
pub mod manager;

use std::future::Future;
use std::sync::Arc;

use futures::FutureExt;

use crate::health::Health;
use crate::settings::Settings;

/// Runs every controller until `shutdown` completes.
pub async fn run(
    client: kube::Client,
    settings: Settings,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) {
    run_with_health(client, settings, Health::new(), shutdown).await;
}

/// Runs every controller until `shutdown` completes, reporting their caches' sync to `health`.
pub async fn run_with_health(
    client: kube::Client,
    settings: Settings,
    health: Arc<Health>,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) {
    // Every controller stops on the same signal.
    let shutdown = shutdown.boxed().shared();
    let mut names = vec![
        "environment",
        "installation",
        "execution",
        deploy_item::NAME,
        context::NAME,
    ];
    if settings.deployer_management {
        names.push("deployerregistration");
    }
    health.starting(&names);
    let registrations = settings.deployer_management.then(|| {
        deployer_registration::run(
            client.clone(),
            settings.clone(),
            health.clone(),
            shutdown.clone(),
        )
    });
    let execution_workers = settings.execution_workers;
    let installation_workers = settings.installation_workers;
    let deploy_items = deploy_item::run(
        client.clone(),
        settings.clone(),
        health.clone(),
        shutdown.clone(),
    );
    let contexts = Arc::new(context::ContextController::new(
        client.clone(),
        settings.default_context.clone(),
    ));
    let context = Arc::new(environment::Context::new(client.clone(), settings.clone()));
    let flow = async {
        futures::join!(
            environment::run(context, health.clone(), shutdown.clone()),
            installation::run(
                client.clone(),
                installation_workers,
                health.clone(),
                shutdown.clone()
            ),
            execution::run(
                client.clone(),
                execution_workers,
                health.clone(),
                shutdown.clone()
            ),
            deploy_items,
            context::run(contexts, health.clone(), shutdown.clone()),
        );
    };
    match registrations {
        Some(registrations) => {
            futures::join!(flow, registrations);
        }
        None => flow.await,
    }
}
