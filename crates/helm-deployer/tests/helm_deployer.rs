//! The helm deployer on two testbed clusters: an inline chart archive is rendered, applied
//! and recorded as a Helm release; an upgrade adds a revision; a template error fails naming
//! the chart and a fixed item succeeds; delete removes objects and records; a job resumed
//! after a restart reads the inline archive the controller's cache does not keep; the CRDs of
//! a subchart its condition disables are not installed.

mod common;

use common::*;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Api;
use landscaper_api::constants::deploy_item_types::HELM;
use landscaper_api::core::{DeployItem, DeployItemSpec, ObjectReference};
use landscaper_helm_deployer::{self as helm, release};
use serde_json::json;

const CHART_YAML: &str = "apiVersion: v2\nname: demo\nversion: 0.1.0\nappVersion: \"1.0\"\n";
const VALUES_YAML: &str = "greeting: hello\nextra: false\n";
const CONFIGMAP: &str = r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-config
data:
  greeting: {{ .Values.greeting | quote }}
  revision: {{ .Release.Revision | quote }}
  namespace: {{ .Release.Namespace }}
"#;

/// A `.tgz` of the demo chart, with `broken` adding a template that fails to parse.
fn archive(broken: bool) -> String {
    let mut files = vec![
        ("demo/Chart.yaml", CHART_YAML),
        ("demo/values.yaml", VALUES_YAML),
        ("demo/templates/configmap.yaml", CONFIGMAP),
        ("demo/templates/extra.yaml", EXTRA_CONFIGMAP),
    ];
    if broken {
        files.push((
            "demo/templates/broken.yaml",
            "{{ .Values.greeting | nosuchfunc }}",
        ));
    }
    chart_archive(&files)
}

/// A CRD of `example.com` whose plural is `plural`.
fn crd(plural: &str) -> String {
    let kind = plural.trim_end_matches('s');
    format!(
        "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: {plural}.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {{plural: {plural}, singular: {kind}, kind: {kind}, listKind: {kind}List}}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {{type: object, x-kubernetes-preserve-unknown-fields: true}}
"
    )
}

/// A `.tgz` of a chart with a CRD in its `crds/` and two subcharts with one each: `addon`,
/// enabled, and `legacy`, which its condition disables.
fn crd_archive() -> String {
    let chart_yaml = "apiVersion: v2\nname: demo\nversion: 0.1.0\ndependencies:
- name: addon\n  version: 0.1.0\n  condition: addon.enabled
- name: legacy\n  version: 0.1.0\n  condition: legacy.enabled\n";
    let subchart = |name: &str| format!("apiVersion: v2\nname: {name}\nversion: 0.1.0\n");
    let (addon, legacy) = (subchart("addon"), subchart("legacy"));
    let (gadgets, gizmos, widgets) = (crd("gadgets"), crd("gizmos"), crd("widgets"));
    chart_archive(&[
        ("demo/Chart.yaml", chart_yaml),
        ("demo/values.yaml", "legacy:\n  enabled: false\n"),
        ("demo/templates/configmap.yaml", CONFIGMAP),
        ("demo/crds/gadgets.yaml", &gadgets),
        ("demo/charts/addon/Chart.yaml", &addon),
        ("demo/charts/addon/crds/gizmos.yaml", &gizmos),
        ("demo/charts/legacy/Chart.yaml", &legacy),
        ("demo/charts/legacy/crds/widgets.yaml", &widgets),
    ])
}

/// The release records as (Secret name, status label, release), after checking that each
/// Secret's type and labels agree with its release.
async fn records(env: &Env) -> Vec<(String, String, release::Release)> {
    release_records(env)
        .await
        .into_iter()
        .map(|(s, body)| {
            assert_eq!(s.type_.as_deref(), Some(helm::storage::SECRET_TYPE));
            let labels = s.metadata.labels.clone().unwrap();
            assert_eq!(labels["version"], body.version.to_string());
            assert_eq!(labels["status"], body.info.status.as_str());
            (s.metadata.name.unwrap(), labels["status"].clone(), body)
        })
        .collect()
}

