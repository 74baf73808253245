//! Process-wide logging: JSON lines in a cluster (no terminal), readable text on a terminal.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

/// Installs the global subscriber; the level comes from `RUST_LOG` (default `info`).
pub fn init() {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    // A second initialisation (tests, embedding) keeps the first subscriber.
    let _ = if std::io::stderr().is_terminal() {
        builder.try_init()
    } else {
        builder.json().try_init()
    };
}

/// Installs the global subscriber writing readable text to the file at `path` (created, or
/// truncated), for a command whose terminal output is a live display; the level as for
/// [`init`].
pub fn init_to_file(path: &std::path::Path) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let file = std::fs::File::create(path)?;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_writer(std::sync::Mutex::new(file))
        .try_init();
    Ok(())
}
