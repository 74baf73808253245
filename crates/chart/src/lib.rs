//! Helm charts without helm.
//!
//! This crate owns everything needed to turn a Helm chart and values into manifests exactly as
//! `helm template` does: a native Go `text/template` engine with Go's value and printing rules,
//! the Sprig and Helm function libraries, YAML and JSON encoders that match Go's, chart
//! loading, values coalescing and the whole `helm template` render pipeline. It knows nothing of Kubernetes clients or of Landscaper.

pub mod chart;
pub mod data;
pub mod engine;
pub mod fetch;
pub mod funcs;
pub mod gofloat;
pub mod json;
pub mod objects;
pub mod parallel;
pub mod render;
pub mod semver;
pub mod strvals;
pub mod toml;
pub mod value;
pub mod values;
pub mod yaml;
