//! Component descriptors: the two schema versions Landscaper reads (`v2` and OCM's
//! `ocm.software/v3alpha1`), conversion between them, and lookups of resources and component
//! references by identity.
//!
//! A descriptor is held in the v2 layout (`{meta, component}`), which every lookup works on,
//! with the schema version it was written in; templates get it back in the effective version.

use serde_json::{Map, Value as Json, json};

use crate::Error;

/// A descriptor schema version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchemaVersion {
    /// `v2`: `{meta: {schemaVersion: v2}, component: {...}}`.
    V2,
    /// `ocm.software/v3alpha1`: `{apiVersion, kind, metadata, repositoryContexts, spec}`.
    V3Alpha1,
}

/// The OCM API version of v3alpha1 descriptors.
pub const V3ALPHA1: &str = "ocm.software/v3alpha1";

impl SchemaVersion {
    /// The version a blueprint's `ocmSchemaVersion` annotation names.
    pub fn parse(name: &str) -> Result<Self, Error> {
        match name {
            "v2" => Ok(Self::V2),
            V3ALPHA1 | "v3alpha1" => Ok(Self::V3Alpha1),
            other => Err(Error::Component(format!("unknown schema version {other}"))),
        }
    }
}

/// A component descriptor.
#[derive(Clone, Debug, PartialEq)]
pub struct Descriptor {
    v2: Json,
    written_in: SchemaVersion,
}

impl Descriptor {
    /// Reads a descriptor in either schema version.
    pub fn from_json(json: Json) -> Result<Self, Error> {
        if json.get("apiVersion").and_then(Json::as_str) == Some(V3ALPHA1) {
            return Ok(Self {
                v2: v3alpha1_to_v2(&json),
                written_in: SchemaVersion::V3Alpha1,
            });
        }
        match json.pointer("/meta/schemaVersion").and_then(Json::as_str) {
            Some("v2") => Ok(Self {
                v2: json,
                written_in: SchemaVersion::V2,
            }),
            Some(other) => Err(Error::Component(format!("unknown schema version {other}"))),
            None => Err(Error::Component(
                "not a component descriptor: neither meta.schemaVersion nor apiVersion is set"
                    .into(),
            )),
        }
    }

    /// The schema version the descriptor was written in.
    pub fn schema_version(&self) -> SchemaVersion {
        self.written_in
    }

    /// `component.name`.
    pub fn name(&self) -> &str {
        self.v2
            .pointer("/component/name")
            .and_then(Json::as_str)
            .unwrap_or_default()
    }

    /// `component.version`.
    pub fn version(&self) -> &str {
        self.v2
            .pointer("/component/version")
            .and_then(Json::as_str)
            .unwrap_or_default()
    }

    /// The descriptor in the v2 layout.
    pub fn v2(&self) -> &Json {
        &self.v2
    }

    /// The descriptor in `version`'s layout.
    pub fn in_version(&self, version: SchemaVersion) -> Json {
        match version {
            SchemaVersion::V2 => self.v2.clone(),
            SchemaVersion::V3Alpha1 => v2_to_v3alpha1(&self.v2),
        }
    }

    /// The resources whose identity matches every pair of `selector`.
    pub fn resources(&self, selector: &[(String, String)]) -> Vec<Json> {
        entries(&self.v2, "resources")
            .filter(|r| identity_matches(r, selector))
            .cloned()
            .collect()
    }

    /// The component references whose identity matches every pair of `selector`.
    pub fn references(&self, selector: &[(String, String)]) -> Vec<Json> {
        entries(&self.v2, "componentReferences")
            .filter(|r| identity_matches(r, selector))
            .cloned()
            .collect()
    }

    /// The effective repository context: the last of `repositoryContexts`.
    pub fn repository_context(&self) -> Option<Json> {
        entries(&self.v2, "repositoryContexts").last().cloned()
    }
}

fn entries<'a>(v2: &'a Json, list: &str) -> impl Iterator<Item = &'a Json> {
    v2.pointer(&format!("/component/{list}"))
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
}

