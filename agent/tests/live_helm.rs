//! Differential test against the real helm v4.1.4 (installed by
//! `shared/conformance/helm/install-helm.sh`, found through `$HELM` or `PATH`): the
//! conformance charts with values variations beyond the recorded cases, rendered by both, must
//! print the same stdout and fail alike. Without helm the test is skipped with a printed
//! reason, except under `CI=true`, where a missing helm is a failure.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn conformance() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/conformance")
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

/// (id, folder under shared/conformance, arguments after `template`).
const VARIATIONS: &[(&str, &str, &[&str])] = &[
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
    error_line: Option<String>,
}

fn run(program: &Path, dir: &Path, args: &[&str], home: &Path) -> Run {
    let out = Command::new(program)
        .arg("template")
        .args(args)
        .args(["--kube-version", "1.33.0"])
        .current_dir(dir)
        .env("HOME", home)
        .env_remove("HELM_NAMESPACE")
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", program.display()));
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    Run {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        error_line: (!out.status.success()).then(|| {
            stderr
                .lines()
                .find(|l| l.starts_with("Error: "))
                .unwrap_or("")
                .to_string()
        }),
    }
}

#[test]
fn renders_like_live_helm() {
    let Some(helm) = find_helm() else {
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("CI=true but no helm found: set HELM or put helm on PATH (.ci/install-tools)");
        }
        eprintln!("skipped: no helm binary (set HELM or put helm on PATH; see install-helm.sh)");
        return;
    };
    let agent = PathBuf::from(env!("CARGO_BIN_EXE_landscaper-agent"));
    let home = std::env::temp_dir().join(format!("landscaper-live-helm-{}", std::process::id()));
    std::fs::create_dir_all(&home).expect("scratch HOME");
    let mut failing = BTreeSet::new();
    for (id, folder, args) in VARIATIONS {
        let dir = conformance().join(folder);
        let want = run(&helm, &dir, args, &home);
        let got = run(&agent, &dir, args, &home);
        let same_error = match (&want.error_line, &got.error_line) {
            (None, None) => true,
            (Some(w), Some(g)) => w == g,
            _ => false,
        };
        if want.stdout != got.stdout || !same_error {
            eprintln!(
                "--- {id}: helm {:?}, ours {:?}",
                want.error_line, got.error_line
            );
            failing.insert(id.to_string());
        }
    }
    let _ = std::fs::remove_dir_all(&home);
    let expected: BTreeSet<String> = FAILING.iter().map(|s| s.to_string()).collect();
    assert_eq!(
        failing, expected,
        "variations differing from live helm changed"
    );
}
