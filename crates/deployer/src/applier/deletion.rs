//! Deleting managed objects: in deletion groups (predefined or custom), each group in reverse
//! apply order, waiting until a group's objects are gone before the next; `keep` objects stay.

use super::object::{Category, ObjectKey, category_of_managed};
use crate::contract::interrupt::{Backoff, Interrupt};
use crate::discovery::UNKNOWN_KIND;
use crate::error::{Error, is_not_found};
use crate::target_access::TargetCluster;
use kube::api::{DeleteParams, DynamicObject, Patch, PatchParams};
use landscaper_api::deployer::{
    DeletionGroupDefinition, ManagedResourceStatus, ManifestPolicy, PredefinedResourceGroupType,
    ResourceType,
};
use serde_json::json;
use std::time::Duration;

const OPERATION: &str = "DeleteManagedResources";

/// Selects the objects of a deletion group.
type Selector = Box<dyn Fn(&ManagedResourceStatus) -> bool>;
/// Polls of a stuck object before a force-delete group removes its finalizers.
const POLLS_BEFORE_FORCE: u32 = 5;

/// The objects of one group and whether stuck ones lose their finalizers.
#[derive(Debug, Clone)]
pub struct Group {
    /// Objects to delete, in deletion order.
    pub objects: Vec<ManagedResourceStatus>,
    /// Remove finalizers of objects that do not go away.
    pub force: bool,
}

/// Splits `managed` (in apply order) into deletion groups; objects no group names are deleted
/// last, by the default groups. `keep` and `ignore` objects are left out.
pub fn plan(managed: &[ManagedResourceStatus], groups: &[DeletionGroupDefinition]) -> Vec<Group> {
    let mut remaining: Vec<ManagedResourceStatus> = managed
        .iter()
        .rev()
        .filter(|m| {
            !matches!(
                m.policy,
                Some(ManifestPolicy::Keep) | Some(ManifestPolicy::Ignore)
            )
        })
        .cloned()
        .collect();
    let mut out = Vec::new();
    for g in groups {
        let (selected, force): (Selector, bool) = if let Some(p) = &g.predefined_resource_group {
            let t = p.type_.unwrap_or(PredefinedResourceGroupType::Empty);
            (
                Box::new(move |m| predefined_matches(t, m)),
                p.force_delete == Some(true),
            )
        } else if let Some(c) = &g.custom_resource_group {
            let types = c.resources.clone();
            (
                Box::new(move |m| types.iter().any(|t| custom_matches(t, m))),
                c.force_delete == Some(true),
            )
        } else {
            continue;
        };
        let (take, keep): (Vec<_>, Vec<_>) = remaining.into_iter().partition(|m| selected(m));
        remaining = keep;
        out.push(Group {
            objects: take,
            force,
        });
    }
    for t in [
        PredefinedResourceGroupType::NamespacedResources,
        PredefinedResourceGroupType::ClusterScopedResources,
        PredefinedResourceGroupType::Crds,
    ] {
        let (take, keep): (Vec<_>, Vec<_>) = remaining
            .into_iter()
            .partition(|m| predefined_matches(t, m));
        remaining = keep;
        if !take.is_empty() {
            out.push(Group {
                objects: take,
                force: false,
            });
        }
    }
    out.retain(|g| !g.objects.is_empty());
    out
}

fn predefined_matches(t: PredefinedResourceGroupType, m: &ManagedResourceStatus) -> bool {
    let c = category_of_managed(m);
    match t {
        PredefinedResourceGroupType::NamespacedResources => c == Category::Namespaced,
        PredefinedResourceGroupType::ClusterScopedResources => {
            matches!(c, Category::ClusterScoped | Category::Namespace)
        }
        PredefinedResourceGroupType::Crds => c == Category::Crd,
        PredefinedResourceGroupType::Empty => false,
    }
}

fn custom_matches(t: &ResourceType, m: &ManagedResourceStatus) -> bool {
    let r = &m.resource;
    t.api_version
        .as_deref()
        .is_none_or(|v| Some(v) == r.api_version.as_deref())
        && t.kind
            .as_deref()
            .is_none_or(|k| Some(k) == r.kind.as_deref())
        && (t.names.is_empty() || r.name.as_ref().is_some_and(|n| t.names.contains(n)))
        && (t.namespaces.is_empty()
            || r.namespace
                .as_ref()
                .is_some_and(|n| t.namespaces.contains(n)))
}

/// Deletes the groups one after another, waiting for each group's objects to be gone.
pub async fn delete_groups(
    cluster: &TargetCluster,
    groups: &[Group],
    interrupt: &Interrupt,
) -> Result<(), Error> {
    for group in groups {
        for m in &group.objects {
            interrupt.check(OPERATION)?;
            delete_one(cluster, m).await?;
        }
        wait_gone(cluster, group, interrupt).await?;
    }
    Ok(())
}

async fn api_for(
    cluster: &TargetCluster,
    m: &ManagedResourceStatus,
) -> Result<(kube::Api<DynamicObject>, String), Error> {
    let r = &m.resource;
    let resolved = cluster
        .discovery
        .resolve(
            r.api_version.as_deref().unwrap_or_default(),
            r.kind.as_deref().unwrap_or_default(),
        )
        .await?;
    let api = cluster.api(&resolved, r.namespace.as_deref());
    Ok((api, r.name.clone().unwrap_or_default()))
}

