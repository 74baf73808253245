//! The virtual review resources: SelfSubjectReview, TokenReview and the access reviews.
//! Nothing is stored; each answer is the request with a computed `status`.

use super::Ctx;
use crate::authn;
use crate::objects::decode::parse_request_body;
use crate::rbac::review::{AccessReviewKind, access_review, rules_review};
use crate::server::reply::Reply;
use crate::status::ApiError;
use serde_json::{Value, json};

/// POST to a review resource.
pub fn create(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let res = &ctx.res;
    let mut body = parse_request_body(ctx.req, &res.kind)?;
    let Some(map) = body.as_object_mut() else {
        return Err(ApiError::bad_request(format!(
            "the object provided is unrecognized (must be of type {})",
            res.kind
        )));
    };
    map.insert("kind".into(), res.kind.clone().into());
    map.insert("apiVersion".into(), res.api_version().into());
    // Typed decoding drops empty optional strings from the echoed spec.
    for attrs in ["resourceAttributes", "nonResourceAttributes"] {
        if let Some(a) = map
            .get_mut("spec")
            .and_then(|s| s.get_mut(attrs))
            .and_then(Value::as_object_mut)
        {
            a.retain(|_, v| v.as_str() != Some(""));
        }
    }
    let meta = map.entry("metadata").or_insert_with(|| json!({}));
    if let Some(m) = meta.as_object_mut() {
        // Only a SelfSubjectReview gets a creation time; the others echo what was sent.
        if res.kind == "SelfSubjectReview" {
            m.insert("creationTimestamp".into(), crate::clock::now_time().into());
        } else {
            m.entry("creationTimestamp").or_insert(Value::Null);
        }
        if res.namespaced {
            m.insert("namespace".into(), ctx.ns().into());
        }
    }
    super::fields::record_virtual_create(ctx, &mut body, "");
    let status = match res.kind.as_str() {
        "SelfSubjectReview" => json!({"userInfo": ctx.user.to_json()}),
        "TokenReview" => token_review(ctx, &body),
        "SelfSubjectRulesReview" => {
            let ns = body
                .pointer("/spec/namespace")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            let policy = ctx.cluster.policy.read().unwrap_or_else(|e| e.into_inner());
            rules_review(&policy, &ctx.user.to_rbac(), &ns)
        }
        kind => {
            let review_kind = match kind {
                "SelfSubjectAccessReview" => AccessReviewKind::SelfSubject,
                "SubjectAccessReview" => AccessReviewKind::Subject,
                _ => AccessReviewKind::LocalSubject,
            };
            let policy = ctx.cluster.policy.read().unwrap_or_else(|e| e.into_inner());
            match access_review(&policy, review_kind, &ctx.user.to_rbac(), ctx.ns(), &body) {
                Ok(status) => status,
                Err(error) => return Ok(Reply::status_value(&error)),
            }
        }
    };
    if let Some(m) = body.as_object_mut() {
        m.insert("status".into(), status);
    }
    Ok(Reply::json(201, &body))
}

fn token_review(ctx: &Ctx<'_>, body: &Value) -> Value {
    let token = body
        .pointer("/spec/token")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let audiences: Vec<String> = body
        .pointer("/spec/audiences")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    if let Some(user) = ctx.cluster.tokens.lookup(token) {
        return json!({"authenticated": true, "user": user.to_json(), "audiences": ctx.cluster.issuer.api_audiences()});
    }
    match authn::verify_service_account(ctx.cluster, token, &audiences) {
        Ok((user, identity)) => {
            json!({"authenticated": true, "user": user.to_json(), "audiences": identity.audiences})
        }
        Err(e) => json!({"user": {}, "error": e.review_message()}),
    }
}
