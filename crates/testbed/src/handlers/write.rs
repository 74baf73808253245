//! create and update (PUT), and the shared write path used by patches and controllers.

use super::Ctx;
use super::fields::{self, Ownership};
use super::options::parse_body_rv;
use super::render::object_json;
use crate::objects::decode::decode_object;
use crate::objects::{convert, finalizers, is_deleting, kinds, lifecycle, meta_str};
use crate::patch::apply::{Operation, update_managed_fields};
use crate::resources::ResourceDef;
use crate::server::reply::Reply;
use crate::status::{ApiError, Cause, Target};
use crate::store::{Stored, Txn};
use serde_json::Value;
use std::sync::Arc;

/// POST: creates an object.
pub fn create(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let res = &ctx.res;
    let decoded = decode_object(ctx.req, res, &res.kind, &res.api_version())?;
    let mut obj = lifecycle::prepare_create(res, ctx.path.namespace.as_deref(), decoded.object)?;
    kinds::default(res, &mut obj)?;
    // Ownership is recorded in the version the client wrote, before conversion to storage.
    let name = fields::manager_name(ctx);
    let api_version = res.api_version();
    let manager = fields::manager(ctx, &name, &api_version, Operation::Update);
    update_managed_fields(
        None,
        &mut obj,
        &manager,
        &fields::shape(res),
        fields::scope(res, None),
        &crate::clock::now_time(),
    );
    convert::to_stored(res, &mut obj);
    super::admission::check(ctx, &obj)?;
    let dry_run = ctx.dry_run();
    let stored = ctx
        .cluster
        .store
        .write(|txn| create_in_txn(txn, res, obj, dry_run))?;
    let body = match stored {
        Created::Stored(s) => object_json(res, &s),
        Created::DryRun(v) => bytes::Bytes::from(serde_json::to_vec(&v).unwrap_or_default()),
    };
    Ok(Reply::raw(201, body).with_warnings(sorted(decoded.warnings)))
}

/// Unknown-field warnings in kube-apiserver's order (sorted by field path).
fn sorted(mut warnings: Vec<String>) -> Vec<String> {
    warnings.sort();
    warnings
}

/// The result of a create.
pub enum Created {
    /// Stored.
    Stored(Arc<Stored>),
    /// Checked but not stored (`dryRun=All`).
    DryRun(Value),
}

/// Creates a prepared object inside a transaction: draws a generated name, checks the
/// namespace and uniqueness, validates, and stores.
pub fn create_in_txn(
    txn: &mut Txn<'_>,
    res: &ResourceDef,
    obj: Value,
    dry_run: bool,
) -> Result<Created, ApiError> {
    create_owned(txn, res, obj, dry_run, None)
}

/// Like [`create_in_txn`], recording the writer's fields in managedFields.
pub fn create_owned(
    txn: &mut Txn<'_>,
    res: &ResourceDef,
    mut obj: Value,
    dry_run: bool,
    owner: Option<&Ownership<'_>>,
) -> Result<Created, ApiError> {
    if let Some(o) = owner {
        update_managed_fields(
            None,
            &mut obj,
            &o.manager,
            &o.shape,
            o.scope,
            &crate::clock::now_time(),
        );
    }
    kinds::finish(res, &mut obj);
    let ns = meta_str(&obj, "namespace").to_string();
    let generated = meta_str(&obj, "name").is_empty();
    lifecycle::fill_generated_name(&mut obj)?;
    if res.namespaced {
        check_namespace(txn, res, &ns, meta_str(&obj, "name"))?;
    }
    let mut causes = lifecycle::validate_meta(res, &obj, true);
    if causes.is_empty() {
        kinds::validate(res, &obj, None)?;
    }
    if !causes.is_empty() {
        let name = meta_str(&obj, "name").to_string();
        return Err(ApiError::invalid(
            &res.kind,
            &res.group,
            &name,
            std::mem::take(&mut causes),
        ));
    }
    if txn
        .get(&res.storage_key, &ns, meta_str(&obj, "name"))
        .is_some()
    {
        if generated {
            // Draw again, like kube-apiserver retries a clashing generated name.
            crate::objects::meta_mut(&mut obj).remove("name");
            lifecycle::fill_generated_name(&mut obj)?;
        }
        let name = meta_str(&obj, "name").to_string();
        if txn.get(&res.storage_key, &ns, &name).is_some() {
            return Err(ApiError::already_exists(&res.plural, &res.group, &name));
        }
    }
    if dry_run {
        return Ok(Created::DryRun(obj));
    }
    Ok(Created::Stored(txn.put(&res.storage_key, obj)))
}

fn check_namespace(txn: &Txn<'_>, res: &ResourceDef, ns: &str, name: &str) -> Result<(), ApiError> {
    let Some(nso) = txn.get("/namespaces", "", ns) else {
        return Err(ApiError::not_found("namespaces", "", ns));
    };
    if nso.deleting {
        let what = if res.group.is_empty() {
            res.plural.clone()
        } else {
            format!("{}.{}", res.plural, res.group)
        };
        let msg = format!(
            "{what} \"{name}\" is forbidden: unable to create new content in namespace {ns} because it is being terminated"
        );
        let mut e = ApiError::forbidden(
            msg,
            Target {
                name,
                group: &res.group,
                kind: &res.plural,
            },
        );
        if let Some(d) = e.details.as_mut() {
            d.insert(
                "causes".into(),
                serde_json::json!([{"reason": "NamespaceTerminating", "message": format!("namespace {ns} is being terminated"), "field": "metadata.namespace"}]),
            );
        }
        return Err(e);
    }
    Ok(())
}

