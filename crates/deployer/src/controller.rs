//! The DeployItem controller every deployer runs: responsibility, the contract's job flow with
//! its writes, hooks at every hook point, timeouts, abort, deletion, retries with backoff and
//! Events, around a concrete [`Deployer`].

use crate::contract::decision::{self, Decision, Work};
use crate::contract::interrupt::Interrupt;
use crate::contract::new_job_id;
use crate::contract::status::{Final, StatusWriter, last_error};
use crate::deployer::{Deployer, Failure, Job, Outcome};
use crate::error::{Error, Retry};
use crate::exports;
use crate::hooks::{HookResult, HookType, Hooks, accumulate};
use crate::responsibility;
use crate::target_access::TargetAccess;
use futures::{FutureExt, StreamExt};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::runtime::WatchStreamExt;
use kube::runtime::controller::{Action, Config as ControllerConfig, Controller};
use kube::runtime::events::EventType;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::watcher::{self, watcher};
use landscaper_api::config::DeployItemTimeouts;
use landscaper_api::core::{
    DeployItem, DeployItemPhase, DeployerInformation, Target, TargetSelector,
};
use landscaper_process::events::Events;
use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tracing::Instrument;

/// The progressing timeout of an item without `spec.timeout`, unless configured otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// The progressing timeout of items without `spec.timeout` that `deployItemTimeouts` sets:
/// `progressingDefault`, where `none` turns the check off, else [`DEFAULT_TIMEOUT`].
pub fn progressing_default(timeouts: Option<&DeployItemTimeouts>) -> Option<Duration> {
    match timeouts.and_then(|t| t.progressing_default.as_ref()) {
        Some(d) if d.is_none() => None,
        Some(d) => Some(d.as_std()),
        None => Some(DEFAULT_TIMEOUT),
    }
}

/// How a deployer runs.
#[derive(Debug, Clone)]
pub struct DeployerConfig {
    /// The `spec.type` the deployer serves.
    pub deploy_item_type: String,
    /// Identity, name and version written to `status.deployer`.
    pub info: DeployerInformation,
    /// Targets the deployer is responsible for; none: every target.
    pub target_selectors: Vec<TargetSelector>,
    /// Watch DeployItems and Targets of this namespace only.
    pub namespace: Option<String>,
    /// Namespaces whose DeployItems another deployer of the same type serves (a registered
    /// helm deployer leaves the agent's namespaces to the agent's embedded one).
    pub excluded_namespaces: Vec<String>,
    /// Items reconciled at the same time.
    pub workers: u16,
    /// First retry delay of a transient error; doubles per failure.
    pub retry_initial: Duration,
    /// Longest retry delay.
    pub retry_max: Duration,
    /// The progressing timeout of items without `spec.timeout`; none: no timeout.
    pub progressing_default: Option<Duration>,
}

impl DeployerConfig {
    /// A configuration with defaults for `deploy_item_type` and the deployer's name.
    pub fn new(deploy_item_type: &str, name: &str) -> Self {
        Self {
            deploy_item_type: deploy_item_type.into(),
            info: DeployerInformation {
                identity: name.into(),
                name: name.into(),
                version: env!("CARGO_PKG_VERSION").into(),
            },
            target_selectors: Vec::new(),
            namespace: None,
            excluded_namespaces: Vec::new(),
            workers: 8,
            retry_initial: Duration::from_secs(1),
            retry_max: Duration::from_secs(120),
            progressing_default: Some(DEFAULT_TIMEOUT),
        }
    }
}

/// Everything a deployer needs to run.
pub struct Setup<D> {
    /// The landscaper cluster (DeployItems, Targets, export Secrets, Events).
    pub ls_client: kube::Client,
    /// Where Secrets referenced by Targets are read (the agent: its host cluster).
    pub secrets_client: kube::Client,
    /// The concrete deployer.
    pub deployer: D,
    /// How it runs.
    pub config: DeployerConfig,
    /// Its extension hooks.
    pub hooks: Hooks,
}

/// What we last finished per item, to recognise a store that has not caught up with our own
/// final write yet (and not redo the job).
#[derive(Debug, Clone)]
struct Done {
    job_id: String,
    deleted: bool,
    touched: Option<Timestamp>,
}

