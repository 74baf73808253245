//! delete and deletecollection, with preconditions, finalizers and propagation policies.

use super::render::{ListMeta, list_json, object_json};
use super::{Ctx, Filter};
use crate::objects::decode::parse_body;
use crate::server::Request;
use crate::server::reply::Reply;
use crate::status::{self, ApiError, Cause};
use crate::store::Stored;
use crate::writes::{DeleteOptions, Deleted, Propagation, delete_in_txn};
use serde_json::{Value, json};
use std::sync::Arc;

fn options_error(message: String) -> ApiError {
    ApiError::invalid_options(
        "DeleteOptions",
        vec![Cause::new(
            "FieldValueNotSupported",
            message,
            "propagationPolicy",
        )],
    )
}

impl DeleteOptions {
    /// Reads DeleteOptions from the body (if any) and the query.
    pub fn from_request(req: &Request) -> Result<Self, ApiError> {
        let body: Value = if req.body.iter().all(u8::is_ascii_whitespace) {
            json!({})
        } else {
            parse_body(req)
                .map_err(|e| ApiError::bad_request(format!("couldn't decode DeleteOptions: {e}")))?
        };
        let text = |k: &str| body.get(k).and_then(Value::as_str).map(str::to_string);
        let policy = req
            .param("propagationPolicy")
            .map(str::to_string)
            .or_else(|| text("propagationPolicy"));
        let orphan = req
            .param("orphanDependents")
            .map(|v| v == "true")
            .or_else(|| body.get("orphanDependents").and_then(Value::as_bool));
        let propagation = match (policy.as_deref(), orphan) {
            (Some("Foreground"), _) => Propagation::Foreground,
            (Some("Background"), _) => Propagation::Background,
            (Some("Orphan"), _) | (None, Some(true)) => Propagation::Orphan,
            (None, _) => Propagation::Background,
            (Some(other), _) => {
                return Err(options_error(format!(
                    "Unsupported value: \"{other}\": supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\""
                )));
            }
        };
        let dry_run = req.param("dryRun") == Some("All")
            || body
                .get("dryRun")
                .and_then(Value::as_array)
                .is_some_and(|a| a.iter().any(|v| v == "All"));
        let pre = body.get("preconditions");
        let pre_text = |k: &str| {
            pre.and_then(|p| p.get(k))
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        Ok(Self {
            propagation,
            uid: pre_text("uid"),
            rv: pre_text("resourceVersion"),
            dry_run,
        })
    }
}

/// DELETE of one object.
pub fn delete(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let opts = DeleteOptions::from_request(ctx.req)?;
    let res = &ctx.res;
    let out = ctx
        .cluster
        .store
        .write(|txn| delete_in_txn(txn, res, ctx.ns(), ctx.name(), &opts))?;
    Ok(match out {
        // Some kinds answer an immediate delete with the object rather than a Status.
        Deleted::Gone(obj) if res.group.is_empty() && res.plural == "serviceaccounts" => {
            Reply::raw(200, object_json(res, &obj))
        }
        Deleted::Gone(obj) => Reply::json(
            200,
            &status::success(&obj.name, &res.group, &res.plural, &obj.uid),
        ),
        Deleted::Marked(obj) => Reply::raw(200, object_json(res, &obj)),
    })
}

/// DELETE of a collection: deletes every selected object; answers with the list of them.
pub fn delete_collection(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let opts = DeleteOptions::from_request(ctx.req)?;
    let filter = Filter::from_request(ctx.req, &ctx.res)?;
    let res = &ctx.res;
    let ns = ctx.path.namespace.clone();
    let (items, rv) = ctx.cluster.store.write(|txn| {
        let selected: Vec<Arc<Stored>> = txn
            .list(&res.storage_key, ns.as_deref())
            .into_iter()
            .filter(|o| filter.matches(o))
            .collect();
        let mut out = Vec::new();
        for obj in selected {
            match delete_in_txn(txn, res, &obj.namespace, &obj.name, &opts)? {
                Deleted::Gone(o) | Deleted::Marked(o) => out.push(o),
            }
        }
        Ok::<_, ApiError>((out, txn.current_rv()))
    })?;
    Ok(Reply::raw(
        200,
        list_json(
            res,
            &items,
            &ListMeta {
                rv,
                ..ListMeta::default()
            },
        ),
    ))
}
