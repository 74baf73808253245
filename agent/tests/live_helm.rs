//! Differential test against the real helm v4.1.4 (installed by
//! `shared/conformance/helm/install-helm.sh`, found through `$HELM` or `PATH`): the
//! conformance charts (and this folder's `charts/`) with values variations beyond the
//! recorded cases, rendered by both, must print the same stdout, log the same warnings on
//! stderr, fail alike, and write the same files with `--output-dir`. Without helm the test is
//! skipped with a printed reason, except under `CI=true`, where a missing helm is a failure.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The folder a variation's chart paths are relative to: `agent` is this crate's test charts,
/// anything else a folder of the shared conformance data.
fn folder(name: &str) -> PathBuf {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    match name {
        "agent" => crate_dir.join("tests/charts"),
        other => crate_dir.join("../../shared/conformance").join(other),
    }
}

fn find_helm() -> Option<PathBuf> {
    if let Ok(path) = std::env::var("HELM") {
        return Some(PathBuf::from(path));
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("helm"))
            .find(|p| p.is_file())
    })
}

/// (id, folder (see [`folder`]), arguments after `template`).
const VARIATIONS: &[(&str, &str, &[&str])] = &[
    ("capabilities", "agent", &["rel", "capabilities"]),
    ("to-yaml-pretty", "agent", &["rel", "to-yaml-pretty"]),
    (
        "chart-yaml-scalars",
        "agent",
        &["rel", "chart-yaml-scalars"],
    ),
    (
        "block-scalar-ends",
        "agent",
        &[
            "rel",
            "block-scalar-ends",
            "-f",
            "block-scalar-ends-values.yaml",
        ],
    ),
    (
        "name-template-and-name",
        "agent",
        &["rel", "chart-yaml-scalars", "--name-template", "x"],
    ),
    (
        "empty-name-template",
        "agent",
        &["chart-yaml-scalars", "--name-template", ""],
    ),
    (
        "schema-numbers",
        "agent",
        &["rel", "schema-errors", "--set-json", "port=70000"],
    ),
    (
        "schema-any-of",
        "agent",
        &["rel", "schema-errors", "--set-json", "mode=1"],
    ),
    (
        "schema-all-of",
        "agent",
        &["rel", "schema-errors", "--set-json", "all=1"],
    ),
    (
        "schema-items",
        "agent",
        &["rel", "schema-errors", "--set-json", "deep=[1,\"x\",9]"],
    ),
    (
        "schema-property-names",
        "agent",
        &["rel", "schema-errors", "--set-json", "names={\"ab\":1}"],
    ),
    (
        "schema-dependencies",
        "agent",
        &["rel", "schema-errors", "--set-json", "dep={\"a\":1}"],
    ),
    (
        "schema-ref-group",
        "agent",
        &["rel", "schema-errors", "--set-json", "ref=\"b\""],
    ),
    (
        "schema-enum-alone",
        "agent",
        &["rel", "schema-errors", "--set-json", "word=\"A'b\""],
    ),
    (
        "schema-required",
        "agent",
        &["rel", "schema-errors", "--set-json", "req={}"],
    ),
    (
        "schema-unique",
        "agent",
        &["rel", "schema-errors", "--set-json", "tags=[1,2,1]"],
    ),
    (
        "install-only-flags-ignored",
        "agent",
        &[
            "rel",
            "capabilities",
            "--wait",
            "--timeout",
            "-3s",
            "--dry-run",
            "--skip-crds",
            "--server-side=false",
            "-l",
            "a=b",
            "--kube-token",
            "t",
        ],
    ),
    (
        "install-only-flag-bad-value",
        "agent",
        &["rel", "capabilities", "--timeout", "1x"],
    ),
    (
        "install-only-flags-order-and-last-value",
        "agent",
        &[
            "rel",
            "capabilities",
            "--dry-run=server",
            "--dry-run=true",
            "--wait=bogus",
            "--timeout",
            "1x",
        ],
    ),
    (
        "chart-yaml-scalars-condition",
        "agent",
        &["rel", "chart-yaml-scalars", "--set", "off.enabled=false"],
    ),
    (
        "to-yaml-pretty-set",
        "agent",
        &["rel", "to-yaml-pretty", "--set", "a.b[0]=7,extra=1.50"],
    ),
    (
        "capabilities-gke-version",
        "agent",
        &[
            "capabilities",
            "--kube-version",
            "v1.33.4-gke.1",
            "-a",
            "x.io/v1",
        ],
    ),
    (
        "warnings",
        "agent",
        &["rel", "warnings", "--set", "sub.table=3"],
    ),
    (
        "warnings-conditions-off",
        "agent",
        &[
            "rel",
            "warnings",
            "--set",
            "sub.enabled=false,tags.extras=true",
        ],
    ),
    (
        "generate-name",
        "helm",
        &[
            "-g",
            "testcharts/subchart",
            "--name-template",
            "gen-{{ \"x\" }}",
        ],
    ),
    (
        "generate-name-and-name",
        "helm",
        &["-g", "rel", "testcharts/subchart"],
    ),
    ("subchart-default", "helm", &["testcharts/subchart"]),
    (
        "subchart-imports",
        "helm",
        &[
            "rel",
            "testcharts/subchart",
            "--set",
            "configmap.enabled=true",
            "--set",
            "subchartb.enabled=true",
            "-n",
            "other",
        ],
    ),
    (
        "subchart-crds-hooks",
        "helm",
        &["testcharts/subchart", "--include-crds", "--skip-tests"],
    ),
    ("object-order", "helm", &["testcharts/object-order"]),
    ("document-heads", "agent", &["rel", "document-heads"]),
    (
        "document-heads-sorted-first",
        "agent",
        &["rel", "document-heads", "--set", "bad=sorted-first"],
    ),
    (
        "document-heads-metadata",
        "agent",
        &["rel", "document-heads", "--set", "bad=metadata"],
    ),
    (
        "document-heads-name",
        "agent",
        &["rel", "document-heads", "--set", "bad=name"],
    ),
    (
        "document-heads-annotations",
        "agent",
        &["rel", "document-heads", "--set", "bad=annotations"],
    ),
    (
        "document-heads-annotation",
        "agent",
        &["rel", "document-heads", "--set", "bad=annotation"],
    ),
    (
        "document-heads-nan-first",
        "agent",
        &["rel", "document-heads", "--set", "bad=nan-first"],
    ),
    (
        "document-heads-top",
        "agent",
        &["rel", "document-heads", "--set", "bad=top"],
    ),
    (
        "nginx-features-replicas",
        "charts",
        &[
            "rel",
            "nginx/chart",
            "-f",
            "nginx/values-features.yaml",
            "--set",
            "replicaCount=3",
        ],
    ),
    (
        "nginx-nodeport-no-tls",
        "charts",
        &[
            "rel",
            "nginx/chart",
            "--set",
            "service.type=NodePort",
            "--set",
            "tls.enabled=false",
        ],
    ),
    (
        "kps-no-alertmanager",
        "charts",
        &[
            "rel",
            "kube-prometheus-stack/chart",
            "-f",
            "kube-prometheus-stack/values-default.yaml",
            "--set",
            "alertmanager.enabled=false",
        ],
    ),
    (
        "kps-no-grafana",
        "charts",
        &[
            "rel",
            "kube-prometheus-stack/chart",
            "-f",
            "kube-prometheus-stack/values-default.yaml",
            "--set",
            "grafana.enabled=false,nodeExporter.enabled=false",
        ],
    ),
    (
        "ingress-daemonset",
        "charts",
        &[
            "rel",
            "ingress-nginx/chart",
            "--set",
            "controller.kind=DaemonSet",
        ],
    ),
    (
        "ingress-metrics-hpa",
        "charts",
        &[
            "rel",
            "ingress-nginx/chart",
            "--set",
            "controller.metrics.enabled=true,controller.autoscaling.enabled=true",
            "--api-versions",
            "monitoring.coreos.com/v1",
        ],
    ),
];

