//! Reconciles Executions: keeps one DeployItem per entry of `spec.deployItems` (found by the
//! labels `execution.landscaper.gardener.cloud/managed-by` and `/name`, owned by the
//! execution), starts each item's part of a job only once the items it depends on finished
//! that job Succeeded, ends the job Succeeded (exports collected into the DataObject named by
//! `status.exportRef`) or Failed (naming the failed item), and on deletion removes the items
//! in reverse dependency order before dropping the finalizer. All state lives on the objects:
//! a restarted controller resumes the job where the statuses say it stands.

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::controller::Action;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::watcher;
use kube::{Resource, ResourceExt};
use landscaper_api::constants::{annotations, finalizers, labels};
use landscaper_api::core::{
    DataObject, DeployItem, DeployItemPhase, DeployItemSpec, DeployItemTemplate, Execution,
    ExecutionPhase, LastError, ObjectReference, execution_data_object_name,
};
use landscaper_process::events::Events;
use serde_json::{Value, json};
use tracing::{info, warn};

use super::api_failure::ApiFailure;
use super::deployer_caches::drop_managed_fields;
use super::manager::{self, phase_label};
use super::ready::Ready;
use crate::health::Health;
use crate::metrics;

/// Field manager of this controller.
const MANAGER: &str = "landscaper-execution-controller";
/// Label naming the Execution that manages a DeployItem.
pub const MANAGED_BY_LABEL: &str = "execution.landscaper.gardener.cloud/managed-by";
/// Label naming the `spec.deployItems` entry a DeployItem was created from.
pub const NAME_LABEL: &str = "execution.landscaper.gardener.cloud/name";
/// The operation annotation value that interrupts a running job.
const INTERRUPT: &str = "interrupt";
/// The key of a deployer's export Secret holding the exported values (JSON).
const EXPORT_KEY: &str = "config";
/// How long to wait before retrying after an error.
const ERROR_RETRY: Duration = Duration::from_secs(15);

/// Shared handles of the controller.
pub struct Context {
    client: kube::Client,
    /// The DeployItems Executions manage, as the controller's watch of them sees them.
    items: Store<DeployItem>,
    /// The items' cache has listed once.
    items_listed: Ready,
    events: Events,
}

/// What went wrong while reconciling an Execution.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An API request failed.
    #[error(transparent)]
    Api(ApiFailure),
}

impl Error {
    /// When the API server refused the request as invalid (what the entry of
    /// `spec.deployItems` describes is refused on every retry): what was refused and the
    /// server's message.
    fn refusal(&self) -> Option<String> {
        let Self::Api(failure) = self;
        failure.refusal()
    }
}

/// Items keyed by the `spec.deployItems` entry they were made from.
fn by_template_name(items: impl IntoIterator<Item = DeployItem>) -> BTreeMap<String, DeployItem> {
    items
        .into_iter()
        .map(|item| {
            let key = item
                .labels()
                .get(NAME_LABEL)
                .cloned()
                .unwrap_or_else(|| item.name_any());
            (key, item)
        })
        .collect()
}

/// Runs the controller on the landscaper cluster until `shutdown` completes.
pub async fn run(
    client: kube::Client,
    workers: u16,
    health: Arc<Health>,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) {
    let executions: Api<Execution> = Api::all(client.clone());
    info!(workers, "starting the Execution controller");
    // The items' watch fills the cache before it triggers their Execution, so a reconcile
    // reads items at least as new as the change that caused it.
    let (items, writer) = reflector::store();
    let item_watch = manager::cached_watch(
        Api::<DeployItem>::all(client.clone()),
        watcher::Config::default().labels(MANAGED_BY_LABEL),
        drop_managed_fields,
        writer,
    );
    let context = Arc::new(Context {
        events: Events::new(client.clone(), MANAGER),
        client,
        items_listed: Ready::of(&items),
        items,
    });
    let controller = manager::slim_controller(executions, watcher::Config::default())
        // By the managed-by label, not the owner: items adopted from elsewhere (upstream's
        // state, a restore) have no owner reference until their next job.
        .watches_stream(item_watch, |item: DeployItem| {
            let namespace = item.namespace()?;
            let execution = item.labels().get(MANAGED_BY_LABEL)?;
            Some(ObjectRef::new(execution).within(&namespace))
        })
        .with_config(kube::runtime::controller::Config::default().concurrency(workers));
    let _counted = manager::count(&metrics::EXECUTIONS, controller.store(), |execution| {
        vec![phase_label(
            execution.status.as_ref().and_then(|s| s.phase.as_ref()),
        )]
    });
    manager::drive(
        "execution",
        controller,
        reconcile,
        manager::retry_after(ERROR_RETRY),
        context,
        health,
        shutdown,
    )
    .await;
}

