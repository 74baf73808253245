//! Resolving `apiVersion` + `kind` to a resource of the target cluster, cached per cluster.

use crate::error::Error;
use kube::core::GroupVersionKind;
use kube::discovery::{ApiResource, Scope, pinned_kind};
use std::collections::HashMap;
use std::sync::Mutex;

/// A kind resolved in a cluster.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The resource (plural, group, version).
    pub resource: ApiResource,
    /// Whether objects of the kind live in namespaces.
    pub namespaced: bool,
}

/// Kinds already resolved in one cluster.
pub struct Discovery {
    client: kube::Client,
    cache: Mutex<HashMap<(String, String), Resolved>>,
}

impl Discovery {
    /// An empty cache for the cluster of `client`.
    pub fn new(client: kube::Client) -> Self {
        Self {
            client,
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// Resolves a kind; an unknown kind is a transient error (its CRD may still be coming).
    pub async fn resolve(&self, api_version: &str, kind: &str) -> Result<Resolved, Error> {
        let key = (api_version.to_string(), kind.to_string());
        if let Some(r) = self.lock().get(&key) {
            return Ok(r.clone());
        }
        let (group, version) = split_api_version(api_version);
        let gvk = GroupVersionKind::gvk(group, version, kind);
        let (resource, caps) = pinned_kind(&self.client, &gvk).await.map_err(|e| {
            Error::transient(
                "Discovery",
                "UnknownKind",
                format!("kind {kind} of apiVersion {api_version} is not served by the target cluster: {}", crate::error::describe_kube_error(&e)),
            )
        })?;
        let resolved = Resolved {
            resource,
            namespaced: caps.scope == Scope::Namespaced,
        };
        self.lock().insert(key, resolved.clone());
        Ok(resolved)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(String, String), Resolved>> {
        self.cache.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// `apps/v1` → (`apps`, `v1`); `v1` → (``, `v1`).
pub fn split_api_version(api_version: &str) -> (&str, &str) {
    api_version.split_once('/').unwrap_or(("", api_version))
}
