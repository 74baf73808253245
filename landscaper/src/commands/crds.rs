//! `landscaper crds`: the CRDs, generated from the API types.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use landscaper_api::crd;

/// Arguments of `landscaper crds`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Write one file per CRD into this directory (named `<group>_<plural>.yaml`, as
    /// upstream) instead of printing all of them to standard output.
    #[arg(long, value_name = "DIR")]
    output_dir: Option<PathBuf>,
}

/// Prints or writes the CRDs.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let crds = crd::all();
    match &args.output_dir {
        Some(dir) => {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            for crd in &crds {
                let path = dir.join(crd::file_name(crd));
                std::fs::write(&path, crd::to_yaml(crd))
                    .with_context(|| format!("writing {}", path.display()))?;
            }
        }
        None => {
            let mut out = std::io::stdout().lock();
            for crd in &crds {
                match write!(out, "---\n{}", crd::to_yaml(crd)) {
                    // A reader that stopped early (`| head`) is not an error of ours.
                    Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => break,
                    result => result.context("writing to standard output")?,
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
