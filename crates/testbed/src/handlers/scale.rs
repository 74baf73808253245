//! The `scale` subresource of Deployments, StatefulSets and ReplicaSets: an
//! `autoscaling/v1` Scale view of `spec.replicas`.

use super::Ctx;
use super::write::{Updated, apply_update};
use crate::objects::decode::parse_body;
use crate::objects::{meta_mut, workloads};
use crate::patch::{json_patch, merge_patch};
use crate::server::reply::Reply;
use crate::status::ApiError;
use crate::store::Stored;
use serde_json::{Map, Value, json};

fn scale_of(obj: &Stored) -> Value {
    let v = obj.value();
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
    if let Some(r) = v
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .filter(|r| *r != 0)
    {
        spec.insert("replicas".into(), r.into());
    }
    let mut status = Map::new();
    status.insert(
        "replicas".into(),
        v.pointer("/status/replicas")
            .and_then(Value::as_i64)
            .unwrap_or(0)
            .into(),
    );
    let selector = workloads::selector_string(&v);
    if !selector.is_empty() {
        status.insert("selector".into(), selector.into());
    }
    json!({"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": scale_meta, "spec": spec, "status": status})
}

/// GET of `…/scale`.
pub fn get(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let obj = ctx
        .cluster
        .store
        .get(ctx.key(), ctx.ns(), ctx.name())
        .ok_or_else(|| ctx.not_found())?;
    Ok(Reply::json(200, &scale_of(&obj)))
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
        let current = scale_of(&old);
        let wanted = if is_patch {
            match ct.as_str() {
                "application/json-patch+json" => json_patch::apply_bytes(&current, &body),
                _ => merge_patch::apply_bytes(&current, &body),
            }
            .map_err(|e| ApiError::new(e.code(), e.reason().unwrap_or_default(), e.message()))?
        } else {
            parse_body(ctx.req).map_err(ApiError::bad_request)?
        };
        let replicas = wanted
            .pointer("/spec/replicas")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        let mut next = old.value();
        if let Some(spec) = next.get_mut("spec").and_then(Value::as_object_mut) {
            spec.insert("replicas".into(), replicas.into());
        }
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
    Ok(Reply::json(200, &scale_of(&stored)))
}
