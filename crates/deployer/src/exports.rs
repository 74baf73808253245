//! Exports: values read by JSONPath from deployed objects (or from the item's values), written
//! into the Secret `<item>-export` (key `config`) that `status.exportRef` points at.

use crate::contract::interrupt::Interrupt;
use crate::error::Error;
use crate::jsonpath;
use crate::target_access::TargetCluster;
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::Resource as _;
use kube::api::{ObjectMeta, Patch, PatchParams};
use landscaper_api::core::{DeployItem, ObjectReference};
use landscaper_api::deployer::Exports;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

const OPERATION: &str = "Export";
/// The field manager of export Secrets, whichever deployer writes them.
const EXPORT_MANAGER: &str = "landscaper-deployer-exports";
/// The key of the export Secret that holds the exported values.
pub const EXPORT_KEY: &str = "config";

/// The name of an item's export Secret.
pub fn secret_name(item_name: &str) -> String {
    format!("{item_name}-export")
}

/// Reads every export; `values` answers exports without `fromResource`.
pub async fn collect(
    cluster: &TargetCluster,
    exports: &Exports,
    values: Option<&Value>,
    interrupt: &Interrupt,
) -> Result<Value, Error> {
    let mut out = Map::new();
    for (i, e) in exports.exports.iter().enumerate() {
        interrupt.check(OPERATION)?;
        let field = format!("exports.exports[{i}] ({})", e.key);
        let source = match &e.from_resource {
            Some(r) => {
                fetch(
                    cluster,
                    &r.api_version,
                    &r.kind,
                    r.namespace.as_deref(),
                    &r.name,
                    &field,
                )
                .await?
            }
            None => values.cloned().ok_or_else(|| {
                Error::config(
                    OPERATION,
                    "InvalidExport",
                    format!("{field}: fromResource is required"),
                )
            })?,
        };
        let found = read(&source, &e.json_path, &field)?;
        let value = match &e.from_object_ref {
            None => found,
            Some(r) => {
                let name = found.get("name").and_then(Value::as_str).ok_or_else(|| {
                    Error::config(
                        OPERATION,
                        "InvalidExport",
                        format!(
                            "{field}: {} is not an object reference with a name",
                            e.json_path
                        ),
                    )
                })?;
                let namespace = found.get("namespace").and_then(Value::as_str);
                let target =
                    fetch(cluster, &r.api_version, &r.kind, namespace, name, &field).await?;
                read(&target, &r.json_path, &field)?
            }
        };
        out.insert(e.key.clone(), value);
    }
    Ok(Value::Object(out))
}

fn read(source: &Value, path: &str, field: &str) -> Result<Value, Error> {
    jsonpath::get(source, path)
        .map_err(|e| {
            Error::config(
                OPERATION,
                "InvalidExport",
                format!("{field}: jsonPath: {e}"),
            )
        })?
        .ok_or_else(|| {
            // The value may appear later (a status the workload fills in).
            Error::transient(
                OPERATION,
                "ExportValueMissing",
                format!("{field}: {path} has no value"),
            )
        })
}

async fn fetch(
    cluster: &TargetCluster,
    api_version: &str,
    kind: &str,
    namespace: Option<&str>,
    name: &str,
    field: &str,
) -> Result<Value, Error> {
    let resolved = cluster.discovery.resolve(api_version, kind).await?;
    let api = cluster.api(&resolved, namespace);
    let what = format!("{field}: {kind} {name}");
    let obj = api
        .get_opt(name)
        .await
        .map_err(|e| Error::from_kube(OPERATION, &what, &e))?
        .ok_or_else(|| {
            Error::transient(
                OPERATION,
                "ExportSourceMissing",
                format!("{what} not found"),
            )
        })?;
    serde_json::to_value(obj)
        .map_err(|e| Error::transient(OPERATION, "Decode", format!("{what}: {e}")))
}

/// Writes the exports into the item's export Secret (owned by the item, so it goes with it),
/// as one server-side apply: a deployer writes its export Secrets without reading Secrets,
/// which registered deployers may not (docs/architecture.md, deployer management).
pub async fn write_secret(
    ls: &kube::Client,
    item: &DeployItem,
    values: &Value,
) -> Result<ObjectReference, Error> {
    let namespace = item.metadata.namespace.clone().unwrap_or_default();
    let name = secret_name(item.metadata.name.as_deref().unwrap_or_default());
    let what = format!("export Secret {namespace}/{name}");
    let data = serde_json::to_vec(values)
        .map_err(|e| Error::transient(OPERATION, "Encode", format!("{what}: {e}")))?;
    let api: kube::Api<Secret> = kube::Api::namespaced(ls.clone(), &namespace);
    let secret = Secret {
        metadata: ObjectMeta {
            name: Some(name.clone()),
            namespace: Some(namespace.clone()),
            owner_references: item.controller_owner_ref(&()).map(|r| vec![r]),
            ..Default::default()
        },
        data: Some(BTreeMap::from([(EXPORT_KEY.to_string(), ByteString(data))])),
        type_: Some("Opaque".to_string()),
        ..Default::default()
    };
    api.patch(
        &name,
        &PatchParams::apply(EXPORT_MANAGER).force(),
        &Patch::Apply(&secret),
    )
    .await
    .map_err(|e| Error::from_kube(OPERATION, &what, &e))?;
    Ok(ObjectReference {
        name,
        namespace: Some(namespace),
    })
}
