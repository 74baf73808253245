//! Releases of the helm deployer against the real helm v4.1.4 (found through `$HELM` or
//! `PATH`, installed by `.ci/install-tools`) pointed at the testbed: helm lists, shows and
//! upgrades what we installed; we take over, upgrade and prune what helm installed; our record
//! equals helm's own field by field; a crashed operation is recovered into a history helm
//! accepts; uninstall works both ways. Without helm the tests are skipped with a printed
//! reason, except under `CI=true`, where a missing helm is a failure.

mod common;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use common::*;
use flate2::read::GzDecoder;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
use kube::Api;
use kube::api::{ListParams, PostParams};
use landscaper_api::constants::deploy_item_types::HELM;
use landscaper_helm_deployer::{self as helm, release};
use serde_json::{Value, json};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::str::FromStr as _;

const RELEASE: &str = "web";
const NAMESPACE: &str = "apps";

const VALUES_YAML: &str = "greeting: hello\nextra: false\n";
const SCHEMA: &str = r#"{"type": "object", "properties": {"greeting": {"type": "string"}}}"#;
const README: &str = "# demo\nA chart for interop tests.\n";
const NOTES: &str = "{{ .Release.Name }} is at revision {{ .Release.Revision }}.\n";
const CONFIGMAP: &str = r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-config
  labels:
    app: demo
data:
  greeting: {{ .Values.greeting | quote }}
  chart: {{ .Chart.Version | quote }}
  html: "<b>&</b>"
"#;

/// The demo chart: 0.1.0 has the optional `extra` ConfigMap, 0.2.0 dropped it.
struct DemoChart {
    version: &'static str,
}

impl DemoChart {
    const V1: DemoChart = DemoChart { version: "0.1.0" };
    const V2: DemoChart = DemoChart { version: "0.2.0" };

    fn files(&self) -> Vec<(String, String)> {
        let chart_yaml = format!(
            "apiVersion: v2\nname: demo\ndescription: Interop demo\nversion: {}\nappVersion: \"1.0\"\nkeywords:\n  - demo\nmaintainers:\n  - name: Team\n    email: team@example.invalid\n",
            self.version
        );
        let mut files = vec![
            ("demo/Chart.yaml".to_string(), chart_yaml),
            ("demo/values.yaml".into(), VALUES_YAML.into()),
            ("demo/values.schema.json".into(), SCHEMA.into()),
            ("demo/README.md".into(), README.into()),
            ("demo/templates/NOTES.txt".into(), NOTES.into()),
            ("demo/templates/configmap.yaml".into(), CONFIGMAP.into()),
        ];
        if self.version == "0.1.0" {
            files.push(("demo/templates/extra.yaml".into(), EXTRA_CONFIGMAP.into()));
        }
        files
    }

    /// The packaged chart, base64-encoded.
    fn archive(&self) -> String {
        let files = self.files();
        let refs: Vec<(&str, &str)> = files
            .iter()
            .map(|(p, t)| (p.as_str(), t.as_str()))
            .collect();
        chart_archive(&refs)
    }

    /// Writes the package for helm and returns its path.
    fn write(&self, dir: &Path) -> PathBuf {
        let path = dir.join(format!("demo-{}.tgz", self.version));
        std::fs::write(&path, STANDARD.decode(self.archive()).unwrap()).unwrap();
        path
    }

    /// The item configuration deploying this chart with `values`.
    fn config(&self, values: Value) -> Value {
        helm_config(&self.archive(), values)
    }
}

/// The real helm pointed at one cluster of the bed.
struct Helm<'a> {
    env: &'a Env,
    cluster: &'a testbed::Cluster,
}

