//! TOML for Helm's `toToml` (the BurntSushi/toml encoder's layout) and `fromToml` (TOML 1.0
//! read into template data as BurntSushi/toml decodes into `map[string]interface{}`).

mod decode;
mod encode;

use std::fmt;

pub use decode::{TomlError, from_toml};
pub use encode::to_toml;

/// `toToml` could not be called at all (Helm fails the template, it prints nothing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TomlCallError(pub String);

impl fmt::Display for TomlCallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TomlCallError {}

#[cfg(test)]
mod tests;
