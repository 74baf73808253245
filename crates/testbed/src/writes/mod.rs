//! What a write does to the store, inside one transaction: create, update and delete with
//! kube-apiserver's checks. The HTTP handlers, the built-in controllers and authentication
//! all write through here, so a controller's write is validated like a client's.

mod create;
mod delete;
mod update;

pub use create::{Created, create_in_txn, create_owned};
pub use delete::{DeleteOptions, Deleted, Propagation, delete_in_txn};
pub use update::{Updated, apply_update, update_owned};

use crate::patch::apply::{Manager, Scope, Shape};

/// Everything a write needs to record field ownership.
pub struct Ownership<'a> {
    /// Who writes.
    pub manager: Manager<'a>,
    /// The object structure.
    pub shape: Shape<'a>,
    /// The part written.
    pub scope: Scope<'static>,
}