impl Helm<'_> {
    fn command(&self) -> std::process::Command {
        helm_at(self.env, self.cluster).expect("helm was found when the bed started")
    }

    /// Runs helm; returns (success, stdout, stderr).
    async fn try_run(&self, args: &[&str]) -> (bool, String, String) {
        try_helm(self.command(), args).await
    }

    /// Runs helm and fails the test if it fails.
    async fn run(&self, args: &[&str]) -> String {
        run_helm(self.command(), args).await
    }

    /// `helm install` of the release from the chart package `chart` (creating its namespace),
    /// with `sets` as `--set` values.
    async fn install(&self, chart: &str, sets: &[&str]) -> String {
        let args = [
            "install",
            RELEASE,
            chart,
            "-n",
            NAMESPACE,
            "--create-namespace",
        ];
        self.run(&with_sets(&args, sets)).await
    }

    /// `helm upgrade` of the release to the chart package `chart`, with `sets` as `--set`
    /// values.
    async fn upgrade(&self, chart: &str, sets: &[&str]) -> String {
        let args = ["upgrade", RELEASE, chart, "-n", NAMESPACE];
        self.run(&with_sets(&args, sets)).await
    }

    /// Runs helm with `-o json` and parses the output.
    async fn json(&self, args: &[&str]) -> Value {
        let mut all = args.to_vec();
        all.extend(["-o", "json"]);
        let out = self.run(&all).await;
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("helm {args:?}: {e}: {out}"))
    }

    /// `helm history` as (revision, status, description).
    async fn history(&self) -> Vec<(i64, String, String)> {
        self.json(&["history", RELEASE, "-n", NAMESPACE])
            .await
            .as_array()
            .unwrap()
            .iter()
            .map(|h| {
                (
                    h["revision"].as_i64().unwrap(),
                    h["status"].as_str().unwrap().to_string(),
                    h["description"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }

    /// The releases `helm list -A` shows.
    async fn list(&self) -> Vec<Value> {
        self.json(&["list", "-A"])
            .await
            .as_array()
            .unwrap()
            .to_vec()
    }
}

/// `args` followed by a `--set` for each of `sets`.
fn with_sets<'a>(args: &[&'a str], sets: &[&'a str]) -> Vec<&'a str> {
    let mut all = args.to_vec();
    for set in sets {
        all.extend(["--set", set]);
    }
    all
}

/// The (revision, status) pairs of a history.
fn states(history: &[(i64, String, String)]) -> Vec<(i64, &str)> {
    history.iter().map(|h| (h.0, h.1.as_str())).collect()
}

/// The raw release records of the demo release in `client`'s cluster: (secret, decoded JSON).
async fn raw_records(client: &kube::Client) -> Vec<(Secret, Value)> {
    let secrets: Api<Secret> = Api::namespaced(client.clone(), NAMESPACE);
    let mut out: Vec<(Secret, Value)> = secrets
        .list(&ListParams::default().labels(&format!("owner=helm,name={RELEASE}")))
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|s| {
            let text = s.data.as_ref().unwrap()["release"].0.clone();
            let mut json = Vec::new();
            GzDecoder::new(STANDARD.decode(text).unwrap().as_slice())
                .read_to_end(&mut json)
                .unwrap();
            (s, serde_json::from_slice(&json).unwrap())
        })
        .collect();
    out.sort_by_key(|(_, v)| v["version"].as_i64());
    out
}

/// Every path where `a` and `b` differ, with both values.
fn differences(path: &str, a: &Value, b: &Value, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for key in x.keys().chain(y.keys().filter(|k| !x.contains_key(*k))) {
                let null = Value::Null;
                differences(
                    &format!("{path}.{key}"),
                    x.get(key).unwrap_or(&null),
                    y.get(key).unwrap_or(&null),
                    out,
                );
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                differences(&format!("{path}[{i}]"), p, q, out);
            }
        }
        _ if a != b => out.push(format!("{path}: ours {a}, helm's {b}")),
        _ => {}
    }
}

/// The two clusters, the helm deployer and helm pointed at the target cluster.
struct Bed {
    env: Env,
    deployer: Running,
    charts: tempfile::TempDir,
}

impl Bed {
    async fn start() -> Option<Bed> {
        let env = env().await;
        helm(&env)?;
        env.target("cluster", &[]).await;
        let deployer = env.start_helm_deployer();
        Some(Bed {
            env,
            deployer,
            charts: tempfile::tempdir().unwrap(),
        })
    }

    /// helm pointed at the target cluster.
    fn helm(&self) -> Helm<'_> {
        Helm {
            env: &self.env,
            cluster: self.env.target_cluster(),
        }
    }

    fn chart(&self, chart: &DemoChart) -> String {
        chart.write(self.charts.path()).display().to_string()
    }

    /// Creates or updates the item and waits for job `job` to succeed.
    async fn deploy(&self, job: &str, config: Value) {
        if self.env.items().get_opt(RELEASE).await.unwrap().is_none() {
            assert_eq!(job, "job-1");
            self.env.item(RELEASE, HELM, Some("cluster"), config).await;
        } else {
            self.env.reconfigure(RELEASE, config, job).await;
        }
        self.env.succeeded(RELEASE, job).await;
    }

    async fn configmap(&self, name: &str) -> Option<ConfigMap> {
        self.env.configmap(NAMESPACE, name).await
    }
}

