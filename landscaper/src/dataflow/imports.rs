//! Reading an installation's imports: DataObjects (by `dataRef`, in the installation's
//! context), Secrets and ConfigMaps (`secretRef`/`configMapRef` with key), Targets, lists and
//! maps of Targets; then `importDataMappings`, the blueprint's import definitions (optional and
//! conditional imports, defaults, schemas, target types) and the imports hash, as upstream's
//! `imports/constructor.go` does.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, ListParams};
use landscaper_api::constants::labels;
use landscaper_api::core::{
    Blueprint, DataImport, DataObject, ImportDefinition, Installation, Target, TargetImport,
    data_object_name,
};
use landscaper_blueprint::{ExecutionOptions, Filesystem, MemoryState, Templater};
use serde_json::{Map, Value as Json};
use sha1::{Digest, Sha1};

use super::names::{DATA_JOB_ID, DATA_SOURCE_TYPE, IMPORT_SOURCE_TYPE};
use super::write::{Member, Purpose, Writer};
use super::{DataflowError, Scope, mappings};

/// The imports as blueprint executions see them, and their hash.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Imports {
    /// The imports of the blueprint's definitions: data values, and Targets as objects (lists
    /// and maps of them for `targetList` and `targetMap` imports).
    pub values: Map<String, Json>,
    /// The hash of the imported objects' content (upstream's `ComputeImportsHash` in spirit):
    /// it changes exactly when an imported DataObject, Secret, ConfigMap or Target changes.
    pub hash: String,
    /// What each import of `spec.imports` read, before mappings, defaults and filtering.
    pub sources: Map<String, Json>,
}

/// Reads, maps and validates the imports of `installation` for `blueprint` (whose
/// `filesystem` resolves `blueprint://` schema references) in `scope`.
pub async fn read_imports(
    client: &kube::Client,
    installation: &Installation,
    blueprint: &Blueprint,
    filesystem: &Filesystem,
    scope: &Scope,
) -> Result<Imports, DataflowError> {
    let reader = Reader {
        client,
        installation,
        scope,
    };
    let sources = reader.load().await?;
    let hash = hash(&sources);
    let owner = reader.owner();
    let mapped = match &installation.spec.import_data_mappings {
        Some(m) if !m.is_empty() => {
            mappings::evaluate(&owner, "spec.importDataMappings", m, &sources)?
        }
        _ => Map::new(),
    };
    let values = construct(&owner, &blueprint.imports, &sources, &mapped)?;
    let values = landscaper_blueprint::imports::validate(blueprint, filesystem, &values).map_err(
        |problems| {
            let problems = hide_secret_values(installation, &values, &problems.join("; "));
            DataflowError::InvalidImport(format!(
                "{owner}: imports do not satisfy the blueprint: {problems}"
            ))
        },
    )?;
    tracing::debug!(
        installation = %owner,
        imports = values.len(),
        hash = %hash,
        "imports read"
    );
    Ok(Imports {
        values,
        hash,
        sources,
    })
}

/// `message` with the values of imports read from Secrets replaced: a schema error quotes the
/// value it rejects, and a Secret's value (a token, a kubeconfig) must not reach a status,
/// an Event or a log.
fn hide_secret_values(
    installation: &Installation,
    values: &Map<String, Json>,
    message: &str,
) -> String {
    let from_secrets = installation
        .spec
        .imports
        .iter()
        .flat_map(|imports| imports.data.iter().flatten())
        .filter(|import| import.secret_ref.is_some())
        .filter_map(|import| values.get(&import.name));
    from_secrets.fold(message.to_owned(), |message, value| {
        message.replace(
            &value.to_string(),
            "(a value read from a Secret, not shown)",
        )
    })
}