async fn reconcile(execution: Arc<Execution>, context: Arc<Context>) -> Result<Action, Error> {
    let namespace = execution.namespace().unwrap_or_default();
    let name = execution.name_any();
    let job = Job::new(&context, &execution, &namespace, &name);
    // Before the items' watch has listed them, the cache holds none: a reconcile then would
    // create the items again and miss orphans.
    if !context.items_listed.wait().await {
        return Ok(Action::requeue(ERROR_RETRY));
    }
    let held = execution
        .finalizers()
        .iter()
        .any(|f| f == finalizers::LANDSCAPER);
    if execution.metadata.deletion_timestamp.is_some() {
        if held && job.cleanup(&execution).await? {
            job.remove_finalizer(&execution).await?;
        }
        return Ok(Action::await_change());
    }
    if !held {
        job.add_finalizer(&execution).await?;
    }
    job.apply(&execution).await
}

/// One reconcile of one Execution.
struct Job<'a> {
    /// The Execution as this reconcile read it: what its Events are about.
    execution: &'a Execution,
    events: &'a Events,
    namespace: &'a str,
    name: &'a str,
    cache: &'a Store<DeployItem>,
    executions: Api<Execution>,
    items: Api<DeployItem>,
    secrets: Api<Secret>,
    data_objects: Api<DataObject>,
}

/// Where the items of a job stand.
enum Progress {
    /// Some items have not finished the job yet.
    Running,
    /// An item finished the job Failed.
    Failed(String),
    /// The API server refused to create or update an item as invalid.
    Refused(String),
    /// Every item finished the job Succeeded.
    Succeeded,
}

impl<'a> Job<'a> {
    fn new(
        context: &'a Context,
        execution: &'a Execution,
        namespace: &'a str,
        name: &'a str,
    ) -> Self {
        let client = context.client.clone();
        Self {
            execution,
            events: &context.events,
            namespace,
            name,
            cache: &context.items,
            executions: Api::namespaced(client.clone(), namespace),
            items: Api::namespaced(client.clone(), namespace),
            secrets: Api::namespaced(client.clone(), namespace),
            data_objects: Api::namespaced(client, namespace),
        }
    }

    fn api_error(&self, action: impl Into<String>) -> impl FnOnce(kube::Error) -> Error {
        let action = action.into();
        move |source| Error::Api(ApiFailure::new(self.execution, action, source))
    }