/// An element's identity is its `name` plus its `extraIdentity`.
fn identity_matches(element: &Json, selector: &[(String, String)]) -> bool {
    selector.iter().all(|(key, value)| {
        let found = if key == "name" {
            element.get("name")
        } else {
            element.get("extraIdentity").and_then(|e| e.get(key))
        };
        found.and_then(Json::as_str) == Some(value.as_str())
    })
}

fn copy_fields(from: &Json, to: &mut Map<String, Json>, fields: &[&str]) {
    for field in fields {
        if let Some(value) = from.get(*field) {
            to.insert((*field).to_string(), value.clone());
        }
    }
}

const ELEMENT_FIELDS: &[&str] = &[
    "name",
    "version",
    "extraIdentity",
    "labels",
    "type",
    "relation",
    "access",
    "srcRefs",
    "digest",
];

const REFERENCE_FIELDS: &[&str] = &[
    "name",
    "componentName",
    "version",
    "extraIdentity",
    "labels",
    "digest",
];

fn convert_list(from: Option<&Json>, fields: &[&str]) -> Json {
    Json::Array(
        from.and_then(Json::as_array)
            .into_iter()
            .flatten()
            .map(|element| {
                let mut out = Map::new();
                copy_fields(element, &mut out, fields);
                Json::Object(out)
            })
            .collect(),
    )
}

/// v2 → v3alpha1: the provider becomes `{name}`, the lists move under `spec`, and
/// `componentReferences` become `references`.
fn v2_to_v3alpha1(v2: &Json) -> Json {
    let component = v2.get("component").cloned().unwrap_or(Json::Null);
    let mut metadata = Map::new();
    copy_fields(&component, &mut metadata, &["name", "version", "labels"]);
    if let Some(provider) = component.get("provider") {
        let provider = match provider {
            Json::String(name) => json!({"name": name}),
            other => other.clone(),
        };
        metadata.insert("provider".into(), provider);
    }
    json!({
        "apiVersion": V3ALPHA1,
        "kind": "ComponentVersion",
        "metadata": metadata,
        "repositoryContexts": component.get("repositoryContexts").cloned().unwrap_or(json!([])),
        "spec": {
            "resources": convert_list(component.get("resources"), ELEMENT_FIELDS),
            "sources": convert_list(component.get("sources"), ELEMENT_FIELDS),
            "references": convert_list(component.get("componentReferences"), REFERENCE_FIELDS),
        }
    })
}

/// v3alpha1 → v2, the inverse of [`v2_to_v3alpha1`].
fn v3alpha1_to_v2(v3: &Json) -> Json {
    let metadata = v3.get("metadata").cloned().unwrap_or(Json::Null);
    let spec = v3.get("spec").cloned().unwrap_or(Json::Null);
    let mut component = Map::new();
    copy_fields(&metadata, &mut component, &["name", "version", "labels"]);
    if let Some(provider) = metadata.get("provider") {
        let provider = provider
            .get("name")
            .cloned()
            .unwrap_or_else(|| provider.clone());
        component.insert("provider".into(), provider);
    }
    component.insert(
        "repositoryContexts".into(),
        v3.get("repositoryContexts").cloned().unwrap_or(json!([])),
    );
    component.insert(
        "resources".into(),
        convert_list(spec.get("resources"), ELEMENT_FIELDS),
    );
    component.insert(
        "sources".into(),
        convert_list(spec.get("sources"), ELEMENT_FIELDS),
    );
    component.insert(
        "componentReferences".into(),
        convert_list(spec.get("references"), REFERENCE_FIELDS),
    );
    json!({"meta": {"schemaVersion": "v2"}, "component": component})
}

/// A `type: local` component repository: a folder in which every plain file is one component
/// descriptor (either schema version); blobs live under `blobs/`.
#[derive(Clone, Debug)]
pub struct LocalRepository {
    root: std::path::PathBuf,
    descriptors: Vec<Descriptor>,
}

