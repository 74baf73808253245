//! How the helm deployer marks what it owns: its field managers, the label tying objects to
//! their DeployItem, and Helm's ownership metadata, which real helm requires to adopt objects.

use serde_json::Value;

/// The label tying deployed objects to their DeployItem (value: the item's name).
pub const DEPLOY_ITEM_LABEL: &str = "helm.deployer.landscaper.gardener.cloud/deployitem";
/// The field manager of the helm deployer's writes.
pub const FIELD_MANAGER: &str = "landscaper-helm-deployer";
/// The field manager of writes to releases recorded for helm: Helm's own, so a later
/// `helm upgrade` (server-side apply without forcing) owns the same fields and meets no
/// conflicts, and our upgrade of a release helm wrote drops the fields its chart dropped.
pub(crate) const HELM_FIELD_MANAGER: &str = "helm";
/// Helm's ownership label and annotations, which `helm upgrade` requires on existing objects.
const MANAGED_BY_LABEL: &str = "app.kubernetes.io/managed-by";
const RELEASE_NAME_ANNOTATION: &str = "meta.helm.sh/release-name";
const RELEASE_NAMESPACE_ANNOTATION: &str = "meta.helm.sh/release-namespace";

/// Adds Helm's ownership metadata, so real helm accepts the objects as part of the release.
/// Charts often render an empty `annotations:` (null); that counts as no annotations.
pub(crate) fn with_helm_ownership(mut obj: Value, release: &str, namespace: &str) -> Value {
    let Some(root) = obj.as_object_mut() else {
        return obj;
    };
    edit_object(root, "metadata", |meta| {
        edit_object(meta, "labels", |labels| {
            labels.insert(MANAGED_BY_LABEL.into(), "Helm".into());
        });
        edit_object(meta, "annotations", |annotations| {
            annotations.insert(RELEASE_NAME_ANNOTATION.into(), release.into());
            annotations.insert(RELEASE_NAMESPACE_ANNOTATION.into(), namespace.into());
        });
    });
    obj
}

/// Edits the object under `key`, which is made one when missing or not an object (e.g. null).
fn edit_object(
    map: &mut serde_json::Map<String, Value>,
    key: &str,
    edit: impl FnOnce(&mut serde_json::Map<String, Value>),
) {
    match map.get_mut(key) {
        Some(Value::Object(inner)) => edit(inner),
        _ => {
            let mut inner = serde_json::Map::new();
            edit(&mut inner);
            map.insert(key.into(), Value::Object(inner));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ownership_is_added_to_empty_rendered_annotations() {
        let rendered = json!({
            "kind": "Service",
            "metadata": { "name": "web", "labels": { "app": "web" }, "annotations": null },
        });
        let owned = with_helm_ownership(rendered, "rel", "ns1");
        assert_eq!(
            owned["metadata"],
            json!({
                "name": "web",
                "labels": { "app": "web", "app.kubernetes.io/managed-by": "Helm" },
                "annotations": {
                    "meta.helm.sh/release-name": "rel",
                    "meta.helm.sh/release-namespace": "ns1",
                },
            })
        );
    }
}
