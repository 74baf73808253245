//! Constructing an installation's exports and writing them, as upstream's
//! `exports/constructor.go` and `CreateOrUpdateExports` do: the blueprint's `exportExecutions`
//! see the Execution's exports (`.values.deployitems`) and what the subinstallations exported
//! into the installation's own context (`.values.dataobjects`, `.values.targets`); then
//! `exportDataMappings`; then DataObjects and Targets named by `spec.exports`, in the context the
//! installation's imports are read in (so its siblings and parent see them).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::Resource;
use kube::api::{Api, ListParams, ObjectMeta, PostParams};
use landscaper_api::constants::labels;
use landscaper_api::core::{
    Blueprint, DataObject, Execution, ExportDefinition, ImportDefinition, Installation, Target,
    TargetSpec,
};
use landscaper_blueprint::{ExecutionOptions, StateHandler, Templater};
use serde_json::{Map, Value as Json, json};

use super::imports::target_json;
use super::names::{
    DATA_JOB_ID, DATA_SOURCE, DATA_SOURCE_TYPE, EXPORT_SOURCE_TYPE, installation_context,
    object_name,
};
use super::{DataflowError, Scope, key_of, mappings};

/// What an installation exports: values by export name, and the objects `spec.exports` makes
/// of them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Exports {
    /// Every export the blueprint declares (after `exportDataMappings`), by name.
    pub values: Map<String, Json>,
    /// `spec.exports.data`: the DataObject key (`dataRef`) and its data.
    pub data_objects: Vec<(String, Json)>,
    /// `spec.exports.targets`: the Target key and the target template (`type`, `config`, …).
    pub targets: Vec<(String, Json)>,
}

/// Constructs the exports of `installation`: `options` carries its blueprint, filesystem,
/// component and imports; `state` the executions' state.
pub async fn construct_exports(
    client: &kube::Client,
    installation: &Installation,
    options: &ExecutionOptions,
    state: &dyn StateHandler,
    scope: &Scope,
) -> Result<Exports, DataflowError> {
    let owner = format!("Installation {}/{}", scope.namespace, scope.name);
    let mut internal = Map::new();
    internal.insert(
        "deployitems".into(),
        execution_exports(client, installation, scope).await?,
    );
    let own = scope.own_context();
    internal.insert(
        "dataobjects".into(),
        Json::Object(data_objects_in(client, scope, &own).await?),
    );
    internal.insert(
        "targets".into(),
        Json::Object(targets_in(client, scope, &own).await?),
    );
    let mut values = Templater::new(state)
        .export_executions(options, &internal)
        .map_err(|source| DataflowError::Template {
            context: owner.clone(),
            source,
        })?;
    validate(&owner, &options.blueprint, options, &mut values)?;
    if let Some(m) = installation
        .spec
        .export_data_mappings
        .as_ref()
        .filter(|m| !m.is_empty())
    {
        let mut binding = values.clone();
        binding.insert("exports".into(), Json::Object(values.clone()));
        values.extend(mappings::evaluate(
            &owner,
            "spec.exportDataMappings",
            m,
            &binding,
        )?);
    }
    let spec_exports = installation.spec.exports.clone().unwrap_or_default();
    let mut exports = Exports::default();
    for export in spec_exports.data.iter().flatten() {
        let value = values.get(&export.name).ok_or_else(|| {
            DataflowError::InvalidExport(format!(
                "{owner}: spec.exports.data {:?}: the blueprint's executions and exportDataMappings export no such value",
                export.name
            ))
        })?;
        exports
            .data_objects
            .push((export.data_ref.clone(), value.clone()));
    }
    for export in spec_exports.targets.iter().flatten() {
        let value = values.get(&export.name).ok_or_else(|| {
            DataflowError::InvalidExport(format!(
                "{owner}: spec.exports.targets {:?}: the blueprint's executions and exportDataMappings export no such value",
                export.name
            ))
        })?;
        let key = export.target.clone().unwrap_or_default();
        exports.targets.push((key, value.clone()));
    }
    exports.values = values;
    Ok(exports)
}

/// Constructs the exports of `installation` and writes them as DataObjects and Targets in its
/// context, owned by it, labelled as upstream does; objects already equal are not written.
pub async fn write_exports(
    client: &kube::Client,
    installation: &Installation,
    options: &ExecutionOptions,
    state: &dyn StateHandler,
    scope: &Scope,
) -> Result<Exports, DataflowError> {
    let exports = construct_exports(client, installation, options, state, scope).await?;
    let writer = Writer {
        client,
        installation,
        scope,
    };
    for (key, data) in &exports.data_objects {
        writer.data_object(key, data).await?;
    }
    for (key, template) in &exports.targets {
        writer.target(key, template).await?;
    }
    tracing::info!(
        installation = %format!("{}/{}", scope.namespace, scope.name),
        data_objects = exports.data_objects.len(),
        targets = exports.targets.len(),
        "exports written"
    );
    Ok(exports)
}

