//! The landscaper's controllers, one module per kind they reconcile.

pub mod api_failure;
pub mod context;
pub mod deploy_item;
pub mod deployer_caches;
pub mod deployer_registration;
pub mod environment;
pub mod execution;
pub mod installation;
pub mod manager;
pub mod ready;

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
    // One watch each of registrations, environments and pair Installations for the two
    // controllers that decide on them.
    let (shared, driver) = match settings.deployer_management {
        true => {
            let (shared, driver) =
                deployer_caches::DeployerCaches::start(&client, &settings.namespace);
            (Some(shared), Some(driver))
        }
        false => (None, None),
    };
    let registrations = shared.clone().map(|shared| {
        deployer_registration::run(
            client.clone(),
            settings.clone(),
            shared,
            health.clone(),
            shutdown.clone(),
        )
    });
    let execution_workers = settings.execution_workers;
    let installation_workers = settings.installation_workers;
    let deploy_items = deploy_item::run_with(
        client.clone(),
        settings.clone(),
        shared,
        health.clone(),
        shutdown.clone(),
    );
    let contexts = Arc::new(context::ContextController::new(
        client.clone(),
        settings.default_context.clone(),
    ));
    let flow = async {
        futures::join!(
            environment::run(
                client.clone(),
                settings.clone(),
                health.clone(),
                shutdown.clone()
            ),
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
    let controllers = async {
        match registrations {
            Some(registrations) => {
                futures::join!(flow, registrations);
            }
            None => flow.await,
        }
    };
    match driver {
        // The caches' driver never ends on its own: the controllers' end ends it.
        Some(driver) => {
            tokio::select! {
                () = controllers => {}
                () = driver => {}
            }
        }
        None => controllers.await,
    }
}
