//! The deployer library: everything a Landscaper deployer needs besides its own deploy logic.
//!
//! It owns the deployer contract with the landscaper (job IDs, phases, operation annotations,
//! finalizer and deletion, timeouts, abort, errors and retries), extension hooks and
//! continuous reconcile, responsibility by type and target selectors, access to target
//! clusters, the applier (server-side apply, ordering, policies, pruning, deletion groups),
//! readiness checks and exports; and the two small deployers built on it, manifest and mock
//! ([`deployers`]). A deployer implements [`Deployer`] and runs with [`controller::run`]; the
//! helm deployer is its own crate (`landscaper-helm-deployer`). It knows nothing of how the
//! agent registers itself.

pub mod applier;
pub mod client_config;
pub mod continuous_reconcile;
pub mod contract;
pub mod controller;
pub mod deployer;
pub mod deployers;
mod discovery;
pub mod error;
pub mod exports;
pub mod hooks;
pub mod jsonpath;
pub mod metrics;
pub mod readiness;
pub mod responsibility;
pub mod rollout;
pub mod target_access;

pub use controller::{DeployerConfig, Setup, run};
pub use deployer::{Deployer, Failure, Job, Outcome};
pub use error::Error;