#[tokio::test]
async fn helm_lists_shows_and_histories_what_we_deploy() {
    let Some(bed) = Bed::start().await else {
        return;
    };
    bed.deploy("job-1", DemoChart::V1.config(json!({"greeting": "hi"})))
        .await;

    let list = bed.helm().list().await;
    assert_eq!(list.len(), 1, "{list:?}");
    let entry = &list[0];
    assert_eq!(entry["name"], RELEASE);
    assert_eq!(entry["namespace"], NAMESPACE);
    assert_eq!(entry["revision"], "1");
    assert_eq!(entry["status"], "deployed");
    assert_eq!(entry["chart"], "demo-0.1.0");
    assert_eq!(entry["app_version"], "1.0");

    // The manifest helm shows is the one we applied: the stored one, and helm's own render.
    let manifest = bed
        .helm()
        .run(&["get", "manifest", RELEASE, "-n", NAMESPACE])
        .await;
    let records = raw_records(&bed.env.target).await;
    let stored = records[0].1["manifest"].as_str().unwrap();
    assert_eq!(
        manifest,
        format!("{stored}\n"),
        "helm get manifest ends the text with a newline"
    );
    let chart = bed.chart(&DemoChart::V1);
    let rendered = bed
        .helm()
        .run(&[
            "template",
            RELEASE,
            &chart,
            "-n",
            NAMESPACE,
            "--set",
            "greeting=hi",
        ])
        .await;
    assert_eq!(stored, rendered);
    let live = bed.env.configmap_data(NAMESPACE, "web-config").await;
    assert_eq!(live["greeting"], "hi");
    assert_eq!(live["html"], "<b>&</b>");

    let values = bed
        .helm()
        .json(&["get", "values", RELEASE, "-n", NAMESPACE])
        .await;
    assert_eq!(values, json!({"greeting": "hi"}));
    let notes = bed
        .helm()
        .run(&["get", "notes", RELEASE, "-n", NAMESPACE])
        .await;
    assert!(notes.contains("web is at revision 1."), "{notes}");

    bed.deploy(
        "job-2",
        DemoChart::V1.config(json!({"greeting": "hey", "extra": true})),
    )
    .await;
    let history = bed.helm().history().await;
    assert_eq!(states(&history), vec![(1, "superseded"), (2, "deployed")]);
    assert_eq!(history[0].2, "Install complete");
    assert_eq!(history[1].2, "Upgrade complete");
    let values = bed
        .helm()
        .json(&["get", "values", RELEASE, "-n", NAMESPACE, "--revision", "1"])
        .await;
    assert_eq!(values, json!({"greeting": "hi"}));
    assert_eq!(bed.helm().list().await[0]["revision"], "2");
    assert!(bed.configmap("web-extra").await.is_some());
    bed.deployer.stop().await;
}

