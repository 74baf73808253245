//! The programs end-to-end tests drive: external tools (`.ci/install-tools` installs them and
//! names them in environment variables) and this workspace's own binaries.

use std::path::PathBuf;

/// Whether the tests run under CI, where a missing tool is a failure, not a skip.
fn under_ci() -> bool {
    std::env::var("CI").as_deref() == Ok("true")
}

/// The external tool named by `variable` (e.g. `KUBECTL`), else `name` on PATH; `None` (and a
/// note on stderr) when it is not installed, which under CI fails the test instead.
pub fn external_tool(variable: &str, name: &str) -> Option<PathBuf> {
    let found = std::env::var_os(variable)
        .map(PathBuf::from)
        .filter(|path| path.exists())
        .or_else(|| on_path(name));
    assert!(
        found.is_some() || !under_ci(),
        "CI=true but {name} is not installed (set {variable}, see .ci/install-tools)"
    );
    if found.is_none() {
        eprintln!("skipped: no {name} (set {variable}, see .ci/install-tools)");
    }
    found
}

fn on_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(name))
        .find(|path| path.is_file())
}

/// A binary of this workspace (`landscaper`, `landscaper-agent`, `testbed`) from the target
/// directory these tests were built into. `cargo test --workspace` builds every one of them;
/// a test run alone needs `cargo build --bins` first. `None` (skip) when it is missing, which
/// under CI fails the test instead.
pub fn workspace_binary(name: &str) -> Option<PathBuf> {
    // The test runs as target/<profile>/deps/<test>-<hash>.
    let found = std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.parent()?.join(name)))
        .filter(|path| path.is_file());
    assert!(
        found.is_some() || !under_ci(),
        "CI=true but the workspace binary {name} is not built"
    );
    if found.is_none() {
        eprintln!("skipped: the workspace binary {name} is not built (cargo build --bins)");
    }
    found
}