/// Variations known to differ from helm (none today; a new difference fails the test).
const FAILING: &[&str] = &[];

struct Run {
    stdout: String,
    /// The error printed on failure, from its `Error:` line on.
    error: Option<String>,
    /// The `level=… msg=…` lines, sorted: helm logs the keys of one values table in Go's
    /// random map order.
    logged: Vec<String>,
}

fn run(program: &Path, dir: &Path, args: &[&str], home: &Path) -> Run {
    run_with(program, dir, args, home, &[])
}

/// [`run`] with environment variables set.
fn run_with(program: &Path, dir: &Path, args: &[&str], home: &Path, envs: &[(&str, &str)]) -> Run {
    let kube_version: &[&str] = if args.contains(&"--kube-version") {
        &[]
    } else {
        &["--kube-version", "1.33.0"]
    };
    let out = Command::new(program)
        .arg("template")
        .args(args)
        .args(kube_version)
        .current_dir(dir)
        .env("HOME", home)
        .env_remove("HELM_NAMESPACE")
        .env_remove("KUBECONFIG")
        .envs(envs.iter().copied())
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", program.display()));
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let mut logged: Vec<String> = stderr
        .lines()
        .filter(|l| l.starts_with("level="))
        .map(str::to_string)
        .collect();
    logged.sort();
    Run {
        logged,
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        // The whole error: schema violations, for one, are listed below its first line.
        error: (!out.status.success()).then(|| {
            stderr
                .lines()
                .skip_while(|l| !l.starts_with("Error: "))
                .filter(|l| !l.starts_with("level="))
                .collect::<Vec<_>>()
                .join("\n")
        }),
    }
}

