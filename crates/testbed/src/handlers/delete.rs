//! delete and deletecollection, with preconditions, finalizers and propagation policies.

use super::render::{ListMeta, list_json, object_json};
use super::{Ctx, Filter};
use crate::clock;
use crate::objects::decode::parse_body;
use crate::objects::{finalizers, is_deleting, meta_mut};
use crate::resources::ResourceDef;
use crate::server::Request;
use crate::server::reply::Reply;
use crate::status::{self, ApiError, Cause, Target};
use crate::store::{Stored, Txn};
use serde_json::{Value, json};
use std::sync::Arc;

/// How dependents of a deleted object are treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Propagation {
    /// The garbage collector deletes dependents after the owner is gone (the default).
    #[default]
    Background,
    /// The owner waits (finalizer `foregroundDeletion`) until blocking dependents are gone.
    Foreground,
    /// Dependents are kept and their ownerReferences to the owner removed (finalizer `orphan`).
    Orphan,
}

/// Parsed DeleteOptions (body and query).
#[derive(Debug, Clone, Default)]
pub struct DeleteOptions {
    /// Propagation policy.
    pub propagation: Propagation,
    /// `preconditions.uid`.
    pub uid: Option<String>,
    /// `preconditions.resourceVersion`.
    pub rv: Option<String>,
    /// `dryRun: [All]`.
    pub dry_run: bool,
}

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

/// What a delete did.
pub enum Deleted {
    /// Removed at once: answered with a success Status.
    Gone(Arc<Stored>),
    /// Marked for deletion (finalizers pending): answered with the object.
    Marked(Arc<Stored>),
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

/// Deletes (or marks for deletion) one object inside a transaction.
pub fn delete_in_txn(
    txn: &mut Txn<'_>,
    res: &ResourceDef,
    ns: &str,
    name: &str,
    opts: &DeleteOptions,
) -> Result<Deleted, ApiError> {
    let old = txn
        .get(&res.storage_key, ns, name)
        .ok_or_else(|| ApiError::not_found(&res.plural, &res.group, name))?;
    let target = Target {
        name,
        group: &res.group,
        kind: &res.kind,
    };
    if let Some(uid) = &opts.uid
        && *uid != old.uid
    {
        return Err(ApiError::conflict(
            target,
            &res.kind,
            &format!(
                "the UID in the precondition ({uid}) does not match the UID in record ({}). The object might have been deleted and then recreated",
                old.uid
            ),
        ));
    }
    if let Some(rv) = &opts.rv
        && *rv != old.rv.to_string()
    {
        return Err(ApiError::conflict(
            target,
            &res.kind,
            &format!(
                "the ResourceVersion in the precondition ({rv}) does not match the ResourceVersion in record ({}). The object might have been modified",
                old.rv
            ),
        ));
    }
    let mut obj = old.value();
    let mut fins = finalizers(&obj);
    let policy_finalizer = match opts.propagation {
        Propagation::Orphan => Some("orphan"),
        Propagation::Foreground => Some("foregroundDeletion"),
        Propagation::Background => None,
    };
    if let Some(f) = policy_finalizer
        && !fins.iter().any(|x| x == f)
    {
        fins.push(f.to_string());
    }
    let namespace_pending = res.kind == "Namespace" && res.group.is_empty();
    if fins.is_empty() && !namespace_pending {
        if opts.dry_run {
            return Ok(Deleted::Gone(old));
        }
        // The deletion revision is new, so the returned state is the last one stored.
        txn.delete(&res.storage_key, ns, name);
        return Ok(Deleted::Gone(old));
    }
    let was_deleting = is_deleting(&obj);
    let meta = meta_mut(&mut obj);
    if !was_deleting {
        meta.insert("deletionTimestamp".into(), clock::now_time().into());
        // Namespaces are finalized by their controller, without a grace period.
        if !namespace_pending {
            meta.insert("deletionGracePeriodSeconds".into(), 0.into());
        }
    }
    if !fins.is_empty() {
        meta.insert("finalizers".into(), json!(fins));
    }
    if namespace_pending && let Some(m) = obj.as_object_mut() {
        m.insert("status".into(), json!({"phase": "Terminating"}));
    }
    if opts.dry_run || (was_deleting && obj == old.value()) {
        return Ok(Deleted::Marked(old));
    }
    Ok(Deleted::Marked(txn.put(&res.storage_key, obj)))
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
