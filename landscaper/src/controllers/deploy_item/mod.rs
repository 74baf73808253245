//! Reconciles DeployItems for the two timeouts the landscaper owns (deployers own the
//! progressing timeout): a job that no deployer picked up within `deployItemTimeouts.pickup`
//! ends Failed with `PickupTimeout`, saying whether the item's Target is missing, and a job
//! that a deployer did not end within `deployItemTimeouts.abort` of an abort request ends
//! Failed with `AbortingTimeout`. An item whose job ended is left alone. The pickup timer does
//! not run while a deployer registered for the item's type and environment is not installed
//! yet (see [`deployers`]). Each wait ends in a requeue exactly at its deadline; all state lives
//! on the objects, so a restart resumes every timer where it stood.

pub mod deployers;
pub mod timeouts;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::{Action, Config as ControllerConfig, Controller};
use kube::runtime::events::{Event as KubeEvent, EventType, Recorder, Reporter};
use kube::runtime::watcher;
use kube::{Resource, ResourceExt};
use landscaper_api::core::{
    Condition, ConditionStatus, ConditionUpdate, DeployItem, DeployItemPhase, ErrorCode, LastError,
    Target, find_condition, set_condition,
};
use serde_json::{Value, json};
use tracing::{Instrument, info, info_span, warn};

use self::deployers::{Caches, Deployers, Pair};
use self::timeouts::{ABORT_TIME, Abort, Timer};
use crate::settings::{DeployItemTimeouts, Settings};

/// Field manager and event reporter of this controller.
const MANAGER: &str = "landscaper-deploy-item-controller";
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
    recorder: Recorder,
    timeouts: DeployItemTimeouts,
    /// The registered deployers, when deployer management runs.
    deployers: Option<Caches>,
}

/// What went wrong while reconciling a DeployItem.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An API request failed.
    #[error("DeployItem {namespace}/{name}: {action}: {source}")]
    Api {
        /// Namespace of the DeployItem.
        namespace: String,
        /// The DeployItem.
        name: String,
        /// What was being done.
        action: String,
        /// The failure.
        #[source]
        source: kube::Error,
    },
}

impl Error {
    fn api(item: &DeployItem, action: impl Into<String>, source: kube::Error) -> Self {
        Self::Api {
            namespace: item.namespace().unwrap_or_default(),
            name: item.name_any(),
            action: action.into(),
            source,
        }
    }
}

/// Runs the controller until `shutdown` completes.
pub async fn run(
    client: kube::Client,
    settings: Settings,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) {
    let recorder = Recorder::new(
        client.clone(),
        Reporter {
            controller: MANAGER.into(),
            instance: None,
        },
    );
    let (deployers, changes) = match settings.deployer_management {
        true => {
            let (caches, changes) = Caches::start(&client, &settings.namespace);
            (Some(caches), Some(changes))
        }
        false => (None, None),
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
        recorder,
        timeouts,
        deployers,
    });
    let items: Api<DeployItem> = Api::all(client);
    let mut controller = Controller::new(items, watcher::Config::default())
        .with_config(ControllerConfig::default().concurrency(workers));
    if let Some(changes) = changes {
        // A registration, environment or deployer Installation that changed may start or
        // hold the timer of any item.
        controller = controller.reconcile_all_on(changes);
    }
    controller
        .graceful_shutdown_on(shutdown)
        .run(reconcile, error_policy, context)
        .for_each(|result| async move {
            if let Err(error) = result {
                warn!(%error, "DeployItem reconcile failed");
            }
        })
        .await;
}

fn error_policy(item: Arc<DeployItem>, error: &Error, _: Arc<Context>) -> Action {
    warn!(
        namespace = %item.namespace().unwrap_or_default(),
        name = %item.name_any(),
        %error,
        "DeployItem reconcile failed; retrying"
    );
    Action::requeue(ERROR_RETRY)
}

async fn reconcile(item: Arc<DeployItem>, context: Arc<Context>) -> Result<Action, Error> {
    let span = info_span!(
        "reconcile",
        kind = "DeployItem",
        namespace = %item.namespace().unwrap_or_default(),
        name = %item.name_any()
    );
    async {
        if !timeouts::job_running(&item) {
            return Ok(Action::await_change());
        }
        if !timeouts::picked_up(&item) {
            return pickup(&item, &context).await;
        }
        match context.timeouts.abort {
            Some(timeout) => abort(&item, timeout, &context).await,
            None => Ok(Action::await_change()),
        }
    }
    .instrument(span)
    .await
}

