//! The objects of the deployed revision, read from its manifest: with them an upgrade prunes
//! what the previous revision deployed and the new one no longer renders, and a delete removes
//! it — also when real helm wrote that revision and the item's status never listed them, as
//! `helm upgrade` and `helm uninstall` work from the release manifest.

use super::release::Release;
use super::render::parse_documents;
use landscaper_api::deployer::{ManagedResourceStatus, ManifestPolicy, ResourceReference};
use landscaper_deployer::applier::{ObjectKey, UNKNOWN_KIND};
use landscaper_deployer::error::Error;
use landscaper_deployer::target_access::TargetCluster;
use serde_json::Value;
use std::collections::HashSet;

/// Helm's annotation that keeps an object when the release stops rendering it.
const RESOURCE_POLICY_ANNOTATION: &str = "helm.sh/resource-policy";

/// The policy of a rendered object: `keep` for `helm.sh/resource-policy: keep`, as Helm
/// never deletes those, `manage` otherwise.
pub fn policy(obj: &Value) -> ManifestPolicy {
    let keep = obj
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(RESOURCE_POLICY_ANNOTATION))
        .and_then(Value::as_str)
        == Some("keep");
    if keep {
        ManifestPolicy::Keep
    } else {
        ManifestPolicy::Manage
    }
}

/// `managed` followed by the objects of `release`'s manifest not already in it. Objects
/// whose kind the cluster no longer serves have nothing left to delete and are skipped; a
/// discovery that fails otherwise is the error (an object skipped then would never be pruned).
pub async fn with_release_objects(
    cluster: &TargetCluster,
    release: &Release,
    managed: &[ManagedResourceStatus],
) -> Result<Vec<ManagedResourceStatus>, Error> {
    let mut out = managed.to_vec();
    let mut seen: HashSet<ObjectKey> = managed.iter().map(ObjectKey::of_managed).collect();
    let what = format!("release {} revision {}", release.name, release.version);
    let objects = match parse_documents(&release.manifest, &what, &release.namespace) {
        Ok(o) => o,
        Err(e) => {
            tracing::warn!(release = %release.name, revision = release.version, error = %e.message, "release manifest unreadable: its objects are not pruned");
            return Ok(out);
        }
    };
    for obj in objects {
        let text = |pointer: &str| obj.pointer(pointer).and_then(Value::as_str);
        let (Some(api_version), Some(kind), Some(name)) =
            (text("/apiVersion"), text("/kind"), text("/metadata/name"))
        else {
            continue;
        };
        let resolved = match cluster.discovery.resolve(api_version, kind).await {
            Ok(r) => r,
            Err(e) if e.reason == UNKNOWN_KIND => {
                tracing::info!(release = %release.name, kind, name, error = %e.message, "object of the previous revision skipped");
                continue;
            }
            Err(e) => return Err(e),
        };
        let namespace = resolved.namespaced.then(|| {
            text("/metadata/namespace")
                .unwrap_or(&release.namespace)
                .to_string()
        });
        let entry = ManagedResourceStatus {
            policy: Some(policy(&obj)),
            annotate_before_delete: None,
            resource: ResourceReference {
                api_version: Some(api_version.into()),
                kind: Some(kind.into()),
                name: Some(name.into()),
                namespace,
                ..Default::default()
            },
        };
        if seen.insert(ObjectKey::of_managed(&entry)) {
            out.push(entry);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn helms_keep_policy_is_honoured() {
        let keep = json!({"metadata": {"annotations": {"helm.sh/resource-policy": "keep"}}});
        assert_eq!(policy(&keep), ManifestPolicy::Keep);
        assert_eq!(policy(&json!({"metadata": {}})), ManifestPolicy::Manage);
    }
}
