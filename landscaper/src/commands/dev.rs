//! `landscaper dev`: the whole system in one process, for trying it out; with `--until-ready`,
//! a check for scripts and CI.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use landscaper::dev::board::{Board, Verdict};
use landscaper::dev::{DevMode, Options};
use landscaper::settings::Settings;
use tokio::time::Instant;

/// How often the state of deployers and examples is read while dev mode runs. Dev mode's
/// clusters are in-process and small, so a read per second costs nothing measurable.
const REFRESH: Duration = Duration::from_secs(1);

/// The log file in the kubeconfig folder while the terminal shows the table.
const LOG_FILE: &str = "landscaper.log";

/// Arguments of `landscaper dev`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Where to write the clusters' kubeconfigs (`landscaper.kubeconfig` and one per
    /// environment, for kubectl) and, while a terminal shows the table, the log.
    #[arg(long, default_value = ".dev", value_name = "DIR")]
    dir: PathBuf,
    /// Manifests to apply to the landscaper cluster: a folder (its
    /// `deployer-registrations/` first, then its YAML files) or one file.
    #[arg(long, default_value = "examples", value_name = "PATH")]
    examples: PathBuf,
    /// Do not apply any example manifests.
    #[arg(long)]
    no_examples: bool,
    /// The environments: each gets a fenced cluster and an agent of that name.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "default,edge",
        value_name = "NAME,..."
    )]
    environments: Vec<String>,
    /// The agents' heartbeat period (Go duration).
    #[arg(long, default_value = "10s")]
    heartbeat_period: String,
    /// LandscaperConfiguration file for the landscaper's controllers (workers, deploy item
    /// timeouts, ...), as for `landscaper run`; the defaults when not given.
    #[arg(long, env = "LANDSCAPER_CONFIG", value_name = "FILE")]
    config: Option<PathBuf>,
    /// Exit once every deployer and example is Succeeded (0), or when one fails or the
    /// timeout passes (1), with a summary; for scripts and CI.
    #[arg(long)]
    until_ready: bool,
    /// How long `--until-ready` waits (Go duration).
    #[arg(
        long,
        default_value = "5m",
        value_name = "DURATION",
        requires = "until_ready"
    )]
    timeout: String,
}

/// Where progress goes: a table redrawn in place on a terminal, change lines otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Output {
    Table,
    Lines,
}

/// Sets up logging for dev mode: into a file in `--dir` while a terminal shows the table (so
/// log lines do not tear it), else as every command logs.
pub fn init_logging(args: &Args) {
    if output() == Output::Table {
        let path = args.dir.join(LOG_FILE);
        match landscaper_process::logging::init_to_file(&path) {
            Ok(()) => return,
            Err(error) => eprintln!(
                "cannot log to {}: {error}; logging to stderr",
                path.display()
            ),
        }
    }
    landscaper_process::logging::init();
}

fn output() -> Output {
    if std::io::stdout().is_terminal() {
        Output::Table
    } else {
        Output::Lines
    }
}

/// Runs dev mode until Ctrl-C, or with `--until-ready` until it settles.
pub async fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let timeout = if args.until_ready {
        Some(
            landscaper_api::parse_go_duration(&args.timeout)
                .map_err(|e| anyhow::anyhow!("--timeout {:?}: {e}", args.timeout))?,
        )
    } else {
        None
    };
    let examples = (!args.no_examples && args.examples.exists()).then(|| args.examples.clone());
    // The examples name their component folder relative to the folder that holds them.
    let base = examples
        .as_deref()
        .filter(|path| path.is_dir())
        .and_then(Path::parent)
        .map_or_else(|| PathBuf::from("."), Path::to_owned);
    let options = Options {
        examples,
        base,
        environments: args.environments.clone(),
        heartbeat_period: args.heartbeat_period.clone(),
        settings: Settings::from_configuration(&super::read_configuration(args.config.as_deref())?),
        ..Options::new(&args.dir)
    };
    let output = output();
    let log = args.dir.join(LOG_FILE);
    let started = Instant::now();
    let dev = DevMode::start(&options).await?;
    let shutdown = landscaper_process::shutdown::signal();
    tokio::pin!(shutdown);
    let deadline = timeout.map(|t| started + t);
    let mut shown = Board::default();
    let settled = loop {
        match dev.board().await {
            Ok(board) => {
                show(output, &log, &board, &shown, started);
                let verdict = board.verdict();
                shown = board;
                if verdict != Verdict::Waiting {
                    break Some(verdict);
                }
            }
            Err(error) => tracing::warn!(%error, "reading the state failed; retrying"),
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            break None;
        }
        tokio::select! {
            () = &mut shutdown => {
                println!("\nStopped before everything was ready.\n{}", shown.summary());
                // A script waiting with --until-ready did not get what it waited for.
                let code = if args.until_ready { ExitCode::FAILURE } else { ExitCode::SUCCESS };
                return Ok(code);
            }
            () = tokio::time::sleep(REFRESH) => {}
        }
    };
    let code = report(settled.as_ref(), &shown, started, timeout);
    print_kubectl_hints(&dev);
    if args.until_ready {
        drop(dev);
        return Ok(code);
    }
    println!("Dev mode keeps running; changes are printed below. Press Ctrl-C to stop.");
    loop {
        tokio::select! {
            () = &mut shutdown => break,
            () = tokio::time::sleep(REFRESH) => {}
        }
        if let Ok(board) = dev.board().await {
            show(Output::Lines, &log, &board, &shown, started);
            shown = board;
        }
    }
    drop(dev);
    Ok(ExitCode::SUCCESS)
}

