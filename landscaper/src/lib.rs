//! The landscaper's controllers and configuration.
//!
//! The landscaper reacts to Environments (registered by agents in fenced clusters) and
//! DeployerRegistrations, and runs the installation, execution and deploy-item flow. This
//! library holds the controllers; the `landscaper` binary wires them to a cluster.

pub mod controllers;
pub mod crds;
pub mod dev;
pub mod settings;
