//! What a render learns from the target cluster, as `helm install` asks its cluster:
//! `.Capabilities.KubeVersion` and `.Capabilities.APIVersions` from discovery (cached per
//! cluster for [`landscaper_deployer::applier::SERVED_TTL`]), and `lookup` answered by reading the cluster
//! with the deploying identity — only `get` and `list`, never a write.

use kube::api::ListParams;
use landscaper_chart::formats::tree::{Data, Map};
use landscaper_chart::helm::funcs::Lookup;
use landscaper_chart::helm::objects::KubeVersion;
use landscaper_deployer::applier::UNKNOWN_KIND;
use landscaper_deployer::contract::interrupt::Interrupt;
use landscaper_deployer::error::{Error, describe_kube_error, is_not_found};
use landscaper_deployer::target_access::TargetCluster;
use serde_json::Value;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use tokio::runtime::Handle;

/// The operation a failed `lookup` reports.
const OPERATION: &str = "Lookup";

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
    /// Why the last failed `lookup` failed, classified: the template only sees a message, but
    /// whether the failed render is worth retrying depends on it.
    lookup_failure: Arc<Mutex<Option<Error>>>,
}

impl RenderTarget {
    /// Asks the cluster's discovery (cached) and prepares `lookup` for it; a lookup waits for
    /// the cluster no longer than `interrupt` lets the job run.
    pub async fn of(cluster: &TargetCluster, interrupt: &Interrupt) -> Result<RenderTarget, Error> {
        let served = cluster
            .discovery
            .served()
            .await
            .map_err(|e| e.with_operation("RenderChart"))?;
        let failure = Arc::new(Mutex::new(None));
        Ok(RenderTarget {
            kube_version: KubeVersion::parse(&served.git_version),
            api_versions: served.api_versions.clone(),
            lookup: cluster_lookup(
                cluster.clone(),
                interrupt.clone(),
                Handle::current(),
                failure.clone(),
            ),
            lookup_failure: failure,
        })
    }

    /// Takes the error of the last `lookup` that failed since the last call.
    pub fn take_lookup_failure(&self) -> Option<Error> {
        lock(&self.lookup_failure).take()
    }
}

fn lock(failure: &Mutex<Option<Error>>) -> MutexGuard<'_, Option<Error>> {
    failure.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Helm's `lookup`: one object by name, or a list when the name is empty (across all
/// namespaces when the namespace is empty); nothing found is an empty map. A failure is also
/// kept in `failure`, classified. A lookup ends with the job's timeout or abort: a render
/// waiting on a cluster that never answers would hold its render slot and its thread.
fn cluster_lookup(
    cluster: TargetCluster,
    interrupt: Interrupt,
    runtime: Handle,
    failure: Arc<Mutex<Option<Error>>>,
) -> Lookup {
    Lookup(Arc::new(move |api_version, kind, namespace, name| {
        let call = format!("lookup {api_version:?} {kind:?} {namespace:?} {name:?}");
        let read = read(&cluster, api_version, kind, namespace, name);
        runtime
            .block_on(interrupt.bound(read, OPERATION))
            .map_err(|e| {
                let message = format!("{call} in the target cluster: {}", e.message);
                *lock(&failure) = Some(e);
                message
            })
    }))
}

/// Reads what `lookup` asks for. A kind the cluster does not serve is final, as it fails
/// Helm's render; a failing request is classified by its status (an unreachable or
/// overloaded API server is worth a retry, a forbidden read is not).
async fn read(
    cluster: &TargetCluster,
    api_version: &str,
    kind: &str,
    namespace: &str,
    name: &str,
) -> Result<Data, Error> {
    let resolved = cluster
        .discovery
        .resolve(api_version, kind)
        .await
        .map_err(|e| {
            if e.reason == UNKNOWN_KIND {
                Error::config(OPERATION, UNKNOWN_KIND, e.message)
            } else {
                e.with_operation(OPERATION)
            }
        })?;
    let api = cluster.api(&resolved, Some(namespace).filter(|ns| !ns.is_empty()));
    let found = if name.is_empty() {
        match api.list(&ListParams::default()).await {
            Ok(list) => {
                let mut value = serde_json::to_value(&list).map_err(|e| unreadable(&e))?;
                // The API leaves out each item's type in a list; client-go puts it back.
                if let Some(items) = value.get_mut("items").and_then(Value::as_array_mut) {
                    for item in items.iter_mut().filter_map(Value::as_object_mut) {
                        item.insert("apiVersion".into(), api_version.into());
                        item.insert("kind".into(), kind.into());
                    }
                }
                value
            }
            Err(e) if is_not_found(&e) => return Ok(Data::Map(Map::default())),
            Err(e) => return Err(failed_read(&e)),
        }
    } else {
        match api.get_opt(name).await {
            Ok(Some(obj)) => serde_json::to_value(&obj).map_err(|e| unreadable(&e))?,
            Ok(None) => return Ok(Data::Map(Map::default())),
            Err(e) => return Err(failed_read(&e)),
        }
    };
    Ok(to_data(found))
}

/// A read the API server refused or could not answer, classified by its status. The message
/// is the server's own: the lookup's message already says what was read.
fn failed_read(e: &kube::Error) -> Error {
    Error {
        message: describe_kube_error(e),
        ..Error::from_kube(OPERATION, "", e)
    }
}

/// An object that does not convert to template data.
fn unreadable(e: &serde_json::Error) -> Error {
    Error::config(OPERATION, "InvalidObject", e.to_string())
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