/// The pickup timeout of a running job no deployer picked up yet.
async fn pickup(item: &DeployItem, context: &Context) -> Result<Action, Error> {
    let Some(timeout) = context.timeouts.pickup else {
        return Ok(Action::await_change());
    };
    let Some(job_started) = timeouts::job_started(item) else {
        return Ok(Action::await_change());
    };
    // The Target is read when a registered deployer may hold the item, else only at the end.
    let registered = match &context.deployers {
        Some(caches) => {
            caches.ready().await;
            caches.serves(&item.spec.type_)
        }
        None => false,
    };
    let target = match registered {
        true => Some(read_target(item, context).await?),
        false => None,
    };
    let deployers = match (&context.deployers, target.as_ref().and_then(Option::as_ref)) {
        (Some(caches), Some(target)) => caches.deployers_of(&item.spec.type_, target),
        _ => Deployers::NoneRegistered,
    };
    let now = Timestamp::now();
    let (start, installed) = match deployers {
        Deployers::NotInstalled(pairs) => {
            hold(item, &pairs, timeout, context).await?;
            return Ok(Action::requeue(RESYNC));
        }
        Deployers::Installed { pair, since } => {
            let since = since.unwrap_or(job_started);
            if waiting(item).is_some_and(|c| c.status == ConditionStatus::True) {
                let message = format!(
                    "deployer {} is installed in environment {} (Installation {}); the pickup timeout runs from {}",
                    pair.registration,
                    pair.environment,
                    pair.installation,
                    since.max(job_started)
                );
                release(item, "DeployerInstalled", message, context).await?;
            }
            let installed = (since > job_started).then_some(pair);
            (since.max(job_started), installed)
        }
        Deployers::NoneRegistered => (released_at(item, job_started, now, context).await?, None),
    };
    match Timer::at(start, timeout, now) {
        Timer::Running { deadline } => Ok(Action::requeue(Timer::wait(deadline, now))),
        Timer::Exceeded => {
            let target = match target {
                Some(target) => target,
                None => read_target(item, context).await?,
            };
            let message = pickup_message(item, target.as_ref(), timeout, installed.as_ref());
            fail(
                item,
                PICKUP_TIMEOUT_OPERATION,
                PICKUP_TIMEOUT_REASON,
                message,
                context,
            )
            .await
        }
    }
}

/// Why a job was not picked up, naming a missing Target (upstream's test looks for "Target").
fn pickup_message(
    item: &DeployItem,
    target: Option<&Target>,
    timeout: Duration,
    installed: Option<&Pair>,
) -> String {
    let job = item
        .status
        .as_ref()
        .and_then(|s| s.job_id.as_deref())
        .unwrap_or_default();
    let mut message = format!(
        "no deployer picked up job {job} within {} seconds",
        timeout.as_secs()
    );
    if let Some(pair) = installed {
        message.push_str(&format!(
            " of deployer {} being installed in environment {}",
            pair.registration, pair.environment
        ));
    }
    if let (Some(reference), None) = (target_reference(item), target) {
        message.push_str(&format!(
            ", probably because spec.target names Target {}/{}, which does not exist",
            reference.0, reference.1
        ));
    }
    message
}

/// The namespace and name of the item's Target, when it names one.
fn target_reference(item: &DeployItem) -> Option<(String, String)> {
    let reference = item.spec.target.as_ref().filter(|r| !r.name.is_empty())?;
    let namespace = reference
        .namespace
        .clone()
        .filter(|ns| !ns.is_empty())
        .unwrap_or_else(|| item.namespace().unwrap_or_default());
    Some((namespace, reference.name.clone()))
}

/// The item's Target, if it names one that exists.
async fn read_target(item: &DeployItem, context: &Context) -> Result<Option<Target>, Error> {
    let Some((namespace, name)) = target_reference(item) else {
        return Ok(None);
    };
    let targets: Api<Target> = Api::namespaced(context.client.clone(), &namespace);
    targets.get_opt(&name).await.map_err(|source| {
        Error::api(
            item,
            format!("read spec.target Target {namespace}/{name}"),
            source,
        )
    })
}

