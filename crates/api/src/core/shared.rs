//! Types shared by several core kinds: references, conditions, errors, phases, selectors.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::open_enum::open_enum;

/// A reference to a Kubernetes object by name and optional namespace.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ObjectReference {
    /// Name of the object.
    pub name: String,
    /// Namespace of the object; the referring object's namespace when empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

/// A reference to a typed Kubernetes object.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TypedObjectReference {
    /// API group and version of the object.
    pub api_version: String,
    /// Kind of the object.
    pub kind: String,
    /// Name of the object.
    pub name: String,
    /// Namespace of the object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

/// A reference to a key of a Secret, possibly in another namespace.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SecretReference {
    /// Name of the Secret.
    pub name: String,
    /// Namespace of the Secret; the referring object's namespace when empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Key in the Secret's data that holds the value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

/// A reference to a key of a Secret in the referring object's namespace.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LocalSecretReference {
    /// Name of the Secret.
    pub name: String,
    /// Key in the Secret's data that holds the value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

/// A reference to a key of a ConfigMap in the referring object's namespace.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LocalConfigMapReference {
    /// Name of the ConfigMap.
    pub name: String,
    /// Key in the ConfigMap's data that holds the value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

/// A reference to an object in the same namespace, by name only.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct LocalObjectReference {
    /// Name of the object.
    #[serde(default)]
    pub name: String,
}

open_enum! {
    /// The status of a condition.
    ConditionStatus {
        /// The object is in the condition.
        True = "True",
        /// The object is not in the condition.
        False = "False",
        /// It cannot be decided whether the object is in the condition.
        Unknown = "Unknown",
        /// The condition was true, failed, and is still within its failure threshold.
        Progressing = "Progressing",
    }
}

open_enum! {
    /// A well-defined error code in a condition or error.
    ErrorCode {
        /// Invalid credentials.
        Unauthorized = "ERR_UNAUTHORIZED",
        /// Resources are stuck in deletion.
        CleanupResources = "ERR_CLEANUP",
        /// The configuration is wrong; retrying will not help.
        ConfigurationProblem = "ERR_CONFIGURATION_PROBLEM",
        /// A severe internal error.
        InternalProblem = "ERR_INTERNAL_PROBLEM",
        /// An operation timed out.
        Timeout = "ERR_TIMEOUT",
        /// Installations or deploy items depend on each other in a cycle.
        CyclicDependencies = "ERR_CYCLIC_DEPENDENCIES",
        /// A webhook failed.
        Webhook = "ERR_WEBHOOK",
        /// Sub-objects are not finished yet.
        Unfinished = "ERR_UNFINISHED",
        /// Not an error; for information only.
        ForInfoOnly = "ERR_FOR_INFO_ONLY",
    }
}

impl ErrorCode {
    /// Whether an error with this code cannot be fixed by retrying.
    pub fn is_unrecoverable(&self) -> bool {
        matches!(
            self,
            Self::ConfigurationProblem
                | Self::InternalProblem
                | Self::Timeout
                | Self::CyclicDependencies
        )
    }
}

/// The state of an object in one respect.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// Type of the condition.
    #[serde(rename = "type")]
    pub type_: String,
    /// Status of the condition.
    pub status: ConditionStatus,
    /// When the status last changed.
    pub last_transition_time: Time,
    /// When the condition was last updated.
    pub last_update_time: Time,
    /// Machine-readable reason for the last transition.
    pub reason: String,
    /// Human-readable message about the last transition.
    pub message: String,
    /// Well-defined error codes when the condition reports a problem.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub codes: Vec<ErrorCode>,
}

/// An error that occurred while reconciling an object.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LastError {
    /// The operation during which the error occurred.
    pub operation: String,
    /// When the error first occurred.
    pub last_transition_time: Time,
    /// When the error was last updated.
    pub last_update_time: Time,
    /// Machine-readable reason.
    pub reason: String,
    /// Human-readable message.
    pub message: String,
    /// Well-defined error codes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub codes: Vec<ErrorCode>,
}

impl LastError {
    /// Whether retrying cannot fix this error.
    pub fn is_unrecoverable(&self) -> bool {
        self.codes.iter().any(ErrorCode::is_unrecoverable)
    }
}

/// An operation requested through the `landscaper.gardener.cloud/operation` annotation.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Operation {
    /// Reconcile the object and everything that depends on it.
    Reconcile,
    /// Reconcile even when nothing changed.
    ForceReconcile,
    /// Interrupt running deploy items without waiting for cleanup.
    Interrupt,
    /// Abort the running operation; the deployer cleans up and ends Failed.
    Abort,
    /// Reconcile a standalone deploy item (tests only).
    TestReconcile,
}

impl Operation {
    /// Parses the annotation value; `None` for a value no operation has.
    pub fn parse(value: &str) -> Option<Self> {
        Some(match value {
            "reconcile" => Self::Reconcile,
            "force-reconcile" => Self::ForceReconcile,
            "interrupt" => Self::Interrupt,
            "abort" => Self::Abort,
            "test-reconcile" => Self::TestReconcile,
            _ => return None,
        })
    }

