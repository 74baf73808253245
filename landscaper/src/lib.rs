//! The landscaper's controllers and configuration.
//!
//! The landscaper reconciles Environments (registered by agents in fenced clusters) into
//! Targets and watches their agents' heartbeats. DeployerRegistrations and the installation and
//! execution flow have no controller yet. This library holds the controllers; the `landscaper`
//! binary wires them to a cluster.

pub mod controllers;
pub mod crds;
#[cfg(feature = "dev")]
pub mod dev;
pub mod settings;
