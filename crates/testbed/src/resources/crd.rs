//! Turning a CustomResourceDefinition object into the resources it serves.

use super::{CR_VERBS, ResourceDef, Shape, Subresource, storage_version_hash};
use serde_json::Value;
use std::sync::Arc;

/// What a served custom resource keeps of its CRD.
#[derive(Debug, Clone, PartialEq)]
pub struct CrdInfo {
    /// The CRD's name (`plural.group`).
    pub name: String,
    /// The version objects are stored in.
    pub storage_version: String,
    /// The OpenAPI v3 schema of each served version.
    pub schemas: Vec<(String, Value)>,
    /// `additionalPrinterColumns` of each served version.
    pub printer_columns: Vec<(String, Value)>,
    /// The `scale` subresource of each version that declares one.
    pub scales: Vec<(String, ScalePaths)>,
}

/// Where a custom resource keeps what its `scale` subresource shows, as JSON pointers
/// (`/spec/replicas`) made from the CRD's JSON paths (`.spec.replicas`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScalePaths {
    /// `specReplicasPath`: the desired count, which scaling writes.
    pub spec_replicas: String,
    /// `statusReplicasPath`: the observed count.
    pub status_replicas: String,
    /// `labelSelectorPath`: the selector string, when declared.
    pub label_selector: Option<String>,
}

impl ScalePaths {
    /// Reads `subresources.scale` of a CRD version; `None` when it declares none or lacks a
    /// replica path.
    fn of(version: &Value) -> Option<Self> {
        let scale = version.pointer("/subresources/scale")?;
        let pointer = |key: &str| {
            scale
                .get(key)
                .and_then(Value::as_str)
                .filter(|p| p.starts_with('.') && p.len() > 1)
                .map(|p| p.replace('.', "/"))
        };
        Some(Self {
            spec_replicas: pointer("specReplicasPath")?,
            status_replicas: pointer("statusReplicasPath")?,
            label_selector: pointer("labelSelectorPath"),
        })
    }
}

impl CrdInfo {
    /// The schema of a version, if one was given.
    pub fn schema(&self, version: &str) -> Option<&Value> {
        self.schemas
            .iter()
            .find(|(v, _)| v == version)
            .map(|(_, s)| s)
    }

    /// The scale paths of a version.
    pub fn scale(&self, version: &str) -> Option<&ScalePaths> {
        self.scales
            .iter()
            .find(|(v, _)| v == version)
            .map(|(_, s)| s)
    }

    /// The printer columns of a version.
    pub fn columns(&self, version: &str) -> Option<&Value> {
        self.printer_columns
            .iter()
            .find(|(v, _)| v == version)
            .map(|(_, s)| s)
    }
}

/// Why a CRD cannot be served.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CrdError {
    /// A required field is missing or has the wrong type.
    #[error("{0}: Required value")]
    Missing(&'static str),
    /// The name is not `<plural>.<group>`.
    #[error("metadata.name: Invalid value: \"{0}\": must be spec.names.plural+\".\"+spec.group")]
    BadName(String),
    /// Not exactly one storage version.
    #[error(
        "spec.versions: Invalid value: must have exactly one version marked as storage version"
    )]
    StorageVersions,
}

fn str_at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    path.iter().try_fold(v, |v, k| v.get(k))?.as_str()
}

