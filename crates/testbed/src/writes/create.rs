//! Creating an object inside a store transaction: generated names, the namespace's
//! lifecycle, validation and uniqueness.

use super::Ownership;
use crate::objects::{kinds, lifecycle, meta_str};
use crate::patch::apply::update_managed_fields;
use crate::resources::ResourceDef;
use crate::status::{ApiError, Target};
use crate::store::{Stored, Txn};
use serde_json::Value;
use std::sync::Arc;

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

/// Refuses a create into a missing or terminating namespace, as kube-apiserver's
/// NamespaceLifecycle admission does.
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
