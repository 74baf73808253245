//! One desired object: parsed from a manifest, identified, categorised for ordering.

use crate::discovery::split_api_version;
use crate::error::Error;
use landscaper_api::deployer::{ManagedResourceStatus, ResourceReference};
use serde_json::{Map, Value};

/// Where an object goes in the apply order (deletion runs the other way).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Category {
    /// CustomResourceDefinitions, so custom resources can follow.
    Crd,
    /// Namespaces, so namespaced objects can follow.
    Namespace,
    /// Other cluster-scoped objects.
    ClusterScoped,
    /// Namespaced objects.
    Namespaced,
}

/// The identity of an object: kind and group (not version, so a version change is the same
/// object), namespace and name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectKey {
    /// API group (empty for the core group).
    pub group: String,
    /// Kind.
    pub kind: String,
    /// Namespace (empty when cluster-scoped).
    pub namespace: String,
    /// Name.
    pub name: String,
}

impl ObjectKey {
    /// The key of a managed resource entry.
    pub fn of_managed(m: &ManagedResourceStatus) -> Self {
        let r = &m.resource;
        Self {
            group: split_api_version(r.api_version.as_deref().unwrap_or_default())
                .0
                .to_string(),
            kind: r.kind.clone().unwrap_or_default(),
            namespace: r.namespace.clone().unwrap_or_default(),
            name: r.name.clone().unwrap_or_default(),
        }
    }
}

impl std::fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = if self.group.is_empty() {
            self.kind.clone()
        } else {
            format!("{}.{}", self.kind, self.group)
        };
        if self.namespace.is_empty() {
            write!(f, "{kind} {}", self.name)
        } else {
            write!(f, "{kind} {}/{}", self.namespace, self.name)
        }
    }
}

/// The fields a manifest must have, read from the manifest.
#[derive(Debug, Clone)]
pub struct Head {
    /// `apiVersion`.
    pub api_version: String,
    /// `kind`.
    pub kind: String,
    /// `metadata.name`.
    pub name: String,
    /// `metadata.namespace`, if given.
    pub namespace: Option<String>,
}

