//! The phases of an installation's job: `Init` → `ObjectsCreated` → `Progressing` →
//! `Completing` → `Succeeded`/`Failed`, each step idempotent so a restart resumes it.

use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::Action;
use landscaper_api::constants::annotations;
use landscaper_api::core::{
    ConditionStatus, DataObject, Execution, ExecutionPhase, Installation, InstallationPhase,
};
use landscaper_blueprint::{MemoryState, Templater};
use serde_json::{Map, Value as Json, json};
use tracing::info;

use super::operations::{children, is_root};
use super::scope::{self, PredecessorState};
use super::{Context, Error, WAIT_RETRY, imports, retry, status, subobjects};

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
    let message = format!("Installation {name}: {message}");
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

/// Records why the installation waits and looks again later.
async fn wait(
    installation: &Installation,
    context: &Context,
    reason: &str,
    message: String,
    after: Duration,
) -> Result<Action, Error> {
    let message = format!("Installation {}: {message}", installation.name_any());
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
    let siblings = scope::siblings(installation, context).await?;
    if let Some(cycle) = scope::cycle(installation, &siblings) {
        return fail(
            installation,
            context,
            "Init",
            "DependencyCycle",
            format!(
                "a dependency cycle between siblings: {}",
                cycle.join(" -> ")
            ),
        )
        .await;
    }
    let job = job(installation);
    let root = is_root(installation);
    for predecessor in scope::predecessors(installation, &siblings) {
        let name = predecessor.name_any();
        match scope::predecessor_state(predecessor, job.as_deref(), root) {
            PredecessorState::Done => {}
            PredecessorState::Waiting => {
                return wait(
                    installation,
                    context,
                    "WaitingForPredecessor",
                    format!("waiting for predecessor {name}"),
                    WAIT_RETRY,
                )
                .await;
            }
            PredecessorState::Failed if root => {
                return wait(
                    installation,
                    context,
                    "PredecessorFailed",
                    format!("waiting for predecessor {name}, whose last job did not succeed"),
                    WAIT_RETRY,
                )
                .await;
            }
            PredecessorState::Failed => {
                return fail(
                    installation,
                    context,
                    "Init",
                    "PredecessorFailed",
                    format!("predecessor {name} did not succeed"),
                )
                .await;
            }
        }
    }
    let resolved = match subobjects::blueprint(installation, context).await? {
        Ok(resolved) => resolved,
        Err(message) => {
            return fail(installation, context, "Init", "BlueprintError", message).await;
        }
    };
    let values = match imports::read(installation, context).await? {
        Ok(values) => values,
        Err(message) => return fail(installation, context, "Init", "ImportError", message).await,
    };
    let desired = match subobjects::render(installation, &resolved, &values) {
        Ok(desired) => desired,
        Err(message) => return fail(installation, context, "Init", "TemplateError", message).await,
    };
    let execution =
        subobjects::apply_execution(installation, context, &desired.deploy_items).await?;
    subobjects::apply_subinstallations(installation, context, &desired.subinstallations).await?;
    let mut patch = status::phase(InstallationPhase::ObjectsCreated);
    patch["importsHash"] = json!(imports::hash(&values));
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
    for child in children(installation, context).await? {
        api.patch_status(&child.name_any(), &params, &start)
            .await
            .map_err(|source| {
                Error::api(
                    installation,
                    format!("pass the job ID to subinstallation {}", child.name_any()),
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
        let execution = context
            .executions(&namespace)
            .get_opt(&installation.name_any())
            .await
            .map_err(|source| Error::api(installation, "read its Execution", source))?;
        match execution.and_then(|e| e.status) {
            Some(s) if s.job_id_finished == job => {
                if s.phase != Some(ExecutionPhase::Succeeded) {
                    failed.push(format!(
                        "Execution {} ended {}",
                        installation.name_any(),
                        s.phase.map(|p| p.to_string()).unwrap_or_default()
                    ));
                }
            }
            _ => unfinished.push(format!("Execution {}", installation.name_any())),
        }
    }
    for child in children(installation, context).await? {
        let s = child.status.clone().unwrap_or_default();
        if s.job_id_finished != job {
            unfinished.push(format!("subinstallation {}", child.name_any()));
        } else if s.phase != Some(InstallationPhase::Succeeded) {
            failed.push(format!(
                "subinstallation {} ended {}",
                child.name_any(),
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
    let values = match imports::read(installation, context).await? {
        Ok(values) => values,
        Err(message) => {
            return fail(installation, context, "Completing", "ImportError", message).await;
        }
    };
    let recorded = installation
        .status
        .as_ref()
        .and_then(|s| s.imports_hash.clone());
    if recorded.as_deref() != Some(imports::hash(&values).as_str()) {
        return fail(
            installation,
            context,
            "Completing",
            "ImportsChanged",
            "the imports changed during the job".into(),
        )
        .await;
    }
    if let Err(message) = write_exports(installation, context, &values).await? {
        return fail(installation, context, "Completing", "ExportError", message).await;
    }
    trigger_successors(installation, context).await?;
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
    Ok(Action::await_change())
}

/// Computes the exports (the blueprint's export executions over the Execution's exports and
/// the subinstallations' exported DataObjects) and writes those `spec.exports.data` names.
async fn write_exports(
    installation: &Installation,
    context: &Context,
    values: &Map<String, Json>,
) -> Result<Result<(), String>, Error> {
    let wanted = installation
        .spec
        .exports
        .as_ref()
        .and_then(|e| e.data.clone())
        .unwrap_or_default();
    if wanted.is_empty() {
        return Ok(Ok(()));
    }
    let namespace = installation.namespace().unwrap_or_default();
    let objects: Api<DataObject> = Api::namespaced(context.client.clone(), &namespace);
    let mut deploy_items = Json::Object(Map::new());
    if installation
        .status
        .as_ref()
        .and_then(|s| s.execution_ref.as_ref())
        .is_some()
    {
        let execution: Option<Execution> = context
            .executions(&namespace)
            .get_opt(&installation.name_any())
            .await
            .map_err(|source| Error::api(installation, "read its Execution", source))?;
        if let Some(reference) = execution.and_then(|e| e.status).and_then(|s| s.export_ref) {
            let object = objects.get_opt(&reference.name).await.map_err(|source| {
                Error::api(
                    installation,
                    format!(
                        "read the Execution's exports (DataObject {})",
                        reference.name
                    ),
                    source,
                )
            })?;
            match object {
                Some(object) => deploy_items = object.data,
                None => {
                    return Ok(Err(format!(
                        "the Execution's exports: DataObject {} not found",
                        reference.name
                    )));
                }
            }
        }
    }
    let own_context = format!("Inst.{}", installation.name_any());
    let mut dataobjects = Map::new();
    for child in children(installation, context).await? {
        for export in child
            .spec
            .exports
            .iter()
            .flat_map(|e| e.data.iter().flatten())
        {
            let name = landscaper_api::core::data_object_name(&own_context, &export.data_ref);
            if let Some(object) = objects.get_opt(&name).await.map_err(|source| {
                Error::api(
                    installation,
                    format!("read DataObject {name} exported by {}", child.name_any()),
                    source,
                )
            })? {
                dataobjects.insert(export.data_ref.clone(), object.data);
            }
        }
    }
    let mut values_for_exports = Map::new();
    values_for_exports.insert("deployitems".into(), deploy_items);
    values_for_exports.insert("dataobjects".into(), Json::Object(dataobjects));
    let resolved = match subobjects::blueprint(installation, context).await? {
        Ok(resolved) => resolved,
        Err(message) => return Ok(Err(message)),
    };
    let options = subobjects::options(installation, &resolved, values);
    let state = MemoryState::default();
    let mut exports = match Templater::new(&state).export_executions(&options, &values_for_exports)
    {
        Ok(exports) => exports,
        Err(e) => return Ok(Err(e.to_string())),
    };
    // Plain export data mappings are taken as written; expressions are the dataflow module's.
    for (key, value) in installation.spec.export_data_mappings.iter().flatten() {
        exports.insert(key.clone(), value.clone());
    }
    let data_context = imports::data_context(installation);
    for export in wanted {
        let Some(value) = exports.get(&export.name) else {
            return Ok(Err(format!(
                "export {} was not computed by the blueprint's export executions",
                export.name
            )));
        };
        imports::write_export(
            installation,
            context,
            &data_context,
            &export.data_ref,
            value.clone(),
        )
        .await?;
    }
    Ok(Ok(()))
}

/// Wakes the siblings that import this installation's exports.
async fn trigger_successors(installation: &Installation, context: &Context) -> Result<(), Error> {
    let siblings = scope::siblings(installation, context).await?;
    let api = api(installation, context);
    let reason = format!(
        "predecessor {} finished job {}",
        installation.name_any(),
        job(installation).unwrap_or_default()
    );
    for successor in siblings
        .iter()
        .filter(|s| scope::imports_from(s, installation))
    {
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