/// Runs the blueprint's `importExecutions` on `options.imports` (the values of
/// [`read_imports`]): their bindings extend the imports; errors they report fail with
/// upstream's "import validation failed" message, naming the installation.
pub fn import_executions(
    scope: &Scope,
    options: &ExecutionOptions,
) -> Result<Map<String, Json>, DataflowError> {
    let owner = format!("Installation {}/{}", scope.namespace, scope.name);
    if options.blueprint.import_executions.is_empty() {
        return Ok(options.imports.clone());
    }
    // Import executions keep no state (upstream: no state key), so an empty store serves.
    let state = MemoryState::default();
    let result = Templater::new(&state)
        .import_executions(options)
        .map_err(|source| DataflowError::Template {
            context: owner.clone(),
            source,
        })?;
    match result.error_message() {
        Some(message) => Err(DataflowError::InvalidImport(format!("{owner}: {message}"))),
        None => Ok(result.imports),
    }
}

/// Writes the imports of `installation` (the values of [`read_imports`], after import
/// executions) into its own context `Inst.<name>` as DataObjects and Targets, where its
/// subinstallations import them by the blueprint's import names (upstream
/// `CreateOrUpdateImports`).
pub async fn write_imports(
    client: &kube::Client,
    installation: &Installation,
    blueprint: &Blueprint,
    values: &Map<String, Json>,
    scope: &Scope,
) -> Result<(), DataflowError> {
    let writer = Writer {
        client,
        installation,
        context: scope.own_context(),
        purpose: Purpose::Import,
    };
    let owner = format!("Installation {}/{}", scope.namespace, scope.name);
    let mut pending: Vec<&ImportDefinition> = blueprint.imports.iter().rev().collect();
    let mut written = 0usize;
    while let Some(definition) = pending.pop() {
        let name = &definition.name;
        let Some(value) = values.get(name) else {
            // Absent optional imports (and the conditional imports below them) are not written.
            if definition.required == Some(false) {
                continue;
            }
            return Err(DataflowError::ImportNotFound(format!(
                "{owner}: import {name:?} is not among the imports to write"
            )));
        };
        pending.extend(definition.imports.iter().rev());
        let not_a = |what: &str| {
            DataflowError::InvalidImport(format!("{owner}: {what} import {name:?} is not a {what}"))
        };
        match definition.type_.as_deref().unwrap_or("data") {
            "data" => writer.data_object(name, value).await?,
            "target" => writer.target(name, &Member::Single, value).await?,
            "targetList" => {
                let list = value.as_array().ok_or_else(|| not_a("list"))?;
                for (i, target) in list.iter().enumerate() {
                    writer.target(name, &Member::Index(i), target).await?;
                }
            }
            "targetMap" => {
                let map = value.as_object().ok_or_else(|| not_a("map"))?;
                for (key, target) in map {
                    writer
                        .target(name, &Member::MapKey(key.clone()), target)
                        .await?;
                }
            }
            other => {
                return Err(DataflowError::InvalidImport(format!(
                    "{owner}: import {name:?}: unknown import type {other:?}"
                )));
            }
        }
        written += 1;
    }
    tracing::debug!(installation = %owner, imports = written, "imports written for subinstallations");
    Ok(())
}

/// The imports of `definitions` from the mapped values (first) and the sources, with
/// defaults, skipping optional imports that are absent and the conditional imports below them.
fn construct(
    owner: &str,
    definitions: &[ImportDefinition],
    sources: &Map<String, Json>,
    mapped: &Map<String, Json>,
) -> Result<Map<String, Json>, DataflowError> {
    let mut out = Map::new();
    for definition in definitions {
        let name = &definition.name;
        let kind = definition.type_.as_deref().unwrap_or("data");
        let value = mapped.get(name).or_else(|| sources.get(name)).cloned();
        let optional = definition.required == Some(false);
        let value = match value {
            Some(value) => value,
            None if optional && kind == "data" && definition.default.is_some() => definition
                .default
                .as_ref()
                .map(|d| d.value.clone())
                .unwrap_or_default(),
            None if optional => continue,
            None => {
                return Err(DataflowError::ImportNotFound(format!(
                    "{owner}: blueprint defines import {name:?} of type {kind}, which is not satisfied"
                )));
            }
        };
        if kind == "data" && definition.schema.is_none() {
            return Err(DataflowError::InvalidImport(format!(
                "{owner}: import {name:?}: the blueprint defines no schema for it"
            )));
        }
        out.insert(name.clone(), value);
        if kind == "data" && !definition.imports.is_empty() {
            let conditional = construct(owner, &definition.imports, sources, mapped)?;
            out.extend(conditional);
        }
    }
    Ok(out)
}

