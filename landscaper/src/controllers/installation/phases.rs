//! The phases of an installation's job: `Init` → `ObjectsCreated` → `Progressing` →
//! `Completing` → `Succeeded`/`Failed`, each step idempotent so a restart resumes it.

use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::Action;
use landscaper_api::constants::annotations;
use landscaper_api::core::{ConditionStatus, ExecutionPhase, Installation, InstallationPhase};
use landscaper_blueprint::ExecutionKind;
use landscaper_blueprint::source::ResolvedBlueprint;
use serde_json::json;
use tracing::info;

use super::order::{PredecessorState, Siblings, predecessor_state};
use super::{Context, Error, WAIT_RETRY, retry, state, status, subobjects};
use crate::dataflow::{self, DataflowError, Imports, Scope};

/// The longest interval between two looks at a `Progressing` job.
const PROGRESSING_MAX: Duration = Duration::from_secs(60);

/// Advances the installation's job by one phase.
pub async fn reconcile(installation: &Installation, context: &Context) -> Result<Action, Error> {
    if !status::job_running(installation) {
        return retry::reconcile(installation, context).await;
    }
    let phase = installation.status.as_ref().and_then(|s| s.phase.clone());
    match phase {
        Some(InstallationPhase::Init) => init(installation, context).await,
        Some(InstallationPhase::ObjectsCreated) => objects_created(installation, context).await,
        Some(InstallationPhase::Progressing) => progressing(installation, context).await,
        Some(InstallationPhase::Completing) => completing(installation, context).await,
        // A new job ID from the parent (or a job before its first phase): the job starts.
        _ => {
            let api = api(installation, context);
            let mut patch = status::phase(InstallationPhase::Init);
            patch["observedGeneration"] = json!(installation.metadata.generation);
            patch["lastError"] = json!(null);
            status::patch(&api, installation, patch).await?;
            Ok(Action::await_change())
        }
    }
}

fn api(installation: &Installation, context: &Context) -> Api<Installation> {
    context.installations(&installation.namespace().unwrap_or_default())
}

fn job(installation: &Installation) -> Option<String> {
    installation.status.as_ref().and_then(|s| s.job_id.clone())
}

/// Ends the job Failed with `message` (naming the installation), without a hot retry.
pub async fn fail(
    installation: &Installation,
    context: &Context,
    operation: &str,
    reason: &str,
    message: String,
) -> Result<Action, Error> {
    let name = installation.name_any();
    let message = qualified(installation, message);
    info!(name = %name, reason, message = %message, "job failed");
    let mut patch = status::finish(installation, InstallationPhase::Failed);
    patch["lastError"] = json!(status::last_error(operation, reason, &message));
    if let Some(conditions) = status::condition(
        installation,
        ConditionStatus::False,
        reason,
        message.clone(),
    ) {
        patch["conditions"] = conditions;
    }
    status::patch(&api(installation, context), installation, patch).await?;
    context.event(installation, true, reason, message).await;
    Ok(Action::await_change())
}

/// `message` prefixed with the installation, unless it names it already.
fn qualified(installation: &Installation, message: String) -> String {
    let namespace = installation.namespace().unwrap_or_default();
    let name = installation.name_any();
    if message.starts_with(&format!("Installation {namespace}/{name}")) {
        message
    } else {
        format!("Installation {namespace}/{name}: {message}")
    }
}

/// Ends the job Failed for a data-flow error, or returns an API failure to be retried.
async fn fail_dataflow(
    installation: &Installation,
    context: &Context,
    operation: &str,
    error: DataflowError,
) -> Result<Action, Error> {
    let reason = match &error {
        DataflowError::Api { .. } => return Err(Error::Dataflow(error)),
        DataflowError::ImportNotFound(_) => "ImportNotFound",
        DataflowError::InvalidImport(_) => "InvalidImport",
        DataflowError::Mapping(_) => "DataMappingError",
        DataflowError::InvalidExport(_) => "InvalidExport",
        DataflowError::Template { .. } => "TemplateError",
    };
    fail(installation, context, operation, reason, error.to_string()).await
}

/// Records why the installation waits and looks again later.
async fn wait(
    installation: &Installation,
    context: &Context,
    reason: &str,
    message: String,
    after: Duration,
) -> Result<Action, Error> {
    let message = qualified(installation, message);
    if let Some(conditions) = status::condition(
        installation,
        ConditionStatus::False,
        reason,
        message.clone(),
    ) {
        status::patch(
            &api(installation, context),
            installation,
            json!({"conditions": conditions}),
        )
        .await?;
        context.event(installation, false, reason, message).await;
    }
    Ok(Action::requeue(after))
}

