//! What every controller of the landscaper shares around kube-runtime's `Controller`, in one
//! place: its reconciles counted and timed under its name (the controller-runtime metrics of
//! [`landscaper_process::metrics`]), each run in a span carrying its object's identity, its
//! cache's sync reported for readiness, its objects counted for the domain gauges, and the
//! same shutdown and logging.

use std::fmt::Debug;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::{FutureExt, Stream, StreamExt};
use kube::Resource;
use kube::api::Api;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use landscaper_process::metrics::{Counted, ObjectCount, instrument};
use serde::de::DeserializeOwned;
use tracing::{Instrument, Span, info, info_span, warn};

use super::deployer_caches::drop_managed_fields;
use crate::health::Health;

/// How many objects a controller without a workers setting reconciles at once. Unbounded,
/// kube-runtime starts a reconcile per object at start-up, and the client opens a connection
/// per request in flight: 1,000 environments opened about 1,000 connections, each holding its
/// TLS state and buffers while idle.
pub const DEFAULT_CONCURRENCY: u16 = 5;

/// A kind the landscaper watches and caches: what kube-runtime's watcher, stores and
/// controllers need of it.
pub trait Watched:
    Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static
{
}

impl<K> Watched for K where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static
{
}

/// A watch of `api`'s objects selected by `config`, each passed through `slim` and put in
/// `writer`'s store before the stream yields it: a reconcile it triggers never reads a cache
/// older than the change that caused it.
pub fn cached_watch<K: Watched>(
    api: Api<K>,
    config: watcher::Config,
    slim: fn(&mut K),
    writer: reflector::store::Writer<K>,
) -> impl Stream<Item = Result<K, watcher::Error>> + Send {
    let watch = watcher(api, config).default_backoff().modify(slim);
    reflector::reflector(writer, watch).touched_objects()
}

/// A controller of the objects of `api`, as `Controller::new` makes it, whose cache keeps them
/// without managedFields: they are most of a server-side applied object (a DeployItem's whole
/// config again, as field paths), and no reconcile reads them.
pub fn slim_controller<K: Watched>(api: Api<K>, config: watcher::Config) -> Controller<K> {
    let (reader, writer) = reflector::store();
    let trigger = reflector::reflector(writer, watcher(api, config).modify(drop_managed_fields))
        .applied_objects();
    Controller::for_stream(trigger, reader)
}

/// Runs `controller` as `name` until `shutdown` completes: each reconcile counted, timed and
/// run in its object's span (`reconcile_span`), the cache's sync reported to `health`. A
/// shutdown before the cache's first list stops at once: kube-runtime holds reconciles until
/// that list, which no longer comes once the shutdown has stopped the watch, so a graceful stop
/// would wait for ever (and nothing ran yet to finish).
pub async fn drive<K, C, E, F, Fut, P>(
    name: &'static str,
    controller: Controller<K>,
    reconcile: F,
    error_policy: P,
    context: Arc<C>,
    health: Arc<Health>,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) where
    K: Watched,
    C: Send + Sync + 'static,
    E: std::error::Error + Send + 'static,
    F: Fn(Arc<K>, Arc<C>) -> Fut,
    Fut: Future<Output = Result<Action, E>> + Send + 'static,
    P: Fn(Arc<K>, &E, Arc<C>) -> Action,
{
    let shutdown = shutdown.boxed().shared();
    let store = controller.store();
    let unsynced_stop = {
        let (store, shutdown) = (store.clone(), shutdown.clone());
        async move {
            shutdown.await;
            if store.wait_until_ready().now_or_never().is_none() {
                info!(controller = name, "stopped before the cache was synced");
                return;
            }
            std::future::pending::<()>().await;
        }
    };
    let synced = async move {
        // An error means the controller stopped before its first list.
        if store.wait_until_ready().await.is_ok() {
            info!(controller = name, "cache synced");
            health.synced(name);
        }
        std::future::pending::<()>().await;
    };
    let in_span = move |object: Arc<K>, context: Arc<C>| {
        let span = reconcile_span(object.as_ref());
        reconcile(object, context).instrument(span)
    };
    let running = controller
        .graceful_shutdown_on(shutdown)
        .run(instrument(name, in_span), error_policy, context)
        .for_each(|result| async move {
            if let Err(error) = result {
                warn!(controller = name, %error, "reconcile failed");
            }
        });
    tokio::select! {
        () = running => {}
        () = synced => {}
        () = unsynced_stop => {}
    }
}

/// The error policy of a controller whose failed reconciles are simply tried again: logs the
/// error in the object's span and tries again after `delay`.
pub fn retry_after<K, E, C>(delay: Duration) -> impl Fn(Arc<K>, &E, Arc<C>) -> Action
where
    K: Resource<DynamicType = ()>,
    E: std::fmt::Display,
{
    move |object: Arc<K>, error: &E, _: Arc<C>| {
        let _in_span = reconcile_span(object.as_ref()).entered();
        warn!(%error, "reconcile failed; retrying");
        Action::requeue(delay)
    }
}

/// The span a reconcile of `object` runs in: its kind, namespace (when it has one) and name.
fn reconcile_span<K: Resource<DynamicType = ()>>(object: &K) -> Span {
    let meta = object.meta();
    let span = info_span!(
        "reconcile",
        kind = %K::kind(&()),
        namespace = tracing::field::Empty,
        name = meta.name.as_deref().unwrap_or_default(),
    );
    if let Some(namespace) = meta.namespace.as_deref() {
        span.record("namespace", namespace);
    }
    span
}

/// The label value of an object's phase: the phase, or `None` before the first.
pub fn phase_label(phase: Option<&impl std::fmt::Display>) -> String {
    phase.map_or_else(|| "None".to_owned(), ToString::to_string)
}

/// Counts the objects of `store` in `count` under the label values `labels` gives each, while
/// the returned guard is kept.
pub fn count<K>(count: &ObjectCount, store: Store<K>, labels: fn(&K) -> Vec<String>) -> Counted
where
    K: Clone + Resource<DynamicType = ()> + Send + Sync + 'static,
{
    count.count(move || {
        store
            .state()
            .iter()
            .map(|object| {
                let identity = ObjectRef::from_obj(object.as_ref()).to_string();
                (identity, labels(object))
            })
            .collect()
    })
}