/// The item's [`WAITING_FOR_DEPLOYER`] condition, if it has one.
fn waiting(item: &DeployItem) -> Option<&Condition> {
    let conditions = item.status.as_ref().map(|s| s.conditions.as_slice())?;
    find_condition(conditions, WAITING_FOR_DEPLOYER)
}

/// When the pickup timer of an item without registered deployers starts: at the job's start,
/// or when the item stopped waiting for a deployer whose registration then went away.
async fn released_at(
    item: &DeployItem,
    job_started: Timestamp,
    now: Timestamp,
    context: &Context,
) -> Result<Timestamp, Error> {
    match waiting(item) {
        Some(condition) if condition.status == ConditionStatus::True => {
            let message = "no registered deployer of the item's type is pending in the environments of its Target any more; the pickup timeout runs from now".to_owned();
            release(item, "NoDeployerRegistered", message, context).await?;
            Ok(now.max(job_started))
        }
        Some(condition) if condition.reason == "NoDeployerRegistered" => {
            Ok(condition.last_transition_time.0.max(job_started))
        }
        _ => Ok(job_started),
    }
}

/// Records that the item waits for `pairs` (a condition, and an Event when it starts waiting).
async fn hold(
    item: &DeployItem,
    pairs: &[Pair],
    timeout: Duration,
    context: &Context,
) -> Result<(), Error> {
    let names: Vec<String> = pairs
        .iter()
        .map(|pair| {
            format!(
                "deployer {} in environment {} (Installation {})",
                pair.registration, pair.environment, pair.installation
            )
        })
        .collect();
    let message = format!(
        "waiting for {} to be installed; the pickup timeout of {} seconds starts when it is",
        names.join(" or "),
        timeout.as_secs()
    );
    let update = ConditionUpdate {
        type_: WAITING_FOR_DEPLOYER,
        status: ConditionStatus::True,
        reason: "DeployerNotInstalled",
        message: message.clone(),
    };
    let started = !waiting(item).is_some_and(|c| c.status == ConditionStatus::True);
    if write_condition(item, update, context).await? && started {
        info!(
            namespace = %item.namespace().unwrap_or_default(),
            name = %item.name_any(),
            deployers = %names.join(", "),
            "the pickup timeout waits for a registered deployer"
        );
        publish(
            item,
            EventType::Normal,
            "WaitingForDeployer",
            message,
            context,
        )
        .await;
    }
    Ok(())
}

/// Records that the item no longer waits for a deployer.
async fn release(
    item: &DeployItem,
    reason: &str,
    message: String,
    context: &Context,
) -> Result<(), Error> {
    let update = ConditionUpdate {
        type_: WAITING_FOR_DEPLOYER,
        status: ConditionStatus::False,
        reason,
        message: message.clone(),
    };
    if write_condition(item, update, context).await? {
        info!(
            namespace = %item.namespace().unwrap_or_default(),
            name = %item.name_any(),
            %message,
            "the pickup timeout runs"
        );
        publish(item, EventType::Normal, reason, message, context).await;
    }
    Ok(())
}

/// Sets the condition on the item's status when it changes it; whether it wrote.
async fn write_condition(
    item: &DeployItem,
    update: ConditionUpdate<'_>,
    context: &Context,
) -> Result<bool, Error> {
    let mut conditions = item
        .status
        .as_ref()
        .map(|s| s.conditions.clone())
        .unwrap_or_default();
    if !set_condition(&mut conditions, update, Time(Timestamp::now())) {
        return Ok(false);
    }
    patch_status(
        item,
        json!({ "status": { "conditions": conditions } }),
        "write the WaitingForDeployer condition",
        context,
    )
    .await?;
    Ok(true)
}

