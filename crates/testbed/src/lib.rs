//! An in-process Kubernetes API server for tests and dev mode.
//!
//! It serves real HTTPS on loopback so `kube::Client` and `kubectl` talk to it exactly as to a
//! cluster, and follows kube-apiserver's semantics for everything our controllers rely on. It
//! knows nothing of Landscaper: CRDs are registered like in any cluster.
//!
//! Start with [`Testbed::start`]; each [`Cluster`] gives a `kube::Client`, a kubeconfig,
//! fault injection and request counters.

pub mod auth;
pub mod authn;
pub mod clock;
pub mod cluster;
pub mod controllers;
pub mod counters;
pub mod faults;
pub mod field_error;
pub mod handlers;
pub mod ids;
pub mod kubeconfig;
pub mod objects;
pub mod patch;
pub mod rbac;
pub mod resources;
pub mod selector;
pub mod server;
pub mod status;
pub mod store;
mod testbed;
pub mod token;

pub use controllers::simulator::NEVER_READY;
pub use faults::{Fault, Matcher};
pub use testbed::{Builder, Cluster, Faults, StartError, Testbed};
