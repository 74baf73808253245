//! Blueprints: what an Installation instantiates.
//!
//! This crate loads a blueprint from its filesystem (`blueprint.yaml` and the files its
//! executions read), reads component descriptors in both schema versions Landscaper knows,
//! and runs the blueprint's executions — `deployExecutions`, `subinstallationExecutions`,
//! `exportExecutions` and `importExecutions` — on the chart crate's Go-template engine with
//! Sprig and the Landscaper functions, or on the Spiff engine, decoding what they render the way upstream does and
//! keeping their state between runs. The installation and execution controllers call it; it
//! knows nothing of Kubernetes clients: the kubeconfig functions reach clusters through a
//! [`TargetResolver`] the caller supplies.

mod archive;
mod blocking;
pub mod component;
pub mod ctf;
pub mod executions;
pub mod filesystem;
mod gotemplate;
pub mod imports;
pub mod kubeconfig;
pub mod load;
pub mod oci_ref;
pub mod output;
pub mod registry;
pub mod report;
pub mod resource_ref;
pub mod source;
mod spiff;
pub mod state;
pub mod targets;
pub mod values;

pub use component::{Descriptor, LocalRepository, SchemaVersion};
pub use executions::{ExecutionOptions, ImportResult, Templater};
pub use filesystem::Filesystem;
pub use kubeconfig::{InlineOnly, TargetResolver};
pub use output::{DeployItemSpecification, TemplateTarget};
pub use registry::{RegistryAccess, RegistryOptions, Repository, RepositorySource};
pub use resource_ref::{ComponentSource, GlobalResourceIdentity, ResourceReference};
pub use state::{MemoryState, StateHandler};

/// The kinds of executions a blueprint has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExecutionKind {
    /// `deployExecutions`: deploy items.
    Deploy,
    /// `exportExecutions`: the installation's exports.
    Export,
    /// `subinstallationExecutions`: installation templates.
    Subinstallation,
    /// `importExecutions`: further imports and import validation.
    Import,
}

impl ExecutionKind {
    /// How upstream's messages name an execution of this kind.
    pub fn execution_name(self) -> &'static str {
        match self {
            Self::Deploy => "deploy execution",
            Self::Export => "export execution",
            Self::Subinstallation => "subinstallation execution",
            Self::Import => "import execution",
        }
    }

    /// The key an execution of this kind keeps its state under; import executions have none.
    pub fn state_key(self, name: &str) -> Option<String> {
        match self {
            Self::Deploy | Self::Subinstallation => Some(format!("deploy{name}")),
            Self::Export => Some(format!("export{name}")),
            Self::Import => None,
        }
    }
}

/// Why a blueprint could not be loaded or run.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The blueprint filesystem is malformed or lacks a file.
    #[error("blueprint filesystem: {0}")]
    Filesystem(String),
    /// `blueprint.yaml` does not decode.
    #[error("{0}")]
    Blueprint(String),
    /// A component descriptor could not be read or a lookup in it failed.
    #[error("component: {0}")]
    Component(String),
    /// An execution failed.
    #[error("{} {name:?}: {message}", .kind.execution_name())]
    Execution {
        /// The kind of execution.
        kind: ExecutionKind,
        /// The execution's name.
        name: String,
        /// What went wrong (for template errors: upstream's report).
        message: String,
    },
    /// Stored state could not be read or written.
    #[error("{0}")]
    State(String),
}
