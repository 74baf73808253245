//! One module per subcommand.

pub mod crds;
pub mod run;
pub mod validate;
