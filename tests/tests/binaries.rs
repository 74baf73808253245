//! The installation flow as a user runs it, with the binaries and kubectl only: `testbed
//! serve`, `landscaper crds | kubectl apply -f -`, `landscaper run --kubeconfig …` and
//! `landscaper-agent deployer mock --landscaper-kubeconfig …`; an Installation with inline
//! blueprints, applied with kubectl, whose data flows producer → consumer → root export
//! reaches Succeeded with the root's export in its DataObject. And deployer management the
//! same way: two `testbed serve`, `landscaper run` on the first, `landscaper-agent run --name
//! edge` on the second; a DeployerRegistration applied with kubectl becomes the pair `<registration>-edge`,
//! whose helm item the agent installs into the fenced cluster.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use landscaper_e2e::blueprints::blueprint_filesystem;
use landscaper_e2e::charts::greeting_chart;
use landscaper_e2e::flow;
use landscaper_e2e::registrations::{pair_helm_item, pair_imports, registration_with_template};
use landscaper_e2e::tools::{external_tool, workspace_binary};
use serde_json::json;

/// The programs these tests drive: kubectl and this workspace's binaries.
struct Programs {
    kubectl: PathBuf,
    testbed: PathBuf,
    landscaper: PathBuf,
    agent: PathBuf,
}

impl Programs {
    /// All of them, or `None` (the test is skipped) when one is missing; each missing one is
    /// named on stderr.
    fn find() -> Option<Self> {
        let (Some(kubectl), Some(testbed), Some(landscaper), Some(agent)) = (
            external_tool("KUBECTL", "kubectl"),
            workspace_binary("testbed"),
            workspace_binary("landscaper"),
            workspace_binary("landscaper-agent"),
        ) else {
            return None;
        };
        Some(Self {
            kubectl,
            testbed,
            landscaper,
            agent,
        })
    }
}

/// A child process that is killed when the test ends, however it ends.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn(program: &Path, args: &[&str], log: &Path) -> Running {
    let child = Command::new(program)
        .args(args)
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).expect("log file"))
        .spawn()
        .unwrap_or_else(|e| panic!("{} starts: {e}", program.display()));
    Running(child)
}