/// Reads the objects an installation's `spec.imports` name.
struct Reader<'a> {
    client: &'a kube::Client,
    installation: &'a Installation,
    scope: &'a Scope,
}

impl Reader<'_> {
    fn owner(&self) -> String {
        format!("Installation {}/{}", self.scope.namespace, self.scope.name)
    }

    fn context_text(&self) -> String {
        if self.scope.context.is_empty() {
            "root context".to_owned()
        } else {
            format!("context {}", self.scope.context)
        }
    }

    async fn load(&self) -> Result<Map<String, Json>, DataflowError> {
        let mut sources = Map::new();
        let Some(imports) = &self.installation.spec.imports else {
            return Ok(sources);
        };
        for data in imports.data.iter().flatten() {
            sources.insert(data.name.clone(), self.data(data).await?);
        }
        for target in imports.targets.iter().flatten() {
            sources.insert(target.name.clone(), self.target_import(target).await?);
        }
        Ok(sources)
    }

    async fn data(&self, import: &DataImport) -> Result<Json, DataflowError> {
        let ns = &self.scope.namespace;
        let name = &import.name;
        if let Some(key) = &import.data_ref {
            let object = data_object_name(&self.scope.context, key);
            let api: Api<DataObject> = Api::namespaced(self.client.clone(), ns);
            return match self.get(&api, &object, "DataObject", name).await? {
                Some(found) => Ok(found.data),
                None => Err(DataflowError::ImportNotFound(format!(
                    "import {name:?} of {}: DataObject {ns}/{object} (key {key}, {}) not found",
                    self.owner(),
                    self.context_text()
                ))),
            };
        }
        if let Some(reference) = &import.secret_ref {
            let api: Api<Secret> = Api::namespaced(self.client.clone(), ns);
            let Some(secret) = self.get(&api, &reference.name, "Secret", name).await? else {
                return Err(self.missing(name, "Secret", &reference.name));
            };
            let data: BTreeMap<String, String> = secret
                .data
                .unwrap_or_default()
                .into_iter()
                .map(|(k, v)| (k, String::from_utf8_lossy(&v.0).into_owned()))
                .collect();
            return self.keyed(
                name,
                "Secret",
                &reference.name,
                reference.key.as_deref(),
                data,
            );
        }
        if let Some(reference) = &import.config_map_ref {
            let api: Api<ConfigMap> = Api::namespaced(self.client.clone(), ns);
            let Some(map) = self.get(&api, &reference.name, "ConfigMap", name).await? else {
                return Err(self.missing(name, "ConfigMap", &reference.name));
            };
            // Upstream reads binaryData and data as one map (Kubernetes keeps their keys apart).
            let mut data: BTreeMap<String, String> = map
                .binary_data
                .unwrap_or_default()
                .into_iter()
                .map(|(k, v)| (k, String::from_utf8_lossy(&v.0).into_owned()))
                .collect();
            data.extend(map.data.unwrap_or_default());
            return self.keyed(
                name,
                "ConfigMap",
                &reference.name,
                reference.key.as_deref(),
                data,
            );
        }
        Err(DataflowError::InvalidImport(format!(
            "import {name:?} of {}: spec.imports.data: one of dataRef, secretRef or configMapRef is required",
            self.owner()
        )))
    }

    /// The value under `key` of a Secret's or ConfigMap's data, parsed as YAML; without a
    /// key, the whole data map with each value parsed as YAML (upstream's
    /// `ByteMapToRawMessageMap`).
    fn keyed(
        &self,
        import: &str,
        kind: &str,
        object: &str,
        key: Option<&str>,
        data: BTreeMap<String, String>,
    ) -> Result<Json, DataflowError> {
        let ns = &self.scope.namespace;
        let parse = |key: &str, text: &str| {
            landscaper_blueprint::values::parse_yaml(text).map_err(|e| {
                DataflowError::InvalidImport(format!(
                    "import {import:?} of {}: {kind} {ns}/{object} key {key:?}: {e}",
                    self.owner()
                ))
            })
        };
        let Some(key) = key.filter(|k| !k.is_empty()) else {
            return data
                .iter()
                .map(|(k, v)| Ok((k.clone(), parse(k, v)?)))
                .collect::<Result<Map<String, Json>, DataflowError>>()
                .map(Json::Object);
        };
        let Some(text) = data.get(key) else {
            return Err(DataflowError::ImportNotFound(format!(
                "import {import:?} of {}: {kind} {ns}/{object} has no key {key:?}",
                self.owner()
            )));
        };
        parse(key, text)
    }

    async fn target_import(&self, import: &TargetImport) -> Result<Json, DataflowError> {
        let name = &import.name;
        if let Some(target) = import.target.as_deref().filter(|t| !t.is_empty()) {
            return self.target(name, target).await;
        }
        if let Some(targets) = &import.targets {
            let mut list = Vec::with_capacity(targets.len());
            for target in targets {
                list.push(self.target(name, target).await?);
            }
            return Ok(Json::Array(list));
        }
        if let Some(map) = &import.target_map {
            let mut out = Map::new();
            for (key, target) in map {
                out.insert(key.clone(), self.target(name, target).await?);
            }
            return Ok(Json::Object(out));
        }
        if let Some(reference) = import.target_list_ref.as_deref() {
            let found = self.targets_by_key(name, reference).await?;
            return Ok(Json::Array(found.into_iter().map(target_json).collect()));
        }
        if let Some(reference) = import.target_map_ref.as_deref() {
            let found = self.targets_by_key(name, reference).await?;
            let map = found
                .into_iter()
                .map(|t| {
                    let key = t
                        .metadata
                        .labels
                        .as_ref()
                        .and_then(|l| l.get(labels::DATA_TARGET_MAP_KEY))
                        .cloned()
                        .unwrap_or_default();
                    (key, target_json(t))
                })
                .collect();
            return Ok(Json::Object(map));
        }
        Err(DataflowError::InvalidImport(format!(
            "import {name:?} of {}: spec.imports.targets: one of target, targets, targetMap, targetListRef or targetMapRef is required",
            self.owner()
        )))
    }

    async fn target(&self, import: &str, key: &str) -> Result<Json, DataflowError> {
        let ns = &self.scope.namespace;
        let object = data_object_name(&self.scope.context, key);
        let api: Api<Target> = Api::namespaced(self.client.clone(), ns);
        match self.get(&api, &object, "Target", import).await? {
            Some(target) => Ok(target_json(target)),
            None => Err(DataflowError::ImportNotFound(format!(
                "import {import:?} of {}: Target {ns}/{object} (key {key}, {}) not found",
                self.owner(),
                self.context_text()
            ))),
        }
    }

    /// The Targets written for the parent's list or map import `key` in this context (upstream
    /// `GetTargetListImportBySelector`).
    async fn targets_by_key(&self, import: &str, key: &str) -> Result<Vec<Target>, DataflowError> {
        let mut selector = vec![
            format!("{}={key}", labels::DATA_KEY),
            format!("{DATA_SOURCE_TYPE}={IMPORT_SOURCE_TYPE}"),
        ];
        if self.scope.context.is_empty() {
            selector.push(format!("!{}", labels::DATA_CONTEXT));
        } else {
            selector.push(format!("{}={}", labels::DATA_CONTEXT, self.scope.context));
            let job = self
                .installation
                .status
                .as_ref()
                .and_then(|s| s.job_id.clone())
                .unwrap_or_default();
            selector.push(format!("{DATA_JOB_ID}={job}"));
        }
        let api: Api<Target> = Api::namespaced(self.client.clone(), &self.scope.namespace);
        let params = ListParams::default().labels(&selector.join(","));
        let mut found = api
            .list(&params)
            .await
            .map_err(|source| DataflowError::Api {
                context: format!("import {import:?} of {}: listing Targets", self.owner()),
                source,
            })?
            .items;
        found.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        Ok(found)
    }

    /// Gets an object; `None` when it does not exist.
    async fn get<K>(
        &self,
        api: &Api<K>,
        name: &str,
        kind: &str,
        import: &str,
    ) -> Result<Option<K>, DataflowError>
    where
        K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
    {
        api.get_opt(name)
            .await
            .map_err(|source| DataflowError::Api {
                context: format!(
                    "import {import:?} of {}: reading {kind} {}/{name}",
                    self.owner(),
                    self.scope.namespace
                ),
                source,
            })
    }

    fn missing(&self, import: &str, kind: &str, object: &str) -> DataflowError {
        DataflowError::ImportNotFound(format!(
            "import {import:?} of {}: {kind} {}/{object} not found",
            self.owner(),
            self.scope.namespace
        ))
    }
}

