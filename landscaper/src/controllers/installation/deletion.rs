//! Deleting an installation: `InitDelete` (waits while a sibling imports its exports, passes
//! `delete-without-uninstall` down), `TriggerDelete` (deletes the Execution and the
//! subinstallations), `Deleting` (waits until they are gone, then removes the finalizer) and
//! `DeleteFailed` (a subobject failed to delete; the reconcile annotation starts again).

use kube::api::{DeleteParams, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Resource, ResourceExt};
use landscaper_api::constants::{annotations, finalizers};
use landscaper_api::core::{
    ConditionStatus, ExecutionPhase, Installation, InstallationPhase, Operation,
};
use serde_json::json;
use tracing::info;

use super::operations::{annotate_children, children, remove_operation};
use super::order::Siblings;
use super::{Context, Error, WAIT_RETRY, status};

/// Advances the deletion of the installation by one step.
pub async fn reconcile(installation: &Installation, context: &Context) -> Result<Action, Error> {
    if !installation
        .finalizers()
        .iter()
        .any(|f| f == finalizers::LANDSCAPER)
    {
        return Ok(Action::await_change());
    }
    let api = context.installations(&installation.namespace().unwrap_or_default());
    let phase = installation.status.as_ref().and_then(|s| s.phase.clone());
    let operation = installation
        .annotations()
        .get(annotations::OPERATION)
        .and_then(|v| Operation::parse(v));
    match phase {
        Some(InstallationPhase::DeleteFailed) => {
            if operation == Some(Operation::Reconcile) {
                remove_operation(installation, context).await?;
                status::patch(
                    &api,
                    installation,
                    status::phase(InstallationPhase::InitDelete),
                )
                .await?;
            }
            Ok(Action::await_change())
        }
        Some(InstallationPhase::InitDelete) => init_delete(installation, context).await,
        Some(InstallationPhase::TriggerDelete) => {
            if context.execution_exists(installation).await? {
                let namespace = installation.namespace().unwrap_or_default();
                context
                    .executions(&namespace)
                    .delete(&installation.name_any(), &DeleteParams::default())
                    .await
                    .map_err(|source| Error::api(installation, "delete its Execution", source))?;
            }
            for child in children(installation, context).await? {
                api.delete(&child.name_any(), &DeleteParams::default())
                    .await
                    .map_err(|source| {
                        Error::api(
                            installation,
                            format!("delete subinstallation {}", child.name_any()),
                            source,
                        )
                    })?;
            }
            status::patch(
                &api,
                installation,
                status::phase(InstallationPhase::Deleting),
            )
            .await?;
            Ok(Action::await_change())
        }
        Some(InstallationPhase::Deleting) => deleting(installation, context).await,
        _ => {
            let mut patch = status::phase(InstallationPhase::InitDelete);
            patch["jobID"] = json!(status::new_job_id());
            status::patch(&api, installation, patch).await?;
            Ok(Action::await_change())
        }
    }
}

async fn init_delete(installation: &Installation, context: &Context) -> Result<Action, Error> {
    let name = installation.name_any();
    let api = context.installations(&installation.namespace().unwrap_or_default());
    if !installation
        .annotations()
        .contains_key(annotations::DELETE_IGNORE_SUCCESSORS)
    {
        let siblings = context.siblings(installation);
        let successors = Siblings::new(installation, &siblings).successors();
        // A successor whose deletion failed still reads the exports: this deletion fails too,
        // as upstream's does (upstream also asks for the same job; each of our installations
        // runs a deletion job of its own, so any failed one counts).
        let failed: Vec<String> = successors
            .iter()
            .filter(|s| s.meta().deletion_timestamp.is_some())
            .filter(|s| {
                s.status.as_ref().and_then(|s| s.phase.clone())
                    == Some(InstallationPhase::DeleteFailed)
            })
            .map(|s| s.name_any())
            .collect();
        if !failed.is_empty() {
            let message = format!(
                "Installation {name}: deletion of a sibling failed ({})",
                failed.join(", ")
            );
            let mut patch = status::finish(installation, InstallationPhase::DeleteFailed);
            patch["lastError"] =
                json!(status::last_error("Delete", "SiblingDeleteError", &message));
            status::patch(&api, installation, patch).await?;
            context
                .event(installation, true, "SiblingDeleteError", message)
                .await;
            return Ok(Action::await_change());
        }
        // A successor being deleted still reads the exports until it is gone, so deletion
        // runs backwards along the imports.
        let importers: Vec<String> = successors.iter().map(|s| s.name_any()).collect();
        if !importers.is_empty() {
            let message = format!(
                "Installation {name}: a sibling still imports some of the exports ({})",
                importers.join(", ")
            );
            if let Some(conditions) = status::condition(
                installation,
                ConditionStatus::False,
                "WaitingForSuccessors",
                message.clone(),
            ) {
                status::patch(&api, installation, json!({"conditions": conditions})).await?;
                context
                    .event(installation, false, "WaitingForSuccessors", message)
                    .await;
            }
            return Ok(Action::requeue(WAIT_RETRY));
        }
    }
    if let Some(value) = installation
        .annotations()
        .get(annotations::DELETE_WITHOUT_UNINSTALL)
    {
        annotate_children(
            installation,
            context,
            annotations::DELETE_WITHOUT_UNINSTALL,
            value,
        )
        .await?;
    }
    status::patch(
        &api,
        installation,
        status::phase(InstallationPhase::TriggerDelete),
    )
    .await?;
    Ok(Action::await_change())
}

async fn deleting(installation: &Installation, context: &Context) -> Result<Action, Error> {
    let name = installation.name_any();
    let api = context.installations(&installation.namespace().unwrap_or_default());
    let execution = context
        .executions(&installation.namespace().unwrap_or_default())
        .get_opt(&name)
        .await
        .map_err(|source| Error::api(installation, "read its Execution", source))?;
    let children = children(installation, context).await?;
    let mut failed: Vec<String> = children
        .iter()
        .filter(|c| {
            c.status.as_ref().and_then(|s| s.phase.clone()) == Some(InstallationPhase::DeleteFailed)
        })
        .map(|c| format!("subinstallation {}", c.name_any()))
        .collect();
    if execution
        .as_ref()
        .and_then(|e| e.status.as_ref())
        .and_then(|s| s.phase.clone())
        == Some(ExecutionPhase::DeleteFailed)
    {
        failed.push(format!("Execution {name}"));
    }
    if !failed.is_empty() {
        let message = format!(
            "Installation {name}: deleting failed: {}",
            failed.join(", ")
        );
        let mut patch = status::finish(installation, InstallationPhase::DeleteFailed);
        patch["lastError"] = json!(status::last_error("Delete", "DeleteFailed", &message));
        status::patch(&api, installation, patch).await?;
        context
            .event(installation, true, "DeleteFailed", message)
            .await;
        return Ok(Action::await_change());
    }
    if execution.is_some() || !children.is_empty() {
        return Ok(Action::requeue(WAIT_RETRY));
    }
    info!(name = %name, "all subobjects are gone: finalizer removed");
    let remaining: Vec<String> = installation
        .finalizers()
        .iter()
        .filter(|f| *f != finalizers::LANDSCAPER)
        .cloned()
        .collect();
    api.patch(
        &name,
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": remaining, "resourceVersion": installation.resource_version()}})),
    )
    .await
    .map_err(|source| Error::api(installation, "remove the finalizer", source))?;
    Ok(Action::await_change())
}
