//! The landscaper's controllers, one module per kind they reconcile.

pub mod deployer_registration;
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
    use futures::FutureExt;
    // Every controller stops on the same signal.
    let shutdown = shutdown.shared();
    let registrations = settings
        .deployer_management
        .then(|| deployer_registration::run(client.clone(), settings.clone(), shutdown.clone()));
    let installations = Arc::new(installation::Context::new(client.clone(), &settings));
    let context = Arc::new(environment::Context::new(client, settings));
    let environments = environment::run(context, shutdown.clone());
    let installations = installation::run(installations, shutdown);
    match registrations {
        Some(registrations) => {
            futures::join!(environments, installations, registrations);
        }
        None => {
            futures::join!(environments, installations);
        }
    }
}