    /// The annotation value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Reconcile => "reconcile",
            Self::ForceReconcile => "force-reconcile",
            Self::Interrupt => "interrupt",
            Self::Abort => "abort",
            Self::TestReconcile => "test-reconcile",
        }
    }
}

open_enum! {
    /// The phase of an Installation.
    InstallationPhase {
        /// Work was picked up.
        Init = "Init",
        /// Sub-objects were created.
        ObjectsCreated = "ObjectsCreated",
        /// Sub-objects are being processed.
        Progressing = "Progressing",
        /// Exports are being computed.
        Completing = "Completing",
        /// Finished successfully.
        Succeeded = "Succeeded",
        /// Finished with an error.
        Failed = "Failed",
        /// Deletion was picked up.
        InitDelete = "InitDelete",
        /// Deletion of sub-objects was triggered.
        TriggerDelete = "TriggerDelete",
        /// Sub-objects are being deleted.
        Deleting = "Deleting",
        /// Deletion failed.
        DeleteFailed = "DeleteFailed",
    }
}

open_enum! {
    /// The phase of an Execution.
    ExecutionPhase {
        /// Work was picked up.
        Init = "Init",
        /// Deploy items that are no longer wanted are being removed.
        CleanupOrphaned = "CleanupOrphaned",
        /// Deploy items are being processed.
        Progressing = "Progressing",
        /// Exports are being collected.
        Completing = "Completing",
        /// Finished successfully.
        Succeeded = "Succeeded",
        /// Finished with an error.
        Failed = "Failed",
        /// Deletion was picked up.
        InitDelete = "InitDelete",
        /// Deletion of deploy items was triggered.
        TriggerDelete = "TriggerDelete",
        /// Deploy items are being deleted.
        Deleting = "Deleting",
        /// Deletion failed.
        DeleteFailed = "DeleteFailed",
    }
}

open_enum! {
    /// The phase of a DeployItem.
    DeployItemPhase {
        /// A deployer picked up the job.
        Init = "Init",
        /// The deployer is applying the item.
        Progressing = "Progressing",
        /// The deployer is finishing the item.
        Completing = "Completing",
        /// Applied successfully.
        Succeeded = "Succeeded",
        /// Failed.
        Failed = "Failed",
        /// A deployer picked up the deletion.
        InitDelete = "InitDelete",
        /// The deployer is deleting what the item deployed.
        Deleting = "Deleting",
        /// Deletion failed.
        DeleteFailed = "DeleteFailed",
    }
}

impl DeployItemPhase {
    /// Whether the phase ends a job (Succeeded, Failed or DeleteFailed).
    pub fn is_final(&self) -> bool {
        matches!(self, Self::Succeeded | Self::Failed | Self::DeleteFailed)
    }

    /// Whether the phase belongs to a deletion.
    pub fn is_deletion(&self) -> bool {
        matches!(self, Self::InitDelete | Self::Deleting | Self::DeleteFailed)
    }
}

/// When an object passed the milestones of its current job.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TransitionTimes {
    /// When the job was triggered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger_time: Option<Time>,
    /// When the job was picked up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init_time: Option<Time>,
    /// When the object started waiting for sub-objects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_time: Option<Time>,
    /// When the job finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_time: Option<Time>,
}

/// The deployer that reconciled a deploy item.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeployerInformation {
    /// Unique identity of the deployer.
    pub identity: String,
    /// Name of the deployer.
    pub name: String,
    /// Version of the deployer.
    pub version: String,
}

/// Selects targets by name, annotations or labels; all given criteria must match.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TargetSelector {
    /// Targets selected by name and namespace.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<ObjectReference>,
    /// Requirements on the target's annotations.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub annotations: Vec<Requirement>,
    /// Requirements on the target's labels.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<Requirement>,
}

/// A requirement on a key of a map: an operator relating the key's value to values.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Requirement {
    /// The key the requirement is about.
    pub key: String,
    /// How the key's value relates to `values`. Upstream accepts a missing operator (and
    /// then matches nothing); users of the requirement report it as a configuration error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operator: Option<SelectorOperator>,
    /// The values to compare with.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
}

/// An operator of a selector requirement, as Kubernetes' `selection.Operator`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
pub enum SelectorOperator {
    /// The value is one of the values.
    #[serde(rename = "in")]
    In,
    /// The value is none of the values.
    #[serde(rename = "notin")]
    NotIn,
    /// The value equals the single value.
    #[serde(rename = "=")]
    Equals,
    /// The value equals the single value.
    #[serde(rename = "==")]
    DoubleEquals,
    /// The value differs from the single value.
    #[serde(rename = "!=")]
    NotEquals,
    /// The key exists.
    #[serde(rename = "exists")]
    Exists,
    /// The key does not exist.
    #[serde(rename = "!")]
    DoesNotExist,
    /// The value, as an integer, is greater than the single value.
    #[serde(rename = "gt")]
    GreaterThan,
    /// The value, as an integer, is less than the single value.
    #[serde(rename = "lt")]
    LessThan,
}

/// What to do when a deploy item is deleted.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OnDeleteConfig {
    /// Skip the uninstall when the target cluster no longer exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip_uninstall_if_cluster_removed: Option<bool>,
}
