//! One module per subcommand.

pub mod crds;
pub mod dev;
pub mod run;
pub mod validate;