/// A transient failure being retried: when the next attempt is due, and the item and Target
/// as our own writes left them. Those writes trigger the item again at once; only a change by
/// someone else may cut the backoff short.
#[derive(Debug, Clone)]
struct Retrying {
    job_id: String,
    item_version: Option<String>,
    target_version: Option<String>,
    due: Instant,
}

/// Shared state of the controller.
pub struct Context<D> {
    ls: kube::Client,
    deployer: D,
    config: DeployerConfig,
    hooks: Hooks,
    targets: Store<Target>,
    items: Store<DeployItem>,
    target_access: Arc<TargetAccess>,
    events: Events,
    failures: Mutex<HashMap<ObjectRef<DeployItem>, u32>>,
    done: Mutex<FinishedJobs>,
    /// When this process started each item's running job, to the nanosecond: the status's
    /// `lastReconcileTime` keeps whole seconds only, which would cut up to a second off the
    /// progressing timeout (all of a `1s` one).
    started: Mutex<HashMap<ObjectRef<DeployItem>, Timestamp>>,
    retrying: Mutex<HashMap<ObjectRef<DeployItem>, Retrying>>,
}

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

fn delay_of(r: HookResult) -> Option<Duration> {
    if r.requeue {
        Some(Duration::ZERO)
    } else if !r.requeue_after.is_zero() {
        Some(r.requeue_after)
    } else {
        None
    }
}

fn action_of(r: HookResult) -> Action {
    action_after(delay_of(r))
}

fn action_after(delay: Option<Duration>) -> Action {
    delay.map_or_else(Action::await_change, Action::requeue)
}

/// The last job this process finished for each item, until the item is gone.
#[derive(Default)]
struct FinishedJobs {
    by_item: HashMap<ObjectRef<DeployItem>, Done>,
    /// How many entries make the next sweep due.
    sweep_at: usize,
}

impl FinishedJobs {
    /// Records the job just finished for `key`. Once the record has doubled since the last
    /// sweep, it forgets the items the store no longer holds: a deleted item leaves no trace
    /// once the store has caught up, and sweeping at doublings keeps the cost per job constant.
    fn remember(&mut self, key: &ObjectRef<DeployItem>, done: Done, items: &Store<DeployItem>) {
        self.by_item.insert(key.clone(), done);
        if self.by_item.len() >= self.sweep_at.max(SWEEP_FROM) {
            self.by_item
                .retain(|k, _| k == key || items.get(k).is_some());
            self.sweep_at = 2 * self.by_item.len();
        }
    }
}

/// The fewest remembered jobs [`FinishedJobs::remember`] sweeps.
const SWEEP_FROM: usize = 64;

/// The sooner of two optional requeue delays.
fn sooner(a: Option<Duration>, b: Option<Duration>) -> Option<Duration> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, y) => x.or(y),
    }
}

/// A timeout noticed before the next attempt, with the error the job was retrying (the
/// status's `lastError` of this job, as pickup clears it), so the item says why it did not
/// finish.
fn with_retried_error(mut error: Error, item: &DeployItem) -> Error {
    let retried = item.status.as_ref().and_then(|s| s.last_error.as_ref());
    if error.reason == "ProgressingTimeout"
        && let Some(last) = retried
    {
        error.message = format!("{}; last error: {}", error.message, last.message);
    }
    error
}

impl<D: Deployer> Context<D> {
    fn backoff(&self, key: &ObjectRef<DeployItem>) -> Duration {
        let mut f = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        let n = f.entry(key.clone()).or_insert(0);
        let delay = self
            .config
            .retry_initial
            .saturating_mul(1u32 << (*n).min(16))
            .min(self.config.retry_max);
        *n += 1;
        delay
    }

    fn reset_backoff(&self, key: &ObjectRef<DeployItem>) {
        self.failures
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(key);
        self.retrying
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(key);
    }

    /// How long the next attempt of a retried job must still wait, when nothing but our own
    /// writes changed the item and its Target since the failure.
    fn retry_not_due(
        &self,
        key: &ObjectRef<DeployItem>,
        item: &DeployItem,
        target: Option<&Arc<Target>>,
    ) -> Option<Duration> {
        let retrying = self.retrying.lock().unwrap_or_else(|e| e.into_inner());
        let r = retrying.get(key)?;
        let job = item.status.as_ref().and_then(|s| s.job_id.as_deref());
        let unchanged = job == Some(r.job_id.as_str())
            && item.metadata.resource_version == r.item_version
            && target.and_then(|t| t.metadata.resource_version.clone()) == r.target_version;
        let left = r.due.saturating_duration_since(Instant::now());
        (unchanged && !left.is_zero()).then_some(left)
    }

