//! The kinds a cluster serves: built-in ones and those defined by CustomResourceDefinitions.

mod builtin;
mod crd;
mod registry;

pub use builtin::builtin_resources;
pub use crd::{ScalePaths, crd_resources};
pub use registry::Registry;

use base64::Engine as _;
use std::sync::Arc;

/// The verbs of an ordinary read-write resource, in discovery order (sorted).
pub const CRUD_VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// The verbs kube-apiserver lists for a custom resource, in its (unsorted) order.
pub const CR_VERBS: &[&str] = &[
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "create",
    "update",
    "watch",
];

/// A subresource such as `status` or `scale`.
#[derive(Debug, Clone, PartialEq)]
pub struct Subresource {
    /// Its name after the slash, e.g. `status`.
    pub name: String,
    /// Discovery verbs.
    pub verbs: Vec<String>,
    /// Group, version and kind of the request/response body when it is not the parent's.
    pub gvk: Option<(String, String, String)>,
}

/// How objects of a resource behave when written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Shape {
    /// Plain data (ConfigMap, Secret, ...): no spec/status split, no generation.
    #[default]
    Data,
    /// A spec/status object whose `metadata.generation` follows spec changes.
    SpecStatus,
    /// A custom resource: generation follows every change outside metadata (and status,
    /// when the status subresource is enabled).
    Custom,
}

/// One served resource of one group version.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceDef {
    /// API group (`""` for core).
    pub group: String,
    /// API version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// Plural resource name.
    pub plural: String,
    /// Singular name.
    pub singular: String,
    /// Whether objects live in namespaces.
    pub namespaced: bool,
    /// Short names for kubectl.
    pub short_names: Vec<String>,
    /// Categories (`all`, ...).
    pub categories: Vec<String>,
    /// Discovery verbs.
    pub verbs: Vec<String>,
    /// Subresources.
    pub subresources: Vec<Subresource>,
    /// Write behaviour.
    pub shape: Shape,
    /// The group version objects are stored in (differs for events.k8s.io Events and for
    /// CRDs with several versions); objects are stored once per `storage_key`.
    pub storage_key: String,
    /// `storageVersionHash` for discovery (`None`: not persisted, e.g. reviews).
    pub storage_hash: Option<String>,
    /// The CRD this resource comes from, if any.
    pub crd: Option<Arc<crd::CrdInfo>>,
}

impl ResourceDef {
    /// `group/version`, or `version` for core.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// Whether the resource offers the named subresource.
    pub fn has_subresource(&self, name: &str) -> bool {
        self.subresources.iter().any(|s| s.name == name)
    }

    /// Whether the resource is persisted (not a virtual review resource).
    pub fn is_stored(&self) -> bool {
        self.storage_hash.is_some()
    }

    /// Whether writes to the main resource ignore status (a status subresource exists).
    pub fn has_status(&self) -> bool {
        self.has_subresource("status")
    }

    /// Whether this resource supports a verb.
    pub fn supports(&self, verb: &str) -> bool {
        self.verbs.iter().any(|v| v == verb)
    }
}

/// base64 of the first 8 bytes of sha256(`group/version/Kind`), as kube computes it.
pub fn storage_version_hash(group: &str, version: &str, kind: &str) -> String {
    let digest = ring::digest::digest(
        &ring::digest::SHA256,
        format!("{group}/{version}/{kind}").as_bytes(),
    );
    base64::engine::general_purpose::STANDARD.encode(&digest.as_ref()[..8])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storage_hashes_match_kube_apiserver() {
        assert_eq!(
            storage_version_hash("apps", "v1", "Deployment"),
            "8aSe+NMegvE="
        );
        assert_eq!(storage_version_hash("", "v1", "ConfigMap"), "qFsyl6wFWjQ=");
    }
}