#[tokio::test]
async fn an_inline_chart_is_installed_upgraded_recorded_and_uninstalled() {
    let env = env_with_target().await;
    let deployer = env.start_helm_deployer();
    env.helm_item(helm_config(&archive(false), json!({}))).await;
    env.succeeded("web", "job-1").await;
    let cm = env
        .configmap("apps", "web-config")
        .await
        .expect("ConfigMap rendered and applied");
    let data = cm.data.clone().unwrap();
    assert_eq!(
        (
            data["greeting"].as_str(),
            data["revision"].as_str(),
            data["namespace"].as_str()
        ),
        ("hello", "1", "apps")
    );
    let labels = cm.metadata.labels.clone().unwrap();
    assert_eq!(labels["app.kubernetes.io/managed-by"], "Helm");
    assert_eq!(
        cm.metadata.annotations.clone().unwrap()["meta.helm.sh/release-name"],
        "web"
    );
    let recs = records(&env).await;
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].0, "sh.helm.release.v1.web.v1");
    assert_eq!(recs[0].1, "deployed");
    assert_eq!(recs[0].2.info.description, "Install complete");
    assert_eq!(recs[0].2.chart_version(), "0.1.0");
    assert!(
        recs[0]
            .2
            .manifest
            .contains("# Source: demo/templates/configmap.yaml")
    );

    // The same input again re-applies without a new revision.
    env.trigger("web", "job-2").await;
    env.finished("web", "job-2").await;
    assert_eq!(records(&env).await.len(), 1);

    // Changed values: revision 2 adds the extra object, revision 1 is superseded.
    let values = json!({"greeting": "hi", "extra": true});
    env.reconfigure("web", helm_config(&archive(false), values), "job-3")
        .await;
    env.succeeded("web", "job-3").await;
    let data = env.configmap_data("apps", "web-config").await;
    assert_eq!(
        (data["greeting"].as_str(), data["revision"].as_str()),
        ("hi", "2")
    );
    assert!(env.configmap("apps", "web-extra").await.is_some());
    let recs = records(&env).await;
    let states: Vec<_> = recs.iter().map(|r| (r.2.version, r.1.as_str())).collect();
    assert_eq!(states, vec![(1, "superseded"), (2, "deployed")]);
    assert_eq!(recs[1].2.info.description, "Upgrade complete");
    assert_eq!(
        recs[1].2.config,
        json!({"greeting": "hi", "extra": true})
            .as_object()
            .unwrap()
            .clone()
    );

    // Delete removes the objects and the release records.
    env.delete_item("web").await;
    assert!(env.configmap("apps", "web-config").await.is_none());
    assert!(env.configmap("apps", "web-extra").await.is_none());
    assert!(records(&env).await.is_empty());
    deployer.stop().await;
}

#[tokio::test]
async fn the_crds_of_the_chart_and_its_enabled_subcharts_are_installed_but_not_a_disabled_ones() {
    let env = env_with_target().await;
    let deployer = env.start_helm_deployer();
    env.helm_item(helm_config(&crd_archive(), json!({"greeting": "hi"})))
        .await;
    env.succeeded("web", "job-1").await;
    let crds: Api<CustomResourceDefinition> = Api::all(env.target.clone());
    for (name, wanted) in [("gadgets", true), ("gizmos", true), ("widgets", false)] {
        let found = crds
            .get_opt(&format!("{name}.example.com"))
            .await
            .unwrap()
            .is_some();
        assert_eq!(found, wanted, "CRD {name}.example.com");
    }
    assert!(env.configmap("apps", "web-config").await.is_some());
    deployer.stop().await;
}

#[tokio::test]
async fn a_template_error_fails_naming_the_chart_and_a_fix_succeeds() {
    let env = env_with_target().await;
    let deployer = env.start_helm_deployer();
    env.helm_item(helm_config(&archive(true), json!({}))).await;
    let message = env.failed("web", "job-1").await.message;
    assert!(
        message.contains("chart demo-0.1.0") && message.contains("nosuchfunc"),
        "{message}"
    );
    assert!(env.configmap("apps", "web-config").await.is_none());
    assert!(records(&env).await.is_empty());

    env.reconfigure("web", helm_config(&archive(false), json!({})), "job-2")
        .await;
    env.succeeded("web", "job-2").await;
    assert_eq!(records(&env).await.len(), 1);
    deployer.stop().await;
}

