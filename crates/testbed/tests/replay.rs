//! The recorded kube-apiserver exchanges (`shared/conformance/apiserver`, replayed by its
//! `replay.py`) against an in-process testbed. Runs when python3 and the recordings are
//! found (next to the repository, or at `$APISERVER_CONFORMANCE_DIR`); with `CI=true`, their
//! absence is a failure. Every step must pass.

use std::path::PathBuf;
use std::process::Command;
use testbed::Testbed;

fn conformance_dir() -> Option<PathBuf> {
    if let Ok(dir) = std::env::var("APISERVER_CONFORMANCE_DIR") {
        return Some(PathBuf::from(dir));
    }
    let beside_repo =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/apiserver");
    beside_repo
        .join("replay.py")
        .exists()
        .then_some(beside_repo)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recorded_kube_apiserver_exchanges_replay() {
    let python = Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let Some(dir) = conformance_dir().filter(|_| python) else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "python3 and the apiserver recordings are required in CI"
        );
        eprintln!("python3 or the apiserver recordings not found: skipping");
        return;
    };
    let bed = Testbed::start().await.unwrap();
    let kubeconfig = bed.cluster().kubeconfig_path().to_path_buf();
    let out = tokio::task::spawn_blocking(move || {
        Command::new("python3")
            .arg(dir.join("replay.py"))
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .output()
            .expect("replay.py runs")
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let summary = stdout.lines().last().unwrap_or_default().to_string();
    assert!(
        summary.ends_with("failed"),
        "replay.py did not finish: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let failures: Vec<&str> = stdout.lines().filter(|l| l.starts_with("FAIL ")).collect();
    assert!(
        failures.is_empty() && out.status.success(),
        "{summary}; differences:\n{}",
        failures.join("\n")
    );
    eprintln!("replay.py: {summary}");
}
