//! Objects through kube's `Api` in tests, failing the test with the API server's answer:
//! created from JSON, listed, looked up, and namespaces made sure of.

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, PostParams};

/// Creates a namespace of the cluster behind `client` unless it exists.
pub async fn ensure_namespace(client: &kube::Client, name: &str) {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    if namespaces
        .get_opt(name)
        .await
        .expect("namespace read")
        .is_some()
    {
        return;
    }
    let namespace = serde_json::from_value(serde_json::json!({ "metadata": { "name": name } }))
        .expect("a namespace object");
    namespaces
        .create(&PostParams::default(), &namespace)
        .await
        .unwrap_or_else(|error| panic!("creating namespace {name}: {error}"));
}

/// Whether `api` has the object `name`.
pub async fn exists<K>(api: &Api<K>, name: &str) -> bool
where
    K: Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    api.get_opt(name)
        .await
        .unwrap_or_else(|error| panic!("reading {name}: {error}"))
        .is_some()
}

/// Every object `api` lists.
pub async fn list<K>(api: &Api<K>) -> Vec<K>
where
    K: Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    api.list(&Default::default())
        .await
        .unwrap_or_else(|error| panic!("listing: {error}"))
        .items
}

/// Creates the object `value` describes through `api`; the test fails naming its kind and
/// the API server's answer when it is not created.
pub async fn create<K>(api: &Api<K>, value: serde_json::Value) -> K
where
    K: kube::Resource<DynamicType = ()>
        + Clone
        + serde::de::DeserializeOwned
        + serde::Serialize
        + std::fmt::Debug,
{
    let kind = K::kind(&());
    let object: K = serde_json::from_value(value)
        .unwrap_or_else(|error| panic!("the JSON is not a {kind}: {error}"));
    api.create(&PostParams::default(), &object)
        .await
        .unwrap_or_else(|error| panic!("creating a {kind}: {error}"))
}
