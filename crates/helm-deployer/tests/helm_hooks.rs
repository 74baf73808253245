//! Helm hooks and target-aware rendering of the helm deployer on two testbed clusters:
//! install, upgrade and delete hooks run in Helm's order with Jobs awaited and delete
//! policies applied; a failing or timed-out hook fails the item naming the hook; templates
//! see the target's `lookup`, API versions and Kubernetes version, and a lookup the cluster
//! fails to answer is retried, a forbidden one fails the item, and one it never answers ends
//! at the item's timeout.

mod common;

use common::*;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Pod, Secret};
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Api;
use kube::api::{ListParams, Patch, PatchParams, PostParams};
use landscaper_api::constants::deploy_item_types::HELM;
use landscaper_helm_deployer::release;
use serde_json::{Value, json};
use testbed::{Fault, Matcher};

const HOOKED_CHART: &str = "apiVersion: v2\nname: hooked\nversion: 0.1.0\n";

/// The release's own object.
const CONFIG: &str = r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-config
data:
  message: {{ .Values.message | quote }}
"#;

/// A ConfigMap hook: `name`, events, weight and delete policy.
fn configmap_hook(name: &str, events: &str, weight: i64, policy: Option<&str>) -> String {
    let policy = policy
        .map(|p| format!("\n    helm.sh/hook-delete-policy: {p}"))
        .unwrap_or_default();
    format!(
        "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  annotations:\n    helm.sh/hook: {events}\n    helm.sh/hook-weight: \"{weight}\"{policy}\ndata:\n  revision: {{{{ .Release.Revision | quote }}}}\n"
    )
}

/// A Job hook; `annotations` are added as given (YAML lines under `annotations:`).
fn job_hook(name: &str, events: &str, weight: i64, annotations: &[&str]) -> String {
    let extra: String = annotations.iter().map(|a| format!("\n    {a}")).collect();
    format!(
        "---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {name}\n  annotations:\n    helm.sh/hook: {events}\n    helm.sh/hook-weight: \"{weight}\"{extra}\nspec:\n  backoffLimit: 0\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n        - name: run\n          image: busybox\n"
    )
}

/// A post-install Pod hook; nothing runs Pods in the testbed, so the test decides its phase.
const SMOKE_POD: &str = r#"---
apiVersion: v1
kind: Pod
metadata:
  name: smoke
  annotations:
    helm.sh/hook: post-install
    helm.sh/hook-delete-policy: hook-succeeded
spec:
  restartPolicy: Never
  containers:
    - name: run
      image: busybox
"#;

fn hooked_archive() -> String {
    let hooks = [
        configmap_hook("pre-b", "pre-install", 0, None),
        configmap_hook("pre-late", "pre-install", 5, None),
        configmap_hook("pre-a", "pre-install", 0, None),
        configmap_hook("pre-early", "pre-install", -3, None),
        job_hook("pre-job", "pre-install", 1, &[]),
        job_hook(
            "cleanup",
            "pre-install,pre-upgrade",
            2,
            &["helm.sh/hook-delete-policy: hook-succeeded"],
        ),
        configmap_hook("post", "post-install", 0, None),
        SMOKE_POD.to_string(),
        configmap_hook("upgraded", "pre-upgrade", 0, None),
        configmap_hook("every", "pre-install,pre-upgrade", 0, None),
        configmap_hook("post-upgraded", "post-upgrade", 0, None),
        configmap_hook("pre-deleted", "pre-delete", 0, None),
        configmap_hook("post-deleted", "post-delete", 0, None),
        configmap_hook("tested", "test", 0, None),
    ]
    .concat();
    chart_archive(&[
        ("hooked/Chart.yaml", HOOKED_CHART),
        ("hooked/values.yaml", "message: one\n"),
        ("hooked/templates/config.yaml", CONFIG),
        ("hooked/templates/hooks.yaml", &hooks),
    ])
}

/// The resourceVersion of a ConfigMap in `apps` (the testbed's versions grow with each write,
/// so they tell the order of writes).
async fn rv(env: &Env, name: &str) -> u64 {
    let cm = env
        .configmap("apps", name)
        .await
        .unwrap_or_else(|| panic!("ConfigMap apps/{name} exists"));
    cm.metadata.resource_version.unwrap().parse().unwrap()
}

fn jobs(env: &Env) -> Api<Job> {
    Api::namespaced(env.target.clone(), "apps")
}