async fn init(installation: &Installation, context: &Context) -> Result<Action, Error> {
    let scope = match context.scope(installation) {
        Ok(scope) => scope,
        Err(message) => {
            return wait(
                installation,
                context,
                "WaitingForParent",
                message,
                WAIT_RETRY,
            )
            .await;
        }
    };
    if let Some(action) = wait_for_predecessors(installation, context, &scope).await? {
        return Ok(action);
    }
    let (resolved, imports) =
        match blueprint_and_imports(installation, context, &scope, "Init").await? {
            Ok(found) => found,
            Err(failed) => return Ok(failed),
        };
    let client = &context.client;
    let mut options = subobjects::options(installation, &resolved, &imports.values, context);
    options.imports = match dataflow::import_executions(&scope, &options) {
        Ok(values) => values,
        Err(error) => return fail_dataflow(installation, context, "Init", error).await,
    };
    if let Err(error) = dataflow::write_imports(
        client,
        installation,
        &resolved.blueprint,
        &options.imports,
        &scope,
    )
    .await
    {
        return fail_dataflow(installation, context, "Init", error).await;
    }
    let kinds = [ExecutionKind::Deploy, ExecutionKind::Subinstallation];
    let stored = state::load(installation, context, &options, &kinds).await?;
    let desired = match subobjects::render(installation, &options, &stored.state) {
        Ok(desired) => desired,
        Err(message) => return fail(installation, context, "Init", "TemplateError", message).await,
    };
    state::save(installation, context, &stored).await?;
    let execution =
        match subobjects::apply_execution(installation, context, &desired.deploy_items).await {
            Ok(execution) => execution,
            Err(error) => {
                return fail_refused(installation, context, "InvalidExecution", error).await;
            }
        };
    let active =
        match subobjects::apply_subinstallations(installation, context, &desired.subinstallations)
            .await
        {
            Ok(active) => active,
            Err(error) => {
                return fail_refused(installation, context, "InvalidSubinstallation", error).await;
            }
        };
    let mut patch = status::phase(InstallationPhase::ObjectsCreated);
    patch["subInstCache"] = json!({"activeSubs": active});
    patch["importsHash"] = json!(imports.hash);
    patch["executionRef"] = json!(execution);
    if let Some(conditions) = status::condition(
        installation,
        ConditionStatus::True,
        "ObjectsCreated",
        format!(
            "Installation {}: Execution and subinstallations are up to date",
            installation.name_any()
        ),
    ) {
        patch["conditions"] = conditions;
    }
    status::patch(&api(installation, context), installation, patch).await?;
    Ok(Action::await_change())
}

/// Ends the job Failed in `Init` with `reason` when the API server refused an object the
/// blueprint rendered (the same object is refused on every retry); any other error is
/// returned to be retried.
async fn fail_refused(
    installation: &Installation,
    context: &Context,
    reason: &str,
    error: Error,
) -> Result<Action, Error> {
    match error.refusal() {
        Some(message) => fail(installation, context, "Init", reason, message).await,
        None => Err(error),
    }
}

/// The installation's blueprint and its imports read in `scope`; `Err` is the action after
/// the job was failed (in `operation`) because one of them could not be had.
async fn blueprint_and_imports(
    installation: &Installation,
    context: &Context,
    scope: &Scope,
    operation: &str,
) -> Result<Result<(ResolvedBlueprint, Imports), Action>, Error> {
    let resolved = match subobjects::blueprint(installation, context).await? {
        Ok(resolved) => resolved,
        Err(message) => {
            let failed = fail(installation, context, operation, "BlueprintError", message);
            return failed.await.map(Err);
        }
    };
    let read = dataflow::read_imports(
        &context.client,
        installation,
        &resolved.blueprint,
        &resolved.filesystem,
        scope,
    )
    .await;
    match read {
        Ok(imports) => Ok(Ok((resolved, imports))),
        Err(error) => fail_dataflow(installation, context, operation, error)
            .await
            .map(Err),
    }
}

