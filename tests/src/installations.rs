//! Installations in tests: waiting for their jobs, reading how a job ended, and asking for the
//! next one as a user does.

use kube::api::{Api, Patch, PatchParams};
use landscaper_api::constants::annotations;
use landscaper_api::core::{Installation, InstallationPhase};
use serde_json::{Value, json};

use crate::eventually;

/// Waits until `name` finished a job, and returns it.
pub async fn finished(api: &Api<Installation>, name: &str) -> Installation {
    finished_after(api, name, None).await
}

/// Waits until `name` finished a job other than `previous` (any job when `None`), and returns
/// it.
pub async fn finished_after(
    api: &Api<Installation>,
    name: &str,
    previous: Option<&str>,
) -> Installation {
    eventually(&format!("installation {name} finishes its job"), || async {
        api.get(name).await.ok().is_some_and(|i| {
            i.status.as_ref().is_some_and(|s| {
                s.job_id.is_some()
                    && s.job_id == s.job_id_finished
                    && s.job_id.as_deref() != previous
            })
        })
    })
    .await;
    api.get(name).await.unwrap()
}

/// Waits until `name` finished a job and asserts that it succeeded, else shows its
/// `lastError`; returns it.
pub async fn succeeded(api: &Api<Installation>, name: &str) -> Installation {
    let installation = finished(api, name).await;
    assert_eq!(
        phase(&installation),
        Some(InstallationPhase::Succeeded),
        "{}",
        last_error(&installation)
    );
    installation
}

/// Waits until `name` finished a job and asserts that it failed; returns the message of its
/// `lastError`.
pub async fn failed(api: &Api<Installation>, name: &str) -> String {
    let installation = finished(api, name).await;
    let message = last_error(&installation);
    assert_eq!(
        phase(&installation),
        Some(InstallationPhase::Failed),
        "{name}: {message}"
    );
    message
}

/// The phase of the installation's last job.
pub fn phase(installation: &Installation) -> Option<InstallationPhase> {
    installation.status.as_ref().and_then(|s| s.phase.clone())
}

/// The message of the installation's `lastError`, empty when it has none.
pub fn last_error(installation: &Installation) -> String {
    installation
        .status
        .as_ref()
        .and_then(|s| s.last_error.as_ref())
        .map(|e| e.message.clone())
        .unwrap_or_default()
}

/// Asks for a new job of `name` with the reconcile annotation, as a user does.
pub async fn request_reconcile(api: &Api<Installation>, name: &str) {
    api.patch(
        name,
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"annotations": {annotations::OPERATION: "reconcile"}}})),
    )
    .await
    .unwrap_or_else(|error| panic!("requesting a job of installation {name}: {error}"));
}

/// Creates the root installation `name` with `spec` and the reconcile annotation, so that its
/// first job starts.
pub async fn create_root(api: &Api<Installation>, name: &str, spec: Value) -> Installation {
    crate::objects::create(
        api,
        json!({
            "metadata": {"name": name, "annotations": {annotations::OPERATION: "reconcile"}},
            "spec": spec,
        }),
    )
    .await
}
