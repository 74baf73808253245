//! The abort timeout: a job a deployer picked up and was asked to abort fails when it does not
//! end within the timeout of the recorded abort time.

use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;
use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use landscaper_api::core::DeployItem;
use serde_json::json;
use tracing::info;

use super::timeouts::{self, ABORT_TIME, Abort, Timer};
use super::writes::{api, fail};
use super::{ABORTING_TIMEOUT_OPERATION, ABORTING_TIMEOUT_REASON, Context, Error};

/// The abort timeout of a running job a deployer picked up.
pub(super) async fn abort(
    item: &DeployItem,
    timeout: Duration,
    context: &Context,
) -> Result<Action, Error> {
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