    async fn apply(&self, execution: &Execution) -> Result<Action, Error> {
        let items = self.cached_items();
        if is_interrupted(execution) {
            self.propagate_annotation(&items, annotations::OPERATION, INTERRUPT)
                .await?;
            self.remove_operation().await?;
        }
        let status = execution.status.clone().unwrap_or_default();
        let Some(job_id) = status.job_id.clone() else {
            return Ok(Action::await_change());
        };
        if status.job_id_finished.as_ref() == Some(&job_id) {
            return Ok(Action::await_change());
        }
        let templates = &execution.spec.deploy_items;
        if let Err(message) = dependency_order(templates) {
            self.finish(
                &job_id,
                ExecutionPhase::Failed,
                Some(("InvalidDependencies", message)),
                None,
            )
            .await?;
            return Ok(Action::await_change());
        }
        if self.delete_orphans(execution, &items).await? {
            self.set_phase(ExecutionPhase::CleanupOrphaned).await?;
            return Ok(Action::await_change());
        }
        match self.progress(execution, &job_id, &items).await? {
            Progress::Running => {
                if status.phase != Some(ExecutionPhase::Progressing) {
                    self.set_phase(ExecutionPhase::Progressing).await?;
                }
            }
            Progress::Failed(message) => {
                info!(namespace = %self.namespace, name = %self.name, %job_id, "job failed");
                self.finish(
                    &job_id,
                    ExecutionPhase::Failed,
                    Some(("DeployItemFailed", message)),
                    None,
                )
                .await?;
            }
            Progress::Refused(message) => {
                info!(namespace = %self.namespace, name = %self.name, %job_id, "job failed: a DeployItem was refused");
                self.finish(
                    &job_id,
                    ExecutionPhase::Failed,
                    Some(("InvalidDeployItem", message)),
                    None,
                )
                .await?;
            }
            Progress::Succeeded => {
                let export_ref = self.write_exports(execution, &items).await?;
                info!(namespace = %self.namespace, name = %self.name, %job_id, "job succeeded");
                self.finish(&job_id, ExecutionPhase::Succeeded, None, Some(export_ref))
                    .await?;
            }
        }
        Ok(Action::await_change())
    }

    /// The DeployItems this execution manages, by their `spec.deployItems` name, as the API
    /// server lists them (deletion must not miss one the cache has not seen yet).
    async fn managed_items(&self) -> Result<BTreeMap<String, DeployItem>, Error> {
        let selector = format!("{MANAGED_BY_LABEL}={}", self.name);
        let list = self
            .items
            .list(&ListParams::default().labels(&selector))
            .await
            .map_err(self.api_error("list DeployItems"))?;
        Ok(by_template_name(list.items))
    }

    /// The DeployItems this execution manages, as the cache sees them.
    fn cached_items(&self) -> BTreeMap<String, DeployItem> {
        let mine = |item: &Arc<DeployItem>| {
            item.metadata.namespace.as_deref() == Some(self.namespace)
                && item.labels().get(MANAGED_BY_LABEL).map(String::as_str) == Some(self.name)
        };
        by_template_name(
            self.cache
                .state()
                .into_iter()
                .filter(mine)
                .map(|item| (*item).clone()),
        )
    }

    /// Deletes the items no entry of the spec wants; whether any is left to wait for.
    async fn delete_orphans(
        &self,
        execution: &Execution,
        items: &BTreeMap<String, DeployItem>,
    ) -> Result<bool, Error> {
        let wanted: BTreeSet<&str> = execution
            .spec
            .deploy_items
            .iter()
            .map(|t| t.name.as_str())
            .collect();
        let mut waiting = false;
        for (key, item) in items {
            if wanted.contains(key.as_str()) {
                continue;
            }
            waiting = true;
            if item.metadata.deletion_timestamp.is_none() {
                info!(namespace = %self.namespace, execution = %self.name, item = %item.name_any(), "deleting orphaned DeployItem");
                self.delete_item(item).await?;
            }
        }
        Ok(waiting)
    }

