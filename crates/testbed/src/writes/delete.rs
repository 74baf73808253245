//! Deleting an object inside a store transaction: preconditions, finalizers, propagation
//! policies and the namespace's own finalization.

use crate::clock;
use crate::objects::{finalizers, is_deleting, meta_mut};
use crate::resources::ResourceDef;
use crate::status::{ApiError, Target};
use crate::store::{Stored, Txn};
use serde_json::json;
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

/// What a delete did.
pub enum Deleted {
    /// Removed at once: answered with a success Status.
    Gone(Arc<Stored>),
    /// Marked for deletion (finalizers pending): answered with the object.
    Marked(Arc<Stored>),
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