/// The releases of the release records, oldest first.
async fn releases(env: &Env) -> Vec<release::Release> {
    release_records(env)
        .await
        .into_iter()
        .map(|(_, release)| release)
        .collect()
}

fn hook<'a>(r: &'a release::Release, name: &str) -> &'a release::Hook {
    r.hooks
        .iter()
        .find(|h| h.name == name)
        .unwrap_or_else(|| panic!("hook {name} recorded in revision {}", r.version))
}

#[tokio::test]
async fn install_upgrade_and_delete_run_their_hooks_in_helms_order() {
    let env = env_with_workloads().await;
    let deployer = env.start_helm_deployer();
    let archive = hooked_archive();
    env.helm_item(helm_config(&archive, json!({}))).await;
    // The post-install Pod is awaited until it succeeded.
    let pods: Api<Pod> = Api::namespaced(env.target.clone(), "apps");
    wait_until(|| async { pods.get_opt("smoke").await.unwrap().is_some() }).await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let waiting = env
        .items()
        .get("web")
        .await
        .unwrap()
        .status
        .unwrap_or_default();
    assert_ne!(waiting.job_id_finished.as_deref(), Some("job-1"));
    pods.patch_status(
        "smoke",
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"phase": "Succeeded"}})),
    )
    .await
    .unwrap();
    env.succeeded("web", "job-1").await;
    assert!(pods.get_opt("smoke").await.unwrap().is_none());

    // Pre-install hooks by weight, then name; the Job completed before the next hook; all
    // before the release's objects, the post-install hook after them.
    let job = jobs(&env).get("pre-job").await.unwrap();
    let job_rv: u64 = job.metadata.resource_version.unwrap().parse().unwrap();
    let complete = job.status.and_then(|s| s.conditions).unwrap_or_default();
    assert!(complete.iter().any(|c| c.type_ == "Complete"));
    let order = [
        rv(&env, "pre-early").await,
        rv(&env, "pre-a").await,
        rv(&env, "pre-b").await,
        job_rv,
        rv(&env, "pre-late").await,
        rv(&env, "web-config").await,
        rv(&env, "post").await,
    ];
    assert!(order.is_sorted(), "write order {order:?}");
    // hook-succeeded removed the Job; no upgrade, delete or test hook ran.
    assert!(jobs(&env).get_opt("cleanup").await.unwrap().is_none());
    for name in [
        "upgraded",
        "post-upgraded",
        "pre-deleted",
        "post-deleted",
        "tested",
    ] {
        assert!(env.configmap("apps", name).await.is_none(), "{name}");
    }
    // The release records every hook with its last run, and the default delete policy.
    let records = releases(&env).await;
    let first = &records[0];
    assert_eq!(first.hooks.len(), 14);
    let pre_job = hook(first, "pre-job");
    assert_eq!(
        (pre_job.last_run.phase.as_str(), pre_job.weight),
        ("Succeeded", 1)
    );
    assert_eq!(pre_job.events, vec!["pre-install"]);
    assert_eq!(pre_job.delete_policies, vec!["before-hook-creation"]);
    assert!(!pre_job.last_run.started_at.is_empty() && !pre_job.last_run.completed_at.is_empty());
    assert_eq!(
        hook(first, "cleanup").delete_policies,
        vec!["hook-succeeded"]
    );
    assert_eq!(hook(first, "upgraded").last_run.phase, "");
    // The real helm reads the recorded hooks.
    if let Some(helm) = helm(&env) {
        let hooks = run_helm(helm, &["get", "hooks", "web", "-n", "apps"]).await;
        assert!(
            hooks.contains("# Source: hooked/templates/hooks.yaml\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: pre-job"),
            "{hooks}"
        );
        assert_eq!(hooks.matches("# Source: ").count(), 14, "{hooks}");
    }

    // An upgrade runs the upgrade hooks, not the install hooks again.
    let install_hooks = (rv(&env, "pre-a").await, rv(&env, "post").await);
    let every = env.configmap("apps", "every").await.unwrap().metadata.uid;
    env.reconfigure(
        "web",
        helm_config(&archive, json!({"message": "two"})),
        "job-2",
    )
    .await;
    env.succeeded("web", "job-2").await;
    assert_eq!(
        (rv(&env, "pre-a").await, rv(&env, "post").await),
        install_hooks
    );
    let upgraded = env.configmap_data("apps", "upgraded").await;
    assert_eq!(upgraded["revision"], "2");
    // before-hook-creation (the default) replaced the hook object of revision 1.
    let again = env.configmap("apps", "every").await.unwrap();
    assert_ne!(again.metadata.uid, every);
    assert_eq!(again.data.unwrap()["revision"], "2");
    assert!(rv(&env, "upgraded").await < rv(&env, "web-config").await);
    assert!(rv(&env, "web-config").await < rv(&env, "post-upgraded").await);
    assert!(jobs(&env).get_opt("cleanup").await.unwrap().is_none());
    let records = releases(&env).await;
    assert_eq!(hook(&records[1], "upgraded").last_run.phase, "Succeeded");
    assert_eq!(hook(&records[1], "pre-a").last_run.phase, "");

    // Deleting the item runs the delete hooks around the deletion of the release's objects.
    env.delete_item("web").await;
    assert!(env.configmap("apps", "web-config").await.is_none());
    assert!(rv(&env, "pre-deleted").await < rv(&env, "post-deleted").await);
    assert!(releases(&env).await.is_empty());
    deployer.stop().await;
}

