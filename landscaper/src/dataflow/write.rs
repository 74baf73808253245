//! Writing DataObjects and Targets for an installation, as upstream's `dataobjects` package
//! builds them: the name from context and key, the labels `context`, `key`, `source`,
//! `sourceType`, `jobid` (and `index` or `targetmapkey` for members of target lists and maps),
//! an owner reference to the installation; objects already equal are not written.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::Resource;
use kube::api::{Api, ObjectMeta, PostParams};
use landscaper_api::constants::labels;
use landscaper_api::core::{DataObject, Installation, Target, TargetSpec, data_object_name};
use landscaper_api::meta::contains_all;
use serde_json::{Map, Value as Json};

use super::names::{
    DATA_JOB_ID, DATA_SOURCE, DATA_SOURCE_TYPE, EXPORT_SOURCE_TYPE, IMPORT_SOURCE_TYPE,
    installation_context,
};
use super::{DataflowError, key_of};

/// The prefix of the labels this module owns; a Target's own labels under it are replaced.
const DATA_LABEL_PREFIX: &str = "data.landscaper.gardener.cloud/";

/// Where an object sits among its siblings: alone, at an index of a list, or under a map key.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Member {
    /// A single DataObject or Target.
    Single,
    /// Element `n` of a target list (`<key>[n]`).
    Index(usize),
    /// Entry of a target map (`<key>[<map key>]`).
    MapKey(String),
}

impl Member {
    /// The key the object's name is generated from (upstream `GenerateDataObjectNameWithIndex`
    /// and the target map's `<key>[<map key>]`).
    fn name_key(&self, key: &str) -> String {
        match self {
            Self::Single => key.to_owned(),
            Self::Index(i) => format!("{key}[{i}]"),
            Self::MapKey(k) => format!("{key}[{k}]"),
        }
    }
}

/// What a [`Writer`] writes: an installation's exports, or the imports it passes to its
/// subinstallations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Purpose {
    /// Exports, in the context the installation reads its imports in.
    Export,
    /// Imports, in the installation's own context.
    Import,
}

impl Purpose {
    /// The `sourceType` label value, also the word in messages.
    fn as_str(self) -> &'static str {
        match self {
            Self::Export => EXPORT_SOURCE_TYPE,
            Self::Import => IMPORT_SOURCE_TYPE,
        }
    }

    /// The error for a write the API server refused as invalid, `message` naming it.
    fn invalid(self, message: String) -> DataflowError {
        match self {
            Self::Export => DataflowError::InvalidExport(message),
            Self::Import => DataflowError::InvalidImport(message),
        }
    }
}

impl std::fmt::Display for Purpose {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Writes an installation's DataObjects and Targets into one context.
pub(crate) struct Writer<'a> {
    /// The client to write with.
    pub client: &'a kube::Client,
    /// The installation that owns what is written.
    pub installation: &'a Installation,
    /// The context written into (the `context` label and part of the names).
    pub context: String,
    /// Exports or imports: the `sourceType` label and the word in messages.
    pub purpose: Purpose,
}