/// Fails the job on a cycle between siblings, waits while a predecessor has not finished;
/// `None` when every predecessor finished and succeeded.
async fn wait_for_predecessors(
    installation: &Installation,
    context: &Context,
    scope: &Scope,
) -> Result<Option<Action>, Error> {
    let siblings = Siblings::new(installation, &scope.siblings);
    if let Some(cycle) = siblings.cycle() {
        let message = format!(
            "a dependency cycle between siblings: {}",
            cycle.join(" -> ")
        );
        return fail(installation, context, "Init", "DependencyCycle", message)
            .await
            .map(Some);
    }
    let job = job(installation);
    let root = scope.is_root();
    for predecessor in siblings.predecessors() {
        let name = predecessor.name_any();
        let action = match predecessor_state(predecessor, job.as_deref(), root) {
            PredecessorState::Done => continue,
            PredecessorState::Waiting => {
                let message = format!("waiting for predecessor {name}");
                wait(
                    installation,
                    context,
                    "WaitingForPredecessor",
                    message,
                    WAIT_RETRY,
                )
                .await?
            }
            PredecessorState::Failed if root => {
                let message =
                    format!("waiting for predecessor {name}, whose last job did not succeed");
                wait(
                    installation,
                    context,
                    "PredecessorFailed",
                    message,
                    WAIT_RETRY,
                )
                .await?
            }
            PredecessorState::Failed => {
                let message = format!("predecessor {name} did not succeed");
                fail(installation, context, "Init", "PredecessorFailed", message).await?
            }
        };
        return Ok(Some(action));
    }
    Ok(None)
}

async fn objects_created(installation: &Installation, context: &Context) -> Result<Action, Error> {
    let job = job(installation);
    let namespace = installation.namespace().unwrap_or_default();
    let params = PatchParams::default();
    let start = Patch::Merge(json!({"status": {"jobID": job}}));
    if installation
        .status
        .as_ref()
        .and_then(|s| s.execution_ref.as_ref())
        .is_some()
    {
        context
            .executions(&namespace)
            .patch_status(&installation.name_any(), &params, &start)
            .await
            .map_err(|source| {
                Error::api(installation, "pass the job ID to its Execution", source)
            })?;
    }
    let api = api(installation, context);
    for child in active_subinstallations(installation) {
        api.patch_status(&child, &params, &start)
            .await
            .map_err(|source| {
                Error::api(
                    installation,
                    format!("pass the job ID to subinstallation {child}"),
                    source,
                )
            })?;
    }
    status::patch(
        &api,
        installation,
        status::phase(InstallationPhase::Progressing),
    )
    .await?;
    Ok(Action::await_change())
}

/// The subinstallations `Init` created or updated in this job (`status.subInstCache`).
fn active_subinstallations(installation: &Installation) -> Vec<String> {
    installation
        .status
        .as_ref()
        .and_then(|s| s.sub_inst_cache.as_ref())
        .map(|cache| {
            cache
                .active_subs
                .iter()
                .filter_map(|pair| pair.object_name.clone())
                .collect()
        })
        .unwrap_or_default()
}

/// How long to wait before the next look at a job progressing since `since`: a quarter of
/// the time it has taken so far, between one second and [`PROGRESSING_MAX`].
fn progressing_interval(since: Option<Timestamp>) -> Duration {
    let elapsed = since
        .map(|t| Timestamp::now().duration_since(t).unsigned_abs())
        .unwrap_or_default();
    (elapsed / 4).clamp(Duration::from_secs(1), PROGRESSING_MAX)
}

async fn progressing(installation: &Installation, context: &Context) -> Result<Action, Error> {
    let job = job(installation);
    let namespace = installation.namespace().unwrap_or_default();
    let mut unfinished = Vec::new();
    let mut failed = Vec::new();
    if installation
        .status
        .as_ref()
        .and_then(|s| s.execution_ref.as_ref())
        .is_some()
    {
        match context
            .execution(installation)
            .and_then(|e| e.status.clone())
        {
            Some(s) if s.job_id_finished == job => {
                if s.phase != Some(ExecutionPhase::Succeeded) {
                    // Its last error says why (an item that failed, one the server refused).
                    let why = s
                        .last_error
                        .as_ref()
                        .map(|e| format!(" ({}: {})", e.reason, e.message))
                        .unwrap_or_default();
                    failed.push(format!(
                        "Execution {} ended {}{why}",
                        installation.name_any(),
                        s.phase.map(|p| p.to_string()).unwrap_or_default()
                    ));
                }
            }
            _ => unfinished.push(format!("Execution {}", installation.name_any())),
        }
    }
    for name in active_subinstallations(installation) {
        let s = context
            .installation(&namespace, &name)
            .and_then(|child| child.status.clone())
            .unwrap_or_default();
        if s.job_id_finished != job {
            unfinished.push(format!("subinstallation {name}"));
        } else if s.phase != Some(InstallationPhase::Succeeded) {
            failed.push(format!(
                "subinstallation {name} ended {}",
                s.phase.map(|p| p.to_string()).unwrap_or_default()
            ));
        }
    }
    if !unfinished.is_empty() {
        let since = installation
            .status
            .as_ref()
            .and_then(|s| s.phase_transition_time.as_ref())
            .map(|t| t.0);
        return wait(
            installation,
            context,
            "Progressing",
            format!("waiting for {}", unfinished.join(", ")),
            progressing_interval(since),
        )
        .await;
    }
    if !failed.is_empty() {
        return fail(
            installation,
            context,
            "Progressing",
            "SubobjectsFailed",
            failed.join("; "),
        )
        .await;
    }
    status::patch(
        &api(installation, context),
        installation,
        status::phase(InstallationPhase::Completing),
    )
    .await?;
    Ok(Action::await_change())
}

