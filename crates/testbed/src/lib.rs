//! An in-process Kubernetes API server for tests and dev mode.
//!
//! It serves real HTTPS on loopback so `kube::Client` and `kubectl` talk to it exactly as to a
//! cluster, and follows kube-apiserver's semantics for everything our controllers rely on. It
//! knows nothing of Landscaper: CRDs are registered like in any cluster.
//!
//! Start with [`Testbed::start`]; each [`Cluster`] gives a `kube::Client`, a kubeconfig,
//! fault injection, request counters and the request log:
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use testbed::{Fault, Matcher, Testbed};
//!
//! let bed = Testbed::builder().named(&["landscaper", "fenced"]).simulate_workloads(true).start().await?;
//! let cluster = bed.cluster_named("fenced").expect("started above");
//! let client = cluster.client(); // admin, member of system:masters
//! let alice = cluster.client_as(&cluster.add_user("alice", &[])); // RBAC applies
//! cluster.faults().fail_next(1, Matcher::any().verb("update"), Fault::Conflict);
//! assert_eq!(cluster.counters().writes(Some("alice")), 0);
//! # let _ = (client, alice);
//! # Ok(())
//! # }
//! ```
//!
//! Layout, from the bottom up: `store/` keeps objects and the change history; `objects/`
//! holds what a write does to an object (metadata, kinds, schemas, decoding); `writes/` is
//! the one write path (create, update, delete in a store transaction) that handlers, built-in
//! controllers and authentication share; `resources/` the served kinds; `cluster` one
//! cluster's state; `authn`/`rbac`/`token` who may do what; `handlers/` implements the verbs;
//! `pipeline` serves a request (authenticate, count, inject faults, authorize, dispatch, log)
//! and `server/` speaks HTTPS for it; `controllers/` does what controllers do in a real
//! cluster (CRDs, garbage collection, namespaces, tokens, the workload simulator and its
//! kubelet mode), with `workloads` their state and `kubelet` the extension point that runs
//! containers in-process; `patch`/`selector` are the pure algorithms of patches and
//! selectors. No module imports one above it (`crates/testbed/tests/layers.rs` checks it).
//! Beside the API server, `fixtures/` serves Helm charts and OCI artifacts on loopback, and
//! `gardener` is an opt-in test double of Gardener's Shoot API (not part of kube-apiserver).

mod authn;
mod clock;
mod cluster;
mod controllers;
mod counters;
mod faults;
mod field_error;
pub mod fixtures;
mod gardener;
mod handlers;
pub mod ids;
mod kubeconfig;
pub mod kubelet;
mod objects;
mod patch;
mod pipeline;
mod rbac;
mod request_log;
mod resources;
mod selector;
mod server;
mod status;
pub mod store;
mod testbed;
mod token;
mod users;
mod workloads;
mod writes;

pub use controllers::simulator::NEVER_READY;
pub use counters::Counters;
pub use faults::{Fault, Matcher};
pub use kubelet::{Container, ContainerRun, ContainerRunner, RestartBackoff};
pub use request_log::RequestRecord;
pub use testbed::{Builder, Cluster, Faults, StartError, Testbed};