/// A chart whose Job hook `migrate` (pre-install unless `event` says otherwise) never
/// completes by itself (the test decides), rendered only while `run` is true.
fn failing_archive() -> String {
    let job = job_hook(
        "migrate",
        "{{ .Values.event }}",
        0,
        &[
            &format!("{}: \"true\"", testbed::NEVER_READY),
            "helm.sh/hook-delete-policy: {{ .Values.policy }}",
        ],
    );
    chart_archive(&[
        ("hooked/Chart.yaml", HOOKED_CHART),
        (
            "hooked/values.yaml",
            "message: one\nrun: true\npolicy: hook-failed\nevent: pre-install\n",
        ),
        ("hooked/templates/config.yaml", CONFIG),
        (
            "hooked/templates/migrate.yaml",
            &format!("{{{{- if .Values.run }}}}\n{job}{{{{- end }}}}\n"),
        ),
    ])
}

#[tokio::test]
async fn a_failing_hook_fails_the_item_naming_the_hook_and_a_fix_succeeds() {
    let env = env_with_workloads().await;
    let deployer = env.start_helm_deployer();
    let archive = failing_archive();
    env.helm_item(helm_config(&archive, json!({}))).await;
    fail_migration(&env).await;
    let error = env.failed("web", "job-1").await;
    assert_eq!(error.reason, "HookFailed");
    for part in [
        "pre-install",
        "hooked/templates/migrate.yaml",
        "Job apps/migrate",
        "BackoffLimitExceeded",
    ] {
        assert!(error.message.contains(part), "{part}: {}", error.message);
    }
    // hook-failed removed the Job; the release's objects were never written.
    wait_until(|| async { jobs(&env).get_opt("migrate").await.unwrap().is_none() }).await;
    assert!(env.configmap("apps", "web-config").await.is_none());
    let records = releases(&env).await;
    assert_eq!(records[0].info.status, release::Status::Failed);
    assert_eq!(hook(&records[0], "migrate").last_run.phase, "Failed");

    // A hook that never completes fails at the install timeout; without hook-failed the
    // Job stays for inspection.
    let mut timed = helm_config(&archive, json!({"policy": "before-hook-creation"}));
    timed["helmDeploymentConfig"] = json!({"install": {"timeout": "1s"}});
    env.reconfigure("web", timed, "job-2").await;
    let error = env.failed("web", "job-2").await;
    assert_eq!(error.reason, "HookTimeout");
    assert!(
        error.message.contains("timed out after 1s") && error.message.contains("Job apps/migrate"),
        "{}",
        error.message
    );
    assert!(jobs(&env).get_opt("migrate").await.unwrap().is_some());

    // Without the hook the install succeeds.
    env.reconfigure("web", helm_config(&archive, json!({"run": false})), "job-3")
        .await;
    env.succeeded("web", "job-3").await;
    assert!(env.configmap("apps", "web-config").await.is_some());
    deployer.stop().await;
}

