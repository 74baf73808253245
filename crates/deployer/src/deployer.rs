//! The `Deployer` trait: what a concrete deployer (manifest, mock, helm) implements; the
//! controller does everything the contract requires around it.

use crate::contract::interrupt::Interrupt;
use crate::error::Error;
use crate::target_access::{TargetAccess, TargetCluster};
use landscaper_api::core::{DeployItem, Target};
use serde_json::Value;
use std::future::Future;
use std::sync::Arc;

/// One job of one item, as a deployer sees it.
#[derive(Clone)]
pub struct Job {
    /// The item, as picked up.
    pub item: Arc<DeployItem>,
    /// Its target, when it names one.
    pub target: Option<Arc<Target>>,
    /// The job's ID.
    pub job_id: String,
    /// Requested by `force-reconcile`.
    pub force: bool,
    /// Stops long work on abort or timeout.
    pub interrupt: Interrupt,
    /// The landscaper cluster.
    pub ls_client: kube::Client,
    /// Resolves targets to clusters.
    pub targets: Arc<TargetAccess>,
}

impl Job {
    /// `namespace/name` of the item, for messages.
    pub fn item_name(&self) -> String {
        format!(
            "{}/{}",
            self.item.metadata.namespace.as_deref().unwrap_or_default(),
            self.item.metadata.name.as_deref().unwrap_or_default()
        )
    }

    /// The cluster the item's target points at; an item without a target is a configuration
    /// error for deployers that need one.
    pub async fn target_cluster(&self) -> Result<TargetCluster, Error> {
        let target = self.target.as_ref().ok_or_else(|| {
            Error::config(
                "TargetAccess",
                "MissingTarget",
                format!("DeployItem {}: spec.target is required", self.item_name()),
            )
        })?;
        self.targets.cluster(target).await
    }

    /// The item's provider configuration, decoded; errors name the field.
    pub fn config<T: serde::de::DeserializeOwned>(&self) -> Result<T, Error> {
        let value = self.item.spec.config.clone().unwrap_or(Value::Null);
        landscaper_api::decode::from_value::<T>(
            value,
            &format!("DeployItem {} spec.config", self.item_name()),
        )
        .map(|d| d.value)
        .map_err(|e| Error::config("Reconcile", "InvalidProviderConfiguration", e.to_string()))
    }

    /// The provider status the item carries from its last job, decoded.
    pub fn previous_provider_status<T: serde::de::DeserializeOwned + Default>(&self) -> T {
        self.item
            .status
            .as_ref()
            .and_then(|s| s.provider_status.clone())
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or_default()
    }
}

/// What a successful reconcile leaves behind.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    /// Written to `status.providerStatus`.
    pub provider_status: Option<Value>,
    /// Written to the export Secret (an object of key → value).
    pub exports: Option<Value>,
}

/// A failed job, with the provider status that is true after the failure (e.g. the objects
/// created before it), so nothing is forgotten.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// The error.
    pub error: Error,
    /// Written to `status.providerStatus` when set.
    pub provider_status: Option<Value>,
}

impl From<Error> for Failure {
    fn from(error: Error) -> Self {
        Self {
            error,
            provider_status: None,
        }
    }
}

/// A concrete deployer.
pub trait Deployer: Send + Sync + 'static {
    /// Applies the item.
    fn reconcile(&self, job: &Job) -> impl Future<Output = Result<Outcome, Failure>> + Send;

    /// Applies the item on `force-reconcile`; a plain reconcile unless the deployer skips work
    /// when nothing changed.
    fn force_reconcile(&self, job: &Job) -> impl Future<Output = Result<Outcome, Failure>> + Send {
        self.reconcile(job)
    }

    /// Removes what the item deployed.
    fn delete(&self, job: &Job) -> impl Future<Output = Result<(), Failure>> + Send;

    /// Cleans up after an aborted job (e.g. stops what it started); the job then ends Failed.
    fn abort(&self, job: &Job) -> impl Future<Output = Result<(), Error>> + Send;

    /// Removes from an item's `spec.config` what only a job reads and is too large to keep
    /// for every item in the controller's cache (e.g. an inline chart archive). Decisions and
    /// extension hooks see the item without it; a job gets the whole item as the API returns
    /// it. Default: keeps everything.
    fn slim_config(config: &mut Value) {
        let _ = config;
    }
}
