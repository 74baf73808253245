//! Applying manifests to a target cluster: server-side apply under a stable field manager (or
//! the item's update strategy), order CRDs → Namespaces → cluster-scoped → namespaced,
//! namespace defaulting, a label tying every object to its deploy item, resource policies,
//! pruning of objects no longer wanted, and deletion by deletion groups.

mod deletion;

mod object;

pub use crate::discovery::{
    Discovery, Resolved, SERVED_TTL, Served, UNKNOWN_KIND, split_api_version,
};
pub use deletion::{Group, plan as plan_deletion};
pub use object::{Category, ObjectKey, deep_merge};

use crate::contract::interrupt::Interrupt;
use crate::error::{Error, is_not_found};
use crate::target_access::TargetCluster;
use kube::api::{DynamicObject, Patch, PatchParams, PostParams};
use landscaper_api::deployer::{
    DeletionGroupDefinition, ManagedResourceStatus, Manifest, ManifestPolicy, UpdateStrategy,
};
use object::{Head, category, head, managed_entry, prepare};
use serde_json::Value;
use std::collections::{BTreeMap, HashSet};

const OPERATION: &str = "ApplyManifests";

/// What to apply and how.
#[derive(Debug, Clone)]
pub struct ApplySpec<'a> {
    /// The manifests with their policies.
    pub manifests: &'a [Manifest],
    /// What the last apply managed (from the item's provider status).
    pub previous: &'a [ManagedResourceStatus],
    /// Namespace for namespaced objects that name none (`default` when unset).
    pub default_namespace: Option<&'a str>,
    /// The label (key, value) put on every object that ties it to its deploy item; `fallback`
    /// objects carrying the key with another value belong to another item.
    pub owner_label: (String, String),
    /// How changed objects are written.
    pub update_strategy: UpdateStrategy,
    /// Order of deletion for objects dropped since the last apply.
    pub deletion_groups_during_update: &'a [DeletionGroupDefinition],
}

/// What an apply did, also when it failed part way.
#[derive(Debug, Clone)]
pub struct Applied {
    /// The objects now managed, in apply order; on failure also those of the last apply that
    /// were not pruned yet, so nothing is forgotten.
    pub managed: Vec<ManagedResourceStatus>,
    /// The live objects as written (for readiness checks and exports).
    pub objects: Vec<DynamicObject>,
    /// Why the apply stopped, if it did.
    pub error: Option<Error>,
}

/// Applies and deletes objects in one target cluster.
pub struct Applier {
    cluster: TargetCluster,
    field_manager: String,
}

struct Planned<'a> {
    index: usize,
    head: Head,
    namespace: Option<String>,
    resolved: Resolved,
    manifest: &'a Manifest,
    body: &'a Value,
    category: Category,
}

impl Applier {
    /// An applier writing as `field_manager`.
    pub fn new(cluster: TargetCluster, field_manager: impl Into<String>) -> Self {
        Self {
            cluster,
            field_manager: field_manager.into(),
        }
    }