/// A Target as imports show it: the object without its server-side bookkeeping.
pub(crate) fn target_json(target: Target) -> Json {
    let mut json = serde_json::to_value(&target).unwrap_or(Json::Null);
    if let Some(meta) = json.get_mut("metadata").and_then(Json::as_object_mut) {
        meta.remove("managedFields");
    }
    json
}

/// The sha1 (hex) of the sources with their keys sorted at every level, so that the hash
/// depends on content only.
fn hash(sources: &Map<String, Json>) -> String {
    let canonical = canonical(&Json::Object(sources.clone()));
    let digest = Sha1::digest(canonical.to_string().as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

fn canonical(value: &Json) -> Json {
    match value {
        Json::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Json::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), canonical(&map[k])))
                    .collect(),
            )
        }
        Json::Array(items) => Json::Array(items.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn definitions(v: Json) -> Vec<ImportDefinition> {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn the_hash_ignores_key_order() {
        let a = json!({"x": {"a": 1, "b": 2}}).as_object().cloned().unwrap();
        let b = json!({"x": {"b": 2, "a": 1}}).as_object().cloned().unwrap();
        assert_eq!(hash(&a), hash(&b));
        let c = json!({"x": {"b": 3, "a": 1}}).as_object().cloned().unwrap();
        assert_ne!(hash(&a), hash(&c));
    }

    #[test]
    fn optional_imports_defaults_and_conditional_imports() {
        let defs = definitions(json!([
            {"name": "a", "type": "data", "schema": {}},
            {"name": "d", "type": "data", "schema": {}, "required": false, "default": {"value": {"foo": "bar"}}},
            {"name": "c", "type": "data", "schema": {}, "required": false,
             "imports": [{"name": "c.x", "type": "data", "schema": {}}]}
        ]));
        let sources = json!({"a": 1, "extra": 2}).as_object().cloned().unwrap();
        let out = construct("Installation ns/x", &defs, &sources, &Map::new()).unwrap();
        assert_eq!(Json::Object(out), json!({"a": 1, "d": {"foo": "bar"}}));

        let sources = json!({"a": 1, "c": 3}).as_object().cloned().unwrap();
        let err = construct("Installation ns/x", &defs, &sources, &Map::new()).unwrap_err();
        assert!(err.is_import_not_found());
        assert_eq!(
            err.to_string(),
            "Installation ns/x: blueprint defines import \"c.x\" of type data, which is not satisfied"
        );
    }

    #[test]
    fn mapped_values_win_and_data_imports_need_a_schema() {
        let defs = definitions(json!([{"name": "a", "type": "data", "schema": {}}]));
        let sources = json!({"a": 1}).as_object().cloned().unwrap();
        let mapped = json!({"a": 2}).as_object().cloned().unwrap();
        let out = construct("Installation ns/x", &defs, &sources, &mapped).unwrap();
        assert_eq!(out["a"], 2);
        let defs = definitions(json!([{"name": "a", "type": "data"}]));
        let err = construct("Installation ns/x", &defs, &sources, &Map::new()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Installation ns/x: import \"a\": the blueprint defines no schema for it"
        );
    }
}