/// A new, empty scratch folder for the test `name`, and an empty HOME inside it.
fn scratch(name: &str) -> (PathBuf, PathBuf) {
    let scratch =
        std::env::temp_dir().join(format!("landscaper-live-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    let home = scratch.join("home");
    std::fs::create_dir_all(&home).expect("scratch HOME");
    (scratch, home)
}

/// The reference helm and this crate's agent, or `None` (with the reason printed) when the
/// test is to be skipped.
fn helm_and_agent_or_skip() -> Option<(PathBuf, PathBuf)> {
    let helm = find_helm();
    if helm.is_none() {
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("CI=true but no helm found: set HELM or put helm on PATH (.ci/install-tools)");
        }
        eprintln!("skipped: no helm binary (set HELM or put helm on PATH; see install-helm.sh)");
    }
    Some((helm?, PathBuf::from(env!("CARGO_BIN_EXE_landscaper-agent"))))
}

#[test]
fn renders_like_live_helm() {
    let Some((helm, agent)) = helm_and_agent_or_skip() else {
        return;
    };
    let (scratch, home) = scratch("helm");
    let mut failing = BTreeSet::new();
    for (id, folder_name, args) in VARIATIONS {
        let dir = folder(folder_name);
        let want = run(&helm, &dir, args, &home);
        let got = run(&agent, &dir, args, &home);
        let same_error = match (&want.error, &got.error) {
            (None, None) => true,
            (Some(w), Some(g)) => w == g,
            _ => false,
        };
        if want.stdout != got.stdout || !same_error || want.logged != got.logged {
            eprintln!(
                "--- {id}: helm {:?} {:?}, ours {:?} {:?}",
                want.error, want.logged, got.error, got.logged
            );
            failing.insert(id.to_string());
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    let expected: BTreeSet<String> = FAILING.iter().map(|s| s.to_string()).collect();
    assert_eq!(
        failing, expected,
        "variations differing from live helm changed"
    );
}

/// Every file below `dir`, by path relative to it, with its content.
fn tree(dir: &Path) -> Vec<(String, String)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(current) = stack.pop() {
        for entry in std::fs::read_dir(&current).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let relative = path.strip_prefix(dir).unwrap_or(&path);
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                files.push((relative.display().to_string(), text));
            }
        }
    }
    files.sort();
    files
}

#[test]
fn output_dir_writes_the_files_helm_writes() {
    let Some((helm, agent)) = helm_and_agent_or_skip() else {
        return;
    };
    let (scratch, home) = scratch("output-dir");
    let cases: &[&[&str]] = &[
        &[],
        &["--include-crds", "--release-name"],
        &["--skip-tests"],
        &["--no-hooks", "--show-only", "templates/service.yaml"],
    ];
    let dir = folder("helm");
    for (i, extra) in cases.iter().enumerate() {
        let mut outputs = Vec::new();
        for (who, program) in [("helm", &helm), ("ours", &agent)] {
            let out_dir = scratch.join(format!("{i}-{who}"));
            let target = out_dir.to_str().unwrap_or("");
            // Twice into the same folder: helm appends hooks to files of an earlier run.
            for _ in 0..2 {
                let mut args = vec!["rel", "testcharts/subchart", "--output-dir", target];
                args.extend(extra.iter());
                let run = run(program, &dir, &args, &home);
                let stdout = run.stdout.replace(target, "OUT");
                outputs.push((stdout, run.error, run.logged));
            }
            outputs.push((format!("{:?}", tree(&out_dir)), None, Vec::new()));
        }
        let (helm_side, our_side) = outputs.split_at(3);
        assert_eq!(helm_side, our_side, "--output-dir with {extra:?}");
    }
    let _ = std::fs::remove_dir_all(&scratch);
}

