//! The deployer library: everything a Landscaper deployer needs besides its own deploy logic.
//!
//! It owns the deployer contract with the landscaper (job IDs, phases, operation annotations,
//! finalizer and deletion, timeouts, abort, errors and retries), extension hooks and
//! continuous reconcile, responsibility by type and target selectors, access to target
//! clusters, the applier (server-side apply, ordering, policies, pruning, deletion groups),
//! readiness checks and exports; and the deployers built on it: manifest, mock and helm (which renders charts
//! with `landscaper-chart`). A deployer implements [`Deployer`] and runs with
//! [`controller::run`]. It knows nothing of how the agent registers itself.

pub mod applier;
pub mod client_config;
pub mod continuous_reconcile;
pub mod contract;
pub mod controller;
pub mod deployer;
pub mod error;
pub mod exports;
pub mod helm;
pub mod hooks;
pub mod jsonpath;
pub mod manifest_deployer;
pub mod metrics;
pub mod mock_deployer;
pub mod readiness;
pub mod responsibility;
pub mod target_access;

pub use controller::{DeployerConfig, Setup, run};
pub use deployer::{Deployer, Failure, Job, Outcome};
pub use error::Error;
