//! PATCH: JSON patch, JSON merge patch, strategic merge patch and server-side apply, with
//! field ownership recorded in managedFields.

use super::Ctx;
use super::fields;
use super::options::parse_body_rv;
use super::render::{object_json, value_for};
use super::write::updated_json;
use crate::clock;
use crate::objects::decode::parse_body;
use crate::objects::{convert, kinds, lifecycle, meta_str};
use crate::patch::apply::{self, Operation, patch_options_error};
use crate::patch::{PatchError, json_patch, merge_patch, strategic};
use crate::server::reply::Reply;
use crate::status::{ApiError, Cause};
use crate::store::Txn;
use crate::writes::{Created, Ownership, create_owned, update_owned};
use serde_json::Value;

/// The patch formats a PATCH request can carry.
#[derive(Debug, Clone, Copy)]
enum Format {
    /// Server-side apply.
    Apply,
    /// A patch merged into the live object.
    Merge(Merging),
}

/// The merging patch formats.
#[derive(Debug, Clone, Copy)]
enum Merging {
    Json,
    MergePatch,
    Strategic(strategic::Ty),
}

fn format_of(ctx: &Ctx<'_>) -> Result<Format, ApiError> {
    let ct = ctx.req.header("content-type").unwrap_or_default();
    match ct.split(';').next().unwrap_or_default().trim() {
        "application/json-patch+json" => Ok(Format::Merge(Merging::Json)),
        "application/merge-patch+json" => Ok(Format::Merge(Merging::MergePatch)),
        "application/apply-patch+yaml"
        | "application/apply-patch+json"
        | "application/apply-patch+cbor" => Ok(Format::Apply),
        "application/strategic-merge-patch+json" => {
            match strategic::schema_for(&ctx.res.group, &ctx.res.kind) {
                Some(ty) if ctx.res.crd.is_none() => Ok(Format::Merge(Merging::Strategic(ty))),
                _ => Err(ApiError::from_status(
                    &strategic::unsupported_media_type_status(),
                )),
            }
        }
        _ => {
            let mut e = ApiError::new(415, "UnsupportedMediaType", "415: Unsupported Media Type");
            e.details = Some(Box::default());
            Err(e)
        }
    }
}

fn patch_error(e: PatchError) -> ApiError {
    let mut err = ApiError::new(e.code(), e.reason().unwrap_or_default(), e.message());
    err.details = matches!(e, PatchError::Invalid(_)).then(Box::default);
    err
}

/// PATCH of an object or its status.
pub fn patch(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let format = format_of(ctx)?;
    let force = matches!(ctx.req.param("force"), Some("true" | "1"));
    let is_apply = matches!(format, Format::Apply);
    let manager_name = if is_apply {
        ctx.req
            .param("fieldManager")
            .unwrap_or_default()
            .to_string()
    } else {
        fields::manager_name(ctx)
    };
    if let Some(status) = patch_options_error(is_apply, &manager_name, force) {
        return Err(ApiError::from_status(&status));
    }
    let res = &ctx.res;
    let sub = ctx.path.subresource.clone();
    let dry_run = ctx.dry_run();
    let api_version = res.api_version();
    let operation = if is_apply {
        Operation::Apply
    } else {
        Operation::Update
    };
    let owner = Ownership {
        manager: fields::manager(ctx, &manager_name, &api_version, operation),
        shape: fields::shape(res),
        scope: fields::scope(res, sub.as_deref()),
    };
    let merge = match format {
        Format::Apply => return server_side_apply(ctx, &owner, force),
        Format::Merge(m) => m,
    };
    let (ns, name) = (ctx.ns().to_string(), ctx.name().to_string());
    let body = ctx.req.body.clone();
    let out = ctx.cluster.store.write(|txn| {
        let old = txn
            .get(&res.storage_key, &ns, &name)
            .ok_or_else(|| ctx.not_found())?;
        let current = value_for(res, &old);
        let patched = match merge {
            Merging::Json => json_patch::apply_bytes(&current, &body),
            Merging::MergePatch => merge_patch::apply_bytes(&current, &body),
            Merging::Strategic(ty) => strategic::apply_bytes(&current, &body, ty),
        }
        .map_err(patch_error)?;
        let mut patched = check_patched(ctx, patched, old.rv)?;
        check_types(ctx, &patched)?;
        convert::to_stored(res, &mut patched);
        super::admission::check(ctx, &patched)?;
        update_owned(
            txn,
            res,
            &old,
            patched,
            sub.as_deref(),
            dry_run,
            Some(&owner),
        )
    })?;
    Ok(Reply::raw(200, updated_json(res, out)))
}

