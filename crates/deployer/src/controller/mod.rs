//! The DeployItem controller every deployer runs: responsibility, the contract's job flow with
//! its writes, hooks at every hook point, timeouts, abort, deletion, retries with backoff and
//! Events, around a concrete [`Deployer`].

mod config;
mod context;
mod finish;
mod flow;
mod job;
mod memory;

pub use config::{DEFAULT_TIMEOUT, DeployerConfig, Setup, progressing_default};
pub use context::Context;

use crate::deployer::Deployer;
use crate::error::Error;
use crate::target_access::TargetAccess;
use futures::{FutureExt, StreamExt};
use kube::runtime::WatchStreamExt;
use kube::runtime::controller::{Action, Config as ControllerConfig, Controller};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::watcher::{self, watcher};
use landscaper_api::core::{DeployItem, Target};
use landscaper_process::events::Events;
use memory::FinishedJobs;
use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use tracing::Instrument;

/// Aborts a task when dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Runs a deployer until `shutdown` completes.
pub async fn run<D: Deployer>(
    setup: Setup<D>,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) {
    let Setup {
        ls_client,
        secrets_client,
        deployer,
        config,
        hooks,
    } = setup;
    let (items_api, targets_api): (kube::Api<DeployItem>, kube::Api<Target>) =
        match &config.namespace {
            Some(ns) => (
                kube::Api::namespaced(ls_client.clone(), ns),
                kube::Api::namespaced(ls_client.clone(), ns),
            ),
            None => (
                kube::Api::all(ls_client.clone()),
                kube::Api::all(ls_client.clone()),
            ),
        };
    // The cache keeps every item slim (see `cached`); jobs read the whole item.
    let (items, item_writer) = reflector::store();
    let item_events = reflector::reflector(
        item_writer,
        watcher(items_api, watcher::Config::default()).modify(cached::<D>),
    )
    .applied_objects();
    let controller = Controller::for_stream(item_events, items.clone())
        .with_config(ControllerConfig::default().concurrency(config.workers));

    // Targets are looked up in a store of our own (no request per item); the controller's
    // own watch of Targets re-triggers the items that reference a changed Target.
    let (target_reader, target_writer) = reflector::store();
    let target_events = reflector::reflector(
        target_writer,
        watcher(targets_api.clone(), watcher::Config::default()),
    )
    .default_backoff()
    .touched_objects();
    // Ends with this function: a deployer stopped in-process (the testbed's kubelet mode) must
    // not leave its Target watch running.
    let _target_watch = AbortOnDrop(tokio::spawn(async move {
        let mut events = std::pin::pin!(target_events);
        while events.next().await.is_some() {}
    }));
    // A landscaper that cannot be reached keeps the Target watch from getting ready: shutdown
    // must end the wait, or a stopping pod would wait for its kill.
    let shutdown = shutdown.boxed().shared();
    let ready = tokio::select! {
        ready = target_reader.wait_until_ready() => ready,
        () = shutdown.clone() => {
            tracing::info!("stopped before the Target watch was ready");
            return;
        }
    };
    if ready.is_err() {
        tracing::error!("the Target watch ended before it was ready");
        return;
    }
    let items_for_targets = items.clone();
    let controller = controller.watches(targets_api, watcher::Config::default(), move |target| {
        items_referencing(&items_for_targets, &target)
    });

    let items_by_phase = items.clone();
    let ctx = Arc::new(Context {
        events: Events::of_instance(
            ls_client.clone(),
            &config.info.name,
            Some(config.info.identity.clone()),
        ),
        target_access: Arc::new(TargetAccess::new(secrets_client)),
        ls: ls_client,
        deployer,
        config,
        hooks,
        targets: target_reader,
        items,
        failures: Mutex::new(HashMap::new()),
        done: Mutex::new(FinishedJobs::default()),
        started: Mutex::new(HashMap::new()),
        retrying: Mutex::new(HashMap::new()),
    });
    let counted_items = crate::metrics::DEPLOY_ITEMS.count(move || {
        items_by_phase
            .state()
            .iter()
            .map(|item| {
                let phase = item.status.as_ref().and_then(|s| s.phase.as_ref());
                (
                    ObjectRef::from_obj(item.as_ref()).to_string(),
                    vec![
                        item.spec.type_.clone(),
                        phase.map_or_else(|| "None".to_owned(), ToString::to_string),
                    ],
                )
            })
            .collect()
    });
    // Reconciles are counted and timed under the deployer's name (controller-runtime's metrics).
    let name = ctx.config.info.name.clone();
    controller
        .graceful_shutdown_on(shutdown)
        .run(
            landscaper_process::metrics::instrument(&name, reconcile::<D>),
            error_policy,
            ctx,
        )
        .for_each(|result| async move {
            if let Err(e) = result {
                tracing::debug!(error = %e, "reconcile ended with an error");
            }
        })
        .await;
    drop(counted_items);
}

/// An item as the controller's cache keeps it: without managed fields, which nothing here
/// reads, and without what the deployer leaves to its jobs ([`Deployer::slim_config`]).
fn cached<D: Deployer>(item: &mut DeployItem) {
    item.metadata.managed_fields = None;
    if let Some(config) = item.spec.config.as_mut() {
        D::slim_config(config);
    }
}

fn items_referencing(items: &Store<DeployItem>, target: &Target) -> Vec<ObjectRef<DeployItem>> {
    let name = target.metadata.name.as_deref().unwrap_or_default();
    let ns = target.metadata.namespace.as_deref().unwrap_or_default();
    items
        .state()
        .iter()
        .filter(|i| {
            i.spec.target.as_ref().is_some_and(|t| {
                t.name == name
                    && t.namespace
                        .as_deref()
                        .or(i.metadata.namespace.as_deref())
                        .unwrap_or_default()
                        == ns
            })
        })
        .map(|i| ObjectRef::from_obj(i.as_ref()))
        .collect()
}

/// Reconciles one DeployItem.
pub async fn reconcile<D: Deployer>(
    item: Arc<DeployItem>,
    ctx: Arc<Context<D>>,
) -> Result<Action, Error> {
    if item.spec.type_ != ctx.config.deploy_item_type {
        return Ok(Action::await_change());
    }
    let span = tracing::info_span!(
        "reconcile",
        namespace = item.metadata.namespace.as_deref().unwrap_or_default(),
        name = item.metadata.name.as_deref().unwrap_or_default(),
    );
    ctx.flow(item).instrument(span).await
}

/// Retries a failed reconcile with per-item exponential backoff.
pub fn error_policy<D: Deployer>(
    item: Arc<DeployItem>,
    error: &Error,
    ctx: Arc<Context<D>>,
) -> Action {
    let delay = ctx.backoff(&ObjectRef::from_obj(item.as_ref()));
    tracing::warn!(
        namespace = item.metadata.namespace.as_deref().unwrap_or_default(),
        name = item.metadata.name.as_deref().unwrap_or_default(),
        error = %error,
        retry_in = ?delay,
        "reconcile failed"
    );
    Action::requeue(delay)
}