impl Writer<'_> {
    fn namespace(&self) -> String {
        self.installation
            .metadata
            .namespace
            .clone()
            .unwrap_or_default()
    }

    fn installation_name(&self) -> String {
        self.installation.metadata.name.clone().unwrap_or_default()
    }

    /// The metadata upstream gives such an object.
    fn meta(&self, key: &str, member: &Member) -> ObjectMeta {
        let mut labels = BTreeMap::new();
        if !self.context.is_empty() {
            labels.insert(labels::DATA_CONTEXT.to_owned(), self.context.clone());
        }
        labels.insert(labels::DATA_KEY.to_owned(), key.to_owned());
        labels.insert(
            DATA_SOURCE.to_owned(),
            installation_context(&self.installation_name()),
        );
        labels.insert(
            DATA_SOURCE_TYPE.to_owned(),
            self.purpose.as_str().to_owned(),
        );
        match member {
            Member::Single => {}
            Member::Index(i) => {
                labels.insert(labels::DATA_INDEX.to_owned(), i.to_string());
            }
            Member::MapKey(k) => {
                labels.insert(labels::DATA_TARGET_MAP_KEY.to_owned(), k.clone());
            }
        }
        if let Some(job) = self
            .installation
            .status
            .as_ref()
            .and_then(|s| s.job_id.clone())
            .filter(|j| !j.is_empty())
        {
            labels.insert(DATA_JOB_ID.to_owned(), job);
        }
        ObjectMeta {
            name: Some(data_object_name(&self.context, &member.name_key(key))),
            namespace: Some(self.namespace()),
            labels: Some(labels),
            owner_references: self.owner_reference().map(|o| vec![o]),
            ..ObjectMeta::default()
        }
    }

    fn owner_reference(&self) -> Option<OwnerReference> {
        let meta = &self.installation.metadata;
        Some(OwnerReference {
            api_version: Installation::api_version(&()).into_owned(),
            kind: Installation::kind(&()).into_owned(),
            name: meta.name.clone()?,
            uid: meta.uid.clone()?,
            ..OwnerReference::default()
        })
    }

    /// Creates or updates the DataObject holding `data` under `key`.
    pub async fn data_object(&self, key: &str, data: &Json) -> Result<(), DataflowError> {
        let metadata = self.meta(key, &Member::Single);
        let desired = DataObject {
            metadata,
            data: data.clone(),
            ..DataObject::default()
        };
        self.ensure(desired, key).await
    }

    /// Creates or updates the Target under `key` (as `member`) from `template`: a target
    /// template (`type`, `config`, `secretRef`, `labels`, `annotations`) or a Target object.
    pub async fn target(
        &self,
        key: &str,
        member: &Member,
        template: &Json,
    ) -> Result<(), DataflowError> {
        let TargetParts {
            spec,
            labels: own_labels,
            annotations,
        } = target_parts(template).map_err(|e| {
            DataflowError::InvalidExport(format!(
                "Installation {}/{}: target {} {key:?}: unable to build a Target: {e}",
                self.namespace(),
                self.installation_name(),
                self.purpose
            ))
        })?;
        let mut metadata = self.meta(key, member);
        let mut all_labels: BTreeMap<String, String> = own_labels
            .into_iter()
            .filter(|(k, _)| !k.starts_with(DATA_LABEL_PREFIX))
            .collect();
        all_labels.extend(metadata.labels.take().unwrap_or_default());
        metadata.labels = Some(all_labels);
        metadata.annotations = (!annotations.is_empty()).then_some(annotations);
        self.ensure(Target { metadata, spec }, key).await
    }

    /// An object owned by another installation is not taken over (upstream's exclusive owner
    /// reference for exports).
    fn check_owner(&self, meta: &ObjectMeta, kind: &str, key: &str) -> Result<(), DataflowError> {
        let own = self.installation.metadata.uid.as_ref();
        let other = meta
            .owner_references
            .iter()
            .flatten()
            .find(|o| o.kind == "Installation" && Some(&o.uid) != own);
        match other {
            Some(o) => Err(DataflowError::InvalidExport(format!(
                "Installation {}/{}: {kind} {} for {} {key:?} conflicts with an existing one owned by Installation {}",
                self.namespace(),
                self.installation_name(),
                key_of(meta),
                self.purpose,
                o.name
            ))),
            None => Ok(()),
        }
    }

    /// Creates `desired` under `key`, or brings the existing object to it (keeping labels
    /// others added) unless it already is; one owned by another installation is an error.
    async fn ensure<K: Written>(&self, desired: K, key: &str) -> Result<(), DataflowError> {
        let kind = K::kind(&()).into_owned();
        let name = desired.meta().name.clone().unwrap_or_default();
        let api: Api<K> = Api::namespaced(self.client.clone(), &self.namespace());
        let Some(mut current) = self.read(&api, &name, &kind, key).await? else {
            return self.create(&api, &desired, &kind, key).await;
        };
        self.check_owner(current.meta(), &kind, key)?;
        if current.same_body(&desired) && same_meta(current.meta(), desired.meta()) {
            return Ok(());
        }
        merge_meta(current.meta_mut(), desired.meta());
        current.take_body(desired);
        self.replace(&api, &name, &current, &kind, key).await
    }

    async fn read<K: Written>(
        &self,
        api: &Api<K>,
        name: &str,
        kind: &str,
        key: &str,
    ) -> Result<Option<K>, DataflowError> {
        api.get_opt(name)
            .await
            .map_err(|source| DataflowError::Api {
                context: self.context_of(kind, name, key, "reading"),
                source,
            })
    }

    async fn create<K: Written>(
        &self,
        api: &Api<K>,
        object: &K,
        kind: &str,
        key: &str,
    ) -> Result<(), DataflowError> {
        let name = object.meta().name.clone().unwrap_or_default();
        api.create(&PostParams::default(), object)
            .await
            .map(|_| ())
            .map_err(|source| {
                self.write_failed(self.context_of(kind, &name, key, "creating"), source)
            })
    }

    async fn replace<K: Written>(
        &self,
        api: &Api<K>,
        name: &str,
        object: &K,
        kind: &str,
        key: &str,
    ) -> Result<(), DataflowError> {
        api.replace(name, &PostParams::default(), object)
            .await
            .map(|_| ())
            .map_err(|source| {
                self.write_failed(self.context_of(kind, name, key, "updating"), source)
            })
    }

    /// A failed write: one the API server refused as invalid is an invalid export or import,
    /// refused again if written again; any other failure is retried.
    fn write_failed(&self, context: String, source: kube::Error) -> DataflowError {
        match crate::refusal::permanent(&source) {
            Some(message) => self.purpose.invalid(format!("{context}: {message}")),
            None => DataflowError::Api { context, source },
        }
    }

    fn context_of(&self, kind: &str, name: &str, key: &str, verb: &str) -> String {
        format!(
            "Installation {}/{}: {verb} {kind} {}/{name} for {} {key:?}",
            self.namespace(),
            self.installation_name(),
            self.namespace(),
            self.purpose
        )
    }
}

