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
//! Layout: `server/` speaks HTTPS and parses paths, `handlers/` implements the verbs,
//! `objects/` holds what a write does to an object (metadata, kinds, schemas, decoding),
//! `store/` keeps objects and the change history, `resources/` the served kinds,
//! `controllers/` what controllers do in a real cluster (CRDs, garbage collection,
//! namespaces, tokens, the workload simulator and its kubelet mode), `kubelet` the extension
//! point that runs containers in-process, `authn`/`rbac`/`token` who may do what, and
//! `patch`/`selector` the pure algorithms of patches and selectors. Beside the API server,
//! `chart_repository` and `registry` serve Helm charts on loopback for fetch tests. `gardener`
//! is an opt-in test double of Gardener's Shoot API (not part of kube-apiserver).

pub mod auth;
pub mod authn;
pub mod chart_repository;
pub mod clock;
pub mod cluster;
pub mod controllers;
pub mod counters;
pub mod faults;
pub mod field_error;
pub mod gardener;
pub mod handlers;
pub mod ids;
pub mod kubeconfig;
pub mod kubelet;
pub mod objects;
pub mod patch;
pub mod rbac;
pub mod registry;
pub mod request_log;
pub mod resources;
pub mod selector;
pub mod server;
pub mod status;
pub mod store;
mod testbed;
pub mod token;

pub use controllers::simulator::NEVER_READY;
pub use faults::{Fault, Matcher};
pub use kubelet::{Container, ContainerRun, ContainerRunner, RestartBackoff};
pub use request_log::RequestRecord;
pub use testbed::{Builder, Cluster, Faults, StartError, Testbed};