#[tokio::test]
async fn our_release_record_equals_the_one_helm_writes() {
    let Some(bed) = Bed::start().await else {
        return;
    };
    // The same chart and values installed by helm into the other cluster, same namespace.
    let helm_ls = Helm {
        env: &bed.env,
        cluster: bed.env.ls_cluster(),
    };
    let chart = bed.chart(&DemoChart::V1);
    helm_ls
        .install(&chart, &["greeting=hi", "extra=true"])
        .await;
    bed.deploy(
        "job-1",
        DemoChart::V1.config(json!({"greeting": "hi", "extra": true})),
    )
    .await;
    let theirs = raw_records(&bed.env.ls).await;
    let ours = raw_records(&bed.env.target).await;
    assert_eq!((ours.len(), theirs.len()), (1, 1));
    let (our_secret, mut our_body) = ours.into_iter().next().unwrap();
    let (their_secret, mut their_body) = theirs.into_iter().next().unwrap();

    // Timestamps differ by nature; both must be set and equal within a record.
    for body in [&mut our_body, &mut their_body] {
        let info = body["info"].as_object_mut().unwrap();
        let first = info.remove("first_deployed").expect("first_deployed set");
        let last = info.remove("last_deployed").expect("last_deployed set");
        assert_eq!(
            first, last,
            "a first install deploys first and last at once"
        );
        assert!(
            k8s_openapi::jiff::Timestamp::from_str(first.as_str().unwrap()).is_ok(),
            "{first}"
        );
    }
    let mut diff = Vec::new();
    differences("release", &our_body, &their_body, &mut diff);
    assert!(diff.is_empty(), "records differ:\n{}", diff.join("\n"));

    assert_eq!(our_secret.type_, their_secret.type_);
    assert_eq!(our_secret.metadata.name, their_secret.metadata.name);
    let label_keys = |s: &Secret| -> Vec<(String, String)> {
        s.metadata
            .labels
            .clone()
            .unwrap_or_default()
            .into_iter()
            .map(|(k, v)| {
                // Creation and modification times are Unix seconds: compare that they are.
                if k == "createdAt" || k == "modifiedAt" {
                    assert!(v.parse::<u64>().is_ok(), "{k}={v}");
                    (k, String::new())
                } else {
                    (k, v)
                }
            })
            .collect()
    };
    assert_eq!(label_keys(&our_secret), label_keys(&their_secret));
    bed.deployer.stop().await;
}

#[tokio::test]
async fn a_release_helm_installed_is_taken_over_upgraded_and_pruned() {
    let Some(bed) = Bed::start().await else {
        return;
    };
    let v1 = bed.chart(&DemoChart::V1);
    bed.helm().install(&v1, &["extra=true"]).await;
    let before = bed.configmap("web-config").await.unwrap();
    assert!(bed.configmap("web-extra").await.is_some());

    // Chart 0.2.0 no longer renders the extra ConfigMap: it goes, the other is updated.
    bed.deploy("job-1", DemoChart::V2.config(json!({"greeting": "taken"})))
        .await;
    let after = bed.configmap("web-config").await.unwrap();
    assert_eq!(after.metadata.uid, before.metadata.uid, "updated in place");
    let data = after.data.unwrap();
    assert_eq!(
        (data["greeting"].as_str(), data["chart"].as_str()),
        ("taken", "0.2.0")
    );
    assert!(
        bed.configmap("web-extra").await.is_none(),
        "pruned as helm upgrade would"
    );
    let history = bed.helm().history().await;
    assert_eq!(states(&history), vec![(1, "superseded"), (2, "deployed")]);
    assert_eq!(history[1].2, "Upgrade complete");
    let list = bed.helm().list().await;
    assert_eq!(
        (list[0]["revision"].as_str(), list[0]["chart"].as_str()),
        (Some("2"), Some("demo-0.2.0"))
    );

    // helm takes it back: revision 3 on top of ours.
    bed.helm().upgrade(&v1, &["greeting=back"]).await;
    let history = bed.helm().history().await;
    assert_eq!(
        states(&history),
        vec![(1, "superseded"), (2, "superseded"), (3, "deployed")]
    );
    let data = bed.env.configmap_data(NAMESPACE, "web-config").await;
    assert_eq!(
        (data["greeting"].as_str(), data["chart"].as_str()),
        ("back", "0.1.0")
    );
    bed.deployer.stop().await;
}

#[tokio::test]
async fn helm_upgrades_and_uninstalls_what_we_installed() {
    let Some(bed) = Bed::start().await else {
        return;
    };
    bed.deploy(
        "job-1",
        DemoChart::V1.config(json!({"greeting": "ours", "extra": true})),
    )
    .await;
    let before = bed.configmap("web-config").await.unwrap();
    let v2 = bed.chart(&DemoChart::V2);
    bed.helm().upgrade(&v2, &["greeting=helm"]).await;
    let after = bed.configmap("web-config").await.unwrap();
    assert_eq!(after.metadata.uid, before.metadata.uid);
    let data = after.data.unwrap();
    assert_eq!(
        (data["greeting"].as_str(), data["chart"].as_str()),
        ("helm", "0.2.0")
    );
    assert!(bed.configmap("web-extra").await.is_none());
    let history = bed.helm().history().await;
    assert_eq!(states(&history), vec![(1, "superseded"), (2, "deployed")]);

    bed.helm()
        .run(&["uninstall", RELEASE, "-n", NAMESPACE])
        .await;
    assert!(bed.configmap("web-config").await.is_none());
    assert!(raw_records(&bed.env.target).await.is_empty());
    assert!(bed.helm().list().await.is_empty());
    bed.deployer.stop().await;
}

