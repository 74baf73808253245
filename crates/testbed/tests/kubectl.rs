//! kubectl against the testbed. These run when `kubectl` is on PATH; with `CI=true` a missing
//! kubectl is a failure, elsewhere the tests say so and pass.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use testbed::{Builder, Testbed};

/// Whether kubectl can be used; panics in CI when it is missing.
fn kubectl_available() -> bool {
    let found = Command::new("kubectl")
        .arg("version")
        .arg("--client")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "kubectl is required in CI but not on PATH"
        );
        eprintln!("kubectl not on PATH: skipping");
    }
    found
}

/// The testbed `builder` starts, when kubectl can be used (see [`kubectl_available`]).
async fn bed_for_kubectl(builder: Builder) -> Option<Testbed> {
    if !kubectl_available() {
        return None;
    }
    Some(builder.start().await.expect("testbed starts"))
}

/// Runs kubectl with the cluster's kubeconfig; returns (success, stdout, stderr).
async fn kubectl(kubeconfig: &Path, args: &[&str], stdin: Option<&str>) -> (bool, String, String) {
    let kubeconfig = kubeconfig.to_path_buf();
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let stdin = stdin.map(str::to_string);
    tokio::task::spawn_blocking(move || {
        let mut child = Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .args(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("kubectl starts");
        if let Some(input) = stdin {
            use std::io::Write;
            child
                .stdin
                .take()
                .expect("piped stdin")
                .write_all(input.as_bytes())
                .expect("write stdin");
        } else {
            drop(child.stdin.take());
        }
        let out = child.wait_with_output().expect("kubectl finishes");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    })
    .await
    .expect("kubectl task")
}

async fn ok(kubeconfig: &Path, args: &[&str], stdin: Option<&str>) -> String {
    let (success, out, err) = kubectl(kubeconfig, args, stdin).await;
    assert!(success, "kubectl {args:?} failed: {err}");
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_creates_gets_and_selects() {
    let Some(bed) = bed_for_kubectl(Testbed::builder()).await else {
        return;
    };
    let kc = bed.cluster().kubeconfig_path();
    ok(
        kc,
        &["create", "configmap", "a", "--from-literal=k=1"],
        None,
    )
    .await;
    ok(kc, &["label", "configmap", "a", "app=web"], None).await;
    ok(
        kc,
        &["create", "configmap", "b", "--from-literal=k=2"],
        None,
    )
    .await;
    let names = ok(
        kc,
        &["get", "configmaps", "-l", "app=web", "-o", "name"],
        None,
    )
    .await;
    assert_eq!(names.trim(), "configmap/a");
    let value = ok(
        kc,
        &["get", "configmap", "b", "-o", "jsonpath={.data.k}"],
        None,
    )
    .await;
    assert_eq!(value, "2");
    let table = ok(kc, &["get", "namespaces"], None).await;
    assert!(
        table.starts_with("NAME") && table.contains("kube-system"),
        "{table}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_apply_creates_and_replace_detects_conflicts() {
    let Some(bed) = bed_for_kubectl(Testbed::builder()).await else {
        return;
    };
    let kc = bed.cluster().kubeconfig_path();
    let manifest = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  k: v1\n";
    ok(kc, &["apply", "-f", "-"], Some(manifest)).await;
    let json = ok(kc, &["get", "configmap", "applied", "-o", "json"], None).await;
    let mut obj: serde_json::Value = serde_json::from_str(&json).unwrap();
    obj["data"]["k"] = "v2".into();
    ok(kc, &["replace", "-f", "-"], Some(&obj.to_string())).await;
    obj["data"]["k"] = "v3".into();
    let (success, _, err) = kubectl(kc, &["replace", "-f", "-"], Some(&obj.to_string())).await;
    assert!(
        !success && err.contains("the object has been modified"),
        "a stale replace conflicts: {err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_delete_waits_for_finalizers() {
    let Some(bed) = bed_for_kubectl(Testbed::builder()).await else {
        return;
    };
    let kc = bed.cluster().kubeconfig_path();
    let manifest = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: held\n  finalizers: [example.com/hold]\n";
    ok(kc, &["create", "-f", "-"], Some(manifest)).await;
    ok(kc, &["delete", "configmap", "held", "--wait=false"], None).await;
    let ts = ok(
        kc,
        &[
            "get",
            "configmap",
            "held",
            "-o",
            "jsonpath={.metadata.deletionTimestamp}",
        ],
        None,
    )
    .await;
    assert!(!ts.is_empty(), "the held object is marked for deletion");
    ok(
        kc,
        &[
            "patch",
            "configmap",
            "held",
            "--type=merge",
            "-p",
            r#"{"metadata":{"finalizers":null}}"#,
        ],
        None,
    )
    .await;
    let (found, _, _) = kubectl(kc, &["get", "configmap", "held"], None).await;
    assert!(!found, "the object is gone once its finalizer is removed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_waits_for_simulated_rollouts() {
    let Some(bed) = bed_for_kubectl(Testbed::builder().simulate_workloads(true)).await else {
        return;
    };
    let kc = bed.cluster().kubeconfig_path();
    ok(kc, &["create", "-f", "-"], Some(DEPLOYMENT)).await;
    ok(
        kc,
        &[
            "wait",
            "--for=condition=Available",
            "deployment/web",
            "--timeout=30s",
        ],
        None,
    )
    .await;
}

const DEPLOYMENT: &str = r#"{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
  "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
           "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_tokens_and_access_checks() {
    let Some(bed) = bed_for_kubectl(Testbed::builder()).await else {
        return;
    };
    let kc = bed.cluster().kubeconfig_path();
    ok(kc, &["create", "serviceaccount", "robot"], None).await;
    let token = ok(kc, &["create", "token", "robot", "--duration=15m"], None).await;
    assert_eq!(token.trim().split('.').count(), 3, "a JWT");
    assert_eq!(
        ok(kc, &["auth", "can-i", "list", "pods"], None)
            .await
            .trim(),
        "yes"
    );
    // Whether the ServiceAccount may list pods.
    let robot_may_list_pods = [
        "auth",
        "can-i",
        "list",
        "pods",
        "--as=system:serviceaccount:default:robot",
    ];
    let (allowed, out, _) = kubectl(kc, &robot_may_list_pods, None).await;
    assert!(!allowed && out.trim() == "no", "{out}");
    ok(
        kc,
        &[
            "create",
            "role",
            "pod-reader",
            "--verb=get,list",
            "--resource=pods",
        ],
        None,
    )
    .await;
    ok(
        kc,
        &[
            "create",
            "rolebinding",
            "robot-view",
            "--role=pod-reader",
            "--serviceaccount=default:robot",
        ],
        None,
    )
    .await;
    assert_eq!(ok(kc, &robot_may_list_pods, None).await.trim(), "yes");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_get_watch_streams_changes() {
    let Some(bed) = bed_for_kubectl(Testbed::builder()).await else {
        return;
    };
    let kc = bed.cluster().kubeconfig_path().to_path_buf();
    let mut child = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(&kc)
        .args(["get", "configmaps", "-w", "-o", "name"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("kubectl starts");
    let stdout = child.stdout.take().expect("piped stdout");
    let reader = tokio::task::spawn_blocking(move || {
        let mut seen = Vec::new();
        for line in BufReader::new(stdout).lines() {
            let line = line.expect("a line");
            let done = line.contains("configmap/late");
            seen.push(line);
            if done {
                break;
            }
        }
        seen
    });
    // The initial list shows kube-root-ca.crt; a later create must arrive as an event.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
    while bed
        .cluster()
        .counters()
        .count(Some("watch"), Some("configmaps"), None)
        == 0
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "kubectl never started watching"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    ok(&kc, &["create", "configmap", "late"], None).await;
    let seen = tokio::time::timeout(std::time::Duration::from_secs(20), reader)
        .await
        .expect("the event arrives")
        .expect("reader");
    child.kill().expect("stop kubectl");
    child.wait().expect("reap kubectl");
    assert_eq!(
        seen.last().map(String::as_str),
        Some("configmap/late"),
        "{seen:?}"
    );
}

const WIDGET_CRD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {replicas: {type: integer}}}
          status: {type: object, properties: {replicas: {type: integer}}}
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}
"#;

/// Whether a logged non-resource path is a group version's resource list (`/api/v1`,
/// `/apis/<group>/<version>`), the documents legacy discovery fetches one by one.
fn is_group_version_list(path: &str) -> bool {
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    matches!(parts.as_slice(), ["api", _] | ["apis", _, _])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_discovers_in_one_request_and_scales_custom_resources() {
    let Some(bed) = bed_for_kubectl(Testbed::builder()).await else {
        return;
    };
    let cluster = bed.cluster();
    let kc = cluster.kubeconfig_path();
    // A fresh discovery cache, so kubectl has to ask the server.
    let cache = bed.kubeconfig_dir().join("kubectl-cache");
    let cache = cache.to_str().expect("a UTF-8 path");
    ok(
        kc,
        &["--cache-dir", cache, "apply", "-f", "-"],
        Some(WIDGET_CRD),
    )
    .await;
    ok(
        kc,
        &[
            "--cache-dir",
            cache,
            "wait",
            "--for=condition=Established",
            "crd/widgets.example.com",
        ],
        None,
    )
    .await;
    ok(
        kc,
        &["--cache-dir", cache, "apply", "-f", "-"],
        Some(
            "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {replicas: 1}\n",
        ),
    )
    .await;
    ok(
        kc,
        &["--cache-dir", cache, "scale", "widget/w", "--replicas=3"],
        None,
    )
    .await;
    let replicas = ok(
        kc,
        &[
            "--cache-dir",
            cache,
            "get",
            "widget",
            "w",
            "-o",
            "jsonpath={.spec.replicas}",
        ],
        None,
    )
    .await;
    assert_eq!(replicas, "3");

    let requests = cluster.requests();
    assert!(
        requests
            .iter()
            .any(|r| r.resource == "/apis" && r.code == 200),
        "kubectl asked for /apis"
    );
    let legacy: Vec<&str> = requests
        .iter()
        .filter(|r| r.group.is_empty() && r.version.is_empty())
        .map(|r| r.resource.as_str())
        .filter(|p| is_group_version_list(p))
        .collect();
    assert!(legacy.is_empty(), "per-group-version discovery: {legacy:?}");
    assert!(
        requests
            .iter()
            .any(|r| r.resource == "widgets" && r.subresource == "scale" && r.is_write()),
        "kubectl wrote the scale subresource"
    );
}

const GADGET_CRD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              replicas: {type: integer}
              ratio: {type: number}
              paused: {type: boolean}
              selector: {type: object, x-kubernetes-preserve-unknown-fields: true}
          status: {type: object, properties: {phase: {type: string}}}
    additionalPrinterColumns:
    - {name: Replicas, type: integer, jsonPath: .spec.replicas}
    - {name: Ratio, type: number, jsonPath: .spec.ratio}
    - {name: Paused, type: boolean, jsonPath: .spec.paused}
    - {name: Phase, type: string, jsonPath: .status.phase}
    - {name: Selector, type: string, jsonPath: .spec.selector}
    - {name: Created, type: date, jsonPath: .metadata.creationTimestamp}
    - name: Team
      type: string
      jsonPath: .metadata.labels['example\.com\/team']
"#;

/// kubectl's table rows (header first), their cells one space apart.
fn rows(table: &str) -> Vec<String> {
    table
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_get_shows_ages_and_typed_columns_as_on_a_real_cluster() {
    let Some(bed) = bed_for_kubectl(Testbed::builder()).await else {
        return;
    };
    let cluster = bed.cluster();
    let kc = cluster.kubeconfig_path();
    ok(kc, &["apply", "-f", "-"], Some(GADGET_CRD)).await;
    ok(
        kc,
        &[
            "wait",
            "--for=condition=Established",
            "crd/gadgets.example.com",
        ],
        None,
    )
    .await;
    let gadget = "apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g, labels: {example.com/team: blue}}\n\
                  spec: {replicas: 3, ratio: 0.5, paused: false, selector: {tier: web, app: shop}}\n";
    ok(kc, &["apply", "-f", "-"], Some(gadget)).await;
    ok(kc, &["create", "configmap", "c"], None).await;

    cluster.advance_clock(std::time::Duration::from_secs(3 * 3600 + 2 * 60 + 5));

    let listed = rows(&ok(kc, &["get", "gadgets"], None).await);
    // The missing phase is a null cell, which kubectl leaves blank.
    assert_eq!(
        listed,
        [
            "NAME REPLICAS RATIO PAUSED PHASE SELECTOR CREATED TEAM",
            r#"g 3 0.5 false {"app":"shop","tier":"web"} 3h2m blue"#,
        ]
    );
    let one = rows(&ok(kc, &["get", "gadget", "g"], None).await);
    assert_eq!(one, listed);
    let configmaps = rows(&ok(kc, &["get", "configmap", "c"], None).await);
    assert!(configmaps[1].ends_with(" 3h2m"), "{configmaps:?}");
}
