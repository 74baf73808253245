//! The Landscaper agent for fenced environments.
//!
//! Installed into a cluster the landscaper cannot reach, the agent registers that cluster as
//! an Environment in the landscaper cluster: it creates a deployer identity with RBAC and a
//! short-lived-token kubeconfig Secret in its own (host) cluster, keeps that token fresh, and
//! creates the Environment whose host Target points at the Secret by reference, so fenced
//! credentials never leave the host cluster. It renews a heartbeat, and removes everything
//! again on `cleanup`. It knows nothing of the landscaper's controllers. Its command line
//! ([`cli`]) runs in-process as well as in the binary; with the `kubelet` feature, the module `kubelet`
//! runs the agent's image in the testbed's in-process clusters.

pub mod cleanup;
pub mod cli;
pub mod clients;
pub mod commands;
pub mod health;
pub mod heartbeat;
pub mod helm_deployer;
pub mod host;
pub mod names;
pub mod registration;
pub mod settings;
pub mod token;

#[cfg(feature = "kubelet")]
pub mod kubelet;

mod agent;

pub use agent::{Agent, AgentError};
