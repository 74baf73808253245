//! Label and field selectors as kube-apiserver parses and applies them to list and watch requests.
//!
//! Parsing errors carry kube-apiserver's exact wording; a handler answers them with 400 BadRequest.

mod field;
mod label;
pub mod validation;

pub use field::{FieldSchema, FieldSelector};
pub use label::LabelSelector;

/// A selector that could not be parsed or is not supported; answered as 400 BadRequest.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SelectorError {
    /// The message kube-apiserver puts into the Status body.
    pub message: String,
}

impl SelectorError {
    fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }
}
