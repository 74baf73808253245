//! Resolving `apiVersion` + `kind` to a resource of the target cluster, cached per cluster,
//! and what the cluster serves (version, API versions and kinds), cached a short time.

use crate::error::{Error, describe_kube_error};
use kube::core::GroupVersionKind;
use kube::discovery::{ApiResource, Scope, pinned_kind};
use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The reason of [`Discovery::resolve`]'s error for a kind the cluster does not serve.
pub const UNKNOWN_KIND: &str = "UnknownKind";

/// How long [`Discovery::served`] answers from its cache: long enough that a burst of items
/// for one cluster asks once, short enough that a CRD installed meanwhile is soon seen.
pub const SERVED_TTL: Duration = Duration::from_secs(10);

/// What a cluster serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Served {
    /// The server's `gitVersion` (e.g. `v1.33.1`).
    pub git_version: String,
    /// Every served `group/version` (`v1` for the core group) and every
    /// `group/version/Kind` of its resources, sorted (what Helm's `VersionSet` holds).
    pub api_versions: Vec<String>,
}

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
    /// Held across a fetch, so concurrent callers wait for one fetch instead of each asking.
    served: tokio::sync::Mutex<Option<(Instant, Arc<Served>)>>,
}

impl Discovery {
    /// An empty cache for the cluster of `client`.
    pub fn new(client: kube::Client) -> Self {
        Self {
            client,
            cache: Mutex::new(HashMap::new()),
            served: tokio::sync::Mutex::new(None),
        }
    }

    /// What the cluster serves, at most [`SERVED_TTL`] old. A group whose resources cannot
    /// be listed (an aggregated API that is down) is left out, as Helm does.
    pub async fn served(&self) -> Result<Arc<Served>, Error> {
        let mut slot = self.served.lock().await;
        if let Some((at, s)) = slot.as_ref()
            && at.elapsed() < SERVED_TTL
        {
            return Ok(s.clone());
        }
        let fresh = Arc::new(self.fetch_served().await?);
        *slot = Some((Instant::now(), fresh.clone()));
        Ok(fresh)
    }

    async fn fetch_served(&self) -> Result<Served, Error> {
        let failed = |what: &str, e: kube::Error| {
            Error::transient(
                "Discovery",
                "DiscoveryFailed",
                format!("reading the target's {what}: {}", describe_kube_error(&e)),
            )
        };
        let version = self
            .client
            .apiserver_version()
            .await
            .map_err(|e| failed("version", e))?;
        let mut group_versions = Vec::new();
        let core = self
            .client
            .list_core_api_versions()
            .await
            .map_err(|e| failed("API versions", e))?;
        group_versions.extend(core.versions);
        let groups = self
            .client
            .list_api_groups()
            .await
            .map_err(|e| failed("API groups", e))?;
        for g in groups.groups {
            group_versions.extend(g.versions.into_iter().map(|v| v.group_version));
        }
        let mut api_versions = BTreeSet::new();
        for gv in group_versions {
            let listed = if gv.contains('/') {
                self.client.list_api_group_resources(&gv).await
            } else {
                self.client.list_core_api_resources(&gv).await
            };
            match listed {
                Ok(list) => {
                    for r in list.resources {
                        api_versions.insert(format!("{gv}/{}", r.kind));
                    }
                }
                Err(e) => {
                    tracing::warn!(group_version = %gv, error = %describe_kube_error(&e), "skipping an API group whose resources cannot be listed");
                }
            }
            api_versions.insert(gv);
        }
        Ok(Served {
            git_version: version.git_version,
            api_versions: api_versions.into_iter().collect(),
        })
    }

    /// Resolves a kind. A kind the cluster does not serve is the transient error
    /// [`UNKNOWN_KIND`] (its CRD may still be coming); a discovery request that fails is
    /// classified as any API error, so that callers never mistake an unreachable cluster for
    /// a missing kind.
    pub async fn resolve(&self, api_version: &str, kind: &str) -> Result<Resolved, Error> {
        let key = (api_version.to_string(), kind.to_string());
        if let Some(r) = self.lock().get(&key) {
            return Ok(r.clone());
        }
        let (group, version) = split_api_version(api_version);
        let gvk = GroupVersionKind::gvk(group, version, kind);
        let (resource, caps) = pinned_kind(&self.client, &gvk).await.map_err(|e| {
            let what = format!("kind {kind} of apiVersion {api_version}");
            let unknown = matches!(&e, kube::Error::Discovery(_))
                || matches!(&e, kube::Error::Api(status) if status.code == 404);
            if unknown {
                Error::transient(
                    "Discovery",
                    UNKNOWN_KIND,
                    format!(
                        "{what} is not served by the target cluster: {}",
                        describe_kube_error(&e)
                    ),
                )
            } else {
                Error::from_kube("Discovery", &format!("discovery of {what}"), &e)
            }
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
