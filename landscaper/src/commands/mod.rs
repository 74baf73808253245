//! One module per subcommand.

pub mod blueprint;
pub mod component;
pub mod crds;
#[cfg(feature = "dev")]
pub mod dev;
pub mod run;
pub mod validate;