const AWARE: &str = r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-seen
data:
  password: {{ (lookup "v1" "Secret" "data" "existing").data.password | default "none" | quote }}
  absent: {{ lookup "v1" "ConfigMap" "data" "absent" | len | quote }}
  listed: "{{ range (lookup "v1" "ConfigMap" "data" "").items }}{{ .kind }}/{{ .metadata.name }},{{ end }}"
  widgets: {{ .Capabilities.APIVersions.Has "example.com/v1" | quote }}
  widgetKind: {{ .Capabilities.APIVersions.Has "example.com/v1/Widget" | quote }}
  gadgets: {{ .Capabilities.APIVersions.Has "gadgets.example.com/v1" | quote }}
  kube: {{ .Capabilities.KubeVersion.Version | quote }}
{{- if .Values.badLookup }}
  bad: {{ lookup "nope.example.com/v1" "Thing" "" "x" | len | quote }}
{{- end }}
"#;

/// The chart of [`AWARE`].
fn aware_archive() -> String {
    chart_archive(&[
        (
            "aware/Chart.yaml",
            "apiVersion: v2\nname: aware\nversion: 0.1.0\n",
        ),
        ("aware/values.yaml", "badLookup: false\n"),
        ("aware/templates/seen.yaml", AWARE),
    ])
}

async fn prepare_target(env: &Env) {
    let create_ns = |name: &str| {
        serde_json::from_value::<Namespace>(json!({"metadata": {"name": name}})).unwrap()
    };
    Api::<Namespace>::all(env.target.clone())
        .create(&PostParams::default(), &create_ns("data"))
        .await
        .unwrap();
    let secret: Secret = serde_json::from_value(json!({
        "metadata": {"name": "existing"}, "stringData": {"password": "s3cret"}
    }))
    .unwrap();
    Api::<Secret>::namespaced(env.target.clone(), "data")
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();
    for name in ["one", "two"] {
        let cm: ConfigMap = serde_json::from_value(json!({"metadata": {"name": name}})).unwrap();
        Api::<ConfigMap>::namespaced(env.target.clone(), "data")
            .create(&PostParams::default(), &cm)
            .await
            .unwrap();
    }
    let crd: CustomResourceDefinition = serde_json::from_value(json!({
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]
        }
    }))
    .unwrap();
    Api::<CustomResourceDefinition>::all(env.target.clone())
        .create(&PostParams::default(), &crd)
        .await
        .unwrap();
    let widgets = kube::discovery::ApiResource {
        group: "example.com".into(),
        version: "v1".into(),
        api_version: "example.com/v1".into(),
        kind: "Widget".into(),
        plural: "widgets".into(),
    };
    let api: Api<kube::api::DynamicObject> =
        Api::namespaced_with(env.target.clone(), "data", &widgets);
    wait_until(|| async { api.list(&ListParams::default()).await.is_ok() }).await;
}

