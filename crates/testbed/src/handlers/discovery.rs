//! Discovery documents: `/version`, `/api`, `/apis`, group and group-version resource lists,
//! and the OpenAPI v3 index.

use crate::cluster::ClusterState;
use crate::resources::ResourceDef;
use crate::server::reply::Reply;
use crate::status::ApiError;
use serde_json::{Map, Value, json};

/// `/version`: a 1.33 server.
pub fn version() -> Reply {
    Reply::json(
        200,
        &json!({
            "major": "1",
            "minor": "33",
            "emulationMajor": "1",
            "emulationMinor": "33",
            "minCompatibilityMajor": "1",
            "minCompatibilityMinor": "32",
            "gitVersion": "v1.33.0-testbed",
            "gitCommit": "0000000000000000000000000000000000000000",
            "gitTreeState": "clean",
            "buildDate": "2025-04-23T00:00:00Z",
            "goVersion": "go1.24.2",
            "compiler": "gc",
            "platform": "linux/amd64"
        }),
    )
}

/// `/api`.
pub fn api(cluster: &ClusterState) -> Reply {
    Reply::json(
        200,
        &json!({
            "kind": "APIVersions",
            "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": cluster.addr.to_string()}]
        }),
    )
}

fn group_json(name: &str, versions: &[String]) -> Value {
    let gv = |v: &String| json!({"groupVersion": format!("{name}/{v}"), "version": v});
    json!({
        "name": name,
        "versions": versions.iter().map(gv).collect::<Vec<_>>(),
        "preferredVersion": versions.first().map(gv).unwrap_or(Value::Null),
    })
}

/// `/apis`.
pub fn apis(cluster: &ClusterState) -> Reply {
    let groups: Vec<Value> = cluster
        .registry
        .groups()
        .iter()
        .map(|g| group_json(&g.name, &g.versions))
        .collect();
    Reply::json(
        200,
        &json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}),
    )
}

/// `/apis/<group>`.
pub fn group(cluster: &ClusterState, name: &str) -> Reply {
    let Some(g) = cluster
        .registry
        .groups()
        .into_iter()
        .find(|g| g.name == name)
    else {
        return Reply::Text(404, "404 page not found\n");
    };
    let mut doc = json!({"kind": "APIGroup", "apiVersion": "v1"});
    if let (Some(d), Value::Object(g)) = (doc.as_object_mut(), group_json(&g.name, &g.versions)) {
        d.extend(g);
    }
    Reply::json(200, &doc)
}

fn strings(v: &[String]) -> Value {
    Value::Array(v.iter().map(|s| Value::String(s.clone())).collect())
}

fn resource_json(r: &ResourceDef) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), r.plural.clone().into());
    m.insert("singularName".into(), r.singular.clone().into());
    m.insert("namespaced".into(), r.namespaced.into());
    m.insert("kind".into(), r.kind.clone().into());
    m.insert("verbs".into(), strings(&r.verbs));
    if !r.short_names.is_empty() {
        m.insert("shortNames".into(), strings(&r.short_names));
    }
    if !r.categories.is_empty() {
        m.insert("categories".into(), strings(&r.categories));
    }
    if let Some(h) = &r.storage_hash {
        m.insert("storageVersionHash".into(), h.clone().into());
    }
    Value::Object(m)
}

fn subresource_jsons(r: &ResourceDef) -> Vec<Value> {
    r.subresources
        .iter()
        .map(|s| {
            let mut m = Map::new();
            m.insert("name".into(), format!("{}/{}", r.plural, s.name).into());
            m.insert("singularName".into(), "".into());
            m.insert("namespaced".into(), r.namespaced.into());
            match &s.gvk {
                Some((g, v, k)) => {
                    m.insert("group".into(), g.clone().into());
                    m.insert("version".into(), v.clone().into());
                    m.insert("kind".into(), k.clone().into());
                }
                None => {
                    m.insert("kind".into(), r.kind.clone().into());
                }
            }
            m.insert("verbs".into(), strings(&s.verbs));
            Value::Object(m)
        })
        .collect()
}

