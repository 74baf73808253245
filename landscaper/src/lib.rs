//! The landscaper's controllers and configuration.
//!
//! The landscaper reconciles Environments (registered by agents in fenced clusters) into
//! Targets and watches their agents' heartbeats, and turns every DeployerRegistration ×
//! Environment pair into the objects and the Installation that install the deployer there.
//! This library holds the controllers, their health and metrics, leader election and the
//! embedded agent of the landscaper's own cluster; the `landscaper` binary wires them to a
//! cluster.

pub mod cli;
pub mod controllers;
pub mod crds;
pub mod dataflow;
#[cfg(feature = "dev")]
pub mod dev;
pub mod health;
#[cfg(feature = "dev")]
pub mod kubelet;
pub mod leader;
pub mod metrics;
pub mod own_environment;
pub mod refusal;
pub mod settings;
