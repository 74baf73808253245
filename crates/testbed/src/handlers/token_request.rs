//! `serviceaccounts/<name>/token`: minting bound ServiceAccount tokens (TokenRequest).

use super::Ctx;
use crate::clock;
use crate::objects::decode::parse_request_body;
use crate::server::reply::Reply;
use crate::status::ApiError;
use crate::token::request;
use crate::token::{BoundObject, ServiceAccountRef};
use serde_json::{Value, json};

/// POST of a TokenRequest.
pub fn create(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let body = parse_request_body(ctx.req, "TokenRequest")?;
    let state = ctx.cluster;
    let sa = state
        .store
        .get("/serviceaccounts", ctx.ns(), ctx.name())
        .ok_or_else(|| ctx.not_found())?;
    let spec = match request::parse(&body, state.issuer.api_audiences()) {
        Ok(spec) => spec,
        Err(status) => return Ok(Reply::status_value(&status)),
    };
    let bound = match &spec.bound_object_ref {
        None => None,
        Some(r) => {
            let key = match r.kind.as_str() {
                "Secret" => "/secrets",
                _ => "/pods",
            };
            let plural = &key[1..];
            let obj = state
                .store
                .get(key, ctx.ns(), &r.name)
                .ok_or_else(|| ApiError::not_found(plural, "", &r.name))?;
            if !r.uid.is_empty() && r.uid != obj.uid {
                return Ok(Reply::status_value(&request::bound_uid_conflict(r)));
            }
            Some(BoundObject {
                kind: r.kind.clone(),
                name: r.name.clone(),
                uid: obj.uid.clone(),
            })
        }
    };
    let sa_ref = ServiceAccountRef {
        namespace: ctx.ns(),
        name: ctx.name(),
        uid: &sa.uid,
    };
    let issued = state
        .issuer
        .issue(&sa_ref, &spec, bound.as_ref(), clock::unix_now().0)
        .map_err(|e| ApiError::internal_error(e.to_string()))?;
    let mut spec_json = spec.to_json();
    if let (Some(b), Some(r)) = (
        &bound,
        spec_json
            .get_mut("boundObjectRef")
            .and_then(Value::as_object_mut),
    ) {
        r.insert("uid".into(), b.uid.clone().into());
    }
    let mut answer = json!({
        "kind": "TokenRequest",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {"name": ctx.name(), "namespace": ctx.ns(), "creationTimestamp": clock::now_time()},
        "spec": requested_spec(&body, spec.expiration_seconds),
    });
    super::fields::record_virtual_create(ctx, &mut answer, "token");
    answer["spec"] = spec_json;
    answer["status"] =
        json!({"token": issued.token, "expirationTimestamp": issued.expiration_timestamp});
    Ok(Reply::json(201, &answer))
}

/// The spec as kube-apiserver's typed decoding sees it before the token is minted: what the
/// client sent of the spec's fields, without nulls and empty strings, with the lifetime
/// defaulted (the API audiences are filled in later, so they are not the client's).
fn requested_spec(body: &Value, expiration_seconds: i64) -> Value {
    let mut spec = body
        .get("spec")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    spec.retain(|k, v| {
        !v.is_null()
            && matches!(
                k.as_str(),
                "audiences" | "expirationSeconds" | "boundObjectRef"
            )
    });
    if let Some(r) = spec
        .get_mut("boundObjectRef")
        .and_then(Value::as_object_mut)
    {
        r.retain(|_, v| !v.is_null() && v.as_str() != Some(""));
    }
    spec.insert("expirationSeconds".into(), expiration_seconds.into());
    Value::Object(spec)
}
