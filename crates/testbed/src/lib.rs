//! An in-process Kubernetes API server for tests and dev mode.
//!
//! It serves real HTTPS on loopback so `kube::Client` and `kubectl` talk to it exactly as to a
//! cluster, and follows kube-apiserver's semantics for everything our controllers rely on. It
//! knows nothing of Landscaper: CRDs are registered like in any cluster.

pub mod field_error;
pub mod patch;
pub mod rbac;
pub mod selector;
pub mod token;
