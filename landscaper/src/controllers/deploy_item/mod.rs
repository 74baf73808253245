//! Reconciles DeployItems for the two timeouts the landscaper owns (deployers own the
//! progressing timeout): a job that no deployer picked up within `deployItemTimeouts.pickup`
//! ends Failed with `PickupTimeout`, saying whether the item's Target is missing, and a job
//! that a deployer did not end within `deployItemTimeouts.abort` of an abort request ends
//! Failed with `AbortingTimeout`. An item whose job ended is left alone. The pickup timer does
//! not run while a deployer registered for the item's type and environment is not installed
//! yet (see [`deployers`]). Each wait ends in a requeue exactly at its deadline; all state lives
//! on the objects, so a restart resumes every timer where it stood.

mod abort;
pub mod deployers;
mod pickup;
pub mod timeouts;
mod writes;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use kube::api::Api;
use kube::runtime::controller::{Action, Config as ControllerConfig};
use kube::runtime::watcher;
use landscaper_api::core::DeployItem;
use landscaper_process::events::Events;
use tracing::info;

use self::deployers::Caches;
use super::api_failure::ApiFailure;
use super::deployer_caches::DeployerCaches;
use super::manager;
use crate::health::Health;
use crate::settings::{DeployItemTimeouts, Settings};

/// Field manager and event reporter of this controller.
const MANAGER: &str = "landscaper-deploy-item-controller";
/// The controller's name in metrics, logs and readiness.
pub const NAME: &str = "deployitem";
/// How long to wait before retrying after an API error.
const ERROR_RETRY: Duration = Duration::from_secs(5);
/// How often a held item is looked at when nothing happens (its deployer's Installation
/// wakes it before that).
const RESYNC: Duration = Duration::from_secs(300);
/// How soon an item that changed under a write is looked at again.
const CONFLICT_RETRY: Duration = Duration::from_secs(1);
/// The condition saying whether the item waits for a registered deployer to be installed.
pub const WAITING_FOR_DEPLOYER: &str = "WaitingForDeployer";
/// `lastError.reason` of a job no deployer picked up (upstream's).
pub const PICKUP_TIMEOUT_REASON: &str = "PickupTimeout";
/// `lastError.operation` of a job no deployer picked up (upstream's).
pub const PICKUP_TIMEOUT_OPERATION: &str = "WaitingForPickup";
/// `lastError.reason` of a job not ended after an abort (upstream's).
pub const ABORTING_TIMEOUT_REASON: &str = "AbortingTimeout";
/// `lastError.operation` of a job not ended after an abort (upstream's).
pub const ABORTING_TIMEOUT_OPERATION: &str = "WaitingForAbort";

/// Shared handles of the controller.
pub struct Context {
    client: kube::Client,
    events: Events,
    timeouts: DeployItemTimeouts,
    /// The registered deployers, when deployer management runs.
    deployers: Option<Caches>,
}

/// What went wrong while reconciling a DeployItem.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An API request failed.
    #[error(transparent)]
    Api(ApiFailure),
}

impl Error {
    fn api(item: &DeployItem, action: impl Into<String>, source: kube::Error) -> Self {
        Self::Api(ApiFailure::new(item, action, source))
    }
}

/// Runs the controller until `shutdown` completes; with deployer management on it watches
/// the registered deployers itself (the landscaper shares them with the DeployerRegistration
/// controller instead: [`run_with`]).
pub async fn run(
    client: kube::Client,
    settings: Settings,
    health: Arc<Health>,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) {
    if !settings.deployer_management {
        return run_with(client, settings, None, health, shutdown).await;
    }
    let (shared, driver) = DeployerCaches::start(&client, &settings.namespace);
    tokio::select! {
        () = run_with(client, settings, Some(shared), health, shutdown) => {}
        () = driver => {}
    }
}

/// Runs the controller until `shutdown` completes, reading the registered deployers from
/// `shared` (whose driver the caller polls) when deployer management runs.
pub async fn run_with(
    client: kube::Client,
    settings: Settings,
    shared: Option<DeployerCaches>,
    health: Arc<Health>,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) {
    let (deployers, changes) = match shared {
        Some(shared) if settings.deployer_management => {
            let changes = shared.changes();
            (
                Some(Caches::new(shared, &settings.namespace)),
                Some(changes),
            )
        }
        _ => (None, None),
    };
    let timeouts = settings.deploy_item_timeouts;
    let workers = settings.deploy_item_workers;
    info!(
        workers,
        pickup = ?timeouts.pickup,
        abort = ?timeouts.abort,
        "starting the DeployItem controller"
    );
    let context = Arc::new(Context {
        client: client.clone(),
        events: Events::new(client.clone(), MANAGER),
        timeouts,
        deployers,
    });
    let items: Api<DeployItem> = Api::all(client);
    let mut controller = manager::slim_controller(items, watcher::Config::default())
        .with_config(ControllerConfig::default().concurrency(workers));
    if let Some(changes) = changes {
        // A registration, environment or deployer Installation that changed may start or
        // hold the timer of any item.
        controller = controller.reconcile_all_on(changes);
    }
    manager::drive(
        NAME,
        controller,
        reconcile,
        manager::retry_after(ERROR_RETRY),
        context,
        health,
        shutdown,
    )
    .await;
}

async fn reconcile(item: Arc<DeployItem>, context: Arc<Context>) -> Result<Action, Error> {
    if !timeouts::job_running(&item) {
        return Ok(Action::await_change());
    }
    if !timeouts::picked_up(&item) {
        return pickup::pickup(&item, &context).await;
    }
    match context.timeouts.abort {
        Some(timeout) => abort::abort(&item, timeout, &context).await,
        None => Ok(Action::await_change()),
    }
}
