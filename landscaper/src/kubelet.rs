//! The landscaper's image in the testbed's kubelet mode: a container of the `landscaper` image
//! (the landscaper chart's `image.repository`) runs its arguments through [`crate::cli::run`],
//! the binary's code path, in-process. Only with the `dev` feature: the image never links the
//! testbed.

use landscaper_agent::kubelet::run_in_process;
use testbed::{Container, ContainerRun, ContainerRunner};

use crate::cli;

/// The image name the landscaper chart runs, which the runner is registered for.
pub const IMAGE: &str = "landscaper";

/// Runs containers of the landscaper's image (`landscaper run …`) in-process.
#[derive(Debug, Default, Clone, Copy)]
pub struct LandscaperImage;

impl ContainerRunner for LandscaperImage {
    fn run(&self, container: Container) -> ContainerRun {
        run_in_process(&container, IMAGE, |args, host, stop| {
            cli::run(args, host, stop.cancelled_owned())
        })
    }
}