    /// Applies the manifests, then prunes what the last apply managed and is no longer wanted.
    pub async fn apply(&self, spec: &ApplySpec<'_>, interrupt: &Interrupt) -> Applied {
        let mut applied = Applied {
            managed: Vec::new(),
            objects: Vec::new(),
            error: None,
        };
        let planned = match self.plan(spec).await {
            Ok(p) => p,
            Err(e) => {
                applied.managed = spec.previous.to_vec();
                applied.error = Some(e);
                return applied;
            }
        };
        for p in &planned {
            if let Err(e) = interrupt.check(OPERATION) {
                applied.error = Some(e);
                break;
            }
            match self.write(p, spec).await {
                Ok(Some(obj)) => {
                    applied.managed.push(managed_entry(
                        &p.head,
                        p.namespace.as_deref(),
                        p.manifest.policy.unwrap_or_default(),
                        p.manifest.annotate_before_delete.clone(),
                    ));
                    applied.objects.push(obj);
                }
                Ok(None) => {}
                Err(e) => {
                    applied.error = Some(e);
                    break;
                }
            }
        }
        let wanted: HashSet<ObjectKey> =
            applied.managed.iter().map(ObjectKey::of_managed).collect();
        let dropped: Vec<ManagedResourceStatus> = spec
            .previous
            .iter()
            .filter(|m| !wanted.contains(&ObjectKey::of_managed(m)))
            .cloned()
            .collect();
        if applied.error.is_some() {
            applied.managed.extend(dropped);
            return applied;
        }
        let groups = plan_deletion(&dropped, spec.deletion_groups_during_update);
        if let Err(e) = deletion::delete_groups(&self.cluster, &groups, interrupt).await {
            // Keep what could not be pruned yet in the status, so a retry finds it.
            applied.managed.extend(dropped.into_iter().filter(|m| {
                !matches!(
                    m.policy,
                    Some(ManifestPolicy::Keep) | Some(ManifestPolicy::Ignore)
                )
            }));
            applied.error = Some(e);
        }
        applied
    }

    /// Deletes every managed object by deletion groups; `keep` objects survive.
    pub async fn delete(
        &self,
        managed: &[ManagedResourceStatus],
        groups: &[DeletionGroupDefinition],
        interrupt: &Interrupt,
    ) -> Result<(), Error> {
        let groups = plan_deletion(managed, groups);
        deletion::delete_groups(&self.cluster, &groups, interrupt).await
    }

    /// Reads the live object of a managed entry, `None` when it is gone.
    pub async fn get(&self, m: &ManagedResourceStatus) -> Result<Option<DynamicObject>, Error> {
        let r = &m.resource;
        let resolved = self
            .cluster
            .discovery
            .resolve(
                r.api_version.as_deref().unwrap_or_default(),
                r.kind.as_deref().unwrap_or_default(),
            )
            .await?;
        let api = self.cluster.api(&resolved, r.namespace.as_deref());
        api.get_opt(r.name.as_deref().unwrap_or_default())
            .await
            .map_err(|e| Error::from_kube(OPERATION, &ObjectKey::of_managed(m).to_string(), &e))
    }