/// Reads apiVersion, kind and name; `field` names the manifest in errors.
pub fn head(manifest: &Value, field: &str) -> Result<Head, Error> {
    let invalid = |what: &str| {
        Error::config(
            "ApplyManifests",
            "InvalidManifest",
            format!("{field}: {what}"),
        )
    };
    let obj = manifest
        .as_object()
        .ok_or_else(|| invalid("the manifest is not an object"))?;
    let text = |v: Option<&Value>| {
        v.and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    let api_version =
        text(obj.get("apiVersion")).ok_or_else(|| invalid("apiVersion is missing"))?;
    let kind = text(obj.get("kind")).ok_or_else(|| invalid("kind is missing"))?;
    let metadata = obj.get("metadata");
    let name = text(metadata.and_then(|m| m.get("name")))
        .ok_or_else(|| invalid("metadata.name is missing"))?;
    let namespace = text(metadata.and_then(|m| m.get("namespace")));
    Ok(Head {
        api_version,
        kind,
        name,
        namespace,
    })
}

/// The category of a kind, given its scope.
pub fn category(group: &str, kind: &str, namespaced: bool) -> Category {
    match (group, kind) {
        ("apiextensions.k8s.io", "CustomResourceDefinition") => Category::Crd,
        ("", "Namespace") => Category::Namespace,
        _ if namespaced => Category::Namespaced,
        _ => Category::ClusterScoped,
    }
}

/// The category of a managed resource entry (scope from whether it has a namespace).
pub fn category_of_managed(m: &ManagedResourceStatus) -> Category {
    let key = ObjectKey::of_managed(m);
    category(&key.group, &key.kind, !key.namespace.is_empty())
}

/// The manifest made ready to send: server-owned metadata removed, namespace set or removed,
/// labels added.
pub fn prepare(
    manifest: &Value,
    namespace: Option<&str>,
    labels: &std::collections::BTreeMap<String, String>,
    extra_annotations: Option<&std::collections::BTreeMap<String, String>>,
) -> Value {
    let mut obj = manifest.clone();
    let Some(root) = obj.as_object_mut() else {
        return obj;
    };
    let metadata = root
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Some(m) = metadata.as_object_mut() {
        for field in [
            "resourceVersion",
            "uid",
            "creationTimestamp",
            "managedFields",
            "generation",
            "selfLink",
            "deletionTimestamp",
        ] {
            m.remove(field);
        }
        match namespace {
            Some(ns) => {
                m.insert("namespace".into(), Value::String(ns.into()));
            }
            None => {
                m.remove("namespace");
            }
        }
        insert_all(m, "labels", labels);
        if let Some(a) = extra_annotations {
            insert_all(m, "annotations", a);
        }
    }
    obj
}

fn insert_all(
    metadata: &mut Map<String, Value>,
    field: &str,
    values: &std::collections::BTreeMap<String, String>,
) {
    if values.is_empty() {
        return;
    }
    let entry = metadata
        .entry(field)
        .or_insert_with(|| Value::Object(Map::new()));
    if !entry.is_object() {
        *entry = Value::Object(Map::new());
    }
    if let Some(map) = entry.as_object_mut() {
        for (k, v) in values {
            map.insert(k.clone(), Value::String(v.clone()));
        }
    }
}

/// A managed resource entry for an applied object.
pub fn managed_entry(
    head: &Head,
    namespace: Option<&str>,
    policy: landscaper_api::deployer::ManifestPolicy,
    annotate_before_delete: Option<std::collections::BTreeMap<String, String>>,
) -> ManagedResourceStatus {
    ManagedResourceStatus {
        policy: Some(policy),
        annotate_before_delete,
        resource: ResourceReference {
            api_version: Some(head.api_version.clone()),
            kind: Some(head.kind.clone()),
            name: Some(head.name.clone()),
            namespace: namespace.map(str::to_string),
            ..Default::default()
        },
    }
}

/// Deep merge: `overlay` wins for scalars and lists, objects merge key by key.
pub fn deep_merge(base: &Value, overlay: &Value) -> Value {
    match (base, overlay) {
        (Value::Object(b), Value::Object(o)) => {
            let mut out = b.clone();
            for (k, v) in o {
                let merged = match b.get(k) {
                    Some(bv) => deep_merge(bv, v),
                    None => v.clone(),
                };
                out.insert(k.clone(), merged);
            }
            Value::Object(out)
        }
        (_, o) => o.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn heads_name_the_missing_field() {
        let err = head(
            &json!({"apiVersion": "v1", "metadata": {"name": "a"}}),
            "manifests[2]",
        )
        .unwrap_err();
        assert_eq!(err.message, "manifests[2]: kind is missing");
        let h = head(
            &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "x"}}),
            "m",
        )
        .unwrap();
        assert_eq!(h.namespace.as_deref(), Some("x"));
    }

    #[test]
    fn categories_order_crds_namespaces_cluster_scoped_then_namespaced() {
        let mut cats = vec![
            category("", "ConfigMap", true),
            category("rbac.authorization.k8s.io", "ClusterRole", false),
            category("", "Namespace", false),
            category("apiextensions.k8s.io", "CustomResourceDefinition", false),
        ];
        cats.sort();
        assert_eq!(
            cats,
            vec![
                Category::Crd,
                Category::Namespace,
                Category::ClusterScoped,
                Category::Namespaced
            ]
        );
    }

    #[test]
    fn prepare_sets_namespace_labels_and_drops_server_fields() {
        let labels = [("l".to_string(), "item".to_string())].into();
        let got = prepare(
            &json!({"kind": "ConfigMap", "metadata": {"name": "a", "resourceVersion": "5", "labels": {"x": "y"}}}),
            Some("ns"),
            &labels,
            None,
        );
        assert_eq!(
            got,
            json!({"kind": "ConfigMap", "metadata": {"name": "a", "namespace": "ns", "labels": {"x": "y", "l": "item"}}})
        );
        let cluster = prepare(
            &json!({"metadata": {"name": "n", "namespace": "z"}}),
            None,
            &labels,
            None,
        );
        assert!(cluster["metadata"].get("namespace").is_none());
    }

    #[test]
    fn deep_merge_lets_the_overlay_win_and_keeps_other_keys() {
        let got = deep_merge(
            &json!({"data": {"a": "1", "b": "2"}, "list": [1, 2]}),
            &json!({"data": {"b": "3"}, "list": [3]}),
        );
        assert_eq!(got, json!({"data": {"a": "1", "b": "3"}, "list": [3]}));
    }
}