    async fn responsibility(
        &self,
        item: &DeployItem,
    ) -> Result<(bool, Option<Arc<Target>>), Error> {
        if responsibility::excluded(&self.config.excluded_namespaces, item) {
            return Ok((false, None));
        }
        let no_selectors = self.config.target_selectors.is_empty();
        let Some(r) = &item.spec.target else {
            // With selectors, only a target can make an item ours.
            return Ok((no_selectors, None));
        };
        let ns = r
            .namespace
            .as_deref()
            .or(item.metadata.namespace.as_deref())
            .unwrap_or_default();
        let target = match self.targets.get(&ObjectRef::new(&r.name).within(ns)) {
            Some(t) => t,
            // The store may lag behind the watch that triggered us; ask the API.
            None => match kube::Api::<Target>::namespaced(self.ls.clone(), ns)
                .get_opt(&r.name)
                .await
            {
                Ok(Some(t)) => Arc::new(t),
                Ok(None) => return Ok((no_selectors, None)),
                Err(e) => {
                    return Err(Error::from_kube(
                        "ResponsibilityCheck",
                        &format!("Target {ns}/{}", r.name),
                        &e,
                    ));
                }
            },
        };
        match responsibility::matches_any(&self.config.target_selectors, &target) {
            Ok(m) => Ok((m, Some(target))),
            Err(e) => {
                tracing::warn!(error = %e, "a target selector of this deployer is invalid");
                Ok((false, Some(target)))
            }
        }
    }

    /// Whether the store has not caught up with a job we finished.
    fn stale(&self, key: &ObjectRef<DeployItem>, item: &DeployItem, d: &Decision) -> bool {
        let mut done = self.done.lock().unwrap_or_else(|e| e.into_inner());
        let Some(last) = done.by_item.get(key) else {
            return false;
        };
        let status = item.status.clone().unwrap_or_default();
        let job = status.job_id.unwrap_or_default();
        if status.job_id_finished.as_deref() == Some(last.job_id.as_str()) && !last.deleted {
            done.by_item.remove(key);
            return false;
        }
        match d.work {
            Some(Work::Delete) => last.deleted && last.job_id == job,
            Some(Work::Reconcile { .. }) if !d.mint_job_id => !last.deleted && last.job_id == job,
            None => last.touched.is_some_and(|t| {
                status
                    .last_reconcile_time
                    .as_ref()
                    .is_none_or(|lrt| lrt.0 < t)
            }),
            _ => false,
        }
    }

    /// When the item's running job started: our own record of the pickup when it is the one
    /// `lastReconcileTime` shows (that field has whole seconds only), else that field (a job
    /// picked up before a restart), else now.
    fn job_start(&self, key: &ObjectRef<DeployItem>, item: &DeployItem) -> Timestamp {
        let Some(recorded) = item
            .status
            .as_ref()
            .and_then(|s| s.last_reconcile_time.as_ref())
            .map(|t| t.0)
        else {
            return Timestamp::now();
        };
        let started = self.started.lock().unwrap_or_else(|e| e.into_inner());
        match started.get(key) {
            Some(precise) if precise.as_second() == recorded.as_second() => *precise,
            _ => recorded,
        }
    }