/// The data of the Execution's export DataObject (`status.exportRef`), `{}` when the
/// installation has no Execution or it exported nothing.
async fn execution_exports(
    client: &kube::Client,
    installation: &Installation,
    scope: &Scope,
) -> Result<Json, DataflowError> {
    let Some(reference) = installation
        .status
        .as_ref()
        .and_then(|s| s.execution_ref.as_ref())
    else {
        return Ok(json!({}));
    };
    let ns = reference.namespace.as_deref().unwrap_or(&scope.namespace);
    let owner = format!("Installation {}/{}", scope.namespace, scope.name);
    let executions: Api<Execution> = Api::namespaced(client.clone(), ns);
    let execution = executions
        .get_opt(&reference.name)
        .await
        .map_err(|source| DataflowError::Api {
            context: format!("{owner}: reading Execution {ns}/{}", reference.name),
            source,
        })?
        .ok_or_else(|| {
            DataflowError::InvalidExport(format!(
                "{owner}: status.executionRef: Execution {ns}/{} not found",
                reference.name
            ))
        })?;
    let Some(export) = execution
        .status
        .as_ref()
        .and_then(|s| s.export_ref.as_ref())
    else {
        return Ok(json!({}));
    };
    let export_ns = export.namespace.as_deref().unwrap_or(ns);
    let objects: Api<DataObject> = Api::namespaced(client.clone(), export_ns);
    let object = objects
        .get_opt(&export.name)
        .await
        .map_err(|source| DataflowError::Api {
            context: format!("{owner}: reading DataObject {export_ns}/{}", export.name),
            source,
        })?
        .ok_or_else(|| {
            DataflowError::InvalidExport(format!(
                "{owner}: Execution {ns}/{} status.exportRef: DataObject {export_ns}/{} not found",
                reference.name, export.name
            ))
        })?;
    Ok(object.data)
}

/// The DataObjects in `context`, by their key label.
async fn data_objects_in(
    client: &kube::Client,
    scope: &Scope,
    context: &str,
) -> Result<Map<String, Json>, DataflowError> {
    let api: Api<DataObject> = Api::namespaced(client.clone(), &scope.namespace);
    let params = ListParams::default().labels(&format!("{}={context}", labels::DATA_CONTEXT));
    let list = api
        .list(&params)
        .await
        .map_err(|source| DataflowError::Api {
            context: format!(
                "Installation {}/{}: listing DataObjects of context {context}",
                scope.namespace, scope.name
            ),
            source,
        })?;
    Ok(list
        .items
        .into_iter()
        .map(|o| (label(&o.metadata, labels::DATA_KEY), o.data))
        .collect())
}

/// The Targets in `context`, by their key label.
async fn targets_in(
    client: &kube::Client,
    scope: &Scope,
    context: &str,
) -> Result<Map<String, Json>, DataflowError> {
    let api: Api<Target> = Api::namespaced(client.clone(), &scope.namespace);
    let params = ListParams::default().labels(&format!("{}={context}", labels::DATA_CONTEXT));
    let list = api
        .list(&params)
        .await
        .map_err(|source| DataflowError::Api {
            context: format!(
                "Installation {}/{}: listing Targets of context {context}",
                scope.namespace, scope.name
            ),
            source,
        })?;
    Ok(list
        .items
        .into_iter()
        .map(|t| (label(&t.metadata, labels::DATA_KEY), target_json(t)))
        .collect())
}

fn label(meta: &ObjectMeta, name: &str) -> String {
    meta.labels
        .as_ref()
        .and_then(|l| l.get(name))
        .cloned()
        .unwrap_or_default()
}

/// Drops exports the blueprint does not declare and checks the others: data against its
/// schema (through the blueprint crate's import validation), targets by their type.
fn validate(
    owner: &str,
    blueprint: &Blueprint,
    options: &ExecutionOptions,
    values: &mut Map<String, Json>,
) -> Result<(), DataflowError> {
    let undeclared: Vec<String> = values
        .keys()
        .filter(|name| !blueprint.exports.iter().any(|d| &d.name == *name))
        .cloned()
        .collect();
    for name in undeclared {
        tracing::info!(installation = %owner, export = %name, "exported key that the blueprint does not declare is ignored");
        values.remove(&name);
    }
    for definition in &blueprint.exports {
        let Some(value) = values.get(&definition.name) else {
            continue;
        };
        let name = &definition.name;
        match definition.type_.as_deref().unwrap_or("data") {
            "data" => check_data(owner, blueprint, options, definition, value)?,
            "target" => {
                let actual = value.get("type").and_then(Json::as_str).ok_or_else(|| {
                    DataflowError::InvalidExport(format!(
                        "{owner}: export {name:?}: exported target does not match the expected target template schema (no type)"
                    ))
                })?;
                let expected = definition.target_type.as_deref().unwrap_or_default();
                if actual != expected {
                    return Err(DataflowError::InvalidExport(format!(
                        "{owner}: export {name:?}: exported target type is {actual} but expected {expected}"
                    )));
                }
            }
            other => {
                return Err(DataflowError::InvalidExport(format!(
                    "{owner}: export {name:?}: unknown export type {other:?}"
                )));
            }
        }
    }
    Ok(())
}