#[tokio::test]
async fn deleting_the_item_removes_a_taken_over_release_with_helms_records() {
    let Some(bed) = Bed::start().await else {
        return;
    };
    let v1 = bed.chart(&DemoChart::V1);
    bed.helm().install(&v1, &[]).await;
    bed.deploy("job-1", DemoChart::V1.config(json!({"extra": true})))
        .await;
    assert_eq!(raw_records(&bed.env.target).await.len(), 2);
    bed.env.delete_item(RELEASE).await;
    assert!(bed.configmap("web-config").await.is_none());
    assert!(bed.configmap("web-extra").await.is_none());
    assert!(
        raw_records(&bed.env.target).await.is_empty(),
        "helm's revision 1 too"
    );
    assert!(bed.helm().list().await.is_empty());
    let (ok, _, stderr) = bed
        .helm()
        .try_run(&["history", RELEASE, "-n", NAMESPACE])
        .await;
    assert!(!ok && stderr.contains("not found"), "{stderr}");
    bed.deployer.stop().await;
}

/// Writes revision `version` of the demo release in `status`, as an operation that crashed
/// right after writing its record leaves it.
async fn crashed_record(bed: &Bed, version: i64, status: release::Status) {
    let storage = helm::storage::Storage::new(bed.env.target.clone(), NAMESPACE);
    let mut history = storage.history(RELEASE).await.unwrap();
    let mut record = history.pop().unwrap_or_else(|| release::Release {
        name: RELEASE.into(),
        namespace: NAMESPACE.into(),
        ..Default::default()
    });
    record.version = version;
    record.info.status = status;
    record.info.description = "Preparing upgrade".into();
    storage.create(&record).await.unwrap();
}

#[tokio::test]
async fn a_crashed_helm_upgrade_is_recovered_into_a_history_helm_accepts() {
    let Some(bed) = Bed::start().await else {
        return;
    };
    let v1 = bed.chart(&DemoChart::V1);
    bed.helm().install(&v1, &[]).await;
    crashed_record(&bed, 2, release::Status::PendingUpgrade).await;
    // While the record is pending, helm itself refuses to go on.
    let (ok, _, stderr) = bed
        .helm()
        .try_run(&["upgrade", RELEASE, &v1, "-n", NAMESPACE])
        .await;
    assert!(!ok && stderr.contains("another operation"), "{stderr}");

    bed.deploy("job-1", DemoChart::V2.config(json!({}))).await;
    let history = bed.helm().history().await;
    assert_eq!(
        states(&history),
        vec![(1, "superseded"), (2, "failed"), (3, "deployed")]
    );
    assert!(history[1].2.contains("pending-upgrade"), "{}", history[1].2);
    bed.helm().upgrade(&v1, &[]).await;
    assert_eq!(
        states(&bed.helm().history().await),
        vec![
            (1, "superseded"),
            (2, "failed"),
            (3, "superseded"),
            (4, "deployed")
        ]
    );
    bed.deployer.stop().await;
}

#[tokio::test]
async fn a_crashed_install_is_recovered_and_helm_sees_one_deployed_revision() {
    let Some(bed) = Bed::start().await else {
        return;
    };
    Api::<Namespace>::all(bed.env.target.clone())
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": NAMESPACE}})).unwrap(),
        )
        .await
        .unwrap();
    crashed_record(&bed, 1, release::Status::PendingInstall).await;
    bed.deploy("job-1", DemoChart::V1.config(json!({}))).await;
    let history = bed.helm().history().await;
    assert_eq!(states(&history), vec![(1, "failed"), (2, "deployed")]);
    let list = bed.helm().list().await;
    assert_eq!((list.len(), list[0]["revision"].as_str()), (1, Some("2")));
    bed.helm()
        .run(&["uninstall", RELEASE, "-n", NAMESPACE])
        .await;
    assert!(bed.configmap("web-config").await.is_none());
    bed.deployer.stop().await;
}
