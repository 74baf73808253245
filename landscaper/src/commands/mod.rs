//! One module per subcommand.

pub mod blueprint;
pub mod crds;
pub mod dev;
pub mod run;
pub mod validate;
