//! PATCH: JSON patch, JSON merge patch, strategic merge patch and server-side apply.

use super::Ctx;
use super::options::parse_body_rv;
use super::render::value_for;
use super::write::{apply_update, updated_json};
use crate::objects::{convert, meta_str};
use crate::patch::{PatchError, json_patch, merge_patch};
use crate::server::reply::Reply;
use crate::status::ApiError;
use serde_json::Value;

/// The patch formats a PATCH request can carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Json,
    Merge,
}

fn format_of(ctx: &Ctx<'_>) -> Result<Format, ApiError> {
    let ct = ctx.req.header("content-type").unwrap_or_default();
    match ct.split(';').next().unwrap_or_default().trim() {
        "application/json-patch+json" => Ok(Format::Json),
        "application/merge-patch+json" => Ok(Format::Merge),
        "application/strategic-merge-patch+json" | "application/apply-patch+yaml" => {
            let accepted = if ctx.res.crd.is_some() {
                "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
            } else {
                "application/json-patch+json, application/merge-patch+json"
            };
            Err(ApiError::unsupported_media_type(accepted))
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
    let res = &ctx.res;
    let sub = ctx.path.subresource.clone();
    let dry_run = ctx.dry_run();
    let (ns, name) = (ctx.ns().to_string(), ctx.name().to_string());
    let body = ctx.req.body.clone();
    let out = ctx.cluster.store.write(|txn| {
        let old = txn
            .get(&res.storage_key, &ns, &name)
            .ok_or_else(|| ctx.not_found())?;
        let current = value_for(res, &old);
        let patched = match format {
            Format::Json => json_patch::apply_bytes(&current, &body),
            Format::Merge => merge_patch::apply_bytes(&current, &body),
        }
        .map_err(patch_error)?;
        let mut patched = check_patched(ctx, patched, old.rv)?;
        // A patch that breaks a field's type fails validation (422), not decoding.
        if let Some((field, what)) = crate::objects::kinds::type_error(res, &patched) {
            let cause = crate::status::Cause::new(
                "FieldValueInvalid",
                format!("Invalid value: {what}"),
                field,
            );
            let mut e = ApiError::invalid(&res.kind, &res.group, &name, vec![cause]);
            // This error names no object in its details, only the causes.
            if let Some(d) = e.details.as_mut() {
                d.retain(|k, _| k == "causes");
            }
            return Err(e);
        }
        convert::to_stored(res, &mut patched);
        super::admission::check(ctx, &patched)?;
        apply_update(txn, res, &old, patched, sub.as_deref(), dry_run)
    })?;
    Ok(Reply::raw(200, updated_json(res, out)))
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