async fn completing(installation: &Installation, context: &Context) -> Result<Action, Error> {
    let observed = installation
        .status
        .as_ref()
        .and_then(|s| s.observed_generation);
    if installation.metadata.generation != observed {
        return fail(
            installation,
            context,
            "Completing",
            "SpecChanged",
            format!(
                "the spec changed during the job (generation {}, the job started at {})",
                installation.metadata.generation.unwrap_or_default(),
                observed.unwrap_or_default()
            ),
        )
        .await;
    }
    let scope = match context.scope(installation) {
        Ok(scope) => scope,
        Err(message) => {
            return fail(
                installation,
                context,
                "Completing",
                "ParentNotFound",
                message,
            )
            .await;
        }
    };
    let (resolved, imports) =
        match blueprint_and_imports(installation, context, &scope, "Completing").await? {
            Ok(found) => found,
            Err(failed) => return Ok(failed),
        };
    let client = &context.client;
    let recorded = installation
        .status
        .as_ref()
        .and_then(|s| s.imports_hash.clone());
    if recorded.as_deref() != Some(imports.hash.as_str()) {
        return fail(
            installation,
            context,
            "Completing",
            "ImportsChanged",
            "the imports changed during the job".into(),
        )
        .await;
    }
    if has_exports(installation) {
        let options = subobjects::options(installation, &resolved, &imports.values, context);
        let stored = state::load(installation, context, &options, &[ExecutionKind::Export]).await?;
        if let Err(error) =
            dataflow::write_exports(client, installation, &options, &stored.state, &scope).await
        {
            return fail_dataflow(installation, context, "Completing", error).await;
        }
        state::save(installation, context, &stored).await?;
    }
    trigger_successors(installation, context, &scope).await?;
    let mut patch = status::finish(installation, InstallationPhase::Succeeded);
    if let Some(conditions) = status::condition(
        installation,
        ConditionStatus::True,
        "Succeeded",
        format!(
            "Installation {}: the job succeeded",
            installation.name_any()
        ),
    ) {
        patch["conditions"] = conditions;
    }
    status::patch(&api(installation, context), installation, patch).await?;
    let note = qualified(
        installation,
        format!("job {} succeeded", job(installation).unwrap_or_default()),
    );
    context
        .event(installation, false, "JobSucceeded", note)
        .await;
    Ok(Action::await_change())
}

/// Whether `spec.exports` names anything to write (the export executions run only then).
fn has_exports(installation: &Installation) -> bool {
    installation.spec.exports.as_ref().is_some_and(|exports| {
        exports.data.as_ref().is_some_and(|d| !d.is_empty())
            || exports.targets.as_ref().is_some_and(|t| !t.is_empty())
    })
}

/// Wakes the siblings that import this installation's exports.
async fn trigger_successors(
    installation: &Installation,
    context: &Context,
    scope: &Scope,
) -> Result<(), Error> {
    let api = api(installation, context);
    let reason = format!(
        "predecessor {} finished job {}",
        installation.name_any(),
        job(installation).unwrap_or_default()
    );
    for successor in Siblings::new(installation, &scope.siblings).successors() {
        api.patch(
            &successor.name_any(),
            &PatchParams::default(),
            &Patch::Merge(
                json!({"metadata": {"annotations": {annotations::RECONCILE_REASON: reason}}}),
            ),
        )
        .await
        .map_err(|source| {
            Error::api(
                installation,
                format!("trigger successor {}", successor.name_any()),
                source,
            )
        })?;
    }
    Ok(())
}