fn string_list(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The served resources (one per served version) of a CRD object.
pub fn crd_resources(crd: &Value) -> Result<Vec<ResourceDef>, CrdError> {
    let spec = crd.get("spec").ok_or(CrdError::Missing("spec"))?;
    let group = str_at(spec, &["group"]).ok_or(CrdError::Missing("spec.group"))?;
    let names = spec.get("names").ok_or(CrdError::Missing("spec.names"))?;
    let plural = str_at(names, &["plural"]).ok_or(CrdError::Missing("spec.names.plural"))?;
    let kind = str_at(names, &["kind"]).ok_or(CrdError::Missing("spec.names.kind"))?;
    let name = str_at(crd, &["metadata", "name"]).unwrap_or_default();
    if name != format!("{plural}.{group}") {
        return Err(CrdError::BadName(name.to_string()));
    }
    let singular =
        str_at(names, &["singular"]).map_or_else(|| kind.to_ascii_lowercase(), str::to_string);
    let namespaced = str_at(spec, &["scope"]) != Some("Cluster");
    let versions = spec
        .get("versions")
        .and_then(Value::as_array)
        .ok_or(CrdError::Missing("spec.versions"))?;
    let storage: Vec<&str> = versions
        .iter()
        .filter(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        .filter_map(|v| str_at(v, &["name"]))
        .collect();
    let [storage_version] = storage[..] else {
        return Err(CrdError::StorageVersions);
    };
    let info = Arc::new(CrdInfo {
        name: name.to_string(),
        storage_version: storage_version.to_string(),
        schemas: versions
            .iter()
            .filter_map(|v| {
                Some((
                    str_at(v, &["name"])?.to_string(),
                    v.pointer("/schema/openAPIV3Schema")?.clone(),
                ))
            })
            .collect(),
        printer_columns: versions
            .iter()
            .filter_map(|v| {
                Some((
                    str_at(v, &["name"])?.to_string(),
                    v.get("additionalPrinterColumns")?.clone(),
                ))
            })
            .collect(),
        scales: versions
            .iter()
            .filter_map(|v| Some((str_at(v, &["name"])?.to_string(), ScalePaths::of(v)?)))
            .collect(),
    });
    let served = versions
        .iter()
        .filter(|v| v.get("served").and_then(Value::as_bool) != Some(false));
    Ok(served
        .filter_map(|v| {
            let version = str_at(v, &["name"])?;
            let mut subresources = Vec::new();
            if v.pointer("/subresources/status").is_some() {
                subresources.push(Subresource {
                    name: "status".into(),
                    verbs: vec!["get".into(), "patch".into(), "update".into()],
                    gvk: None,
                });
            }
            if ScalePaths::of(v).is_some() {
                subresources.push(Subresource {
                    name: "scale".into(),
                    verbs: vec!["get".into(), "patch".into(), "update".into()],
                    gvk: Some(("autoscaling".into(), "v1".into(), "Scale".into())),
                });
            }
            Some(ResourceDef {
                group: group.into(),
                version: version.into(),
                kind: kind.into(),
                plural: plural.into(),
                singular: singular.clone(),
                namespaced,
                short_names: string_list(names.get("shortNames")),
                categories: string_list(names.get("categories")),
                verbs: CR_VERBS.iter().map(|s| s.to_string()).collect(),
                subresources,
                shape: Shape::Custom,
                storage_key: format!("{group}/{plural}"),
                storage_hash: Some(storage_version_hash(group, storage_version, kind)),
                crd: Some(info.clone()),
            })
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn served_versions_become_resources() {
        let crd = json!({
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                     "names": {"plural": "widgets", "kind": "Widget", "shortNames": ["wd"]},
                     "versions": [
                        {"name": "v1", "served": true, "storage": true, "subresources": {"status": {}}},
                        {"name": "v1beta1", "served": false, "storage": false}]}
        });
        let defs = crd_resources(&crd).unwrap();
        assert_eq!(defs.len(), 1);
        assert_eq!(defs[0].singular, "widget");
        assert!(defs[0].has_status());
        assert_eq!(defs[0].short_names, vec!["wd"]);
    }

    #[test]
    fn scale_paths_become_pointers() {
        let crd = json!({
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "names": {"plural": "widgets", "kind": "Widget"},
                     "versions": [{"name": "v1", "served": true, "storage": true,
                        "subresources": {"scale": {"specReplicasPath": ".spec.size",
                            "statusReplicasPath": ".status.ready.count"}}}]}
        });
        let defs = crd_resources(&crd).unwrap();
        let paths = defs[0].crd.as_ref().unwrap().scale("v1").unwrap();
        assert_eq!(paths.spec_replicas, "/spec/size");
        assert_eq!(paths.status_replicas, "/status/ready/count");
        assert_eq!(paths.label_selector, None);
        assert!(defs[0].has_subresource("scale"));
    }

    #[test]
    fn name_must_be_plural_dot_group() {
        let crd = json!({"metadata": {"name": "x.example.com"},
            "spec": {"group": "example.com", "names": {"plural": "widgets", "kind": "Widget"}, "versions": []}});
        assert_eq!(
            crd_resources(&crd),
            Err(CrdError::BadName("x.example.com".into()))
        );
    }
}
