//! Updating an object (or its status) inside a store transaction: defaulting, validation,
//! generation, field ownership, and the delete that removing the last finalizer finishes.

use super::Ownership;
use crate::objects::{finalizers, is_deleting, kinds, lifecycle};
use crate::patch::apply::update_managed_fields;
use crate::resources::ResourceDef;
use crate::status::ApiError;
use crate::store::{Stored, Txn};
use serde_json::Value;
use std::sync::Arc;

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
