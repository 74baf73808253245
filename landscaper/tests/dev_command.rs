//! `landscaper dev` as a user runs it: with output that is not a terminal it prints change
//! lines (no screen redraws), ends `--until-ready` with the summary and exit code 0 once every
//! deployer and example is Succeeded, exit code 1 when the timeout passes first; without it,
//! it keeps running after the summary (kubectl sees its clusters) until Ctrl-C stops it
//! cleanly.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn repository() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn dev(dir: &Path, arguments: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_landscaper"));
    command
        .arg("dev")
        .arg("--dir")
        .arg(dir)
        .args(arguments)
        .current_dir(repository())
        .env("RUST_LOG", "warn");
    command
}

fn interrupt(child: &Child) {
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
}

fn wait_with_limit(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().expect("the child is waited for") {
            return status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            panic!("landscaper dev did not exit within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn until_ready_exits_0_with_the_summary_once_everything_is_succeeded() {
    let dir = tempfile::tempdir().unwrap();
    let output = dev(dir.path(), &["--until-ready", "--timeout", "5m"])
        .output()
        .expect("landscaper dev runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "exit {:?}\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(!stdout.contains('\x1b'), "no screen redraws: {stdout}");
    for line in [
        "] deployer manifest in environment edge: Succeeded",
        "] Installation ls-system/hello: Succeeded",
        "Everything is ready after",
        "6/6 deployers installed (environment × registration), 3/3 examples Succeeded",
        "get deployerregistrations,environments,installations,deployitems -A",
    ] {
        assert!(stdout.contains(line), "{line:?} missing from\n{stdout}");
    }
}

#[test]
fn until_ready_exits_1_with_the_reasons_when_the_timeout_passes() {
    let dir = tempfile::tempdir().unwrap();
    let output = dev(dir.path(), &["--until-ready", "--timeout", "1ms"])
        .output()
        .expect("landscaper dev runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("Not ready when the timeout passed (1ms):")
            && stdout.contains("deployers installed (environment × registration)"),
        "{stdout}"
    );
}

#[test]
fn dev_mode_keeps_running_after_the_summary_until_ctrl_c() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = dev(dir.path(), &["--no-examples", "--environments", "solo"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("landscaper dev starts");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut seen = Vec::new();
    for line in lines.by_ref() {
        let line = line.expect("a line of output");
        let done = line.starts_with("Dev mode keeps running");
        seen.push(line);
        if done {
            break;
        }
    }
    let seen = seen.join("\n");
    assert!(
        seen.contains("Everything is ready after")
            && seen.contains("0/0 deployers installed")
            && seen.contains("solo.kubeconfig get deployments,configmaps -A   # environment solo"),
        "{seen}"
    );
    if let Some(kubectl) = std::env::var_os("KUBECTL") {
        let output = Command::new(kubectl)
            .arg("--kubeconfig")
            .arg(dir.path().join("landscaper.kubeconfig"))
            .args(["get", "environments,installations", "-A"])
            .output()
            .expect("kubectl runs");
        assert!(
            output.status.success() && String::from_utf8_lossy(&output.stdout).contains("solo"),
            "{}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    interrupt(&child);
    let status = wait_with_limit(&mut child, Duration::from_secs(30));
    assert!(status.success(), "exit {status:?} after Ctrl-C");
}

/// On a terminal (`script` gives the command one) the table is redrawn in place and the log
/// goes to a file, so no log line tears the table.
#[test]
fn on_a_terminal_the_table_is_redrawn_and_the_log_goes_to_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let command = format!(
        "{} dev --dir {} --until-ready --timeout 5m",
        env!("CARGO_BIN_EXE_landscaper"),
        dir.path().display()
    );
    let output = Command::new("script")
        .args(["--quiet", "--return", "--command", &command, "/dev/null"])
        .current_dir(repository())
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .output()
        .expect("script (util-linux) runs");
    let screen = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "exit {:?}\n{screen}",
        output.status
    );
    assert!(
        screen.contains("\x1b[H\x1b[2J")
            && screen.contains("ENVIRONMENT  DEPLOYER  PHASE")
            && screen.contains("Everything is ready after"),
        "{screen}"
    );
    assert!(
        !screen.contains(" INFO "),
        "log lines on the terminal: {screen}"
    );
    let log = std::fs::read_to_string(dir.path().join("landscaper.log")).expect("the log file");
    assert!(
        log.contains(" INFO ") && log.contains("the environment is registered"),
        "{log}"
    );
}

/// Ctrl-C while `--until-ready` waits is a failure for the script that waits, with the summary
/// of what was still waiting.
#[test]
fn ctrl_c_while_waiting_until_ready_exits_1_with_the_summary() {
    let dir = tempfile::tempdir().unwrap();
    let examples = dir.path().join("examples");
    std::fs::create_dir(&examples).unwrap();
    // A DeployItem of a type no deployer serves: it waits for ever.
    std::fs::write(
        examples.join("unserved.yaml"),
        "apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: DeployItem\nmetadata: {name: unserved, namespace: ls-system}\nspec: {type: example.invalid/nobody, config: {}}\n",
    )
    .unwrap();
    let mut child = dev(
        &dir.path().join("dev"),
        &[
            "--until-ready",
            "--environments",
            "solo",
            "--examples",
            examples.to_str().unwrap(),
        ],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::null())
    .spawn()
    .expect("landscaper dev starts");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().expect("a line").expect("a line of output");
    assert!(first.contains("DeployItem ls-system/unserved"), "{first}");
    interrupt(&child);
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let status = wait_with_limit(&mut child, Duration::from_secs(30));
    assert_eq!(status.code(), Some(1), "{rest:?}");
    let rest = rest.join("\n");
    assert!(
        rest.contains("Stopped before everything was ready.")
            && rest.contains("0/1 examples Succeeded")
            && rest.contains("DeployItem ls-system/unserved: -"),
        "{rest}"
    );
}
