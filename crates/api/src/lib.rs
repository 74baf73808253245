//! Landscaper API types, wire-compatible with upstream Landscaper.
//!
//! This crate owns the serde types of the `landscaper.gardener.cloud` group, the deployer
//! provider configurations, the configuration kinds, the well-known names, decoding with
//! errors that name the field, and CRD generation. It does no I/O and knows nothing of
//! controllers or clients.
//!
//! Decoding follows upstream's Go decoder: unknown fields are tolerated (and reported by
//! [`decode`]), optional fields keep their presence, and free-form fields (`config`, import
//! data, values) stay JSON values that round-trip untouched. Status enums keep unknown values
//! (see `open_enum`), spec enums that drive behaviour reject them.

pub mod config;
pub mod constants;
pub mod core;
pub mod crd;
pub mod decode;
pub mod deployer;
mod duration;
mod manifest_kind;
pub mod meta;
mod open_enum;
mod schema;
pub mod yaml;

pub use duration::{
    Duration, DurationError, format_go as format_go_duration, parse_go as parse_go_duration,
};
pub use manifest_kind::KnownDocument;
