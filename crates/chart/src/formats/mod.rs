//! The format layer: the plain data tree that decoding produces, and the YAML, JSON, TOML and
//! `--set` (strvals) readers and writers that match Go's, with Go's float formatting. It knows
//! nothing of templates or charts.

pub mod gofloat;
pub mod json;
pub mod strconv;
pub mod strvals;
pub mod toml;
pub mod tree;
pub mod yaml;
