//! Provider configurations and statuses of the deployers (`*.deployer.landscaper.gardener.cloud`).

mod helm;
mod managed_resource;
mod manifest;
mod mock;

pub use helm::*;
pub use managed_resource::*;
pub use manifest::*;
pub use mock::*;
