//! One module per subcommand.

pub mod cleanup;
pub mod run;
pub mod template;