    /// Creates or updates and triggers the items whose dependencies finished, and says where
    /// the job stands.
    async fn progress(
        &self,
        execution: &Execution,
        job_id: &str,
        items: &BTreeMap<String, DeployItem>,
    ) -> Result<Progress, Error> {
        let templates = &execution.spec.deploy_items;
        let finished = |name: &str| -> Option<DeployItemPhase> {
            let status = items.get(name)?.status.as_ref()?;
            (status.job_id.as_deref() == Some(job_id)
                && status.job_id_finished.as_deref() == Some(job_id))
            .then(|| status.phase.clone().unwrap_or(DeployItemPhase::Failed))
        };
        // A failure ends the job as soon as it is known; items already running keep running.
        for template in templates {
            if let Some(phase) = finished(&template.name)
                && phase != DeployItemPhase::Succeeded
            {
                let item = &items[&template.name];
                let reason = item
                    .status
                    .as_ref()
                    .and_then(|s| s.last_error.as_ref())
                    .map(|e| format!(": {}", e.message))
                    .unwrap_or_default();
                return Ok(Progress::Failed(format!(
                    "DeployItem {} ({}) finished in phase {}{reason}",
                    item.name_any(),
                    template.name,
                    phase.as_str()
                )));
            }
        }
        let mut all_succeeded = true;
        for template in templates {
            if finished(&template.name).is_some() {
                continue;
            }
            all_succeeded = false;
            let started = items
                .get(&template.name)
                .and_then(|i| i.status.as_ref())
                .is_some_and(|s| s.job_id.as_deref() == Some(job_id));
            if started {
                continue;
            }
            let ready = template
                .depends_on
                .iter()
                .flatten()
                .all(|dep| finished(dep) == Some(DeployItemPhase::Succeeded));
            if ready {
                let item = match self
                    .ensure_item(execution, template, items.get(&template.name))
                    .await
                {
                    Ok(item) => item,
                    // A retry would be refused again: the job ends, items already started
                    // keep running.
                    Err(error) => match error.refusal() {
                        Some(message) => return Ok(Progress::Refused(message)),
                        None => return Err(error),
                    },
                };
                self.trigger(&item, job_id).await?;
            }
        }
        Ok(if all_succeeded {
            Progress::Succeeded
        } else {
            Progress::Running
        })
    }

    /// Creates the item of `template` or brings an existing one's spec up to date.
    async fn ensure_item(
        &self,
        execution: &Execution,
        template: &DeployItemTemplate,
        existing: Option<&DeployItem>,
    ) -> Result<DeployItem, Error> {
        let mut item_labels = template.labels.clone().unwrap_or_default();
        item_labels.insert(MANAGED_BY_LABEL.into(), self.name.into());
        item_labels.insert(NAME_LABEL.into(), template.name.clone());
        let spec = DeployItemSpec {
            type_: template.type_.clone(),
            target: template.target.clone(),
            context: execution.spec.context.clone(),
            config: Some(template.config.clone()),
            timeout: template.timeout.clone(),
            update_on_change_only: template.update_on_change_only,
            on_delete: template.on_delete.clone(),
        };
        let owner = owner_reference(execution);
        match existing {
            Some(item) => {
                let patch = json!({
                    "metadata": { "labels": item_labels, "ownerReferences": [owner] },
                    "spec": spec,
                });
                let action = format!("update DeployItem {}", item.name_any());
                self.merge_into_item(item, &patch, action).await
            }
            None => {
                let item = DeployItem {
                    metadata: ObjectMeta {
                        name: Some(item_name(self.name, &template.name)),
                        namespace: Some(self.namespace.to_owned()),
                        labels: Some(item_labels),
                        owner_references: Some(vec![owner]),
                        ..ObjectMeta::default()
                    },
                    spec,
                    status: None,
                };
                info!(namespace = %self.namespace, execution = %self.name, item = %template.name, "creating DeployItem");
                match self.items.create(&PostParams::default(), &item).await {
                    // The cache had not seen it yet: it is there, read it.
                    Err(kube::Error::Api(status)) if status.code == 409 => {
                        let name = item.name_any();
                        self.items
                            .get(&name)
                            .await
                            .map_err(self.api_error(format!("read DeployItem {name}")))
                    }
                    created => created.map_err(self.api_error(format!(
                        "create DeployItem for spec.deployItems {}",
                        template.name
                    ))),
                }
            }
        }
    }