/// PUT: replaces an object or its status.
pub fn update(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let res = &ctx.res;
    let decoded = decode_object(ctx.req, res, &res.kind, &res.api_version())?;
    let mut obj = decoded.object;
    let body_name = meta_str(&obj, "name");
    if !body_name.is_empty() && body_name != ctx.name() {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({body_name}) does not match the name on the URL ({})",
            ctx.name()
        )));
    }
    let body_ns = meta_str(&obj, "namespace");
    if res.namespaced && !body_ns.is_empty() && body_ns != ctx.ns() {
        return Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    let rv = match meta_str(&obj, "resourceVersion") {
        "" => None,
        text => Some(parse_body_rv(text)?),
    };
    if rv.is_none() && res.crd.is_some() {
        return Err(ApiError::invalid(
            &res.plural,
            &res.group,
            ctx.name(),
            vec![Cause::new(
                "FieldValueInvalid",
                "Invalid value: 0x0: must be specified for an update",
                "metadata.resourceVersion",
            )],
        ));
    }
    convert::to_stored(res, &mut obj);
    if res.namespaced {
        crate::objects::meta_mut(&mut obj).insert("namespace".into(), ctx.ns().into());
    }
    super::admission::check(ctx, &obj)?;
    let sub = ctx.path.subresource.clone();
    let dry_run = ctx.dry_run();
    let (name, ns) = (ctx.name().to_string(), ctx.ns().to_string());
    let manager = fields::manager_name(ctx);
    let api_version = res.api_version();
    let owner = Ownership {
        manager: fields::manager(ctx, &manager, &api_version, Operation::Update),
        shape: fields::shape(res),
        scope: fields::scope(res, sub.as_deref()),
    };
    let out = ctx.cluster.store.write(|txn| {
        let old = txn
            .get(&res.storage_key, &ns, &name)
            .ok_or_else(|| ctx.not_found())?;
        if rv.is_some_and(|rv| rv != old.rv) {
            return Err(ApiError::conflict_modified(&res.plural, &res.group, &name));
        }
        update_owned(txn, res, &old, obj, sub.as_deref(), dry_run, Some(&owner))
    })?;
    Ok(Reply::raw(200, updated_json(res, out)).with_warnings(sorted(decoded.warnings)))
}

/// The outcome of an update.
pub enum Updated {
    /// Nothing changed: the stored object is returned as is.
    Unchanged(Arc<Stored>),
    /// Stored at a new revision.
    Stored(Arc<Stored>),
    /// The last finalizer was removed: the object is gone; this was its last state.
    Deleted(Arc<Stored>),
    /// Checked but not stored.
    DryRun(Value),
}

/// Serializes an update outcome for the client.
pub fn updated_json(res: &ResourceDef, out: Updated) -> bytes::Bytes {
    match out {
        Updated::Unchanged(s) | Updated::Stored(s) | Updated::Deleted(s) => object_json(res, &s),
        Updated::DryRun(v) => bytes::Bytes::from(serde_json::to_vec(&v).unwrap_or_default()),
    }
}

/// Applies a new version of an object (main resource or `status`) inside a transaction.
pub fn apply_update(
    txn: &mut Txn<'_>,
    res: &ResourceDef,
    old: &Arc<Stored>,
    new: Value,
    sub: Option<&str>,
    dry_run: bool,
) -> Result<Updated, ApiError> {
    update_owned(txn, res, old, new, sub, dry_run, None)
}

/// Like [`apply_update`], recording the writer's changed fields in managedFields.
pub fn update_owned(
    txn: &mut Txn<'_>,
    res: &ResourceDef,
    old: &Arc<Stored>,
    new: Value,
    sub: Option<&str>,
    dry_run: bool,
    owner: Option<&Ownership<'_>>,
) -> Result<Updated, ApiError> {
    let old_value = old.value();
    // kube-apiserver records ownership of a subresource write from the request as sent,
    // before the strategy keeps only the subresource's part.
    let request = (sub.is_some() && owner.is_some()).then(|| new.clone());
    let mut new = lifecycle::prepare_update(res, &old_value, new, sub)?;
    kinds::default(res, &mut new)?;
    let causes = lifecycle::validate_meta(res, &new, false);
    if !causes.is_empty() {
        return Err(ApiError::invalid(&res.kind, &res.group, &old.name, causes));
    }
    kinds::validate(res, &new, Some(&old_value))?;
    lifecycle::bump_generation(res, &old_value, &mut new);
    if let Some(o) = owner {
        let now = crate::clock::now_time();
        match request {
            Some(mut request) => {
                update_managed_fields(
                    Some(&old_value),
                    &mut request,
                    &o.manager,
                    &o.shape,
                    o.scope,
                    &now,
                );
                let managed = request
                    .pointer("/metadata/managedFields")
                    .cloned()
                    .unwrap_or(Value::Null);
                crate::objects::meta_mut(&mut new).insert("managedFields".into(), managed);
            }
            None => update_managed_fields(
                Some(&old_value),
                &mut new,
                &o.manager,
                &o.shape,
                o.scope,
                &now,
            ),
        }
    }
    kinds::finish(res, &mut new);
    if lifecycle::unchanged(&old_value, &new)
        && old_value.pointer("/metadata/managedFields") == new.pointer("/metadata/managedFields")
    {
        return Ok(Updated::Unchanged(old.clone()));
    }
    if dry_run {
        return Ok(Updated::DryRun(new));
    }
    let finalized = is_deleting(&new) && finalizers(&new).is_empty() && res.kind != "Namespace";
    let stored = txn.put(&res.storage_key, new);
    if finalized {
        txn.delete(&res.storage_key, &stored.namespace, &stored.name);
        return Ok(Updated::Deleted(stored));
    }
    Ok(Updated::Stored(stored))
}
