//! One module per subcommand.

pub mod blueprint;
pub mod component;
pub mod crds;
#[cfg(feature = "dev")]
pub mod dev;
pub mod validate;

/// The LandscaperConfiguration of a `--config` file (the library's, which `run` reads too).
#[cfg(feature = "dev")]
pub use landscaper::cli::read_configuration;
