//! Aggregated discovery (`apidiscovery.k8s.io/v2`): `/api` and `/apis` answer with every
//! group version's resources in one `APIGroupDiscoveryList` when the client asks for it in
//! `Accept`, as kubectl does, so it needs one request instead of one per group version.

use crate::cluster::ClusterState;
use crate::resources::ResourceDef;
use crate::server::Request;
use crate::server::reply::Reply;
use serde_json::{Map, Value, json};

/// The media type of an aggregated discovery document, as asked for and answered.
pub const MEDIA_TYPE: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// Whether `Accept` lists the v2 aggregated form (other forms, such as v2beta1 alone, get
/// the unaggregated documents, which every client understands).
pub fn wanted(req: &Request) -> bool {
    req.header("accept").is_some_and(|accept| {
        accept.split(',').any(|range| {
            let mut parts = range.split(';').map(str::trim);
            let json = parts.next() == Some("application/json");
            let params: Vec<&str> = parts.collect();
            json && ["g=apidiscovery.k8s.io", "v=v2", "as=APIGroupDiscoveryList"]
                .iter()
                .all(|p| params.contains(p))
        })
    })
}

/// `/api` (`core`) or `/apis` in the aggregated form.
pub fn document(cluster: &ClusterState, core: bool) -> Reply {
    let items: Vec<Value> = if core {
        vec![group_item(cluster, "", &["v1".to_string()])]
    } else {
        cluster
            .registry
            .groups()
            .iter()
            .map(|g| group_item(cluster, &g.name, &g.versions))
            .collect()
    };
    let doc = json!({
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": items,
    });
    Reply::document(200, MEDIA_TYPE, &doc)
}

/// One group with its versions, the preferred one first.
fn group_item(cluster: &ClusterState, group: &str, versions: &[String]) -> Value {
    let mut meta = Map::new();
    if !group.is_empty() {
        meta.insert("name".into(), group.into());
    }
    meta.insert("creationTimestamp".into(), Value::Null);
    let versions: Vec<Value> = versions
        .iter()
        .map(|v| {
            let mut resources = cluster.registry.resources_of(group, v);
            resources.sort_by(|a, b| a.plural.cmp(&b.plural));
            json!({
                "version": v,
                "resources": resources.iter().map(|r| resource_item(r)).collect::<Vec<_>>(),
                "freshness": "Current",
            })
        })
        .collect();
    json!({"metadata": meta, "versions": versions})
}

fn kind_of(group: &str, version: &str, kind: &str) -> Value {
    json!({"group": group, "version": version, "kind": kind})
}

/// One resource with its subresources (`APIResourceDiscovery`).
fn resource_item(r: &ResourceDef) -> Value {
    let mut m = Map::new();
    m.insert("resource".into(), r.plural.clone().into());
    m.insert(
        "responseKind".into(),
        kind_of(&r.group, &r.version, &r.kind),
    );
    let scope = if r.namespaced {
        "Namespaced"
    } else {
        "Cluster"
    };
    m.insert("scope".into(), scope.into());
    m.insert("singularResource".into(), r.singular.clone().into());
    m.insert("verbs".into(), json!(r.verbs));
    if !r.short_names.is_empty() {
        m.insert("shortNames".into(), json!(r.short_names));
    }
    if !r.categories.is_empty() {
        m.insert("categories".into(), json!(r.categories));
    }
    if !r.subresources.is_empty() {
        let subs: Vec<Value> = r
            .subresources
            .iter()
            .map(|s| {
                let kind = match &s.gvk {
                    Some((g, v, k)) => kind_of(g, v, k),
                    None => kind_of(&r.group, &r.version, &r.kind),
                };
                json!({"subresource": s.name, "responseKind": kind, "verbs": s.verbs})
            })
            .collect();
        m.insert("subresources".into(), Value::Array(subs));
    }
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use http::{HeaderMap, HeaderValue, Method};

    fn with_accept(accept: &str) -> Request {
        let mut headers = HeaderMap::new();
        headers.insert("accept", HeaderValue::from_str(accept).unwrap());
        Request {
            method: Method::GET,
            path: "/apis".into(),
            query: Vec::new(),
            headers,
            body: Bytes::new(),
        }
    }

    #[test]
    fn only_the_v2_form_is_taken_as_wanted() {
        // What kubectl 1.35 sends.
        assert!(wanted(&with_accept(
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"
        )));
        assert!(!wanted(&with_accept(
            "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"
        )));
        assert!(!wanted(&with_accept("application/json, */*")));
    }
}