/// A patch that breaks a field's type fails validation (422), not decoding.
fn check_types(ctx: &Ctx<'_>, patched: &Value) -> Result<(), ApiError> {
    let Some((field, what)) = kinds::type_error(&ctx.res, patched) else {
        return Ok(());
    };
    let cause = Cause::new("FieldValueInvalid", format!("Invalid value: {what}"), field);
    let mut e = ApiError::invalid(&ctx.res.kind, &ctx.res.group, ctx.name(), vec![cause]);
    // This error names no object in its details, only the causes.
    if let Some(d) = e.details.as_mut() {
        d.retain(|k, _| k == "causes");
    }
    Err(e)
}

/// Checks identity and the resourceVersion precondition a patch may carry.
fn check_patched(ctx: &Ctx<'_>, patched: Value, current_rv: u64) -> Result<Value, ApiError> {
    let name = meta_str(&patched, "name");
    if name != ctx.name() {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({name}) does not match the name on the URL ({})",
            ctx.name()
        )));
    }
    match meta_str(&patched, "resourceVersion") {
        "" => {}
        text => {
            if parse_body_rv(text)? != current_rv {
                return Err(ApiError::conflict_modified(
                    &ctx.res.plural,
                    &ctx.res.group,
                    ctx.name(),
                ));
            }
        }
    }
    Ok(patched)
}

/// Reads the applied configuration and checks its type and identity.
fn applied_config(ctx: &Ctx<'_>) -> Result<Value, ApiError> {
    let res = &ctx.res;
    let config = parse_body(ctx.req)
        .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))?;
    if !config.is_object() {
        return Err(ApiError::bad_request(
            "the applied configuration must be an object",
        ));
    }
    let kind = config
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let api_version = config
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if kind.is_empty() || api_version.is_empty() {
        return Err(ApiError::bad_request(
            "Object 'Kind' is missing in the applied configuration",
        ));
    }
    if kind != res.kind || api_version != res.api_version() {
        return Err(ApiError::bad_request(format!(
            "{kind} in version \"{api_version}\" cannot be handled as a {}: the applied object's kind and version must match the URL",
            res.kind
        )));
    }
    let name = meta_str(&config, "name");
    if name != ctx.name() {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({name}) does not match the name on the URL ({})",
            ctx.name()
        )));
    }
    Ok(config)
}

/// Server-side apply: merges the configuration into the live object (creating it when
/// missing), honouring field ownership.
fn server_side_apply(ctx: &Ctx<'_>, owner: &Ownership<'_>, force: bool) -> Result<Reply, ApiError> {
    let config = applied_config(ctx)?;
    let res = &ctx.res;
    let (ns, name) = (ctx.ns().to_string(), ctx.name().to_string());
    let dry_run = ctx.dry_run();
    let sub = ctx.path.subresource.clone();
    ctx.cluster.store.write(|txn: &mut Txn<'_>| {
        let live = txn.get(&res.storage_key, &ns, &name);
        let live_value = live.as_ref().map(|l| value_for(res, l));
        let applied = apply::apply(
            live_value.as_ref(),
            &config,
            &owner.manager,
            force,
            &owner.shape,
            owner.scope,
            &clock::now_time(),
        )
        .map_err(|e| ApiError::from_status(&e.status()))?;
        let Some(live) = live else {
            if sub.is_some() {
                return Err(ctx.not_found());
            }
            let mut obj =
                lifecycle::prepare_create(res, ctx.path.namespace.as_deref(), applied.object)?;
            convert::to_stored(res, &mut obj);
            kinds::default(res, &mut obj)?;
            super::admission::check(ctx, &obj)?;
            let body = match create_owned(txn, res, obj, dry_run, None)? {
                Created::Stored(s) => object_json(res, &s),
                Created::DryRun(v) => {
                    bytes::Bytes::from(serde_json::to_vec(&v).unwrap_or_default())
                }
            };
            return Ok(Reply::raw(201, body));
        };
        let mut obj = applied.object;
        check_types(ctx, &obj)?;
        convert::to_stored(res, &mut obj);
        super::admission::check(ctx, &obj)?;
        let out = update_owned(txn, res, &live, obj, sub.as_deref(), dry_run, None)?;
        Ok(Reply::raw(200, updated_json(res, out)))
    })
}