#[tokio::test]
async fn templates_see_the_targets_objects_api_versions_and_version() {
    let env = env().await;
    prepare_target(&env).await;
    env.target("cluster", &[]).await;
    let deployer = env.start_helm_deployer();
    let archive = aware_archive();
    env.helm_item(helm_config(&archive, json!({"badLookup": true})))
        .await;
    let message = env.failed("web", "job-1").await.message;
    assert!(
        message.contains("chart aware-0.1.0")
            && message.contains(r#"lookup "nope.example.com/v1" "Thing" "" "x""#),
        "{message}"
    );

    let good = helm_config(&archive, json!({"badLookup": false}));
    env.reconfigure("web", good, "job-2").await;
    env.succeeded("web", "job-2").await;
    let data = env.configmap_data("apps", "web-seen").await;
    let version = env.target.apiserver_version().await.unwrap().git_version;
    let expected = [
        ("password", "czNjcmV0"),
        ("absent", "0"),
        ("widgets", "true"),
        ("widgetKind", "true"),
        ("gadgets", "false"),
        ("kube", version.as_str()),
    ];
    for (key, value) in expected {
        assert_eq!(data[key], value, "{key}");
    }
    let listed = &data["listed"];
    assert!(
        listed.contains("ConfigMap/one,") && listed.contains("ConfigMap/two,"),
        "{listed}"
    );
    deployer.stop().await;
}

const LOOKS_UP: &str = r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-counted
data:
  widgets: {{ (lookup "example.com/v1" "Widget" "data" "").items | len | quote }}
  configmaps: {{ (lookup "v1" "ConfigMap" "data" "").items | len | quote }}
"#;

#[tokio::test]
async fn lookups_the_cluster_fails_to_answer_are_retried_rather_than_failing_the_item() {
    let env = env().await;
    prepare_target(&env).await;
    env.target("cluster", &[]).await;
    // The discovery of the Widget kind and the list of ConfigMaps answer 500 at first: the
    // cluster is in trouble, the chart is fine.
    let faults = env.target_cluster().faults();
    faults.fail_next(
        2,
        Matcher::any().verb("get").resource("/apis/example.com/v1"),
        Fault::InternalError,
    );
    faults.fail_next(
        1,
        Matcher::any()
            .verb("list")
            .resource("configmaps")
            .namespace("data"),
        Fault::InternalError,
    );
    let deployer = env.start_helm_deployer();
    let archive = chart_archive(&[
        (
            "counter/Chart.yaml",
            "apiVersion: v2\nname: counter\nversion: 0.1.0\n",
        ),
        ("counter/templates/counted.yaml", LOOKS_UP),
    ]);
    env.helm_item(helm_config(&archive, json!({}))).await;
    env.succeeded("web", "job-1").await;
    let failed = answered_with(env.target_cluster(), 500);
    assert_eq!(failed, 3, "every injected fault met a request");
    let data = env.configmap_data("apps", "web-counted").await;
    let configmaps = Api::<ConfigMap>::namespaced(env.target.clone(), "data")
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .len();
    assert_eq!(data["widgets"], "0");
    assert_eq!(data["configmaps"], configmaps.to_string());
    deployer.stop().await;
}

#[tokio::test]
async fn a_lookup_the_deploying_identity_may_not_make_fails_the_item_at_once() {
    let env = env().await;
    prepare_target(&env).await;
    // An identity that may do anything in `apps`, and nothing in `data` beyond discovery.
    let token = env.target_cluster().add_user("apps-only", &[]);
    let admin = env.target.clone();
    Api::<Namespace>::all(admin.clone())
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "apps"}})).unwrap(),
        )
        .await
        .unwrap();
    let role: Role = serde_json::from_value(json!({
        "metadata": {"name": "everything"},
        "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]
    }))
    .unwrap();
    Api::<Role>::namespaced(admin.clone(), "apps")
        .create(&PostParams::default(), &role)
        .await
        .unwrap();
    let binding: RoleBinding = serde_json::from_value(json!({
        "metadata": {"name": "apps-only"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "everything"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "apps-only"}]
    }))
    .unwrap();
    Api::<RoleBinding>::namespaced(admin, "apps")
        .create(&PostParams::default(), &binding)
        .await
        .unwrap();
    let target: landscaper_api::core::Target = serde_json::from_value(json!({
        "apiVersion": "landscaper.gardener.cloud/v1alpha1", "kind": "Target",
        "metadata": {"name": "apps-only", "namespace": NS},
        "spec": {
            "type": "landscaper.gardener.cloud/kubernetes-cluster",
            "config": {"kubeconfig": env.target_cluster().kubeconfig_yaml_for(&token)}
        }
    }))
    .unwrap();
    env.create_target(&target).await;
    let deployer = env.start_helm_deployer();
    let archive = aware_archive();
    let mut provider = helm_config(&archive, json!({}));
    provider["createNamespace"] = json!(false);
    env.item("web", HELM, Some("apps-only"), provider).await;
    let error = env.failed("web", "job-1").await;
    assert_eq!(error.reason, "Forbidden");
    assert!(
        error
            .message
            .contains(r#"lookup "v1" "Secret" "data" "existing" in the target cluster"#),
        "{}",
        error.message
    );
    let forbidden = answered_with(env.target_cluster(), 403);
    assert_eq!(forbidden, 1, "the job was not retried");
    deployer.stop().await;
}

