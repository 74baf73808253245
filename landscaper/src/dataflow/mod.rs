//! An installation's data flow: where it sits (its [`scope()`]), the imports it reads from
//! DataObjects, Secrets, ConfigMaps and Targets, and the exports it writes back.
//!
//! The installation controller calls this library; it reads and writes objects through a
//! `kube::Client` and runs templates through the blueprint crate. It keeps no state of its own:
//! everything it needs is on the objects, so any controller process may call it at any time.

pub mod exports;
pub mod imports;
pub mod mappings;
pub mod names;
pub mod scope;
mod write;

pub use exports::{Exports, construct_exports, write_exports};
pub use imports::{Imports, import_executions, read_imports, write_imports};
pub use scope::{Scope, scope, scope_of};

use landscaper_deployer::error::describe_kube_error;

/// Why an installation's imports or exports could not be read, checked or written.
#[derive(Debug, thiserror::Error)]
pub enum DataflowError {
    /// An import's source object (or a key in it) does not exist.
    #[error("{0}")]
    ImportNotFound(String),
    /// An import exists but is not what the blueprint asks for.
    #[error("{0}")]
    InvalidImport(String),
    /// A data mapping (`importDataMappings`, `exportDataMappings`) failed.
    #[error("{0}")]
    Mapping(String),
    /// The exports could not be constructed or are not what the blueprint declares.
    #[error("{0}")]
    InvalidExport(String),
    /// A blueprint execution failed.
    #[error("{context}: {source}")]
    Template {
        /// The installation whose execution failed.
        context: String,
        /// The blueprint crate's error.
        source: landscaper_blueprint::Error,
    },
    /// The API server refused or failed a request.
    #[error("{context}: {}", describe_kube_error(.source))]
    Api {
        /// What was being read or written.
        context: String,
        /// The client's error.
        source: kube::Error,
    },
}

impl DataflowError {
    /// Whether the error says that an import's source object does not exist (yet).
    pub fn is_import_not_found(&self) -> bool {
        matches!(self, Self::ImportNotFound(_))
    }
}

/// `ns/name` of an object, for messages.
pub(crate) fn key_of(meta: &kube::api::ObjectMeta) -> String {
    format!(
        "{}/{}",
        meta.namespace.as_deref().unwrap_or_default(),
        meta.name.as_deref().unwrap_or_default()
    )
}
