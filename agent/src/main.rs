//! `landscaper-agent`: the Landscaper agent for fenced environments. This file only parses
//! the command line and hands over to the library's `cli`, which in-process runs share.

use std::process::ExitCode;

use clap::Parser;
use landscaper_agent::cli::{self, Cli, Command, Host};
use landscaper_agent::commands;

/// jemalloc, with transparent huge pages for its heap (settings in `.cargo/config.toml`): a
/// `template` run of a large chart allocates tens of megabytes within milliseconds, and
/// faulting them in one 4 KiB page at a time was a large part of its time
/// (docs/performance.md).
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// Moves jemalloc's heap growth past the mapping sizes that are not whole huge pages, for a
/// short-lived process that allocates fast (`template`).
///
/// jemalloc maps its heap in growing runs: 2 MiB, then 2.5, 3, 3.5, 4, 5, 6 and 7 MiB, then
/// 8 MiB and up in steps that are all multiples of 2 MiB. Linux (6.7 and later) places an
/// anonymous mapping on a huge-page boundary only when its length is such a multiple, so the
/// runs of 2.5, 3, 3.5, 5 and 7 MiB were mostly 4 KiB pages, faulted in one at a time, most
/// of them in `read` filling chart files into fresh buffers. Allocating 7 MiB and freeing it
/// at once makes jemalloc map that run (whose pages stay untouched until reused) and every
/// later one at 8 MiB or more, so a `template` run takes far fewer page faults
/// (docs/performance.md). A request of 8 MiB or more would change nothing: jemalloc serves
/// it from a separate arena for oversized allocations.
fn grow_heap_in_huge_pages() {
    const LAST_UNEVEN_RUN: usize = 7 << 20;
    drop(std::hint::black_box(Vec::<u8>::with_capacity(
        LAST_UNEVEN_RUN,
    )));
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        // Rendering needs no runtime, and prints its errors exactly as helm does.
        Command::Template(args) => {
            grow_heap_in_huge_pages();
            return commands::template::run(*args);
        }
        command => runtime().block_on(async {
            cli::execute(
                command,
                Host::process(),
                landscaper_process::shutdown::signal(),
            )
            .await
        }),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!("{error:#}");
            eprintln!("Error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// The runtime of the long-running subcommands, with logging set up.
fn runtime() -> tokio::runtime::Runtime {
    landscaper_process::logging::init();
    match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("Error: starting the async runtime: {error}");
            std::process::exit(1);
        }
    }
}
