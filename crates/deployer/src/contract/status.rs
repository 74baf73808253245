//! The writes of the contract: status patches (pickup, phase, error, final) on the status
//! subresource, and one metadata patch for the finalizer and the operation annotation.

use crate::error::{Error, describe_kube_error};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Patch, PatchParams};
use landscaper_api::constants::{annotations, finalizers};
use landscaper_api::core::{
    DeployItem, DeployItemPhase, DeployerInformation, LastError, ObjectReference,
};
use serde_json::{Value, json};

/// The finished state of a job.
#[derive(Debug, Clone)]
pub struct Final {
    /// Succeeded, Failed or DeleteFailed.
    pub phase: DeployItemPhase,
    /// The job that finished.
    pub job_id: String,
    /// The error, for a failed job.
    pub error: Option<Error>,
    /// The deployer's provider status, when it has one.
    pub provider_status: Option<Value>,
    /// The export Secret, when there are exports.
    pub export_ref: Option<ObjectReference>,
}

/// Writes a DeployItem's status and metadata.
pub struct StatusWriter {
    api: kube::Api<DeployItem>,
    name: String,
}

/// `lastError` as the API shows it; the transition time is kept while the error stays the same.
pub fn last_error(e: &Error, previous: Option<&LastError>, now: Timestamp) -> LastError {
    let same = previous.is_some_and(|p| p.reason == e.reason && p.operation == e.operation);
    LastError {
        operation: e.operation.clone(),
        last_transition_time: previous
            .filter(|_| same)
            .map_or(Time(now), |p| p.last_transition_time.clone()),
        last_update_time: Time(now),
        reason: e.reason.clone(),
        message: e.message.clone(),
        codes: e.codes.clone(),
    }
}

impl StatusWriter {
    /// A writer for `item`.
    pub fn new(client: kube::Client, item: &DeployItem) -> Self {
        let ns = item.metadata.namespace.clone().unwrap_or_default();
        Self {
            api: kube::Api::namespaced(client, &ns),
            name: item.metadata.name.clone().unwrap_or_default(),
        }
    }

    async fn patch_status(&self, status: Value, step: &str) -> Result<DeployItem, Error> {
        self.api
            .patch_status(
                &self.name,
                &PatchParams::default(),
                &Patch::Merge(json!({ "status": status })),
            )
            .await
            .map_err(|e| {
                Error::transient(
                    step,
                    "StatusWriteFailed",
                    format!("DeployItem {}: {}", self.name, describe_kube_error(&e)),
                )
            })
    }

    /// The pickup: phase Init (InitDelete for a deletion), lastReconcileTime,
    /// observedGeneration and the deployer; a minted job ID; errors of earlier jobs cleared.
    pub async fn pickup(
        &self,
        item: &DeployItem,
        phase: DeployItemPhase,
        job_id: Option<&str>,
        deployer: &DeployerInformation,
        now: Timestamp,
    ) -> Result<DeployItem, Error> {
        let mut status = json!({
            "phase": phase,
            "lastReconcileTime": Time(now),
            "observedGeneration": item.metadata.generation.unwrap_or(0),
            "deployer": deployer,
            "lastError": null,
            "transitionTimes": { "initTime": Time(now), "finishedTime": null },
        });
        if let Some(id) = job_id {
            status["jobID"] = json!(id);
            status["jobIDGenerationTime"] = json!(Time(now));
        }
        self.patch_status(status, "Pickup").await
    }

    /// Only `lastReconcileTime` (a re-apply outside of a job, e.g. continuous reconcile).
    pub async fn touch(&self, now: Timestamp) -> Result<DeployItem, Error> {
        self.patch_status(json!({ "lastReconcileTime": Time(now) }), "Pickup")
            .await
    }

    /// A new phase.
    pub async fn phase(&self, phase: DeployItemPhase) -> Result<DeployItem, Error> {
        self.patch_status(json!({ "phase": phase }), "SetPhase")
            .await
    }

    /// An error that is being retried; the phase stays.
    pub async fn error(&self, error: &LastError) -> Result<DeployItem, Error> {
        self.patch_status(json!({ "lastError": error }), "RecordError")
            .await
    }

    /// The provider status alone (what a failed attempt left behind, while it is retried).
    pub async fn provider_status(&self, provider_status: Value) -> Result<DeployItem, Error> {
        self.patch_status(json!({ "providerStatus": provider_status }), "RecordError")
            .await
    }

