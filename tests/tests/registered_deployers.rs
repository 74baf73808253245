//! A registered deployer reaches an environment end to end: the repository's mock
//! DeployerRegistration (its component from `examples/components`) becomes the pair's
//! Installation, whose blueprint renders a helm DeployItem; the environment's agent installs the
//! mock deployer's chart into its fenced cluster, where the testbed's kubelet mode runs it; the
//! deployer, with the pair's identity and the landscaper cluster kubeconfig the pair's Secret
//! holds, then deploys a user's item for that environment. A registered helm deployer and the
//! agent's embedded one share an environment without ever working on the same item.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::ResourceExt;
use kube::api::{Api, PostParams};
use kube::runtime::{WatchStreamExt, watcher};
use landscaper_api::constants::{annotations, deploy_item_types};
use landscaper_api::core::{
    DeployItem, DeployItemPhase, DeployerRegistration, Installation, InstallationPhase,
    ObjectReference, Target,
};
use landscaper_e2e::blueprints::blueprint_filesystem;
use landscaper_e2e::charts::{HelmRelease, archive_raw, greeting_chart, helm_deploy_item};
use landscaper_e2e::deploy_items::{finished_by, mock_item, start_job};
use landscaper_e2e::registrations::{pair_helm_item, pair_imports, registration_with_template};
use landscaper_e2e::{LS_NAMESPACE, World, eventually_within};
use serde_json::{Value, json};

const ENVIRONMENT: &str = "edge";
/// A namespace of the landscaper cluster the agent does not serve.
const USER_NAMESPACE: &str = "apps";

/// The repository's mock registration, its local component repository named by an absolute
/// path (the example names it relative to the repository root).
fn mock_registration() -> DeployerRegistration {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let text = std::fs::read_to_string(root.join("examples/deployer-registrations/mock.yaml"))
        .expect("the example registration");
    let mut registration: Value = serde_yaml_ng::from_str(&text).expect("YAML");
    registration["spec"]["installationTemplate"]["componentDescriptor"]["ref"]["repositoryContext"]
        ["filePath"] = json!(root.join("examples/components"));
    serde_json::from_value(registration).expect("a DeployerRegistration")
}