    async fn plan<'a>(&self, spec: &ApplySpec<'a>) -> Result<Vec<Planned<'a>>, Error> {
        let mut planned = Vec::new();
        let mut seen = HashSet::new();
        for (index, manifest) in spec.manifests.iter().enumerate() {
            if manifest.policy == Some(ManifestPolicy::Ignore) {
                continue;
            }
            let field = format!("manifests[{index}].manifest");
            let body = manifest.manifest.as_ref().ok_or_else(|| {
                Error::config(OPERATION, "InvalidManifest", format!("{field}: missing"))
            })?;
            let head = head(body, &field)?;
            let resolved = self
                .cluster
                .discovery
                .resolve(&head.api_version, &head.kind)
                .await
                .map_err(|e| Error {
                    message: format!("{field}: {}", e.message),
                    ..e
                })?;
            let namespace = resolved.namespaced.then(|| {
                head.namespace
                    .clone()
                    .or_else(|| spec.default_namespace.map(str::to_string))
                    .unwrap_or_else(|| "default".into())
            });
            let group = split_api_version(&head.api_version).0.to_string();
            let key = ObjectKey {
                group: group.clone(),
                kind: head.kind.clone(),
                namespace: namespace.clone().unwrap_or_default(),
                name: head.name.clone(),
            };
            if !seen.insert(key.clone()) {
                return Err(Error::config(
                    OPERATION,
                    "DuplicateManifest",
                    format!("{field}: {key} is given more than once"),
                ));
            }
            planned.push(Planned {
                index,
                category: category(&group, &head.kind, resolved.namespaced),
                head,
                namespace,
                resolved,
                manifest,
                body,
            });
        }
        planned.sort_by_key(|p| (p.category, p.index));
        Ok(planned)
    }

    /// Writes one object according to its policy; `None` when it was left alone.
    async fn write(
        &self,
        p: &Planned<'_>,
        spec: &ApplySpec<'_>,
    ) -> Result<Option<DynamicObject>, Error> {
        let api = self.cluster.api(&p.resolved, p.namespace.as_deref());
        let what = format!(
            "manifests[{}] ({} {})",
            p.index,
            p.head.kind,
            p.namespace
                .as_ref()
                .map_or(p.head.name.clone(), |ns| format!("{ns}/{}", p.head.name))
        );
        let kube_err = |e: kube::Error| Error::from_kube(OPERATION, &what, &e);
        let policy = p.manifest.policy.unwrap_or_default();
        let needs_live = matches!(policy, ManifestPolicy::Immutable | ManifestPolicy::Fallback)
            || p.manifest.annotate_before_create.is_some()
            || matches!(
                spec.update_strategy,
                UpdateStrategy::Merge | UpdateStrategy::MergeOverwrite
            );
        let live = if needs_live {
            api.get_opt(&p.head.name).await.map_err(kube_err)?
        } else {
            None
        };
        if let Some(live) = &live {
            if policy == ManifestPolicy::Immutable {
                return Ok(Some(live.clone()));
            }
            if policy == ManifestPolicy::Fallback && owned_by_other(live, &spec.owner_label) {
                tracing::info!(object = %what, "left alone: another deploy item manages it (fallback policy)");
                return Ok(None);
            }
        }
        let annotations = live
            .is_none()
            .then_some(p.manifest.annotate_before_create.as_ref())
            .flatten();
        let labels = BTreeMap::from([spec.owner_label.clone()]);
        let body = prepare(p.body, p.namespace.as_deref(), &labels, annotations);
        let written = match spec.update_strategy {
            UpdateStrategy::Update => {
                let params = PatchParams::apply(&self.field_manager).force();
                api.patch(&p.head.name, &params, &Patch::Apply(&body))
                    .await
                    .map_err(kube_err)?
            }
            UpdateStrategy::Patch => {
                match api
                    .patch(&p.head.name, &PatchParams::default(), &Patch::Merge(&body))
                    .await
                {
                    Ok(o) => o,
                    Err(e) if is_not_found(&e) => {
                        self.create(&api, &body).await.map_err(kube_err)?
                    }
                    Err(e) => return Err(kube_err(e)),
                }
            }
            UpdateStrategy::Merge | UpdateStrategy::MergeOverwrite => match &live {
                None => self.create(&api, &body).await.map_err(kube_err)?,
                Some(live) => {
                    let live_value = serde_json::to_value(live).map_err(|e| {
                        Error::transient(OPERATION, "Encode", format!("{what}: {e}"))
                    })?;
                    let mut merged = if spec.update_strategy == UpdateStrategy::Merge {
                        deep_merge(&body, &live_value)
                    } else {
                        deep_merge(&live_value, &body)
                    };
                    // Our labels hold even where the live object's values win.
                    merged = deep_merge(
                        &merged,
                        &serde_json::json!({"metadata": {"labels": labels}}),
                    );
                    let obj: DynamicObject = serde_json::from_value(merged).map_err(|e| {
                        Error::transient(OPERATION, "Encode", format!("{what}: {e}"))
                    })?;
                    api.replace(&p.head.name, &PostParams::default(), &obj)
                        .await
                        .map_err(kube_err)?
                }
            },
        };
        Ok(Some(written))
    }

    async fn create(
        &self,
        api: &kube::Api<DynamicObject>,
        body: &Value,
    ) -> Result<DynamicObject, kube::Error> {
        let obj: DynamicObject =
            serde_json::from_value(body.clone()).map_err(kube::Error::SerdeError)?;
        let params = PostParams {
            field_manager: Some(self.field_manager.clone()),
            ..Default::default()
        };
        api.create(&params, &obj).await
    }
}

/// Whether a live object carries our owner label with another value.
fn owned_by_other(live: &DynamicObject, (key, ours): &(String, String)) -> bool {
    live.metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(key))
        .is_some_and(|v| v != ours)
}