/// Runs kubectl against the cluster of `kubeconfig`, with `input` on stdin; its output, or a
/// panic with what it printed.
fn kubectl(kubectl: &Path, kubeconfig: &Path, args: &[&str], input: Option<&[u8]>) -> String {
    let mut child = Command::new(kubectl)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kubectl starts");
    let mut stdin = child.stdin.take().expect("stdin");
    if let Some(input) = input {
        stdin.write_all(input).expect("kubectl reads its input");
    }
    drop(stdin);
    let output = child.wait_with_output().expect("kubectl ends");
    assert!(
        output.status.success(),
        "kubectl {}: {}{}",
        args.join(" "),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// kubectl's output against the cluster of `kubeconfig` when it succeeds, for waiting until it
/// does.
fn try_kubectl(kubectl: &Path, kubeconfig: &Path, args: &[&str]) -> Option<Vec<u8>> {
    let output = Command::new(kubectl)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .output()
        .ok()?;
    output.status.success().then_some(output.stdout)
}

/// Installs the CRDs as a user does (`landscaper crds | kubectl apply -f -`) and waits until
/// the API server serves `resource`.
fn install_crds(
    landscaper: &Path,
    kubectl_bin: &Path,
    kubeconfig: &Path,
    dir: &Path,
    resource: &str,
) {
    let crds = Command::new(landscaper)
        .arg("crds")
        .output()
        .expect("landscaper crds runs");
    assert!(crds.status.success(), "landscaper crds failed");
    kubectl(
        kubectl_bin,
        kubeconfig,
        &["apply", "-f", "-"],
        Some(&crds.stdout),
    );
    wait_for("the CRDs are served", Duration::from_secs(30), dir, || {
        try_kubectl(kubectl_bin, kubeconfig, &["get", resource, "-A"])
    });
}

/// Starts `testbed serve` and returns it with the kubeconfig of its cluster, written into
/// `dir` (each server its own folder: the file is named after the cluster).
fn serve(testbed: &Path, dir: &Path) -> (Running, PathBuf) {
    let mut child = Command::new(testbed)
        .arg("serve")
        .arg("--kubeconfig-dir")
        .arg(dir)
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(dir.join("testbed.log")).expect("log file"))
        .spawn()
        .expect("testbed serve starts");
    let stdout = child.stdout.take().expect("stdout");
    let running = Running(child);
    // It prints `<cluster> <url> <kubeconfig>` per cluster once it serves.
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("testbed serve prints its cluster");
    let kubeconfig = line
        .split_whitespace()
        .nth(2)
        .map(PathBuf::from)
        .unwrap_or_else(|| panic!("testbed serve printed {line:?}"));
    (running, kubeconfig)
}

/// Polls `check` every half second until it returns `Some`, for at most `limit`; the logs in
/// `dir` are printed when it does not.
fn wait_for<T>(what: &str, limit: Duration, dir: &Path, mut check: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(value) = check() {
            return value;
        }
        if start.elapsed() > limit {
            for log in ["landscaper.log", "deployer.log", "testbed.log"] {
                let text = std::fs::read_to_string(dir.join(log)).unwrap_or_default();
                let tail: Vec<&str> = text.lines().rev().take(40).collect();
                eprintln!("--- {log} (last lines, newest first)\n{}", tail.join("\n"));
            }
            panic!("{what}: not within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

#[test]
fn an_installation_with_inline_blueprints_runs_with_the_binaries_and_kubectl() {
    let Some(programs) = Programs::find() else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let (_server, kubeconfig) = serve(&programs.testbed, dir.path());
    let kubectl =
        |args: &[&str], input: Option<&[u8]>| kubectl(&programs.kubectl, &kubeconfig, args, input);

    install_crds(
        &programs.landscaper,
        &programs.kubectl,
        &kubeconfig,
        dir.path(),
        "installations",
    );
    kubectl(&["create", "namespace", "ls-system"], None);
    kubectl(&["create", "namespace", "demo"], None);

    let config = kubeconfig.to_str().expect("a UTF-8 path");
    let _landscaper = spawn(
        &programs.landscaper,
        &["run", "--kubeconfig", config],
        &dir.path().join("landscaper.log"),
    );
    let _deployer = spawn(
        &programs.agent,
        &[
            "deployer",
            "mock",
            "--landscaper-kubeconfig",
            config,
            "--namespace",
            "demo",
            // The landscaper's probes have the default port.
            "--health-address",
            "127.0.0.1:0",
        ],
        &dir.path().join("deployer.log"),
    );

    let greeting = json!({
        "apiVersion": "landscaper.gardener.cloud/v1alpha1",
        "kind": "DataObject",
        "metadata": {"name": "greeting-in"},
        "data": "hello",
    });
    let root = flow::root_installation("root", "greeting-in", "flow-result");
    let manifest = format!("{greeting}\n---\n{root}\n");
    kubectl(
        &["apply", "-n", "demo", "-f", "-"],
        Some(manifest.as_bytes()),
    );

    let phase = wait_for(
        "the root installation finishes its job",
        Duration::from_secs(120),
        dir.path(),
        || {
            let out = kubectl(
                &[
                    "get",
                    "installation",
                    "root",
                    "-n",
                    "demo",
                    "-o",
                    "jsonpath={.status.jobID} {.status.jobIDFinished} {.status.phase}",
                ],
                None,
            );
            let fields: Vec<&str> = out.split_whitespace().collect();
            match fields.as_slice() {
                [started, finished, phase] if started == finished => Some(phase.to_string()),
                _ => None,
            }
        },
    );
    let status = kubectl(
        &["get", "installation", "root", "-n", "demo", "-o", "json"],
        None,
    );
    assert_eq!(phase, "Succeeded", "{status}");
    let export = kubectl(
        &[
            "get",
            "dataobject",
            "flow-result",
            "-n",
            "demo",
            "-o",
            "jsonpath={.data}",
        ],
        None,
    );
    assert_eq!(export, "hello, produced, consumed");
    let listed = kubectl(&["get", "installations", "-n", "demo"], None);
    assert_eq!(
        listed.lines().count(),
        4,
        "the root and its two subinstallations:\n{listed}"
    );
}

/// A DeployerRegistration `greeter` whose inline blueprint renders one helm item installing
/// the chart `raw` with the registration's values into the environment's namespace.
fn greeter_registration(raw: &str) -> String {
    let template = pair_helm_item(raw, " {{ toJson .imports.values }}\n");
    let mut imports = pair_imports();
    imports.push(json!({"name": "values", "type": "data", "schema": {"type": "object"}}));
    let blueprint = blueprint_filesystem(json!({
        "imports": imports,
        "deployExecutions": [{"name": "default", "type": "GoTemplate", "template": template}],
    }));
    let registration = registration_with_template(
        "greeter",
        &["example.com/greeting"],
        json!({
            "blueprint": {"inline": {"filesystem": blueprint}},
            "importDataMappings": {"values": {"greeting": "hello from the registration"}},
        }),
    );
    serde_json::to_string(&registration).expect("JSON")
}

#[test]
fn a_registered_deployer_reaches_a_fenced_cluster_with_the_binaries_and_kubectl() {
    let Some(programs) = Programs::find() else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let (central_dir, fenced_dir) = (dir.path().join("central"), dir.path().join("fenced"));
    std::fs::create_dir_all(&central_dir).expect("folder");
    std::fs::create_dir_all(&fenced_dir).expect("folder");
    let (_central, central) = serve(&programs.testbed, &central_dir);
    let (_fenced, fenced) = serve(&programs.testbed, &fenced_dir);
    let on_central =
        |args: &[&str], input: Option<&[u8]>| kubectl(&programs.kubectl, &central, args, input);
    let on_fenced =
        |args: &[&str], input: Option<&[u8]>| kubectl(&programs.kubectl, &fenced, args, input);

    install_crds(
        &programs.landscaper,
        &programs.kubectl,
        &central,
        dir.path(),
        "deployerregistrations",
    );
    on_central(&["create", "namespace", "ls-system"], None);
    on_fenced(&["create", "namespace", "agent-system"], None);

    let central_path = central.to_str().expect("a UTF-8 path");
    let fenced_path = fenced.to_str().expect("a UTF-8 path");
    let _landscaper = spawn(
        &programs.landscaper,
        // No probe listener: the other test's landscaper may hold the default port.
        &["run", "--kubeconfig", central_path, "--health-address", ""],
        &dir.path().join("landscaper.log"),
    );
    let _agent = spawn(
        &programs.agent,
        &[
            "run",
            "--name",
            "edge",
            "--kubeconfig",
            fenced_path,
            "--landscaper-kubeconfig",
            central_path,
            "--namespace",
            "edge-deployers",
            "--pod-namespace",
            "agent-system",
            "--heartbeat-period",
            "1s",
            "--health-address",
            "",
        ],
        &dir.path().join("deployer.log"),
    );

    let registration = greeter_registration(&greeting_chart(dir.path()));
    on_central(&["apply", "-f", "-"], Some(registration.as_bytes()));

    // The pair, as upstream's deployer lifecycle documentation shows it.
    let installation = wait_for(
        "the pair's Installation greeter-edge",
        Duration::from_secs(60),
        dir.path(),
        || {
            let out = try_kubectl(
                &programs.kubectl,
                &central,
                &[
                    "get",
                    "installation",
                    "greeter-edge",
                    "-n",
                    "ls-system",
                    "-o",
                    "json",
                ],
            )?;
            serde_json::from_slice::<serde_json::Value>(&out).ok()
        },
    );
    let labels = &installation["metadata"]["labels"];
    assert_eq!(
        labels["deployers.landscaper.gardener.cloud/deployer-registration"],
        "greeter"
    );
    assert_eq!(
        labels["deployers.landscaper.gardener.cloud/environment"],
        "edge"
    );
    let mappings = &installation["spec"]["importDataMappings"];
    assert_eq!(mappings["releaseName"], "greeter-edge");
    assert_eq!(mappings["releaseNamespace"], "edge-deployers");
    assert_eq!(
        mappings["values"]["greeting"],
        "hello from the registration"
    );
    let targets = installation["spec"]["imports"]["targets"].to_string();
    assert!(
        targets.contains("\"#edge\"") && targets.contains("\"#greeter-edge\""),
        "{targets}"
    );
    on_central(
        &["get", "serviceaccount", "greeter-edge", "-n", "ls-system"],
        None,
    );
    on_central(&["get", "target", "greeter-edge", "-n", "ls-system"], None);

    // The chart's object in the fenced cluster, in the environment's namespace.
    let greeting = wait_for(
        "the chart's ConfigMap in the fenced cluster",
        Duration::from_secs(120),
        dir.path(),
        || {
            let out = try_kubectl(
                &programs.kubectl,
                &fenced,
                &[
                    "get",
                    "configmap",
                    "greeter-edge-greeting",
                    "-n",
                    "edge-deployers",
                    "-o",
                    "jsonpath={.data.greeting}",
                ],
            )?;
            Some(String::from_utf8_lossy(&out).into_owned())
        },
    );
    assert_eq!(greeting, "hello from the registration");
    let phase = on_central(
        &[
            "get",
            "installation",
            "greeter-edge",
            "-n",
            "ls-system",
            "-o",
            "jsonpath={.status.phase}",
        ],
        None,
    );
    assert!(
        ["Progressing", "Completing", "Succeeded"].contains(&phase.as_str()),
        "the pair's job runs: {phase}"
    );
}