    /// Starts the job on `item`.
    async fn trigger(&self, item: &DeployItem, job_id: &str) -> Result<(), Error> {
        let patch = json!({ "status": {
            "jobID": job_id,
            "jobIDGenerationTime": Time(Timestamp::now()),
        }});
        self.items
            .patch_status(
                &item.name_any(),
                &PatchParams::default(),
                &Patch::Merge(&patch),
            )
            .await
            .map_err(self.api_error(format!(
                "start job {job_id} on DeployItem {}",
                item.name_any()
            )))?;
        Ok(())
    }

    /// Collects the items' exports into the execution's DataObject.
    async fn write_exports(
        &self,
        execution: &Execution,
        items: &BTreeMap<String, DeployItem>,
    ) -> Result<ObjectReference, Error> {
        // Look again: the items passed in may predate the deployers' final writes.
        let fresh = self.cached_items();
        let mut data = serde_json::Map::new();
        for template in &execution.spec.deploy_items {
            let Some(item) = fresh
                .get(&template.name)
                .or_else(|| items.get(&template.name))
            else {
                continue;
            };
            let Some(reference) = item.status.as_ref().and_then(|s| s.export_ref.as_ref()) else {
                continue;
            };
            let secrets = match &reference.namespace {
                Some(ns) if ns != self.namespace => {
                    Api::<Secret>::namespaced(self.secrets.clone().into_client(), ns)
                }
                _ => self.secrets.clone(),
            };
            let secret = secrets
                .get(&reference.name)
                .await
                .map_err(self.api_error(format!(
                    "read the exports of DeployItem {} (Secret {})",
                    item.name_any(),
                    reference.name
                )))?;
            let value = secret
                .data
                .as_ref()
                .and_then(|d| d.get(EXPORT_KEY))
                .and_then(|bytes| serde_json::from_slice::<Value>(&bytes.0).ok())
                .unwrap_or(Value::Null);
            data.insert(template.name.clone(), value);
        }
        let name = execution_data_object_name(self.name);
        let object = DataObject {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                namespace: Some(self.namespace.to_owned()),
                labels: Some(BTreeMap::from([(
                    labels::DATA_CONTEXT.to_owned(),
                    format!("Exec.{}", self.name),
                )])),
                owner_references: Some(vec![owner_reference(execution)]),
                ..ObjectMeta::default()
            },
            data: Value::Object(data),
            // Spelled out: `Default` leaves both empty, which an apply patch refuses.
            api_version: landscaper_api::constants::API_VERSION.to_owned(),
            kind: "DataObject".to_owned(),
        };
        self.data_objects
            .patch(
                &name,
                &PatchParams::apply(MANAGER).force(),
                &Patch::Apply(&object),
            )
            .await
            .map_err(self.api_error(format!("write the exports DataObject {name}")))?;
        Ok(ObjectReference {
            name,
            namespace: Some(self.namespace.to_owned()),
        })
    }

    async fn set_phase(&self, phase: ExecutionPhase) -> Result<(), Error> {
        let patch = json!({ "status": {
            "phase": phase.as_str(),
            "phaseTransitionTime": Time(Timestamp::now()),
        }});
        self.patch_status(&patch, "set the phase").await
    }

    /// Ends the job: the final phase, `jobIDFinished` and, on failure, the last error and a
    /// Warning Event with its reason.
    async fn finish(
        &self,
        job_id: &str,
        phase: ExecutionPhase,
        error: Option<(&str, String)>,
        export_ref: Option<ObjectReference>,
    ) -> Result<(), Error> {
        let now = Time(Timestamp::now());
        let last_error = error.map(|(reason, message)| {
            warn!(namespace = %self.namespace, name = %self.name, %reason, %message, "Execution failed");
            LastError {
                operation: "Reconcile".into(),
                last_transition_time: now.clone(),
                last_update_time: now.clone(),
                reason: reason.into(),
                message,
                codes: Vec::new(),
            }
        });
        let mut status = json!({
            "phase": phase.as_str(),
            "phaseTransitionTime": now,
            "jobIDFinished": job_id,
            "lastError": &last_error,
            "transitionTimes": { "finishedTime": now },
        });
        if let Some(reference) = export_ref {
            status["exportRef"] = json!(reference);
        }
        self.patch_status(&json!({ "status": status }), "finish the job")
            .await?;
        if let Some(error) = last_error {
            let note = format!(
                "Execution {}/{}: {}",
                self.namespace, self.name, error.message
            );
            self.events
                .warning(self.execution, &error.reason, note)
                .await;
        }
        Ok(())
    }

    async fn patch_status(&self, patch: &Value, action: &str) -> Result<(), Error> {
        self.executions
            .patch_status(self.name, &PatchParams::default(), &Patch::Merge(patch))
            .await
            .map_err(self.api_error(action))?;
        Ok(())
    }

    async fn remove_operation(&self) -> Result<(), Error> {
        let patch = json!({ "metadata": { "annotations": { annotations::OPERATION: null } } });
        self.executions
            .patch(self.name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(self.api_error("remove the operation annotation"))?;
        Ok(())
    }

    /// Sets an annotation on every item that lacks it.
    async fn propagate_annotation(
        &self,
        items: &BTreeMap<String, DeployItem>,
        key: &str,
        value: &str,
    ) -> Result<(), Error> {
        for item in items.values() {
            if item.annotations().get(key).map(String::as_str) == Some(value) {
                continue;
            }
            let patch = json!({ "metadata": { "annotations": { key: value } } });
            let action = format!("annotate DeployItem {} with {key}", item.name_any());
            self.merge_into_item(item, &patch, action).await?;
        }
        Ok(())
    }

    /// Merges `patch` into `item`'s metadata and spec; `action` says what for the error.
    async fn merge_into_item(
        &self,
        item: &DeployItem,
        patch: &Value,
        action: String,
    ) -> Result<DeployItem, Error> {
        self.items
            .patch(
                &item.name_any(),
                &PatchParams::default(),
                &Patch::Merge(patch),
            )
            .await
            .map_err(self.api_error(action))
    }

    async fn delete_item(&self, item: &DeployItem) -> Result<(), Error> {
        match self
            .items
            .delete(&item.name_any(), &DeleteParams::background())
            .await
        {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(response)) if response.code == 404 => Ok(()),
            Err(error) => Err(self
                .api_error(format!("delete DeployItem {}", item.name_any()))(
                error
            )),
        }
    }

    /// Deletes the items, each only once no remaining item depends on it; the finalizer goes
    /// when none is left.
    async fn cleanup(&self, execution: &Execution) -> Result<bool, Error> {
        let items = self.managed_items().await?;
        if items.is_empty() {
            info!(namespace = %self.namespace, name = %self.name, "all DeployItems deleted");
            return Ok(true);
        }
        if execution
            .annotations()
            .contains_key(annotations::DELETE_WITHOUT_UNINSTALL)
        {
            self.propagate_annotation(&items, annotations::DELETE_WITHOUT_UNINSTALL, "true")
                .await?;
        }
        if let Some((key, item)) = items.iter().find(|(_, item)| {
            item.status.as_ref().and_then(|s| s.phase.clone())
                == Some(DeployItemPhase::DeleteFailed)
                && item.metadata.deletion_timestamp.is_some()
        }) {
            let job_id = execution
                .status
                .as_ref()
                .and_then(|s| s.job_id.clone())
                .unwrap_or_default();
            let message = format!(
                "DeployItem {} ({key}) could not be deleted{}",
                item.name_any(),
                item.status
                    .as_ref()
                    .and_then(|s| s.last_error.as_ref())
                    .map(|e| format!(": {}", e.message))
                    .unwrap_or_default()
            );
            if execution.status.as_ref().and_then(|s| s.phase.clone())
                != Some(ExecutionPhase::DeleteFailed)
            {
                self.finish(
                    &job_id,
                    ExecutionPhase::DeleteFailed,
                    Some(("DeleteFailed", message)),
                    None,
                )
                .await?;
            }
            return Ok(false);
        }
        // An item still needed by another remaining item waits for that one to go.
        let needed: BTreeSet<&str> = execution
            .spec
            .deploy_items
            .iter()
            .filter(|t| items.contains_key(&t.name))
            .flat_map(|t| t.depends_on.iter().flatten().map(String::as_str))
            .collect();
        for (key, item) in &items {
            if needed.contains(key.as_str()) || item.metadata.deletion_timestamp.is_some() {
                continue;
            }
            info!(namespace = %self.namespace, execution = %self.name, item = %item.name_any(), "deleting DeployItem");
            self.delete_item(item).await?;
        }
        if execution.status.as_ref().and_then(|s| s.phase.clone()) != Some(ExecutionPhase::Deleting)
        {
            self.set_phase(ExecutionPhase::Deleting).await?;
        }
        Ok(false)
    }

    async fn add_finalizer(&self, execution: &Execution) -> Result<(), Error> {
        let mut list = execution.finalizers().to_vec();
        list.push(finalizers::LANDSCAPER.to_owned());
        self.set_finalizers(execution, list, "add the finalizer")
            .await
    }

    async fn remove_finalizer(&self, execution: &Execution) -> Result<(), Error> {
        let list: Vec<String> = execution
            .finalizers()
            .iter()
            .filter(|f| *f != finalizers::LANDSCAPER)
            .cloned()
            .collect();
        self.set_finalizers(execution, list, "remove the finalizer")
            .await
    }

    /// Writes the finalizer list, guarded by the resource version it was computed from.
    async fn set_finalizers(
        &self,
        execution: &Execution,
        list: Vec<String>,
        action: &str,
    ) -> Result<(), Error> {
        let patch = json!({ "metadata": {
            "finalizers": list,
            "resourceVersion": execution.resource_version(),
        }});
        match self
            .executions
            .patch(self.name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(response)) if response.code == 404 => Ok(()),
            Err(error) => Err(self.api_error(action)(error)),
        }
    }
}