/// The abort timeout of a running job a deployer picked up.
async fn abort(item: &DeployItem, timeout: Duration, context: &Context) -> Result<Action, Error> {
    let now = Timestamp::now();
    match timeouts::abort(item, timeout, now) {
        Abort::NotRequested => Ok(Action::await_change()),
        Abort::Record { at } => {
            let patch = json!({ "metadata": { "annotations": {
                ABORT_TIME: timeouts::rfc3339(at),
            }}});
            api(item, context)
                .patch(
                    &item.name_any(),
                    &PatchParams::default(),
                    &Patch::Merge(&patch),
                )
                .await
                .map_err(|source| {
                    Error::api(item, format!("record the abort in {ABORT_TIME}"), source)
                })?;
            info!(
                namespace = %item.namespace().unwrap_or_default(),
                name = %item.name_any(),
                "abort requested; its timeout runs"
            );
            Ok(Action::requeue(timeout))
        }
        Abort::Requested(Timer::Running { deadline }) => {
            Ok(Action::requeue(Timer::wait(deadline, now)))
        }
        Abort::Requested(Timer::Exceeded) => {
            let message = format!(
                "the deployer did not end job {} within {} seconds of the abort request ({ABORT_TIME})",
                item.status
                    .as_ref()
                    .and_then(|s| s.job_id.as_deref())
                    .unwrap_or_default(),
                timeout.as_secs()
            );
            fail(
                item,
                ABORTING_TIMEOUT_OPERATION,
                ABORTING_TIMEOUT_REASON,
                message,
                context,
            )
            .await
        }
    }
}

/// Ends the running job Failed with a timeout error, unless the item changed since it was read
/// (a deployer picking it up at this moment wins).
async fn fail(
    item: &DeployItem,
    operation: &str,
    reason: &str,
    message: String,
    context: &Context,
) -> Result<Action, Error> {
    let status = item.status.clone().unwrap_or_default();
    let now = Time(Timestamp::now());
    let previous = status.last_error.as_ref();
    let same = previous.is_some_and(|p| p.reason == reason && p.operation == operation);
    let last_error = LastError {
        operation: operation.to_owned(),
        last_transition_time: previous
            .filter(|_| same)
            .map_or_else(|| now.clone(), |p| p.last_transition_time.clone()),
        last_update_time: now.clone(),
        reason: reason.to_owned(),
        message: message.clone(),
        codes: vec![ErrorCode::Timeout],
    };
    let patch = json!({
        "metadata": { "resourceVersion": item.resource_version() },
        "status": {
            "phase": DeployItemPhase::Failed,
            "jobIDFinished": status.job_id,
            "observedGeneration": item.metadata.generation,
            "lastError": last_error,
            "transitionTimes": { "finishedTime": now },
        },
    });
    match patch_status(item, patch, "end the job Failed", context).await {
        Ok(()) => {}
        Err(Error::Api {
            source: kube::Error::Api(response),
            ..
        }) if response.code == 409 => {
            info!(
                namespace = %item.namespace().unwrap_or_default(),
                name = %item.name_any(),
                "the item changed meanwhile; looking again"
            );
            return Ok(Action::requeue(CONFLICT_RETRY));
        }
        Err(error) => return Err(error),
    }
    warn!(
        namespace = %item.namespace().unwrap_or_default(),
        name = %item.name_any(),
        job_id = ?status.job_id,
        %reason,
        %message,
        "DeployItem failed"
    );
    publish(item, EventType::Warning, reason, message, context).await;
    Ok(Action::await_change())
}

fn api(item: &DeployItem, context: &Context) -> Api<DeployItem> {
    Api::namespaced(
        context.client.clone(),
        &item.namespace().unwrap_or_default(),
    )
}

async fn patch_status(
    item: &DeployItem,
    patch: Value,
    action: &str,
    context: &Context,
) -> Result<(), Error> {
    api(item, context)
        .patch_status(
            &item.name_any(),
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await
        .map_err(|source| Error::api(item, action, source))?;
    Ok(())
}

/// Publishes an Event on the item; a failure to publish is only logged.
async fn publish(
    item: &DeployItem,
    type_: EventType,
    reason: &str,
    note: String,
    context: &Context,
) {
    let event = KubeEvent {
        type_,
        reason: reason.into(),
        note: Some(note),
        action: "Reconcile".into(),
        secondary: None,
    };
    if let Err(error) = context
        .recorder
        .publish(&event, &item.object_ref(&()))
        .await
    {
        warn!(name = %item.name_any(), %error, "could not publish an Event");
    }
}
