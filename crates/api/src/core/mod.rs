//! The core kinds of `landscaper.gardener.cloud/v1alpha1`.

mod blueprint;
pub mod component_descriptor;
mod conditions;
mod context;
mod data_object;
mod deploy_item;
mod deployer_registration;
mod environment;
mod execution;
mod health;
mod installation;
mod shared;
mod target;
mod top_level;

pub use blueprint::*;
pub use conditions::*;
pub use context::*;
pub use data_object::*;
pub use deploy_item::*;
pub use deployer_registration::*;
pub use environment::*;
pub use execution::*;
pub use health::*;
pub use installation::*;
pub use shared::*;
pub use target::*;
