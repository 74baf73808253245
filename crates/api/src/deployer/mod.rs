//! Provider configurations and statuses of the deployers (`*.deployer.landscaper.gardener.cloud`).

mod configuration;
mod helm;
mod managed_resource;
mod manifest;
mod mock;

pub use configuration::*;
pub use helm::*;
pub use managed_resource::*;
pub use manifest::*;
pub use mock::*;
