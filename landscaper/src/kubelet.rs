//! The landscaper's image in the testbed's kubelet mode: a container of the `landscaper` image
//! (the landscaper chart's `image.repository`) runs its arguments through [`crate::cli::run`],
//! the binary's code path, in-process. Only with the `dev` feature: the image never links the
//! testbed.

use landscaper_agent::kubelet::{command_line, host};
use testbed::{Container, ContainerRun, ContainerRunner};

use crate::cli;

/// The image name the landscaper chart runs, which the runner is registered for.
pub const IMAGE: &str = "landscaper";

/// Runs containers of the landscaper's image (`landscaper run …`) in-process.
#[derive(Debug, Default, Clone, Copy)]
pub struct LandscaperImage;

impl ContainerRunner for LandscaperImage {
    fn run(&self, container: Container) -> ContainerRun {
        let args = command_line(&container, IMAGE);
        let host = host(&container);
        let stop = container.stop.clone();
        Box::pin(async move {
            cli::run(args, host, stop.cancelled_owned())
                .await
                .map_err(|e| format!("{e:#}"))
        })
    }
}
