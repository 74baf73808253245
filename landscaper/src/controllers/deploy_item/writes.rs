//! The controller's writes on a DeployItem: ending a job Failed (guarded by the item's
//! `resourceVersion`), status patches and Events.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::runtime::events::EventType;
use landscaper_api::core::{DeployItem, DeployItemPhase, ErrorCode, LastError};
use serde_json::{Value, json};
use tracing::{info, warn};

use super::{CONFLICT_RETRY, Context, Error};

/// Ends the running job Failed with a timeout error, unless the item changed since it was read
/// (a deployer picking it up at this moment wins).
pub(super) async fn fail(
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
        Err(Error::Api(failure)) if failure.is_conflict() => {
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

pub(super) fn api(item: &DeployItem, context: &Context) -> Api<DeployItem> {
    Api::namespaced(
        context.client.clone(),
        &item.namespace().unwrap_or_default(),
    )
}

pub(super) async fn patch_status(
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
pub(super) async fn publish(
    item: &DeployItem,
    type_: EventType,
    reason: &str,
    note: String,
    context: &Context,
) {
    context.events.publish(item, type_, reason, note).await;
}
