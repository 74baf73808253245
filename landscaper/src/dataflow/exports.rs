//! Constructing an installation's exports and writing them, as upstream's
//! `exports/constructor.go` and `CreateOrUpdateExports` do: the blueprint's `exportExecutions`
//! see the Execution's exports (`.values.deployitems`) and what the subinstallations exported
//! into the installation's own context (`.values.dataobjects`, `.values.targets`); then
//! `exportDataMappings`; then DataObjects and Targets named by `spec.exports`, in the context the
//! installation's imports are read in (so its siblings and parent see them).

use kube::api::{Api, ListParams, ObjectMeta};
use landscaper_api::constants::labels;
use landscaper_api::core::{
    Blueprint, DataObject, Execution, ExportDefinition, ImportDefinition, Installation,
};
use landscaper_blueprint::{ExecutionOptions, StateHandler, Templater};
use serde_json::{Map, Value as Json, json};

use super::imports::target_json;
use super::write::{Member, Purpose, Writer};
use super::{DataflowError, Scope, mappings};

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
    state: &(dyn StateHandler + Sync),
    scope: &Scope,
) -> Result<Exports, DataflowError> {
    let owner = format!("Installation {}/{}", scope.namespace, scope.name);
    let mut internal = Map::new();
    internal.insert(
        "deployitems".into(),
        execution_exports(client, installation, scope).await?,
    );
    let own = scope.own_context();
    let data_objects =
        by_key_in_context(client, scope, &own, "DataObjects", |o: DataObject| o.data);
    internal.insert("dataobjects".into(), Json::Object(data_objects.await?));
    let targets = by_key_in_context(client, scope, &own, "Targets", target_json);
    internal.insert("targets".into(), Json::Object(targets.await?));
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
    state: &(dyn StateHandler + Sync),
    scope: &Scope,
) -> Result<Exports, DataflowError> {
    let exports = construct_exports(client, installation, options, state, scope).await?;
    // Exports land in the context the installation reads its imports in: its siblings and
    // its parent read them there.
    let writer = Writer {
        client,
        installation,
        context: scope.context.clone(),
        purpose: Purpose::Export,
    };
    for (key, data) in &exports.data_objects {
        writer.data_object(key, data).await?;
    }
    for (key, template) in &exports.targets {
        writer.target(key, &Member::Single, template).await?;
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
    let execution = read_existing(
        &executions,
        &reference.name,
        || format!("{owner}: reading Execution {ns}/{}", reference.name),
        || {
            format!(
                "{owner}: status.executionRef: Execution {ns}/{} not found",
                reference.name
            )
        },
    )
    .await?;
    let Some(export) = execution
        .status
        .as_ref()
        .and_then(|s| s.export_ref.as_ref())
    else {
        return Ok(json!({}));
    };
    let export_ns = export.namespace.as_deref().unwrap_or(ns);
    let objects: Api<DataObject> = Api::namespaced(client.clone(), export_ns);
    let object = read_existing(
        &objects,
        &export.name,
        || format!("{owner}: reading DataObject {export_ns}/{}", export.name),
        || {
            format!(
                "{owner}: Execution {ns}/{} status.exportRef: DataObject {export_ns}/{} not found",
                reference.name, export.name
            )
        },
    )
    .await?;
    Ok(object.data)
}

/// Reads `name`, which a status names: its absence is an invalid export, described by
/// `missing`; a failed read is described by `reading`.
async fn read_existing<K>(
    api: &Api<K>,
    name: &str,
    reading: impl FnOnce() -> String,
    missing: impl FnOnce() -> String,
) -> Result<K, DataflowError>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    api.get_opt(name)
        .await
        .map_err(|source| DataflowError::Api {
            context: reading(),
            source,
        })?
        .ok_or_else(|| DataflowError::InvalidExport(missing()))
}

/// The objects of kind `K` (named `kinds` in errors) labelled with data context `context`, by
/// their key label, each as `value` makes it.
async fn by_key_in_context<K>(
    client: &kube::Client,
    scope: &Scope,
    context: &str,
    kinds: &str,
    value: fn(K) -> Json,
) -> Result<Map<String, Json>, DataflowError>
where
    K: kube::Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug,
{
    let api: Api<K> = Api::namespaced(client.clone(), &scope.namespace);
    let params = ListParams::default().labels(&format!("{}={context}", labels::DATA_CONTEXT));
    let list = api
        .list(&params)
        .await
        .map_err(|source| DataflowError::Api {
            context: format!(
                "Installation {}/{}: listing {kinds} of context {context}",
                scope.namespace, scope.name
            ),
            source,
        })?;
    Ok(list
        .items
        .into_iter()
        .map(|object| (label(object.meta(), labels::DATA_KEY), value(object)))
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
                // Loading qualified the type (`mock` → `landscaper.gardener.cloud/mock`).
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
