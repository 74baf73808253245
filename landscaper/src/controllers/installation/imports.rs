//! The imports an installation's templates see: data imports read from the DataObjects their
//! `dataRef` names in the installation's data context (`Inst.<parent>` for a subinstallation),
//! and the hash of them that `Completing` compares. Targets and the other import kinds are
//! read by the dataflow module.

use kube::ResourceExt;
use kube::api::Api;
use landscaper_api::constants::labels;
use landscaper_api::core::{DataObject, Installation, data_object_name};
use serde_json::{Map, Value as Json};
use sha2::{Digest, Sha256};

use super::{Context, ENCOMPASSED_BY, Error};

/// The data context of the installation's imports and exports.
pub fn data_context(installation: &Installation) -> String {
    installation
        .labels()
        .get(ENCOMPASSED_BY)
        .map(|parent| format!("Inst.{parent}"))
        .unwrap_or_default()
}

/// The imports, or a message naming the import that is missing.
pub async fn read(
    installation: &Installation,
    context: &Context,
) -> Result<Result<Map<String, Json>, String>, Error> {
    let namespace = installation.namespace().unwrap_or_default();
    let api: Api<DataObject> = Api::namespaced(context.client.clone(), &namespace);
    let data_context = data_context(installation);
    let mut imports = Map::new();
    let data = installation
        .spec
        .imports
        .as_ref()
        .and_then(|i| i.data.clone())
        .unwrap_or_default();
    for import in data {
        let Some(reference) = &import.data_ref else {
            return Ok(Err(format!(
                "import {}: only dataRef imports are read here (secretRef and configMapRef come with the dataflow module)",
                import.name
            )));
        };
        let name = data_object_name(&data_context, reference);
        let object = api.get_opt(&name).await.map_err(|source| {
            Error::api(
                installation,
                format!("read DataObject {name} of import {}", import.name),
                source,
            )
        })?;
        match object {
            Some(object) => {
                imports.insert(import.name.clone(), object.data);
            }
            None => {
                return Ok(Err(format!(
                    "import {} missing: DataObject {name} (dataRef {reference}) not found",
                    import.name
                )));
            }
        }
    }
    Ok(Ok(imports))
}

/// The hash of the imports: a changed import changes it.
pub fn hash(imports: &Map<String, Json>) -> String {
    let text = serde_json::to_string(imports).unwrap_or_default();
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Writes `value` as the DataObject for export `key` in `data_context`, with the context labels.
pub async fn write_export(
    installation: &Installation,
    context: &Context,
    data_context: &str,
    key: &str,
    value: Json,
) -> Result<(), Error> {
    let namespace = installation.namespace().unwrap_or_default();
    let api: Api<DataObject> = Api::namespaced(context.client.clone(), &namespace);
    let name = data_object_name(data_context, key);
    let object: DataObject = serde_json::from_value(serde_json::json!({
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {
                labels::DATA_CONTEXT: data_context,
                labels::DATA_KEY: key.trim_start_matches('#'),
            },
        },
        "data": value,
    }))
    .expect("a DataObject from its fields");
    api.patch(
        &name,
        &kube::api::PatchParams::apply(super::MANAGER).force(),
        &kube::api::Patch::Apply(&object),
    )
    .await
    .map_err(|source| {
        Error::api(
            installation,
            format!("write DataObject {name} of export {key}"),
            source,
        )
    })?;
    Ok(())
}
