//! The `scale` subresource: an `autoscaling/v1` Scale view of a workload's `spec.replicas`
//! (Deployments, StatefulSets, ReplicaSets), or of a custom resource's fields named by its
//! CRD (`specReplicasPath`, `statusReplicasPath`, `labelSelectorPath`).

use super::Ctx;
use crate::objects::decode::parse_body;
use crate::objects::{meta_mut, workloads};
use crate::patch::{json_patch, merge_patch};
use crate::resources::{ResourceDef, ScalePaths};
use crate::server::reply::Reply;
use crate::status::{ApiError, Cause};
use crate::store::Stored;
use crate::writes::{Updated, apply_update};
use serde_json::{Map, Value, json};

/// Where the scale of built-in workloads lives.
fn workload_paths() -> ScalePaths {
    ScalePaths {
        spec_replicas: "/spec/replicas".into(),
        status_replicas: "/status/replicas".into(),
        label_selector: None,
    }
}

/// The scale paths of a resource: its CRD's for a custom resource.
fn paths_of(res: &ResourceDef) -> ScalePaths {
    res.crd
        .as_ref()
        .and_then(|c| c.scale(&res.version))
        .cloned()
        .unwrap_or_else(workload_paths)
}

fn scale_of(res: &ResourceDef, obj: &Stored) -> Value {
    let v = obj.value();
    let paths = paths_of(res);
    let meta = v.get("metadata").cloned().unwrap_or_default();
    let mut scale_meta = Map::new();
    for k in [
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "creationTimestamp",
    ] {
        if let Some(x) = meta.get(k) {
            scale_meta.insert(k.into(), x.clone());
        }
    }
    let mut spec = Map::new();
    // ScaleSpec.replicas is `omitempty`: zero is left out.
    if let Some(r) = v
        .pointer(&paths.spec_replicas)
        .and_then(Value::as_i64)
        .filter(|r| *r != 0)
    {
        spec.insert("replicas".into(), r.into());
    }
    let mut status = Map::new();
    status.insert(
        "replicas".into(),
        v.pointer(&paths.status_replicas)
            .and_then(Value::as_i64)
            .unwrap_or(0)
            .into(),
    );
    let selector = match (&paths.label_selector, res.crd.is_some()) {
        (Some(path), _) => v
            .pointer(path)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        (None, true) => String::new(),
        (None, false) => workloads::selector_string(&v),
    };
    if !selector.is_empty() {
        status.insert("selector".into(), selector.into());
    }
    json!({"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": scale_meta, "spec": spec, "status": status})
}

/// Sets `value` at a JSON pointer, making the maps on the way.
fn set_pointer(obj: &mut Value, pointer: &str, value: Value) {
    let mut at = obj;
    let mut parts = pointer.split('/').skip(1).peekable();
    while let Some(part) = parts.next() {
        let Some(map) = at.as_object_mut() else {
            return;
        };
        if parts.peek().is_none() {
            map.insert(part.to_string(), value);
            return;
        }
        at = map.entry(part).or_insert_with(|| Value::Object(Map::new()));
    }
}

/// GET of `…/scale`.
pub fn get(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let obj = ctx
        .cluster
        .store
        .get(ctx.key(), ctx.ns(), ctx.name())
        .ok_or_else(|| ctx.not_found())?;
    Ok(Reply::json(200, &scale_of(&ctx.res, &obj)))
}

/// PUT or PATCH of `…/scale`: sets the parent's `spec.replicas`.
pub fn write(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let res = &ctx.res;
    let ct = ctx
        .req
        .header("content-type")
        .unwrap_or("application/json")
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_string();
    let is_patch = ctx.req.method == http::Method::PATCH;
    let body = ctx.req.body.clone();
    let (ns, name) = (ctx.ns().to_string(), ctx.name().to_string());
    let out = ctx.cluster.store.write(|txn| {
        let old = txn
            .get(&res.storage_key, &ns, &name)
            .ok_or_else(|| ctx.not_found())?;
        let current = scale_of(res, &old);
        let wanted = if is_patch {
            match ct.as_str() {
                "application/json-patch+json" => json_patch::apply_bytes(&current, &body),
                _ => merge_patch::apply_bytes(&current, &body),
            }
            .map_err(|e| ApiError::new(e.code(), e.reason().unwrap_or_default(), e.message()))?
        } else {
            parse_body(ctx.req).map_err(ApiError::bad_request)?
        };
        // A resourceVersion in the Scale is a precondition on the parent.
        let precondition = wanted
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str)
            .filter(|rv| !rv.is_empty());
        if precondition.is_some_and(|rv| rv != old.rv.to_string()) {
            return Err(ApiError::conflict_modified(&res.plural, &res.group, &name));
        }
        let replicas = wanted
            .pointer("/spec/replicas")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        if replicas < 0 {
            return Err(ApiError::invalid(
                "Scale",
                "autoscaling",
                &name,
                vec![Cause::new(
                    "FieldValueInvalid",
                    format!("Invalid value: {replicas}: must be greater than or equal to 0"),
                    "spec.replicas",
                )],
            ));
        }
        let mut next = old.value();
        set_pointer(&mut next, &paths_of(res).spec_replicas, replicas.into());
        meta_mut(&mut next).remove("resourceVersion");
        apply_update(txn, res, &old, next, None, ctx.dry_run())
    })?;
    let stored = match out {
        Updated::Stored(s) | Updated::Unchanged(s) | Updated::Deleted(s) => s,
        Updated::DryRun(_) => ctx
            .cluster
            .store
            .get(ctx.key(), ctx.ns(), ctx.name())
            .ok_or_else(|| ctx.not_found())?,
    };
    Ok(Reply::json(200, &scale_of(res, &stored)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_pointer_makes_missing_maps() {
        let mut v = json!({"spec": {"other": 1}});
        set_pointer(&mut v, "/spec/scaling/count", json!(3));
        assert_eq!(v, json!({"spec": {"other": 1, "scaling": {"count": 3}}}));
        set_pointer(&mut v, "/spec/other", json!(2));
        assert_eq!(v["spec"]["other"], 2);
    }
}