/// Checks a data export against its schema with the blueprint crate's validation (schemas of
/// exports resolve `local://` and `blueprint://` references as those of imports do).
fn check_data(
    owner: &str,
    blueprint: &Blueprint,
    options: &ExecutionOptions,
    definition: &ExportDefinition,
    value: &Json,
) -> Result<(), DataflowError> {
    let name = &definition.name;
    let Some(schema) = &definition.schema else {
        return Err(DataflowError::InvalidExport(format!(
            "{owner}: schema for data export {name:?} must not be empty"
        )));
    };
    let probe = Blueprint {
        imports: vec![ImportDefinition {
            name: name.clone(),
            type_: Some("data".into()),
            schema: Some(schema.clone()),
            ..ImportDefinition::default()
        }],
        local_types: blueprint.local_types.clone(),
        ..Blueprint::default()
    };
    let mut single = Map::new();
    single.insert(name.clone(), value.clone());
    landscaper_blueprint::imports::validate(&probe, &options.filesystem, &single)
        .map(|_| ())
        .map_err(|problems| {
            let problems: Vec<String> = problems
                .iter()
                .map(|p| p.strip_prefix("import imports[0] ").unwrap_or(p).to_owned())
                .collect();
            DataflowError::InvalidExport(format!(
                "{owner}: export {name:?}: exported data does not satisfy the configured schema: {}",
                problems.join("; ")
            ))
        })
}

/// Writes the objects of an installation's exports.
struct Writer<'a> {
    client: &'a kube::Client,
    installation: &'a Installation,
    scope: &'a Scope,
}

