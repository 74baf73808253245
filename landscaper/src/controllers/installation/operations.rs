//! The operation annotations on an Installation: `reconcile` starts a job on a root (and is
//! removed; while a job runs it waits; on a subinstallation it is removed with no effect),
//! `reconcile-if-changed` starts one when the spec changed, and `interrupt` ends the running
//! job Failed and is passed on to the Execution and the subinstallations.

use kube::ResourceExt;
use kube::api::{Api, ListParams, Patch, PatchParams};
use kube::runtime::controller::Action;
use landscaper_api::constants::annotations;
use landscaper_api::core::{Installation, InstallationPhase, Operation};
use serde_json::json;
use tracing::info;

use super::{Context, ENCOMPASSED_BY, Error, status};

/// Handles the operation annotations; `Some` when this reconcile is done with them.
pub async fn handle(
    installation: &Installation,
    context: &Context,
) -> Result<Option<Action>, Error> {
    let operation = installation
        .annotations()
        .get(annotations::OPERATION)
        .and_then(|value| Operation::parse(value));
    let root = is_root(installation);
    match operation {
        Some(Operation::Interrupt) => {
            interrupt(installation, context).await?;
            return Ok(Some(Action::await_change()));
        }
        Some(Operation::Reconcile | Operation::ForceReconcile) if !root => {
            info!(name = %installation.name_any(), "reconcile annotation on a subinstallation: removed, its parent starts its jobs");
            remove_operation(installation, context).await?;
            return Ok(Some(Action::await_change()));
        }
        Some(Operation::Reconcile | Operation::ForceReconcile)
            if !status::job_running(installation) =>
        {
            // The job first: if removing the annotation fails, the annotation starts one more
            // job later, while the other order would lose the request.
            start_job(installation, context, "reconcile annotation").await?;
            remove_operation(installation, context).await?;
            return Ok(Some(Action::await_change()));
        }
        _ => {}
    }
    let if_changed = installation
        .annotations()
        .get(annotations::RECONCILE_IF_CHANGED)
        .is_some_and(|v| v == "true");
    let observed = installation
        .status
        .as_ref()
        .and_then(|s| s.observed_generation);
    if root
        && if_changed
        && !status::job_running(installation)
        && installation.metadata.generation != observed
    {
        start_job(
            installation,
            context,
            "the spec changed (reconcile-if-changed)",
        )
        .await?;
        return Ok(Some(Action::await_change()));
    }
    Ok(None)
}

/// Whether the installation is a root: no installation created it.
pub fn is_root(installation: &Installation) -> bool {
    !installation.labels().contains_key(ENCOMPASSED_BY)
}

/// Starts a new job on the installation.
pub async fn start_job(
    installation: &Installation,
    context: &Context,
    why: &str,
) -> Result<(), Error> {
    let api = context.installations(&installation.namespace().unwrap_or_default());
    let job = status::new_job_id();
    info!(name = %installation.name_any(), job = %job, why, "starting a job");
    let mut patch = status::phase(InstallationPhase::Init);
    patch["jobID"] = json!(job);
    patch["observedGeneration"] = json!(installation.metadata.generation);
    patch["lastError"] = json!(null);
    status::patch(&api, installation, patch).await?;
    context
        .event(
            installation,
            false,
            "JobStarted",
            format!(
                "Installation {}: job {job} started: {why}",
                installation.name_any()
            ),
        )
        .await;
    Ok(())
}

/// Removes the operation annotation.
pub async fn remove_operation(installation: &Installation, context: &Context) -> Result<(), Error> {
    let api = context.installations(&installation.namespace().unwrap_or_default());
    api.patch(
        &installation.name_any(),
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"annotations": {annotations::OPERATION: null}}})),
    )
    .await
    .map_err(|source| Error::api(installation, "remove the operation annotation", source))?;
    Ok(())
}

/// Sets `annotation: value` on the installation's Execution and subinstallations.
pub async fn annotate_children(
    installation: &Installation,
    context: &Context,
    annotation: &str,
    value: &str,
) -> Result<(), Error> {
    let namespace = installation.namespace().unwrap_or_default();
    let patch = Patch::Merge(json!({"metadata": {"annotations": {annotation: value}}}));
    let params = PatchParams::default();
    if context.execution_exists(installation).await? {
        context
            .executions(&namespace)
            .patch(&installation.name_any(), &params, &patch)
            .await
            .map_err(|source| {
                Error::api(
                    installation,
                    format!("annotate its Execution with {annotation}"),
                    source,
                )
            })?;
    }
    let api: Api<Installation> = context.installations(&namespace);
    for child in children(installation, context).await? {
        api.patch(&child.name_any(), &params, &patch)
            .await
            .map_err(|source| {
                Error::api(
                    installation,
                    format!(
                        "annotate subinstallation {} with {annotation}",
                        child.name_any()
                    ),
                    source,
                )
            })?;
    }
    Ok(())
}

/// The installation's subinstallations (labelled as encompassed by it).
pub async fn children(
    installation: &Installation,
    context: &Context,
) -> Result<Vec<Installation>, Error> {
    let api = context.installations(&installation.namespace().unwrap_or_default());
    let selector = format!("{ENCOMPASSED_BY}={}", installation.name_any());
    Ok(api
        .list(&ListParams::default().labels(&selector))
        .await
        .map_err(|source| Error::api(installation, "list its subinstallations", source))?
        .items)
}

async fn interrupt(installation: &Installation, context: &Context) -> Result<(), Error> {
    let name = installation.name_any();
    info!(name = %name, "interrupt: passed to the Execution and the subinstallations");
    annotate_children(
        installation,
        context,
        annotations::OPERATION,
        Operation::Interrupt.as_str(),
    )
    .await?;
    remove_operation(installation, context).await?;
    if status::job_running(installation) {
        let api = context.installations(&installation.namespace().unwrap_or_default());
        let mut patch = status::finish(installation, InstallationPhase::Failed);
        patch["lastError"] = json!(status::last_error(
            "Interrupt",
            "Interrupted",
            &format!("Installation {name}: the job was interrupted")
        ));
        status::patch(&api, installation, patch).await?;
        context
            .event(
                installation,
                true,
                "Interrupted",
                format!("Installation {name}: the running job was interrupted and ends Failed"),
            )
            .await;
    }
    Ok(())
}