/// What a Target is written from: its spec, its own labels and annotations.
struct TargetParts {
    spec: TargetSpec,
    labels: BTreeMap<String, String>,
    annotations: BTreeMap<String, String>,
}

/// The spec, labels and annotations of a target template or a Target object.
fn target_parts(template: &Json) -> Result<TargetParts, String> {
    // A Target object (an import) carries them under spec and metadata; a template at the top.
    let (source, meta) = match template.get("spec") {
        Some(spec) if spec.is_object() => (spec, template.get("metadata")),
        _ => (template, Some(template)),
    };
    let mut spec = Map::new();
    for field in ["type", "config", "secretRef"] {
        if let Some(v) = source.get(field).filter(|v| !v.is_null()) {
            spec.insert(field.into(), v.clone());
        }
    }
    let spec: TargetSpec = serde_json::from_value(Json::Object(spec)).map_err(|e| e.to_string())?;
    let strings = |field: &str| -> BTreeMap<String, String> {
        meta.and_then(|m| m.get(field))
            .and_then(|v| serde_json::from_value(v.clone()).ok())
            .unwrap_or_default()
    };
    Ok(TargetParts {
        spec,
        labels: strings("labels"),
        annotations: strings("annotations"),
    })
}

/// An object this module writes: its metadata, and the body (data, spec) compared and
/// replaced as a whole.
trait Written:
    Resource<DynamicType = (), Scope = kube::core::NamespaceResourceScope>
    + Clone
    + serde::Serialize
    + serde::de::DeserializeOwned
    + std::fmt::Debug
{
    /// Whether the body equals `other`'s.
    fn same_body(&self, other: &Self) -> bool;
    /// Takes `other`'s body.
    fn take_body(&mut self, other: Self);
}

impl Written for DataObject {
    fn same_body(&self, other: &Self) -> bool {
        self.data == other.data
    }

    fn take_body(&mut self, other: Self) {
        self.data = other.data;
    }
}

impl Written for Target {
    fn same_body(&self, other: &Self) -> bool {
        self.spec == other.spec
    }

    fn take_body(&mut self, other: Self) {
        self.spec = other.spec;
    }
}

/// Whether the current metadata already has the desired labels and owner references.
fn same_meta(current: &ObjectMeta, desired: &ObjectMeta) -> bool {
    let labels = current.labels.clone().unwrap_or_default();
    let desired_labels = desired.labels.clone().unwrap_or_default();
    let stale_data_label = labels
        .keys()
        .any(|k| k.starts_with(DATA_LABEL_PREFIX) && !desired_labels.contains_key(k));
    !stale_data_label
        && contains_all(Some(&labels), Some(&desired_labels))
        && current.owner_references == desired.owner_references
        && contains_all(current.annotations.as_ref(), desired.annotations.as_ref())
}

/// Sets the desired labels, annotations and owner references on an existing object's metadata,
/// keeping labels others added and dropping data labels that no longer apply.
fn merge_meta(current: &mut ObjectMeta, desired: &ObjectMeta) {
    let mut labels: BTreeMap<String, String> = current
        .labels
        .take()
        .unwrap_or_default()
        .into_iter()
        .filter(|(k, _)| !k.starts_with(DATA_LABEL_PREFIX))
        .collect();
    labels.extend(desired.labels.clone().unwrap_or_default());
    current.labels = Some(labels);
    if let Some(annotations) = &desired.annotations {
        current
            .annotations
            .get_or_insert_with(BTreeMap::new)
            .extend(annotations.clone());
    }
    current.owner_references = desired.owner_references.clone();
}
