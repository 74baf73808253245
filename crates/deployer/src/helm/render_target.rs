//! What a render learns from the target cluster, as `helm install` asks its cluster:
//! `.Capabilities.KubeVersion` and `.Capabilities.APIVersions` from discovery (cached per
//! cluster for [`crate::applier::SERVED_TTL`]), and `lookup` answered by reading the cluster
//! with the deploying identity — only `get` and `list`, never a write.

use crate::error::{Error, describe_kube_error, is_not_found};
use crate::target_access::TargetCluster;
use kube::Api;
use kube::api::{DynamicObject, ListParams};
use landscaper_chart::data::{Data, Map};
use landscaper_chart::funcs::Lookup;
use landscaper_chart::objects::KubeVersion;
use serde_json::Value;
use std::sync::Arc;
use tokio::runtime::Handle;

/// The cluster-dependent inputs of a render.
#[derive(Debug, Clone)]
pub struct RenderTarget {
    /// `.Capabilities.KubeVersion`; `None` (a version that does not parse) keeps Helm's default.
    pub kube_version: Option<KubeVersion>,
    /// `.Capabilities.APIVersions`: the served group/versions and group/version/Kinds.
    pub api_versions: Vec<String>,
    /// `lookup` against the cluster. It blocks on the runtime, so it must only run on a
    /// blocking thread (the render runs in `spawn_blocking`).
    pub lookup: Lookup,
}

impl RenderTarget {
    /// Asks the cluster's discovery (cached) and prepares `lookup` for it.
    pub async fn of(cluster: &TargetCluster) -> Result<RenderTarget, Error> {
        let served = cluster
            .discovery
            .served()
            .await
            .map_err(|e| e.with_operation("RenderChart"))?;
        Ok(RenderTarget {
            kube_version: KubeVersion::parse(&served.git_version),
            api_versions: served.api_versions.clone(),
            lookup: cluster_lookup(cluster.clone(), Handle::current()),
        })
    }
}

/// Helm's `lookup`: one object by name, or a list when the name is empty (across all
/// namespaces when the namespace is empty); nothing found is an empty map.
fn cluster_lookup(cluster: TargetCluster, runtime: Handle) -> Lookup {
    Lookup(Arc::new(move |api_version, kind, namespace, name| {
        let call = format!("lookup {api_version:?} {kind:?} {namespace:?} {name:?}");
        runtime
            .block_on(read(&cluster, api_version, kind, namespace, name))
            .map_err(|e| format!("{call} in the target cluster: {e}"))
    }))
}

async fn read(
    cluster: &TargetCluster,
    api_version: &str,
    kind: &str,
    namespace: &str,
    name: &str,
) -> Result<Data, String> {
    let resolved = cluster
        .discovery
        .resolve(api_version, kind)
        .await
        .map_err(|e| e.message)?;
    let api: Api<DynamicObject> = if resolved.namespaced && !namespace.is_empty() {
        Api::namespaced_with(cluster.client.clone(), namespace, &resolved.resource)
    } else {
        Api::all_with(cluster.client.clone(), &resolved.resource)
    };
    let found = if name.is_empty() {
        match api.list(&ListParams::default()).await {
            Ok(list) => {
                let mut value = serde_json::to_value(&list).map_err(|e| e.to_string())?;
                // The API leaves out each item's type in a list; client-go puts it back.
                if let Some(items) = value.get_mut("items").and_then(Value::as_array_mut) {
                    for item in items.iter_mut().filter_map(Value::as_object_mut) {
                        item.insert("apiVersion".into(), api_version.into());
                        item.insert("kind".into(), kind.into());
                    }
                }
                value
            }
            Err(e) if is_not_found(&e) => return Ok(Data::Map(Map::new())),
            Err(e) => return Err(describe_kube_error(&e)),
        }
    } else {
        match api.get_opt(name).await {
            Ok(Some(obj)) => serde_json::to_value(&obj).map_err(|e| e.to_string())?,
            Ok(None) => return Ok(Data::Map(Map::new())),
            Err(e) => return Err(describe_kube_error(&e)),
        }
    };
    Ok(to_data(found))
}

/// JSON as client-go's unstructured decoding holds it: integers as `int64`, other numbers
/// as `float64`.
fn to_data(value: Value) -> Data {
    match value {
        Value::Null => Data::Null,
        Value::Bool(b) => Data::Bool(b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => Data::Int(i),
            None => Data::Float(n.as_f64().unwrap_or_default()),
        },
        Value::String(s) => Data::String(s),
        Value::Array(items) => Data::List(items.into_iter().map(to_data).collect()),
        Value::Object(map) => Data::Map(map.into_iter().map(|(k, v)| (k, to_data(v))).collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unstructured_numbers_keep_their_go_types() {
        let d = to_data(json!({"a": 1, "b": 1.5, "c": [true, null, "x"]}));
        let m = d.as_map().unwrap();
        assert_eq!(m["a"], Data::Int(1));
        assert_eq!(m["b"], Data::Float(1.5));
        assert_eq!(
            m["c"],
            Data::List(vec![Data::Bool(true), Data::Null, Data::String("x".into())])
        );
    }
}