#[tokio::test]
async fn a_lookup_the_cluster_never_answers_ends_at_the_items_timeout() {
    let env = env_with_target().await;
    env.never_answer("get", "configmaps", "probe");
    let deployer = env.start_helm_deployer();
    // Without a bound the lookup would wait for the client's read timeout (minutes), far
    // beyond `finished`'s patience, holding a render slot all along.
    let provider = helm_config(&lookup_probe_archive(), json!({}));
    env.item_with_timeout("web", HELM, Some("cluster"), provider, "2s")
        .await;
    let error = env.failed("web", "job-1").await;
    assert_eq!(error.reason, "ProgressingTimeout");
    assert!(
        error
            .message
            .contains(r#"lookup "v1" "ConfigMap" "data" "probe" in the target cluster"#),
        "{}",
        error.message
    );
    env.answer_again();
    deployer.stop().await;
}

#[tokio::test]
async fn abort_during_a_hook_wait_ends_the_job_as_aborted_naming_the_hook() {
    let env = env_with_workloads().await;
    let deployer = env.start_helm_deployer();
    env.helm_item(helm_config(&failing_archive(), json!({})))
        .await;
    wait_until(|| async { jobs(&env).get_opt("migrate").await.unwrap().is_some() }).await;
    env.annotate(
        "web",
        landscaper_api::constants::annotations::OPERATION,
        "abort",
    )
    .await;
    let error = env.failed("web", "job-1").await;
    assert_eq!(error.reason, "Aborted");
    assert!(
        error
            .message
            .contains("pre-install hooked/templates/migrate.yaml"),
        "{}",
        error.message
    );
    deployer.stop().await;
}

/// Waits for the Job hook `migrate` and marks it failed.
async fn fail_migration(env: &Env) {
    wait_until(|| async { jobs(env).get_opt("migrate").await.unwrap().is_some() }).await;
    jobs(env)
        .patch_status(
            "migrate",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"failed": 1, "conditions": [{
                "type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
                "message": "Job has reached the specified backoff limit"}]}})),
        )
        .await
        .unwrap();
}

#[tokio::test]
async fn atomic_uninstalls_a_failed_install_and_rolls_back_a_failed_upgrade() {
    let env = env_with_workloads().await;
    let deployer = env.start_helm_deployer();
    let archive = failing_archive();
    let atomic = |values: Value| {
        let mut c = helm_config(&archive, values);
        c["helmDeploymentConfig"] =
            json!({"install": {"atomic": true}, "upgrade": {"atomic": true}});
        c
    };

    // The post-install hook fails after the objects were written: all of it is uninstalled.
    env.helm_item(atomic(json!({"event": "post-install"})))
        .await;
    wait_until(|| async { env.configmap("apps", "web-config").await.is_some() }).await;
    fail_migration(&env).await;
    let message = env.failed("web", "job-1").await.message;
    assert!(
        message.contains("has been uninstalled due to atomic being set")
            && message.contains("post-install hooked/templates/migrate.yaml"),
        "{message}"
    );
    assert!(env.configmap("apps", "web-config").await.is_none());
    assert!(releases(&env).await.is_empty());

    // A good install, then an upgrade whose post-upgrade hook fails: rolled back.
    env.reconfigure("web", atomic(json!({"run": false})), "job-2")
        .await;
    env.succeeded("web", "job-2").await;
    let failing_upgrade = atomic(json!({"run": true, "event": "post-upgrade", "message": "two"}));
    env.reconfigure("web", failing_upgrade, "job-3").await;
    wait_until(|| async {
        env.configmap("apps", "web-config")
            .await
            .and_then(|c| c.data)
            .unwrap_or_default()
            .get("message")
            .is_some_and(|m| m == "two")
    })
    .await;
    fail_migration(&env).await;
    let message = env.failed("web", "job-3").await.message;
    assert!(
        message.contains("has been rolled back due to atomic being set"),
        "{message}"
    );
    let data = env.configmap_data("apps", "web-config").await;
    assert_eq!(data["message"], "one");
    let history: Vec<_> = releases(&env)
        .await
        .into_iter()
        .map(|r| (r.version, r.info.status, r.info.description))
        .collect();
    assert_eq!(history[0].1, release::Status::Superseded);
    assert_eq!(history[1].1, release::Status::Failed);
    assert_eq!(
        (history[2].1, history[2].2.as_str()),
        (release::Status::Deployed, "Rollback to 1")
    );
    deployer.stop().await;
}

#[tokio::test]
async fn concurrent_renders_for_one_target_ask_its_discovery_once() {
    let env = env().await;
    let discovery = landscaper_deployer::applier::Discovery::new(env.target.clone());
    env.target_cluster().reset_requests();
    let answers = futures::future::join_all((0..20).map(|_| discovery.served())).await;
    let first = answers[0].as_ref().unwrap();
    assert!(answers.iter().all(|a| a.as_ref().unwrap() == first));
    assert!(first.api_versions.iter().any(|v| v == "apps/v1/Deployment"));
    let asked = env
        .target_cluster()
        .requests()
        .iter()
        .filter(|r| r.resource == "/version")
        .count();
    assert_eq!(asked, 1);
}
