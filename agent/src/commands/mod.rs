//! One module per subcommand.

pub mod cleanup;
pub mod deployer;
pub mod run;
pub mod template;
