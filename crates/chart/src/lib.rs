//! Helm charts without helm.
//!
//! This crate turns a Helm chart and values into manifests exactly as `helm template` does.
//! It knows nothing of Kubernetes clients or of Landscaper. Its layers, each using only those
//! below it (`tests/layers.rs` checks the edges):
//!
//! * [`fetch`] (feature `fetch`, on by default): charts from chart repositories and OCI
//!   registries; the only part with a network client and an async runtime.
//! * [`helm`]: Helm's and Sprig's template functions, chart loading, values coalescing and
//!   the `helm template` render pipeline.
//! * [`engine`]: a native Go `text/template` engine with Go's values and printing rules; it
//!   runs the functions its caller gives it.
//! * [`formats`]: the plain data tree and the YAML, JSON, TOML and strvals codecs that match
//!   Go's.
//! * [`parallel`]: ordered work on helper threads, used by every layer above the formats.

pub mod engine;
#[cfg(feature = "fetch")]
pub mod fetch;
pub mod formats;
pub mod helm;
pub mod parallel;
