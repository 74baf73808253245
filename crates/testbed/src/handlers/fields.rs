//! Field ownership of writes: who the field manager is and which part of an object a
//! request owns, for `metadata.managedFields`.

use super::Ctx;
use crate::patch::apply::{
    Manager, Operation, Scope, Shape, default_field_manager, update_managed_fields,
};
use crate::patch::strategic::schema_for;
use crate::resources::ResourceDef;
use serde_json::Value;

/// The field manager of a request: `fieldManager`, else the User-Agent's product name.
pub fn manager_name(ctx: &Ctx<'_>) -> String {
    match ctx.req.param("fieldManager") {
        Some(m) if !m.is_empty() => m.to_string(),
        _ => default_field_manager(ctx.req.header("user-agent").unwrap_or_default()),
    }
}

/// The writer of a request as managedFields records it.
pub fn manager<'a>(
    ctx: &Ctx<'_>,
    name: &'a str,
    api_version: &'a str,
    operation: Operation,
) -> Manager<'a> {
    let subresource = match ctx.path.subresource.as_deref() {
        Some("status") => "status",
        _ => "",
    };
    Manager {
        name,
        operation,
        api_version,
        subresource,
    }
}

/// The structure of a resource's objects for field ownership.
pub fn shape(res: &ResourceDef) -> Shape<'_> {
    if let Some(schema) = res.crd.as_ref().and_then(|c| c.schema(&res.version)) {
        return Shape::custom_resource(schema);
    }
    match schema_for(&res.group, &res.kind) {
        Some(ty) => Shape::builtin(ty),
        None => Shape::deduced(),
    }
}

/// The part of an object a write to `sub` owns.
pub fn scope(res: &ResourceDef, sub: Option<&str>) -> Scope<'static> {
    match (res.has_status(), sub) {
        (_, Some("status")) if res.crd.is_some() => Scope::CUSTOM_RESOURCE_STATUS,
        (_, Some("status")) => Scope::BUILTIN_STATUS,
        (true, _) => Scope::MAIN_WITH_STATUS,
        (false, _) => Scope::Whole,
    }
}

/// Records the fields of a virtual object that a create of `subresource` (or "" for the
/// resource itself) sets, as kube-apiserver does for every create it answers, stored or
/// not: TokenRequest and the review kinds echo `managedFields` owning what the client sent
/// (after the typed defaults), though nothing is kept.
pub fn record_virtual_create(ctx: &Ctx<'_>, obj: &mut Value, subresource: &str) {
    let name = manager_name(ctx);
    let api_version = obj
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let manager = Manager {
        name: &name,
        operation: Operation::Update,
        api_version: &api_version,
        subresource,
    };
    update_managed_fields(
        None,
        obj,
        &manager,
        &Shape::builtin_untyped(),
        Scope::Whole,
        &crate::clock::now_time(),
    );
}