    fn record_start(&self, key: &ObjectRef<DeployItem>, at: Timestamp) {
        self.started
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key.clone(), at);
    }

    fn remember(&self, key: &ObjectRef<DeployItem>, done: Done) {
        self.started
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(key);
        self.done
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remember(key, done, &self.items);
    }

    async fn hook(
        &self,
        t: HookType,
        item: &Arc<DeployItem>,
        target: Option<&Arc<Target>>,
    ) -> Result<Option<HookResult>, Error> {
        self.hooks.execute(t, Some(item), target).await
    }

    async fn flow(&self, item: Arc<DeployItem>) -> Result<Action, Error> {
        let key = ObjectRef::from_obj(item.as_ref());
        let mut run = accumulate(
            HookResult::default(),
            self.hooks.execute(HookType::Start, None, None).await?,
        );
        if run.abort_reconcile {
            return Ok(action_of(run));
        }
        let (mut responsible, target) = self.responsibility(&item).await?;
        let during = self
            .hook(HookType::DuringResponsibilityCheck, &item, target.as_ref())
            .await?;
        if during.is_some() {
            run = accumulate(run, during);
            responsible = !run.abort_reconcile;
        }
        if !responsible {
            return Ok(action_of(run));
        }
        run = accumulate(
            run,
            self.hook(HookType::AfterResponsibilityCheck, &item, target.as_ref())
                .await?,
        );
        if run.abort_reconcile {
            return Ok(action_of(run));
        }

        let decision = decision::decide(&item);
        // A job the default logic starts is picked up before ShouldReconcile, so the hooks
        // from there on see, and leave, an item that shows it was picked up.
        let mut current = item.clone();
        let mut picked_up = None;
        if let Some(work) = decision.work {
            if self.stale(&key, &item, &decision) {
                return Ok(Action::await_change());
            }
            if work != Work::Abort {
                if let Some(left) = self.retry_not_due(&key, &item, target.as_ref()) {
                    return Ok(Action::requeue(left));
                }
                if !decision.resume {
                    let (whole, job_id) = self.pickup(&key, &item, &decision, work).await?;
                    current = Arc::new(whole);
                    picked_up = Some(job_id);
                }
            }
        }
        let should = self
            .hook(HookType::ShouldReconcile, &current, target.as_ref())
            .await?;
        run = accumulate(run, should);
        let deleting = item.metadata.deletion_timestamp.is_some();
        let (work, quiet) = match decision.work {
            Some(w) => (w, false),
            // A hook may ask for a reconcile, never for one of an item being deleted (its
            // failed deletion waits for a requested retry).
            None if !deleting && should.is_some_and(|s| !s.abort_reconcile) => {
                (Work::Reconcile { force: false }, true)
            }
            None => {
                if decision.remove_operation {
                    StatusWriter::new(self.ls.clone(), &item)
                        .metadata(&item, false, true)
                        .await?;
                }
                run.abort_reconcile = false;
                return Ok(action_of(run));
            }
        };
        if quiet {
            if self.stale(&key, &item, &decision) {
                return Ok(Action::await_change());
            }
            if let Some(left) = self.retry_not_due(&key, &item, target.as_ref()) {
                return Ok(Action::requeue(left));
            }
        }
        // The default logic decided; ShouldReconcile's vote cannot stop it any more.
        run.abort_reconcile = false;
        run = accumulate(
            run,
            self.hook(HookType::BeforeAnyReconcile, &current, target.as_ref())
                .await?,
        );
        if run.abort_reconcile {
            return Ok(action_of(run));
        }
        let before = match work {
            Work::Abort => HookType::BeforeAbort,
            Work::Reconcile { force: true } => HookType::BeforeForceReconcile,
            Work::Delete => HookType::BeforeDelete,
            Work::Reconcile { force: false } => HookType::BeforeReconcile,
        };
        run = accumulate(run, self.hook(before, &current, target.as_ref()).await?);
        if run.abort_reconcile {
            return Ok(action_of(run));
        }
        let retry = self
            .run_job(
                &key,
                current.clone(),
                target.clone(),
                &decision,
                work,
                quiet,
                picked_up,
            )
            .await?;
        run = accumulate(run, self.hook(HookType::End, &item, target.as_ref()).await?);
        Ok(action_after(sooner(delay_of(run), retry)))
    }

    fn interrupt(&self, item: &DeployItem, key: &ObjectRef<DeployItem>) -> Interrupt {
        let timeout = match &item.spec.timeout {
            Some(t) if t.is_none() => None,
            Some(t) => Some(t.as_std()),
            None => self.config.progressing_default,
        };
        let deadline = timeout.map(|t| {
            let started = self.job_start(key, item);
            let end = started
                .checked_add(SignedDuration::try_from(t).unwrap_or(SignedDuration::MAX))
                .unwrap_or(Timestamp::MAX);
            let left = end.duration_since(Timestamp::now());
            Instant::now() + Duration::try_from(left).unwrap_or(Duration::ZERO)
        });
        let items = self.items.clone();
        let key = key.clone();
        Interrupt::new(
            deadline,
            timeout.unwrap_or(Duration::ZERO),
            Arc::new(move || {
                items.get(&key).is_some_and(|i| {
                    decision::operation(&i) == Some(landscaper_api::core::Operation::Abort)
                })
            }),
        )
    }

    async fn event(&self, item: &DeployItem, type_: EventType, reason: &str, note: String) {
        self.events.publish(item, type_, reason, note).await;
    }

    /// The pickup of a job the default logic starts: phase Init (InitDelete), the job's start
    /// and, when the job has no ID yet, a new one; then the metadata the job needs (finalizer,
    /// operation and reconcile-time annotations) in the one metadata write a job makes.
    /// Returns the whole item and the job's ID.
    async fn pickup(
        &self,
        key: &ObjectRef<DeployItem>,
        item: &DeployItem,
        decision: &Decision,
        work: Work,
    ) -> Result<(DeployItem, String), Error> {
        let job_id = if decision.mint_job_id {
            new_job_id()
        } else {
            item.status
                .as_ref()
                .and_then(|s| s.job_id.clone())
                .unwrap_or_default()
        };
        let deletion = work == Work::Delete;
        let phase = if deletion {
            DeployItemPhase::InitDelete
        } else {
            DeployItemPhase::Init
        };
        let now = Timestamp::now();
        let minted = decision.mint_job_id.then_some(job_id.as_str());
        let writer = StatusWriter::new(self.ls.clone(), item);
        let picked = writer
            .pickup(item, phase, minted, &self.config.info, now)
            .await?;
        self.record_start(key, now);
        tracing::info!(job = %job_id, deletion, "picked up");
        let whole = writer
            .metadata(&picked, !deletion, decision.remove_operation)
            .await?;
        Ok((whole, job_id))
    }

    /// Runs a job; returns a requeue delay when a transient error is retried. `picked_up` is
    /// the ID of the job [`Context::pickup`] just started on `item`.
    #[allow(clippy::too_many_arguments)]
    async fn run_job(
        &self,
        key: &ObjectRef<DeployItem>,
        item: Arc<DeployItem>,
        target: Option<Arc<Target>>,
        decision: &Decision,
        work: Work,
        quiet: bool,
        picked_up: Option<String>,
    ) -> Result<Option<Duration>, Error> {
        let writer = StatusWriter::new(self.ls.clone(), &item);
        let job_id = picked_up.clone().unwrap_or_else(|| {
            item.status
                .as_ref()
                .and_then(|s| s.job_id.clone())
                .unwrap_or_default()
        });
        let deletion = work == Work::Delete;
        let mut current = (*item).clone();
        if work != Work::Abort {
            if quiet {
                let now = Timestamp::now();
                current = writer.touch(now).await?;
                self.record_start(key, now);
            } else if picked_up.is_none() {
                // The pickup answered with the whole item; a resumed job reads it, as the
                // cache's copy is slim.
                let Some(whole) = writer.get().await? else {
                    return Ok(None);
                };
                current = whole;
            }
            current = writer
                .metadata(&current, !deletion, decision.remove_operation)
                .await?;
            if !quiet {
                let want = if deletion {
                    DeployItemPhase::Deleting
                } else {
                    DeployItemPhase::Progressing
                };
                if current.status.as_ref().and_then(|s| s.phase.as_ref()) != Some(&want) {
                    current = writer.phase(want).await?;
                }
            }
        }
        let job = Job {
            item: Arc::new(current.clone()),
            target: target.clone(),
            job_id: job_id.clone(),
            force: work == Work::Reconcile { force: true },
            interrupt: self.interrupt(&current, key),
            ls_client: self.ls.clone(),
            targets: self.target_access.clone(),
        };
        // Only an uninstall needs the Target of an item being deleted.
        let needs_target = !(work == Work::Delete && decision::delete_without_uninstall(&current));
        let result: Result<Outcome, Failure> = match (work, &item.spec.target, &target) {
            (Work::Abort, _, _) => Err(Error::aborted("Abort").into()),
            // The Target was looked up in the API, not only in our store: it does not exist,
            // and waiting for it would only delay the same answer until the timeout.
            (_, Some(r), None) if needs_target => Err(Error::config(
                "ResponsibilityCheck",
                "TargetNotFound",
                format!(
                    "DeployItem {}: spec.target: Target {}/{} not found",
                    job.item_name(),
                    r.namespace
                        .as_deref()
                        .or(item.metadata.namespace.as_deref())
                        .unwrap_or_default(),
                    r.name
                ),
            )
            .into()),
            _ => match job.interrupt.check("Reconcile") {
                Err(e) => Err(with_retried_error(e, &current).into()),
                Ok(()) => job.interrupt.scope(self.work(&job, work, &current)).await,
            },
        };
        match result {
            Ok(outcome) => {
                self.succeeded(key, &writer, &job, current, outcome, deletion, quiet)
                    .await
            }
            Err(failure) => {
                self.failed(key, &writer, &job, current, failure, deletion)
                    .await
            }
        }
    }

    /// The deployer's part of a job.
    async fn work(&self, job: &Job, work: Work, current: &DeployItem) -> Result<Outcome, Failure> {
        match work {
            Work::Delete if decision::delete_without_uninstall(current) => {
                tracing::info!("deleting without uninstall");
                Ok(Outcome::default())
            }
            Work::Delete => self.deployer.delete(job).await.map(|()| Outcome::default()),
            Work::Reconcile { force: true } => self.deployer.force_reconcile(job).await,
            _ => self.deployer.reconcile(job).await,
        }
    }

    #[allow(clippy::too_many_arguments)]
    async fn succeeded(
        &self,
        key: &ObjectRef<DeployItem>,
        writer: &StatusWriter,
        job: &Job,
        current: DeployItem,
        outcome: Outcome,
        deletion: bool,
        quiet: bool,
    ) -> Result<Option<Duration>, Error> {
        if deletion {
            let after = writer.remove_finalizer(&current).await?;
            self.remember(
                key,
                Done {
                    job_id: job.job_id.clone(),
                    deleted: true,
                    touched: None,
                },
            );
            self.reset_backoff(key);
            tracing::info!("deleted");
            if after
                .metadata
                .finalizers
                .as_ref()
                .is_some_and(|f| !f.is_empty())
            {
                let done = Final {
                    phase: DeployItemPhase::Succeeded,
                    job_id: job.job_id.clone(),
                    error: None,
                    provider_status: None,
                    export_ref: None,
                };
                writer.finish(&after, &done, Timestamp::now()).await?;
            }
            return Ok(None);
        }
        let export_ref = match &outcome.exports {
            Some(values) => match exports::write_secret(&self.ls, &current, values).await {
                Ok(r) => Some(r),
                Err(e) => {
                    let failure = Failure {
                        error: e,
                        provider_status: outcome.provider_status,
                    };
                    return self.failed(key, writer, job, current, failure, false).await;
                }
            },
            None => None,
        };
        let done = Final {
            phase: DeployItemPhase::Succeeded,
            job_id: job.job_id.clone(),
            error: None,
            provider_status: outcome.provider_status,
            export_ref,
        };
        let was_failed = current.status.as_ref().and_then(|s| s.phase.as_ref())
            == Some(&DeployItemPhase::Failed);
        let changed = !quiet || StatusWriter::final_changes(&current, &done);
        if changed {
            writer.finish(&current, &done, Timestamp::now()).await?;
        }
        self.remember(
            key,
            Done {
                job_id: job.job_id.clone(),
                deleted: false,
                touched: current
                    .status
                    .as_ref()
                    .and_then(|s| s.last_reconcile_time.as_ref())
                    .map(|t| t.0),
            },
        );
        self.reset_backoff(key);
        tracing::info!(job = %job.job_id, "succeeded");
        if was_failed {
            self.event(
                &current,
                EventType::Normal,
                "Succeeded",
                "the deploy item succeeded again".into(),
            )
            .await;
        }
        Ok(None)
    }

    async fn failed(
        &self,
        key: &ObjectRef<DeployItem>,
        writer: &StatusWriter,
        job: &Job,
        current: DeployItem,
        failure: Failure,
        deletion: bool,
    ) -> Result<Option<Duration>, Error> {
        let Failure {
            mut error,
            provider_status,
        } = failure;
        if error.retry == Retry::Transient
            && let Err(timeout) = job.interrupt.check(&error.operation)
            && timeout.retry == Retry::Never
        {
            error = Error {
                message: format!("{}; last error: {}", timeout.message, error.message),
                ..timeout
            };
        }
        if error.retry == Retry::Transient {
            let previous = current.status.as_ref().and_then(|s| s.last_error.as_ref());
            let unchanged =
                previous.is_some_and(|p| p.reason == error.reason && p.message == error.message);
            let mut latest = current.clone();
            if !unchanged {
                let mut le = last_error(&error, previous, Timestamp::now());
                le.codes = error.codes.clone();
                latest = writer.error(&le).await?;
                if let Some(p) = provider_status {
                    latest = writer.provider_status(p).await?;
                }
            }
            // The next attempt comes no later than the deadline, so the timeout ends the job
            // on time instead of after a backoff that outlasts it.
            let delay =
                sooner(Some(self.backoff(key)), job.interrupt.remaining()).unwrap_or_default();
            self.retrying
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(
                    key.clone(),
                    Retrying {
                        job_id: job.job_id.clone(),
                        item_version: latest.metadata.resource_version,
                        target_version: job
                            .target
                            .as_ref()
                            .and_then(|t| t.metadata.resource_version.clone()),
                        due: Instant::now() + delay,
                    },
                );
            tracing::info!(error = %error, retry_in = ?delay, "transient error, retrying");
            return Ok(Some(delay));
        }
        if error.retry == Retry::Aborted
            && let Err(e) = self.deployer.abort(job).await
        {
            tracing::warn!(error = %e, "cleanup after abort failed");
        }
        let phase = if deletion {
            DeployItemPhase::DeleteFailed
        } else {
            DeployItemPhase::Failed
        };
        let done = Final {
            phase,
            job_id: job.job_id.clone(),
            error: Some(error.clone()),
            provider_status,
            export_ref: None,
        };
        let after = writer.finish(&current, &done, Timestamp::now()).await?;
        if error.retry == Retry::Aborted {
            writer.metadata(&after, false, true).await?;
        }
        self.remember(
            key,
            Done {
                job_id: job.job_id.clone(),
                deleted: deletion,
                touched: None,
            },
        );
        self.reset_backoff(key);
        tracing::warn!(job = %job.job_id, error = %error, "failed");
        self.event(
            &current,
            EventType::Warning,
            &error.reason,
            error.message.clone(),
        )
        .await;
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::runtime::reflector::store::Writer;

    fn item(name: &str) -> DeployItem {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "landscaper.gardener.cloud/v1alpha1", "kind": "DeployItem",
            "metadata": {"name": name, "namespace": "ns"},
            "spec": {"type": "landscaper.gardener.cloud/mock"}
        }))
        .unwrap()
    }

    fn done() -> Done {
        Done {
            job_id: "job".to_owned(),
            deleted: true,
            touched: None,
        }
    }

    #[test]
    fn the_progressing_default_comes_from_the_timeouts_and_none_turns_it_off() {
        let timeouts = |text: &str| DeployItemTimeouts {
            progressing_default: Some(text.parse().unwrap()),
            ..Default::default()
        };
        assert_eq!(
            progressing_default(Some(&timeouts("2s"))),
            Some(Duration::from_secs(2))
        );
        assert_eq!(progressing_default(Some(&timeouts("none"))), None);
        assert_eq!(
            progressing_default(Some(&DeployItemTimeouts::default())),
            Some(DEFAULT_TIMEOUT)
        );
        assert_eq!(progressing_default(None), Some(DEFAULT_TIMEOUT));
    }

    #[test]
    fn deleted_items_are_forgotten_and_existing_ones_kept() {
        let mut writer = Writer::<DeployItem>::default();
        let live: Vec<DeployItem> = (0..10).map(|i| item(&format!("live-{i}"))).collect();
        for i in &live {
            writer.apply_watcher_event(&watcher::Event::Apply(i.clone()));
        }
        let store = writer.as_reader();
        let mut finished = FinishedJobs::default();
        for i in &live {
            finished.remember(&ObjectRef::from_obj(i), done(), &store);
        }
        let mut sweeps = 0;
        for n in 0..1000 {
            let gone = ObjectRef::from_obj(&item(&format!("gone-{n}")));
            let before = finished.by_item.len();
            finished.remember(&gone, done(), &store);
            sweeps += usize::from(finished.by_item.len() <= before);
            let remembered = finished.by_item.len();
            assert!(remembered <= SWEEP_FROM, "{remembered} remembered");
        }
        // With 10 items left after each sweep, the next is due 54 jobs later.
        assert!(sweeps <= 1000 / (SWEEP_FROM - 10) + 1, "{sweeps} sweeps");
        for i in &live {
            let key = ObjectRef::from_obj(i);
            assert!(finished.by_item.contains_key(&key), "forgot {key}");
        }
    }
}
