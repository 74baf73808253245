//! The pickup timeout: a running job no deployer picked up yet fails once its window is over;
//! while a registered deployer of the item's type is not installed in the item's environment
//! the window does not start, and the item says what it waits for.

use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;
use kube::api::Api;
use kube::runtime::controller::Action;
use kube::runtime::events::EventType;
use landscaper_api::core::{
    Condition, ConditionStatus, ConditionUpdate, DeployItem, Target, find_condition, set_condition,
};
use serde_json::json;
use tracing::info;

use super::deployers::{Deployers, Item, Pair};
use super::timeouts::{self, Timer};
use super::writes::{fail, patch_status, publish};
use super::{
    Context, Error, PICKUP_TIMEOUT_OPERATION, PICKUP_TIMEOUT_REASON, RESYNC, WAITING_FOR_DEPLOYER,
};

/// The pickup timeout of a running job no deployer picked up yet.
pub(super) async fn pickup(item: &DeployItem, context: &Context) -> Result<Action, Error> {
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
        (Some(caches), Some(target)) => caches.deployers_of(Item {
            type_: &item.spec.type_,
            namespace: item.metadata.namespace.as_deref().unwrap_or_default(),
            target,
        }),
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
