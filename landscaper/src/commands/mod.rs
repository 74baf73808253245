//! One module per subcommand.

pub mod blueprint;
pub mod component;
pub mod crds;
#[cfg(feature = "dev")]
pub mod dev;
pub mod run;
pub mod validate;

use std::path::Path;

use anyhow::Context;
use landscaper_api::config::LandscaperConfiguration;
use landscaper_api::decode::config_from_yaml;

/// The LandscaperConfiguration in `path`, or the defaults when no file is given.
pub fn read_configuration(path: Option<&Path>) -> anyhow::Result<LandscaperConfiguration> {
    let Some(path) = path else {
        return Ok(LandscaperConfiguration::default());
    };
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    Ok(config_from_yaml::<LandscaperConfiguration>(
        &text,
        &path.display().to_string(),
    )?)
}