impl LocalRepository {
    /// Reads every descriptor in `root`.
    pub fn open(root: &std::path::Path) -> Result<Self, Error> {
        let read_error =
            |e: std::io::Error| Error::Component(format!("reading {}: {e}", root.display()));
        let mut paths: Vec<std::path::PathBuf> = std::fs::read_dir(root)
            .map_err(read_error)?
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|path| path.is_file())
            .collect();
        paths.sort();
        let mut descriptors = Vec::new();
        for path in paths {
            let text = std::fs::read_to_string(&path).map_err(read_error)?;
            let json = crate::values::parse_yaml(&text)
                .map_err(|e| Error::Component(format!("{}: {e}", path.display())))?;
            let descriptor = Descriptor::from_json(json)
                .map_err(|e| Error::Component(format!("{}: {e}", path.display())))?;
            descriptors.push(descriptor);
        }
        Ok(Self {
            root: root.to_path_buf(),
            descriptors,
        })
    }

    /// The descriptor of a component version.
    pub fn get(&self, name: &str, version: &str) -> Result<&Descriptor, Error> {
        self.descriptors
            .iter()
            .find(|d| d.name() == name && d.version() == version)
            .ok_or_else(|| {
                Error::Component(format!(
                    "component {name}:{version} not found in the local repository {}",
                    self.root.display()
                ))
            })
    }

    /// Every descriptor of the folder, in the order of their file names.
    pub fn descriptors(&self) -> &[Descriptor] {
        &self.descriptors
    }

    /// The folder.
    pub fn root(&self) -> &std::path::Path {
        &self.root
    }

    /// A blob stored beside the descriptors (`localFilesystemBlob` access); a blob that is a
    /// folder (as upstream's local registries hold blueprints) is its tar+gzip archive.
    pub fn blob(&self, filename: &str) -> Result<Vec<u8>, Error> {
        let path = self.root.join("blobs").join(filename);
        if path.is_dir() {
            return crate::archive::archive_blueprint(&path);
        }
        std::fs::read(&path).map_err(|e| Error::Component(format!("{}: {e}", path.display())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v2() -> Json {
        json!({"meta": {"schemaVersion": "v2"}, "component": {
            "name": "example.com/a", "version": "1.0.0", "provider": "internal",
            "repositoryContexts": [{"type": "ociRegistry", "baseUrl": "r1"}, {"type": "ociRegistry", "baseUrl": "r2"}],
            "sources": [],
            "resources": [
                {"name": "img", "version": "1", "type": "ociImage", "relation": "external", "extraIdentity": {"class": "image"}, "access": {"type": "ociRegistry", "imageReference": "x:1"}},
                {"name": "chart", "version": "1", "type": "helmChart", "relation": "local", "access": {"type": "ociRegistry", "imageReference": "c:1"}}
            ],
            "componentReferences": [{"name": "ref", "componentName": "example.com/b", "version": "2.0.0"}]
        }})
    }

    #[test]
    fn both_schema_versions_convert_into_each_other() {
        let d = Descriptor::from_json(v2()).unwrap();
        let v3 = d.in_version(SchemaVersion::V3Alpha1);
        assert_eq!(v3["metadata"]["provider"], json!({"name": "internal"}));
        assert_eq!(
            v3["spec"]["references"][0]["componentName"],
            "example.com/b"
        );
        let back = Descriptor::from_json(v3).unwrap();
        assert_eq!(back.schema_version(), SchemaVersion::V3Alpha1);
        assert_eq!(back.v2(), d.v2());
    }

    #[test]
    fn elements_are_selected_by_name_and_extra_identity() {
        let d = Descriptor::from_json(v2()).unwrap();
        let sel = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        assert_eq!(d.resources(&sel(&[("class", "image")])).len(), 1);
        assert_eq!(
            d.resources(&sel(&[("name", "chart")]))[0]["type"],
            "helmChart"
        );
        assert!(d.resources(&sel(&[("name", "nope")])).is_empty());
        assert_eq!(d.references(&sel(&[("name", "ref")])).len(), 1);
        assert_eq!(d.repository_context().unwrap()["baseUrl"], "r2");
    }

    #[test]
    fn unknown_schema_versions_are_refused() {
        let err = Descriptor::from_json(json!({"meta": {"schemaVersion": "v9"}})).unwrap_err();
        assert_eq!(err.to_string(), "component: unknown schema version v9");
        assert!(SchemaVersion::parse("v3").is_err());
    }
}