/// Shows the board: redrawn in place as a table, or as one line per change.
fn show(output: Output, log: &Path, board: &Board, shown: &Board, started: Instant) {
    let elapsed = started.elapsed().as_secs();
    let mut stdout = std::io::stdout().lock();
    match output {
        Output::Table => {
            if board == shown && !elapsed.is_multiple_of(5) {
                return;
            }
            // Clear the screen and start at its top: robust against wrapped lines, which a
            // cursor moved up by the table's line count would not be.
            let _ = write!(
                stdout,
                "\x1b[H\x1b[2Jlandscaper dev: deployers into every environment, then the examples ({elapsed}s; log: {log})\n\n{}",
                board.table(),
                log = log.display(),
            );
        }
        Output::Lines => {
            for change in board.changes(shown) {
                let _ = writeln!(stdout, "[{elapsed:>4}s] {change}");
            }
        }
    }
    let _ = stdout.flush();
}

/// Prints the summary and returns the exit code `--until-ready` ends with.
fn report(
    settled: Option<&Verdict>,
    board: &Board,
    started: Instant,
    timeout: Option<Duration>,
) -> ExitCode {
    let elapsed = started.elapsed().as_secs_f32();
    println!();
    let code = match settled {
        Some(Verdict::Ready) => {
            println!("Everything is ready after {elapsed:.1}s.");
            ExitCode::SUCCESS
        }
        Some(Verdict::Failed(reasons)) => {
            println!("Something failed after {elapsed:.1}s:");
            for reason in reasons {
                println!("  {reason}");
            }
            ExitCode::FAILURE
        }
        Some(Verdict::Waiting) | None => {
            let limit = timeout.map_or_else(String::new, |t| format!(" ({t:?})"));
            println!("Not ready when the timeout passed{limit}:");
            ExitCode::FAILURE
        }
    };
    println!("{}", board.summary());
    code
}

fn print_kubectl_hints(dev: &DevMode) {
    let landscaper = relative(dev.landscaper_kubeconfig());
    let landscaper = landscaper.display();
    println!();
    println!("Look around with kubectl:");
    println!(
        "  kubectl --kubeconfig {landscaper} get deployerregistrations,environments,installations,deployitems -A"
    );
    for environment in dev.environments() {
        if let Some(kubeconfig) = dev.kubeconfig(environment) {
            println!(
                "  kubectl --kubeconfig {} get deployments,configmaps -A   # environment {environment}",
                relative(kubeconfig).display()
            );
        }
    }
    println!();
}

/// `path` relative to the current directory when it lies below it, for shorter commands.
fn relative(path: &Path) -> PathBuf {
    std::env::current_dir()
        .ok()
        .and_then(|cwd| path.strip_prefix(cwd).ok().map(Path::to_owned))
        .unwrap_or_else(|| path.to_owned())
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }

    #[test]
    fn the_default_environments_are_the_libraries() {
        let cli = Cli::parse_from(["dev"]);
        assert_eq!(cli.args.environments, landscaper::dev::ENVIRONMENTS);
        let cli = Cli::parse_from(["dev", "--environments", "a,b,c"]);
        assert_eq!(cli.args.environments, ["a", "b", "c"]);
    }
}