fn is_interrupted(execution: &Execution) -> bool {
    execution
        .annotations()
        .get(annotations::OPERATION)
        .map(String::as_str)
        == Some(INTERRUPT)
}

/// The name of the DeployItem of entry `item` of execution `execution`.
fn item_name(execution: &str, item: &str) -> String {
    let name = format!("{execution}-{item}");
    if name.len() <= 253 {
        name
    } else {
        landscaper_api::core::data_object_name("DeployItem", &name)
    }
}

fn owner_reference(execution: &Execution) -> OwnerReference {
    OwnerReference {
        api_version: Execution::api_version(&()).into_owned(),
        kind: Execution::kind(&()).into_owned(),
        name: execution.name_any(),
        uid: execution.uid().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// The items in an order where each follows the items it depends on, or why there is none:
/// an unknown dependency or a cycle, named.
pub fn dependency_order(templates: &[DeployItemTemplate]) -> Result<Vec<String>, String> {
    let names: BTreeSet<&str> = templates.iter().map(|t| t.name.as_str()).collect();
    for template in templates {
        for dep in template.depends_on.iter().flatten() {
            if !names.contains(dep.as_str()) {
                return Err(format!(
                    "spec.deployItems {}: dependsOn names {dep}, which is not an item of this execution",
                    template.name
                ));
            }
        }
    }
    let mut done: Vec<String> = Vec::new();
    let mut left: Vec<&DeployItemTemplate> = templates.iter().collect();
    while !left.is_empty() {
        let (ready, blocked): (Vec<_>, Vec<_>) = left.into_iter().partition(|t| {
            t.depends_on
                .iter()
                .flatten()
                .all(|dep| done.iter().any(|d| d == dep))
        });
        if ready.is_empty() {
            let cycle: Vec<&str> = blocked.iter().map(|t| t.name.as_str()).collect();
            return Err(format!(
                "spec.deployItems: dependency cycle among {}",
                cycle.join(", ")
            ));
        }
        done.extend(ready.into_iter().map(|t| t.name.clone()));
        left = blocked;
    }
    Ok(done)
}