    /// The end of a job: final phase and `jobIDFinished` in one write.
    pub async fn finish(
        &self,
        item: &DeployItem,
        done: &Final,
        now: Timestamp,
    ) -> Result<DeployItem, Error> {
        let previous = item.status.as_ref().and_then(|s| s.last_error.as_ref());
        let mut status = json!({
            "phase": done.phase,
            "jobIDFinished": done.job_id,
            "lastError": done.error.as_ref().map(|e| last_error(e, previous, now)),
            "transitionTimes": { "finishedTime": Time(now) },
        });
        if let Some(p) = &done.provider_status {
            status["providerStatus"] = p.clone();
        }
        if let Some(r) = &done.export_ref {
            status["exportRef"] = json!(r);
        }
        self.patch_status(status, "Finish").await
    }

    /// The status a final write would produce differs from the item's (for re-applies outside
    /// of a job, which write only when something changed).
    pub fn final_changes(item: &DeployItem, done: &Final) -> bool {
        let Some(s) = &item.status else { return true };
        let error_same = match (&s.last_error, &done.error) {
            (None, None) => true,
            (Some(a), Some(b)) => a.reason == b.reason && a.message == b.message,
            _ => false,
        };
        s.phase.as_ref() != Some(&done.phase)
            || !error_same
            || (done.provider_status.is_some() && s.provider_status != done.provider_status)
            || (done.export_ref.is_some() && s.export_ref != done.export_ref)
    }

    /// Adds our finalizer and/or removes the operation annotation in one merge patch guarded
    /// by the item's resourceVersion, together with the reconcile-time annotation, which a
    /// deployer removes when it starts reconciling an item; nothing is written when nothing
    /// is needed.
    pub async fn metadata(
        &self,
        item: &DeployItem,
        add_finalizer: bool,
        remove_operation: bool,
    ) -> Result<DeployItem, Error> {
        let mut metadata = serde_json::Map::new();
        if add_finalizer && !crate::contract::decision::has_finalizer(item) {
            let mut list = item.metadata.finalizers.clone().unwrap_or_default();
            list.push(finalizers::LANDSCAPER.to_string());
            metadata.insert("finalizers".into(), json!(list));
        }
        let has = |key: &str| {
            item.metadata
                .annotations
                .as_ref()
                .is_some_and(|a| a.contains_key(key))
        };
        let mut removed = serde_json::Map::new();
        if remove_operation && has(annotations::OPERATION) {
            removed.insert(annotations::OPERATION.into(), Value::Null);
        }
        if has(annotations::RECONCILE_TIME) {
            removed.insert(annotations::RECONCILE_TIME.into(), Value::Null);
        }
        if !removed.is_empty() {
            metadata.insert("annotations".into(), Value::Object(removed));
        }
        if metadata.is_empty() {
            return Ok(item.clone());
        }
        self.guarded_patch(item, metadata, "UpdateMetadata").await
    }

    /// Removes our finalizer.
    pub async fn remove_finalizer(&self, item: &DeployItem) -> Result<DeployItem, Error> {
        if !crate::contract::decision::has_finalizer(item) {
            return Ok(item.clone());
        }
        let list: Vec<&String> = item
            .metadata
            .finalizers
            .iter()
            .flatten()
            .filter(|f| *f != finalizers::LANDSCAPER)
            .collect();
        let mut metadata = serde_json::Map::new();
        metadata.insert("finalizers".into(), json!(list));
        self.guarded_patch(item, metadata, "RemoveFinalizer").await
    }

    /// A merge patch of metadata that carries the item's resourceVersion, so it fails with a
    /// conflict instead of overwriting a concurrent change of the finalizer list.
    async fn guarded_patch(
        &self,
        item: &DeployItem,
        mut metadata: serde_json::Map<String, Value>,
        step: &str,
    ) -> Result<DeployItem, Error> {
        metadata.insert(
            "resourceVersion".into(),
            json!(item.metadata.resource_version.clone().unwrap_or_default()),
        );
        self.api
            .patch(
                &self.name,
                &PatchParams::default(),
                &Patch::Merge(json!({ "metadata": metadata })),
            )
            .await
            .map_err(|e| {
                Error::transient(
                    step,
                    if crate::error::is_conflict(&e) {
                        "Conflict"
                    } else {
                        "MetadataWriteFailed"
                    },
                    format!("DeployItem {}: {}", self.name, describe_kube_error(&e)),
                )
            })
    }

    /// The item's current state from the API, `None` when it is gone.
    pub async fn get(&self) -> Result<Option<DeployItem>, Error> {
        self.api.get_opt(&self.name).await.map_err(|e| {
            Error::transient(
                "Read",
                "ReadFailed",
                format!("DeployItem {}: {}", self.name, describe_kube_error(&e)),
            )
        })
    }
}
