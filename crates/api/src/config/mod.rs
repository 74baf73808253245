//! Configuration kinds of `config.landscaper.gardener.cloud/v1alpha1`.

mod agent;
mod landscaper;

pub use agent::*;
pub use landscaper::*;