async fn delete_one(cluster: &TargetCluster, m: &ManagedResourceStatus) -> Result<(), Error> {
    let key = ObjectKey::of_managed(m);
    let (api, name) = match api_for(cluster, m).await {
        Ok(x) => x,
        // A kind the cluster no longer serves has no objects left to delete.
        Err(e) if e.reason == UNKNOWN_KIND => return Ok(()),
        Err(e) => return Err(e),
    };
    if let Some(annotations) = m.annotate_before_delete.as_ref().filter(|a| !a.is_empty()) {
        let patch = json!({ "metadata": { "annotations": annotations } });
        match api
            .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => {}
            Err(e) if is_not_found(&e) => return Ok(()),
            Err(e) => return Err(Error::from_kube(OPERATION, &key.to_string(), &e)),
        }
    }
    match api.delete(&name, &DeleteParams::background()).await {
        Ok(_) => Ok(()),
        Err(e) if is_not_found(&e) => Ok(()),
        Err(e) => Err(Error::from_kube(OPERATION, &key.to_string(), &e)),
    }
}

async fn wait_gone(
    cluster: &TargetCluster,
    group: &Group,
    interrupt: &Interrupt,
) -> Result<(), Error> {
    let mut backoff = Backoff::new(Duration::from_millis(50), Duration::from_secs(2));
    let mut polls = 0u32;
    loop {
        let mut left = Vec::new();
        for m in &group.objects {
            let (api, name) = match api_for(cluster, m).await {
                Ok(x) => x,
                Err(e) if e.reason == UNKNOWN_KIND => continue,
                Err(e) => return Err(e),
            };
            match api.get_opt(&name).await {
                Ok(Some(obj)) => left.push((api, name, obj)),
                Ok(None) => {}
                Err(e) => {
                    return Err(Error::from_kube(
                        OPERATION,
                        &ObjectKey::of_managed(m).to_string(),
                        &e,
                    ));
                }
            }
        }
        if left.is_empty() {
            return Ok(());
        }
        polls += 1;
        if group.force && polls >= POLLS_BEFORE_FORCE {
            for (api, name, _) in &left {
                let patch = json!({ "metadata": { "finalizers": null } });
                if let Err(e) = api
                    .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
                    .await
                    && !is_not_found(&e)
                {
                    return Err(Error::from_kube(OPERATION, name, &e));
                }
            }
        }
        let names: Vec<String> = left
            .iter()
            .map(|(_, n, o)| {
                format!(
                    "{}/{n}",
                    o.types
                        .as_ref()
                        .map(|t| t.kind.as_str())
                        .unwrap_or("object")
                )
            })
            .collect();
        tracing::debug!(waiting_for = ?names, "objects still being deleted");
        interrupt
            .sleep(backoff.next_delay(), OPERATION)
            .await
            .map_err(|e| {
                if e.is_final() && e.reason != "Aborted" {
                    Error {
                        message: format!("{}; still present: {}", e.message, names.join(", ")),
                        ..e
                    }
                } else {
                    e
                }
            })?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use landscaper_api::deployer::{
        CustomResourceGroup, PredefinedResourceGroup, ResourceReference,
    };

    fn m(
        api_version: &str,
        kind: &str,
        ns: Option<&str>,
        name: &str,
        policy: ManifestPolicy,
    ) -> ManagedResourceStatus {
        ManagedResourceStatus {
            policy: Some(policy),
            annotate_before_delete: None,
            resource: ResourceReference {
                api_version: Some(api_version.into()),
                kind: Some(kind.into()),
                name: Some(name.into()),
                namespace: ns.map(str::to_string),
                ..Default::default()
            },
        }
    }

    fn names(groups: &[Group]) -> Vec<Vec<String>> {
        groups
            .iter()
            .map(|g| {
                g.objects
                    .iter()
                    .map(|o| o.resource.name.clone().unwrap())
                    .collect()
            })
            .collect()
    }

    #[test]
    fn default_groups_delete_namespaced_then_cluster_scoped_then_crds_in_reverse_order() {
        let managed = vec![
            m(
                "apiextensions.k8s.io/v1",
                "CustomResourceDefinition",
                None,
                "crd",
                ManifestPolicy::Manage,
            ),
            m("v1", "Namespace", None, "ns", ManifestPolicy::Manage),
            m("v1", "ConfigMap", Some("ns"), "a", ManifestPolicy::Manage),
            m("v1", "ConfigMap", Some("ns"), "b", ManifestPolicy::Manage),
            m("v1", "ConfigMap", Some("ns"), "kept", ManifestPolicy::Keep),
        ];
        assert_eq!(
            names(&plan(&managed, &[])),
            vec![vec!["b", "a"], vec!["ns"], vec!["crd"]]
        );
    }

    #[test]
    fn custom_groups_come_first_and_the_rest_follows_by_default() {
        let managed = vec![
            m("v1", "Secret", Some("x"), "s", ManifestPolicy::Manage),
            m(
                "apps/v1",
                "Deployment",
                Some("x"),
                "d",
                ManifestPolicy::Manage,
            ),
            m("v1", "ConfigMap", Some("x"), "c", ManifestPolicy::Immutable),
        ];
        let groups = vec![
            DeletionGroupDefinition {
                custom_resource_group: Some(CustomResourceGroup {
                    resources: vec![ResourceType {
                        api_version: Some("apps/v1".into()),
                        kind: Some("Deployment".into()),
                        ..Default::default()
                    }],
                    force_delete: Some(true),
                    ..Default::default()
                }),
                ..Default::default()
            },
            DeletionGroupDefinition {
                predefined_resource_group: Some(PredefinedResourceGroup {
                    type_: Some(PredefinedResourceGroupType::Empty),
                    force_delete: None,
                }),
                ..Default::default()
            },
        ];
        let planned = plan(&managed, &groups);
        assert_eq!(names(&planned), vec![vec!["d"], vec!["c", "s"]]);
        assert!(planned[0].force);
    }
}