#[tokio::test]
async fn a_release_left_pending_by_a_crash_is_recovered() {
    let env = env_with_target().await;
    Api::<k8s_openapi::api::core::v1::Namespace>::all(env.target.clone())
        .create(
            &Default::default(),
            &serde_json::from_value(json!({"metadata": {"name": "apps"}})).unwrap(),
        )
        .await
        .unwrap();
    let storage = helm::storage::Storage::new(env.target.clone(), "apps");
    storage
        .create(&release::Release {
            name: "web".into(),
            info: release::Info {
                status: release::Status::PendingInstall,
                ..Default::default()
            },
            version: 1,
            namespace: "apps".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let deployer = env.start_helm_deployer();
    env.helm_item(helm_config(&archive(false), json!({}))).await;
    env.succeeded("web", "job-1").await;
    let states: Vec<_> = records(&env)
        .await
        .into_iter()
        .map(|r| (r.2.version, r.1))
        .collect();
    assert_eq!(
        states,
        vec![(1, "failed".to_string()), (2, "deployed".to_string())]
    );
    deployer.stop().await;
}

#[tokio::test]
async fn a_job_resumed_after_a_restart_reads_the_inline_archive() {
    let env = env_with_target().await;
    // Picked up by a deployer that stopped before finishing: the next one resumes the job
    // without a pickup write, from an item its cache keeps without `chart.archive.raw`.
    let di = DeployItem::new(
        "web",
        DeployItemSpec {
            type_: HELM.into(),
            target: Some(ObjectReference {
                name: "cluster".into(),
                namespace: Some(NS.into()),
            }),
            config: Some(helm_config(&archive(false), json!({}))),
            ..Default::default()
        },
    );
    env.items().create(&Default::default(), &di).await.unwrap();
    env.items()
        .patch_status(
            "web",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(json!({"status": {"jobID": "job-1", "phase": "Progressing"}})),
        )
        .await
        .unwrap();
    let deployer = env.start_helm_deployer();
    env.succeeded("web", "job-1").await;
    assert!(env.configmap("apps", "web-config").await.is_some());
    deployer.stop().await;
}

#[tokio::test]
async fn an_apply_the_cluster_never_answers_ends_at_the_timeout_and_the_release_records_it() {
    let env = env_with_target().await;
    env.never_answer("patch", "configmaps", "web-config");
    let deployer = env.start_helm_deployer();
    env.item_with_timeout(
        "web",
        HELM,
        Some("cluster"),
        helm_config(&archive(false), json!({})),
        "2s",
    )
    .await;
    let error = env.failed("web", "job-1").await;
    assert_eq!(error.reason, "ProgressingTimeout");
    assert!(
        error.message.contains("ConfigMap apps/web-config"),
        "{}",
        error.message
    );
    // The record of the failed revision is written after the job had to stop.
    let recs = records(&env).await;
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].1, "failed");
    assert!(
        recs[0]
            .2
            .info
            .description
            .contains("did not finish within its timeout of 2s"),
        "{}",
        recs[0].2.info.description
    );
    env.answer_again();
    deployer.stop().await;
}

/// A chart of one Deployment whose image is the value `image`.
fn web_archive() -> String {
    chart_archive(&[
        (
            "web/Chart.yaml",
            "apiVersion: v2\nname: web\nversion: 0.1.0\n",
        ),
        ("web/values.yaml", "image: web:1\n"),
        (
            "web/templates/deployment.yaml",
            r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
spec:
  replicas: 1
  selector:
    matchLabels: {app: {{ .Release.Name }}}
  template:
    metadata:
      labels: {app: {{ .Release.Name }}}
    spec:
      containers:
        - name: web
          image: {{ .Values.image }}
"#,
        ),
    ])
}

#[tokio::test]
async fn a_value_change_to_an_image_that_never_gets_ready_does_not_succeed() {
    let env = env().await;
    env.target_cluster().set_simulate_workloads(true);
    env.target_cluster().set_never_ready_image("web:broken");
    env.target("cluster", &[]).await;
    let _d = env.start_helm_deployer();
    let archive = web_archive();
    env.item_with_timeout(
        "web",
        HELM,
        Some("cluster"),
        helm_config(&archive, json!({})),
        "3s",
    )
    .await;
    env.succeeded("web", "job-1").await;

    // What went Succeeded on a real cluster: the upgrade's new pod never starts, the old one
    // keeps serving.
    let broken = helm_config(&archive, json!({"image": "web:broken"}));
    env.reconfigure("web", broken, "job-2").await;
    let message = env.failed("web", "job-2").await.message;
    assert!(
        message.contains("Deployment apps/web: 1 old replicas pending termination"),
        "{message}"
    );

    let fixed = helm_config(&archive, json!({"image": "web:2"}));
    env.reconfigure("web", fixed, "job-3").await;
    env.succeeded("web", "job-3").await;
}