/// Waits until the pair's Installation finished a job Succeeded: its deployer is installed and
/// ready. A failed job fails the test with its `lastError`.
async fn pair_installed(installations: &Api<Installation>, pair: &str) {
    eventually_within(
        &format!("the pair's Installation {pair} succeeds (its deployer is installed and ready)"),
        Duration::from_secs(120),
        || async {
            let status = installations
                .get_opt(pair)
                .await
                .expect("Installation read")
                .and_then(|i| i.status)
                .unwrap_or_default();
            assert_ne!(
                status.phase,
                Some(InstallationPhase::Failed),
                "the pair's job failed: {:?}",
                status.last_error
            );
            status.job_id.is_some()
                && status.job_id == status.job_id_finished
                && status.phase == Some(InstallationPhase::Succeeded)
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registered_deployer_is_installed_into_an_environment_and_deploys_its_items() {
    let world = World::start().await;
    world.fenced_cluster().set_simulate_workloads(true);
    let landscaper = world.landscaper_cluster();
    let agent = world.agent(world.agent_settings(ENVIRONMENT)).await;
    // The agent with its embedded helm deployer, as `landscaper-agent run` runs it.
    let _agent = tokio::spawn(landscaper_agent::helm_deployer::run_with_agent(
        agent,
        2,
        std::future::pending(),
    ));
    Api::<DeployerRegistration>::all(landscaper.client())
        .create(&PostParams::default(), &mock_registration())
        .await
        .expect("registration created");

    let installations: Api<Installation> = Api::namespaced(landscaper.client(), LS_NAMESPACE);
    let pair = format!("mock-{ENVIRONMENT}");
    pair_installed(&installations, &pair).await;

    // A user's item for the environment: its Target is the environment's host Target.
    let items: Api<DeployItem> = Api::namespaced(landscaper.client(), LS_NAMESPACE);
    let mut item = mock_item("user-item");
    item.spec.target = Some(ObjectReference {
        name: ENVIRONMENT.to_owned(),
        namespace: Some(LS_NAMESPACE.to_owned()),
    });
    start_job(&items, &item, "job-1").await;
    finished_by(&items, "user-item", "job-1", &pair).await;
}

/// A chart running `landscaper-agent deployer helm` as a pair's deployer: the identity, target
/// selectors and excluded namespaces of its values become flags, the landscaper cluster's
/// kubeconfig a mounted Secret.
fn helm_deployer_chart(dir: &Path) -> String {
    let chart = dir.join("helm-deployer");
    std::fs::create_dir_all(chart.join("templates")).expect("chart folder");
    std::fs::write(
        chart.join("Chart.yaml"),
        "apiVersion: v2\nname: helm-deployer\nversion: 0.1.0\n",
    )
    .expect("Chart.yaml");
    std::fs::write(
        chart.join("templates/secret.yaml"),
        r#"apiVersion: v1
kind: Secret
metadata:
  name: {{ .Release.Name }}-landscaper-cluster
  namespace: {{ .Release.Namespace }}
data:
  kubeconfig: {{ .Values.kubeconfig | b64enc }}
"#,
    )
    .expect("secret template");
    std::fs::write(
        chart.join("templates/deployment.yaml"),
        r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
  namespace: {{ .Release.Namespace }}
spec:
  replicas: 1
  selector:
    matchLabels: {app: {{ .Release.Name }}}
  template:
    metadata:
      labels: {app: {{ .Release.Name }}}
    spec:
      automountServiceAccountToken: false
      containers:
      - name: deployer
        image: landscaper-agent:test
        args:
        - deployer
        - helm
        - --landscaper-kubeconfig=/etc/landscaper-cluster/kubeconfig
        - {{ printf "--identity=%s" .Values.identity | quote }}
        {{- range .Values.targetSelectors }}
        - {{ printf "--target-selector=%s" (toJson .) | quote }}
        {{- end }}
        {{- range .Values.excludedNamespaces }}
        - {{ printf "--exclude-namespace=%s" . | quote }}
        {{- end }}
        volumeMounts:
        - name: landscaper-cluster
          mountPath: /etc/landscaper-cluster
          readOnly: true
      volumes:
      - name: landscaper-cluster
        secret:
          secretName: {{ .Release.Name }}-landscaper-cluster
"#,
    )
    .expect("deployment template");
    archive_raw(&chart)
}

/// A DeployerRegistration `helm` serving helm items, whose inline blueprint installs
/// [`helm_deployer_chart`] (`raw`) with the pair's imports, `excludedNamespaces` among them.
fn helm_registration(raw: &str) -> DeployerRegistration {
    let values = "
      identity: {{ .imports.identity }}
      targetSelectors: {{ toJson .imports.targetSelectors }}
      excludedNamespaces: {{ toJson .imports.excludedNamespaces }}
      kubeconfig: {{ toJson $kubeconfig }}
";
    // The kubeconfig import is a string or a kubeconfig object; the chart takes a string.
    let template = format!(
        "{{{{- $kubeconfig := .imports.landscaperClusterKubeconfig }}}}\n{{{{- if kindIs \"map\" $kubeconfig }}}}{{{{ $kubeconfig = toJson $kubeconfig }}}}{{{{ end }}}}\n{}",
        pair_helm_item(raw, values)
    );
    let mut imports = pair_imports();
    imports.push(json!({"name": "excludedNamespaces", "type": "data", "schema": {"type": "array", "items": {"type": "string"}}}));
    let blueprint = blueprint_filesystem(json!({
        "imports": imports,
        "deployExecutions": [{"name": "default", "type": "GoTemplate", "template": template}],
    }));
    registration_with_template(
        "helm",
        &[deploy_item_types::HELM],
        json!({"blueprint": {"inline": {"filesystem": blueprint}}}),
    )
}

/// A Target `fenced` in `namespace` of the landscaper cluster for the environment's cluster,
/// its kubeconfig inline (a registered deployer reads no Secret of the landscaper cluster).
fn fenced_target(namespace: &str, kubeconfig: &str) -> Target {
    serde_json::from_value(json!({
        "apiVersion": "landscaper.gardener.cloud/v1alpha1",
        "kind": "Target",
        "metadata": {
            "name": "fenced",
            "namespace": namespace,
            "annotations": { annotations::ENVIRONMENT: ENVIRONMENT },
        },
        "spec": {
            "type": "landscaper.gardener.cloud/kubernetes-cluster",
            "config": { "kubeconfig": kubeconfig },
        },
    }))
    .expect("a Target")
}

/// Every deployer identity written into each item's `status.deployer`, from a watch of all
/// DeployItems started before any exists.
#[derive(Clone, Default)]
struct Identities(Arc<Mutex<BTreeMap<String, BTreeSet<String>>>>);

impl Identities {
    fn record(&self, client: kube::Client) -> tokio::task::JoinHandle<()> {
        let seen = self.clone();
        tokio::spawn(async move {
            let items = Api::<DeployItem>::all(client);
            let mut events =
                std::pin::pin!(watcher(items, watcher::Config::default()).applied_objects());
            while let Some(event) = events.next().await {
                let Ok(item) = event else { continue };
                if let Some(deployer) = item.status.as_ref().and_then(|s| s.deployer.as_ref()) {
                    let key = format!(
                        "{}/{}",
                        item.namespace().unwrap_or_default(),
                        item.name_any()
                    );
                    seen.0
                        .lock()
                        .expect("lock")
                        .entry(key)
                        .or_default()
                        .insert(deployer.identity.clone());
                }
            }
        })
    }

    fn of(&self, namespace: &str) -> BTreeMap<String, BTreeSet<String>> {
        let prefix = format!("{namespace}/");
        self.0
            .lock()
            .expect("lock")
            .iter()
            .filter(|(key, _)| key.starts_with(&prefix))
            .map(|(key, identities)| (key.clone(), identities.clone()))
            .collect()
    }
}

/// With a registered helm deployer running in the environment beside the agent's embedded one,
/// each helm item is worked on by exactly one of them: the agent's takes the namespaces it
/// serves (the pairs' Installations, its own deployer's included, and the agent's
/// `deployItemNamespaces`), the registered one every other namespace.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_helm_deployer_works_on_each_item_the_agents_or_the_registered_one() {
    let world = World::start().await;
    world.fenced_cluster().set_simulate_workloads(true);
    let landscaper = world.landscaper_cluster();
    world.create_namespace(landscaper, USER_NAMESPACE).await;
    let identities = Identities::default();
    let _recording = identities.record(landscaper.client());
    let agent = world.agent(world.agent_settings(ENVIRONMENT)).await;
    let _agent = tokio::spawn(landscaper_agent::helm_deployer::run_with_agent(
        agent,
        2,
        std::future::pending(),
    ));
    let dir = tempfile::tempdir().expect("temp dir");
    Api::<DeployerRegistration>::all(landscaper.client())
        .create(
            &PostParams::default(),
            &helm_registration(&helm_deployer_chart(dir.path())),
        )
        .await
        .expect("registration created");
    let pair = format!("helm-{ENVIRONMENT}");
    let installations: Api<Installation> = Api::namespaced(landscaper.client(), LS_NAMESPACE);
    pair_installed(&installations, &pair).await;

    // The same chart and the same kind of Target in the agent's namespace and in another one.
    let kubeconfig = world.fenced_cluster().kubeconfig_yaml();
    let chart = greeting_chart(dir.path());
    for namespace in [LS_NAMESPACE, USER_NAMESPACE] {
        Api::<Target>::namespaced(landscaper.client(), namespace)
            .create(
                &PostParams::default(),
                &fenced_target(namespace, &kubeconfig),
            )
            .await
            .expect("Target created");
        let release = HelmRelease {
            name: &format!("greeting-{namespace}"),
            namespace: "greetings",
            raw: &chart,
            values: json!({}),
        };
        let mut item = helm_deploy_item("greeting", "fenced", release);
        item.metadata.namespace = Some(namespace.to_owned());
        item.spec.target = Some(ObjectReference {
            name: "fenced".to_owned(),
            namespace: Some(namespace.to_owned()),
        });
        Api::<DeployItem>::namespaced(landscaper.client(), namespace)
            .create(&PostParams::default(), &item)
            .await
            .expect("item created");
    }
    let agents = landscaper_agent::helm_deployer::identity(ENVIRONMENT);
    for (namespace, identity) in [(LS_NAMESPACE, &agents), (USER_NAMESPACE, &pair)] {
        let items: Api<DeployItem> = Api::namespaced(landscaper.client(), namespace);
        eventually_within(
            &format!("{namespace}/greeting is deployed by {identity}"),
            Duration::from_secs(60),
            || async {
                let status = items
                    .get("greeting")
                    .await
                    .expect("item")
                    .status
                    .unwrap_or_default();
                status.phase == Some(DeployItemPhase::Succeeded)
                    && status.job_id.is_some()
                    && status.job_id == status.job_id_finished
                    && status.deployer.is_some_and(|d| &d.identity == identity)
            },
        )
        .await;
    }
    let greetings: Api<ConfigMap> = Api::namespaced(world.fenced_cluster().client(), "greetings");
    for namespace in [LS_NAMESPACE, USER_NAMESPACE] {
        greetings
            .get(&format!("greeting-{namespace}-greeting"))
            .await
            .expect("the release's ConfigMap in the fenced cluster");
    }

    // Never touched by the other: every identity any watch event showed on an item.
    let in_agents_namespace = identities.of(LS_NAMESPACE);
    assert!(
        in_agents_namespace.contains_key(&format!("{LS_NAMESPACE}/greeting"))
            && in_agents_namespace.len() >= 2,
        "the pair's item and the user's item in the agent's namespace: {in_agents_namespace:?}"
    );
    for (item, seen) in &in_agents_namespace {
        assert_eq!(seen, &BTreeSet::from([agents.clone()]), "{item}");
    }
    let elsewhere = identities.of(USER_NAMESPACE);
    assert_eq!(
        elsewhere,
        BTreeMap::from([(
            format!("{USER_NAMESPACE}/greeting"),
            BTreeSet::from([pair.clone()])
        )])
    );
}
