//! create (POST) and update (PUT) requests, on the write path of [`crate::writes`].

use super::Ctx;
use super::fields;
use super::options::parse_body_rv;
use super::render::object_json;
use crate::objects::decode::decode_object;
use crate::objects::{convert, kinds, lifecycle, meta_str};
use crate::patch::apply::{Operation, update_managed_fields};
use crate::resources::ResourceDef;
use crate::server::reply::Reply;
use crate::status::{ApiError, Cause};
use crate::writes::{Created, Ownership, Updated, create_in_txn, update_owned};

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

/// Serializes an update outcome for the client.
pub fn updated_json(res: &ResourceDef, out: Updated) -> bytes::Bytes {
    match out {
        Updated::Unchanged(s) | Updated::Stored(s) | Updated::Deleted(s) => object_json(res, &s),
        Updated::DryRun(v) => bytes::Bytes::from(serde_json::to_vec(&v).unwrap_or_default()),
    }
}