/// `/api/v1` or `/apis/<group>/<version>`.
pub fn group_version(cluster: &ClusterState, group: &str, version: &str) -> Reply {
    let resources = cluster.registry.resources_of(group, version);
    if resources.is_empty() {
        return Reply::Text(404, "404 page not found\n");
    }
    let mut list: Vec<Value> = Vec::new();
    for r in &resources {
        list.push(resource_json(r));
        list.extend(subresource_jsons(r));
    }
    let gv = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    let mut doc = Map::new();
    doc.insert("kind".into(), "APIResourceList".into());
    if !group.is_empty() {
        doc.insert("apiVersion".into(), "v1".into());
    }
    doc.insert("groupVersion".into(), gv.into());
    doc.insert("resources".into(), Value::Array(list));
    Reply::json(200, &Value::Object(doc))
}

/// `/openapi/v3` (the index) and `/openapi/v3/<gv>` (a document without schemas).
pub fn openapi(cluster: &ClusterState, rest: &str) -> Reply {
    match rest {
        "v3" => {
            let mut paths = Map::new();
            let mut add = |p: String| {
                let hash = format!("{:016X}", fnv(&p));
                paths.insert(
                    p.clone(),
                    json!({"serverRelativeURL": format!("/openapi/v3/{p}?hash={hash}")}),
                );
            };
            add("api/v1".into());
            for g in cluster.registry.groups() {
                for v in &g.versions {
                    add(format!("apis/{}/{v}", g.name));
                }
            }
            Reply::json(200, &json!({"paths": paths}))
        }
        other if other.starts_with("v3/") => group_version_openapi(cluster, &other[3..]),
        _ => ApiError::no_resource().into(),
    }
}

/// The OpenAPI v3 document of one group version (`api/v1`, `apis/<group>/<version>`).
///
/// It lists every resource's paths with their PATCH operation and its query parameters,
/// which is what kubectl reads to learn that the server validates fields itself; schemas
/// are left open.
fn group_version_openapi(cluster: &ClusterState, gv_path: &str) -> Reply {
    let (group, version) = match gv_path.split('/').collect::<Vec<_>>().as_slice() {
        ["api", v] => (String::new(), v.to_string()),
        ["apis", g, v] => (g.to_string(), v.to_string()),
        _ => return Reply::Text(404, "404 page not found\n"),
    };
    let resources = cluster.registry.resources_of(&group, &version);
    if resources.is_empty() {
        return Reply::Text(404, "404 page not found\n");
    }
    let prefix = if group.is_empty() {
        format!("/api/{version}")
    } else {
        format!("/apis/{group}/{version}")
    };
    let params: Vec<Value> = ["dryRun", "fieldManager", "fieldValidation", "force"]
        .iter()
        .map(|p| json!({"name": p, "in": "query", "schema": {"type": "string", "uniqueItems": true}}))
        .collect();
    let mut paths = Map::new();
    for r in resources.iter().filter(|r| r.supports("patch")) {
        let scope = if r.namespaced {
            "/namespaces/{namespace}"
        } else {
            ""
        };
        let gvk = json!({"group": group, "version": version, "kind": r.kind});
        paths.insert(
            format!("{prefix}{scope}/{}/{{name}}", r.plural),
            json!({"patch": {
                "x-kubernetes-group-version-kind": gvk,
                "x-kubernetes-action": "patch",
                "parameters": params,
                "responses": {"200": {"description": "OK"}}
            }}),
        );
    }
    Reply::json(
        200,
        &json!({"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": "v1.33.0"}, "paths": paths, "components": {"schemas": {}}}),
    )
}

/// A stable hash for OpenAPI URLs (only needs to change when the text does).
fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
