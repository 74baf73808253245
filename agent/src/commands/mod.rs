//! One module per subcommand.

pub mod template;
