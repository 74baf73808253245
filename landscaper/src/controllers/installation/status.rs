//! Writing an Installation's status: merge patches on the status subresource that touch only
//! the fields a step changed, job IDs, conditions and the last error.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;
use kube::api::{Api, Patch, PatchParams};
use landscaper_api::core::{
    ConditionStatus, ConditionUpdate, Installation, InstallationPhase, LastError, set_condition,
};
use serde_json::{Value as Json, json};

use super::{Error, MANAGER};

/// The condition that explains what the installation waits for or why it failed.
pub const CONDITION: &str = "InstallationReconciled";

/// The current time as a Kubernetes timestamp.
pub fn now() -> Time {
    Time(Timestamp::now())
}

/// A fresh job ID: 128 random bits formatted as a UUID, as upstream's job IDs are.
pub fn new_job_id() -> String {
    let mut bytes = [0u8; 16];
    // The OS random source never fails on the platforms we run on; a fallback from the clock
    // would still be unique per start.
    if getrandom::fill(&mut bytes).is_err() {
        let nanos = Timestamp::now().as_nanosecond().to_le_bytes();
        bytes.copy_from_slice(&nanos);
    }
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// Whether a job runs: a job ID was given and is not finished.
pub fn job_running(installation: &Installation) -> bool {
    let status = installation.status.clone().unwrap_or_default();
    status.job_id.is_some() && status.job_id != status.job_id_finished
}

/// Applies a merge patch to the installation's status.
pub async fn patch(
    api: &Api<Installation>,
    installation: &Installation,
    status: Json,
) -> Result<Installation, Error> {
    api.patch_status(
        &installation.name_any(),
        &PatchParams::apply(MANAGER),
        &Patch::Merge(json!({ "status": status })),
    )
    .await
    .map_err(|source| Error::api(installation, "write status", source))
}

/// The phase change as a status patch, with its transition time.
pub fn phase(phase: InstallationPhase) -> Json {
    json!({ "phase": phase.as_str(), "phaseTransitionTime": now() })
}

/// The installation's conditions with [`CONDITION`] set; `None` when nothing changed.
pub fn condition(
    installation: &Installation,
    status: ConditionStatus,
    reason: &str,
    message: String,
) -> Option<Json> {
    let mut conditions = installation
        .status
        .as_ref()
        .map(|s| s.conditions.clone())
        .unwrap_or_default();
    let update = ConditionUpdate {
        type_: CONDITION,
        status,
        reason,
        message,
    };
    set_condition(&mut conditions, update, now()).then(|| json!(conditions))
}

/// A last error for `operation` with `reason` and `message`.
pub fn last_error(operation: &str, reason: &str, message: &str) -> LastError {
    LastError {
        operation: operation.to_owned(),
        last_transition_time: now(),
        last_update_time: now(),
        reason: reason.to_owned(),
        message: message.to_owned(),
        codes: Vec::new(),
    }
}

/// The status fields that end the running job with `phase`.
pub fn finish(installation: &Installation, phase_: InstallationPhase) -> Json {
    let job = installation.status.as_ref().and_then(|s| s.job_id.clone());
    let mut patch = phase(phase_);
    patch["jobIDFinished"] = json!(job);
    patch
}
