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
use kube::runtime::reflector::{Lookup, Store};

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
    let execution_workers = settings.execution_workers;
    let installation_workers = settings.installation_workers;
    let deploy_items = deploy_item::run(client.clone(), settings.clone(), shutdown.clone());
    let contexts = Arc::new(context::ContextController::new(
        client.clone(),
        settings.default_context.clone(),
    ));
    let context = Arc::new(environment::Context::new(client.clone(), settings.clone()));
    let flow = async {
        futures::join!(
            environment::run(context, shutdown.clone()),
            installation::run(client.clone(), installation_workers, shutdown.clone()),
            execution::run(client.clone(), execution_workers, shutdown.clone()),
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

/// Runs a controller's `running` future until it ends. kube's runner waits until the
/// controller's `store` has listed once before it looks at the shutdown signal, and after the
/// signal nothing fills the store any more, so a shutdown that early would wait forever; then
/// this ends at once (nothing was reconciled yet).
pub(crate) async fn run_until_shutdown<K>(
    running: impl Future<Output = ()>,
    store: Store<K>,
    shutdown: impl Future<Output = ()>,
) where
    K: Lookup + Clone + 'static,
    K::DynamicType: Eq + std::hash::Hash + Clone,
{
    let early = async move {
        shutdown.await;
        if store.wait_until_ready().now_or_never().is_none() {
            tracing::debug!("shut down before the first list: stopping at once");
            return;
        }
        std::future::pending::<()>().await;
    };
    tokio::select! {
        () = running => {}
        () = early => {}
    }
}
