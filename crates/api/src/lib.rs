//! Landscaper API types, wire-compatible with upstream Landscaper.
//!
//! This crate owns the serde types of the `landscaper.gardener.cloud` group, the deployer
//! provider configurations, the configuration kinds, and CRD generation. It does no I/O and
//! knows nothing of controllers or clients.
