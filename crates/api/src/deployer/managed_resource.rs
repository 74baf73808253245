//! Types shared by the manifest and helm deployers: manifests with policies, managed
//! resources, exports, deletion groups, readiness checks and continuous reconcile.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::core::{SelectorOperator, TypedObjectReference};

/// A manifest to apply, with the policy that governs its life cycle.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    /// How the object is managed; `manage` when empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<ManifestPolicy>,
    /// The Kubernetes object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest: Option<Value>,
    /// Annotations added to the object before it is created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotate_before_create: Option<BTreeMap<String, String>>,
    /// Annotations added to the object before it is deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotate_before_delete: Option<BTreeMap<String, String>>,
}

/// How a deployer manages an object over its life cycle.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ManifestPolicy {
    /// Create, update and delete the object.
    #[default]
    Manage,
    /// Like manage, but leave the object alone when another deployer item owns it.
    Fallback,
    /// Create and update, never delete.
    Keep,
    /// Do nothing with the object.
    Ignore,
    /// Create and delete, but never update.
    Immutable,
}

/// How changed objects are written to the cluster.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum UpdateStrategy {
    /// Replace the object.
    #[default]
    Update,
    /// Patch the object.
    Patch,
    /// Merge into the live object, keeping values already set there.
    Merge,
    /// Merge into the live object, overwriting values set there.
    MergeOverwrite,
}

/// An object a deployer created and manages.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManagedResourceStatus {
    /// The policy the object is managed with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<ManifestPolicy>,
    /// Annotations added to the object before it is deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotate_before_delete: Option<BTreeMap<String, String>>,
    /// The object.
    pub resource: ResourceReference,
}

/// A reference to an object, as Kubernetes' `core/v1 ObjectReference`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceReference {
    /// API version of the object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// Kind of the object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Name of the object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Namespace of the object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// UID of the object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// Resource version of the object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_version: Option<String>,
    /// A field of the object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field_path: Option<String>,
}

/// Values exported from deployed objects.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Exports {
    /// The exports.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exports: Vec<Export>,
}

/// One export: a value read by JSON path from an object.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Export {
    /// Key of the export.
    pub key: String,
    /// JSON path of the value in the object.
    pub json_path: String,
    /// The object to read; a deployed object when empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_resource: Option<TypedObjectReference>,
    /// Follow a reference found in the object to another object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_object_ref: Option<FromObjectReference>,
}

/// A reference read from an object, leading to the object that holds the value.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FromObjectReference {
    /// API version of the referenced object.
    pub api_version: String,
    /// Kind of the referenced object.
    pub kind: String,
    /// JSON path of the value in the referenced object.
    pub json_path: String,
}

/// A group of objects deleted together; groups are deleted in order.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeletionGroupDefinition {
    /// A predefined group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predefined_resource_group: Option<PredefinedResourceGroup>,
    /// A group of the given resource types.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_resource_group: Option<CustomResourceGroup>,
}

/// A predefined deletion group.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PredefinedResourceGroup {
    /// Which objects the group holds.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<PredefinedResourceGroupType>,
    /// Remove finalizers of objects that do not go away.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub force_delete: Option<bool>,
}

/// The predefined deletion groups.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum PredefinedResourceGroupType {
    /// Namespaced objects.
    NamespacedResources,
    /// Cluster-scoped objects except CRDs.
    ClusterScopedResources,
    /// CustomResourceDefinitions.
    Crds,
    /// No objects.
    Empty,
}

/// A deletion group of the given resource types.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceGroup {
    /// The resource types.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<ResourceType>,
    /// Delete all objects of these types, not only the managed ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delete_all_resources: Option<bool>,
    /// Remove finalizers of objects that do not go away.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub force_delete: Option<bool>,
}

/// A resource type, optionally restricted to names and namespaces.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceType {
    /// API version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// Kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Names of the objects.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub names: Vec<String>,
    /// Namespaces of the objects.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub namespaces: Vec<String>,
}

/// Readiness checks of deployed objects.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReadinessCheckConfiguration {
    /// Turn off the default checks (Deployments, StatefulSets, DaemonSets, ReplicaSets, Pods, Jobs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disable_default: Option<bool>,
    /// Custom checks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub custom: Vec<CustomReadinessCheck>,
}

/// A custom readiness check: requirements on selected objects.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CustomReadinessCheck {
    /// Name of the check.
    pub name: String,
    /// Turn the check off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disabled: Option<bool>,
    /// Objects selected by reference.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_selector: Vec<TypedObjectReference>,
    /// Objects selected by labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_selector: Option<ReadinessLabelSelector>,
    /// Requirements every selected object must meet.
    pub requirements: Vec<ReadinessRequirement>,
}

/// Objects of one kind selected by labels.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReadinessLabelSelector {
    /// API version.
    pub api_version: String,
    /// Kind.
    pub kind: String,
    /// Labels the objects must have.
    pub match_labels: BTreeMap<String, String>,
}

/// A requirement on a value read by JSON path.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReadinessRequirement {
    /// JSON path of the value.
    pub json_path: String,
    /// How the value relates to `values`.
    pub operator: SelectorOperator,
    /// Values to compare with.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<Value>,
}

/// When to reconcile an item again although nothing changed. Exactly one of `cron` and
/// `every` must be given.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContinuousReconcileSpec {
    /// A cron schedule (5 fields or an `@daily`-style keyword).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cron: Option<String>,
    /// An interval (Go duration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every: Option<crate::Duration>,
}