impl Writer<'_> {
    /// The labels upstream puts on exported objects, and the owner reference.
    fn meta(&self, name: &str, key: &str) -> ObjectMeta {
        let mut labels = BTreeMap::new();
        if !self.scope.context.is_empty() {
            labels.insert(labels::DATA_CONTEXT.to_owned(), self.scope.context.clone());
        }
        labels.insert(labels::DATA_KEY.to_owned(), key.to_owned());
        labels.insert(
            DATA_SOURCE.to_owned(),
            installation_context(&self.scope.name),
        );
        labels.insert(DATA_SOURCE_TYPE.to_owned(), EXPORT_SOURCE_TYPE.to_owned());
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
            name: Some(name.to_owned()),
            namespace: Some(self.scope.namespace.clone()),
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

    async fn data_object(&self, key: &str, data: &Json) -> Result<(), DataflowError> {
        let name = object_name(&self.scope.context, key);
        let desired = DataObject {
            metadata: self.meta(&name, key),
            data: data.clone(),
            ..DataObject::default()
        };
        let api: Api<DataObject> = Api::namespaced(self.client.clone(), &self.scope.namespace);
        let existing = self.read(&api, &name, "DataObject", key).await?;
        match existing {
            None => self.create(&api, &desired, "DataObject", key).await,
            Some(current) => {
                self.check_owner(&current.metadata, "DataObject", key)?;
                if current.data == desired.data
                    && same_labels(&current.metadata, &desired.metadata)
                    && current.metadata.owner_references == desired.metadata.owner_references
                {
                    return Ok(());
                }
                let mut updated = current;
                merge_meta(&mut updated.metadata, &desired.metadata);
                updated.data = desired.data;
                self.replace(&api, &name, &updated, "DataObject", key).await
            }
        }
    }

    async fn target(&self, key: &str, template: &Json) -> Result<(), DataflowError> {
        let name = object_name(&self.scope.context, key);
        let owner = format!("Installation {}/{}", self.scope.namespace, self.scope.name);
        let spec = target_spec(template).map_err(|e| {
            DataflowError::InvalidExport(format!(
                "{owner}: target export {key:?}: unable to build a Target from the template: {e}"
            ))
        })?;
        let mut metadata = self.meta(&name, key);
        let extra = |field: &str| -> BTreeMap<String, String> {
            template
                .get(field)
                .and_then(|v| serde_json::from_value(v.clone()).ok())
                .unwrap_or_default()
        };
        let mut all_labels = extra("labels");
        all_labels.extend(metadata.labels.take().unwrap_or_default());
        metadata.labels = Some(all_labels);
        let annotations = extra("annotations");
        metadata.annotations = (!annotations.is_empty()).then_some(annotations);
        let desired = Target { metadata, spec };
        let api: Api<Target> = Api::namespaced(self.client.clone(), &self.scope.namespace);
        match self.read(&api, &name, "Target", key).await? {
            None => self.create(&api, &desired, "Target", key).await,
            Some(current) => {
                self.check_owner(&current.metadata, "Target", key)?;
                if current.spec == desired.spec
                    && same_labels(&current.metadata, &desired.metadata)
                    && current.metadata.owner_references == desired.metadata.owner_references
                {
                    return Ok(());
                }
                let mut updated = current;
                merge_meta(&mut updated.metadata, &desired.metadata);
                updated.spec = desired.spec;
                self.replace(&api, &name, &updated, "Target", key).await
            }
        }
    }

    /// An exported object owned by another installation is not taken over (upstream's
    /// exclusive owner reference).
    fn check_owner(&self, meta: &ObjectMeta, kind: &str, key: &str) -> Result<(), DataflowError> {
        let other = meta.owner_references.iter().flatten().find(|o| {
            o.kind == "Installation" && Some(&o.uid) != self.installation.metadata.uid.as_ref()
        });
        match other {
            Some(o) => Err(DataflowError::InvalidExport(format!(
                "Installation {}/{}: {kind} {} for export {key:?} conflicts with an existing one owned by Installation {}",
                self.scope.namespace,
                self.scope.name,
                key_of(meta),
                o.name
            ))),
            None => Ok(()),
        }
    }

    async fn read<K>(
        &self,
        api: &Api<K>,
        name: &str,
        kind: &str,
        key: &str,
    ) -> Result<Option<K>, DataflowError>
    where
        K: Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
    {
        api.get_opt(name)
            .await
            .map_err(|source| DataflowError::Api {
                context: self.context(kind, name, key, "reading"),
                source,
            })
    }

    async fn create<K>(
        &self,
        api: &Api<K>,
        object: &K,
        kind: &str,
        key: &str,
    ) -> Result<(), DataflowError>
    where
        K: Resource + Clone + serde::Serialize + serde::de::DeserializeOwned + std::fmt::Debug,
    {
        let name = object.meta().name.clone().unwrap_or_default();
        api.create(&PostParams::default(), object)
            .await
            .map(|_| ())
            .map_err(|source| DataflowError::Api {
                context: self.context(kind, &name, key, "creating"),
                source,
            })
    }

    async fn replace<K>(
        &self,
        api: &Api<K>,
        name: &str,
        object: &K,
        kind: &str,
        key: &str,
    ) -> Result<(), DataflowError>
    where
        K: Resource + Clone + serde::Serialize + serde::de::DeserializeOwned + std::fmt::Debug,
    {
        api.replace(name, &PostParams::default(), object)
            .await
            .map(|_| ())
            .map_err(|source| DataflowError::Api {
                context: self.context(kind, name, key, "updating"),
                source,
            })
    }

    fn context(&self, kind: &str, name: &str, key: &str, verb: &str) -> String {
        format!(
            "Installation {}/{}: {verb} {kind} {}/{name} for export {key:?}",
            self.scope.namespace, self.scope.name, self.scope.namespace
        )
    }
}

/// The Target spec of a target template (`type`, `config`, `secretRef`).
fn target_spec(template: &Json) -> Result<TargetSpec, String> {
    let mut spec = Map::new();
    for field in ["type", "config", "secretRef"] {
        if let Some(v) = template.get(field).filter(|v| !v.is_null()) {
            spec.insert(field.into(), v.clone());
        }
    }
    serde_json::from_value(Json::Object(spec)).map_err(|e| e.to_string())
}

fn same_labels(current: &ObjectMeta, desired: &ObjectMeta) -> bool {
    let current = current.labels.clone().unwrap_or_default();
    desired
        .labels
        .iter()
        .flatten()
        .all(|(k, v)| current.get(k) == Some(v))
}

/// Sets the desired labels, annotations and owner references on an existing object's metadata,
/// keeping labels others added.
fn merge_meta(current: &mut ObjectMeta, desired: &ObjectMeta) {
    let mut labels = current.labels.take().unwrap_or_default();
    labels.extend(desired.labels.clone().unwrap_or_default());
    current.labels = Some(labels);
    if desired.annotations.is_some() {
        current.annotations = desired.annotations.clone();
    }
    current.owner_references = desired.owner_references.clone();
}