#[test]
fn output_dir_writes_the_crds_of_the_chart_as_rendered() {
    let Some((helm, agent)) = helm_and_agent_or_skip() else {
        return;
    };
    let (scratch, home) = scratch("crds");
    // A subchart used twice (once under an alias) and one that its condition disables, each
    // with a CRD: helm writes the CRDs of the chart after its dependencies are processed.
    let crd = |name: &str| {
        format!(
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: {name}s.example.com\n"
        )
    };
    let files = [
        (
            "parent/Chart.yaml",
            "apiVersion: v2\nname: parent\nversion: 0.1.0\ndependencies:\n- name: used\n  version: 0.1.0\n- name: used\n  alias: renamed\n  version: 0.1.0\n- name: disabled\n  version: 0.1.0\n  condition: disabled.enabled\n".to_string(),
        ),
        ("parent/values.yaml", "disabled:\n  enabled: false\n".to_string()),
        ("parent/templates/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n".to_string()),
        ("parent/charts/used/Chart.yaml", "apiVersion: v2\nname: used\nversion: 0.1.0\n".to_string()),
        ("parent/charts/used/crds/used.yaml", crd("used")),
        ("parent/charts/disabled/Chart.yaml", "apiVersion: v2\nname: disabled\nversion: 0.1.0\n".to_string()),
        ("parent/charts/disabled/crds/disabled.yaml", crd("disabled")),
    ];
    for (name, text) in &files {
        let path = scratch.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).expect("scratch chart");
        std::fs::write(path, text).expect("scratch chart");
    }
    let mut outputs = Vec::new();
    for (who, program) in [("helm", &helm), ("ours", &agent)] {
        let out_dir = scratch.join(format!("out-{who}"));
        let target = out_dir.to_str().unwrap_or("");
        let args = ["rel", "parent", "--include-crds", "--output-dir", target];
        let run = run(program, &scratch, &args, &home);
        outputs.push((run.stdout.replace(target, "OUT"), run.error));
        outputs.push((format!("{:?}", tree(&out_dir)), None));
    }
    assert_eq!(outputs[..2], outputs[2..], "--output-dir --include-crds");
    assert!(
        outputs[1].0.contains("used.yaml") && !outputs[1].0.contains("disabled.yaml"),
        "{}",
        outputs[1].0
    );
    let _ = std::fs::remove_dir_all(&scratch);
}

#[test]
fn the_namespace_comes_from_the_flags_helm_namespace_or_the_kubeconfig_as_in_helm() {
    let Some((helm, agent)) = helm_and_agent_or_skip() else {
        return;
    };
    let (scratch, home) = scratch("namespace");
    let kube_home = scratch.join("kube-home");
    std::fs::create_dir_all(kube_home.join(".kube")).expect("scratch kubeconfig folder");
    // Only read: the server is never contacted.
    std::fs::write(
        kube_home.join(".kube/config"),
        "apiVersion: v1\nkind: Config\ncurrent-context: ctx\ncontexts:\n- name: ctx\n  context: {cluster: c, user: u, namespace: team-a}\n- name: other\n  context: {cluster: c, user: u, namespace: team-b}\nclusters:\n- name: c\n  cluster: {server: \"https://127.0.0.1:1\"}\nusers:\n- name: u\n  user: {token: x}\n",
    )
    .expect("scratch kubeconfig");
    let kubeconfig = kube_home.join(".kube/config");
    let kubeconfig = kubeconfig.to_str().unwrap_or("");
    // client-go skips the files of the list that are missing.
    let with_missing = format!("{}/missing-kubeconfig:{kubeconfig}", scratch.display());
    // (extra arguments, environment, the namespace with the kubeconfig in HOME, without)
    type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], &'a str, &'a str);
    let cases: &[Case] = &[
        (&[], &[], "team-a", "default"),
        (&["-n", ""], &[], "team-a", "default"),
        (&["-n", "x"], &[], "x", "x"),
        (&[], &[("HELM_NAMESPACE", "foo")], "foo", "foo"),
        (
            &["-n", ""],
            &[("HELM_NAMESPACE", "foo")],
            "team-a",
            "default",
        ),
        (&[], &[("HELM_NAMESPACE", "")], "team-a", "default"),
        (&["--kube-context", "other"], &[], "team-b", "default"),
        (&[], &[("HELM_KUBECONTEXT", "other")], "team-b", "default"),
        (&["--kube-context", "missing"], &[], "default", "default"),
        (&["--kubeconfig", kubeconfig], &[], "team-a", "team-a"),
        (&[], &[("KUBECONFIG", kubeconfig)], "team-a", "team-a"),
        (&[], &[("KUBECONFIG", &with_missing)], "team-a", "team-a"),
        (
            &["--kube-context="],
            &[("HELM_KUBECONTEXT", "other")],
            "team-a",
            "default",
        ),
    ];
    let dir = folder("agent");
    for (extra, envs, with_kubeconfig, without) in cases {
        for (home, namespace) in [(&kube_home, with_kubeconfig), (&home, without)] {
            let mut args = vec!["rel", "chart-yaml-scalars"];
            args.extend(extra.iter());
            let want = run_with(&helm, &dir, &args, home, envs);
            let got = run_with(&agent, &dir, &args, home, envs);
            let case = format!("{extra:?} {envs:?} with HOME {}", home.display());
            assert_eq!(
                (&got.stdout, &got.error),
                (&want.stdout, &want.error),
                "{case}"
            );
            assert!(
                got.stdout.contains(&format!("namespace: {namespace}\n")),
                "{case}: {}",
                got.stdout
            );
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
}
