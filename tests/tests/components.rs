//! Our deployers as components (examples/components, a `type: local` repository): the blobs
//! are the packaged chart and blueprint folders; every example registration's Installation, as
//! the landscaper makes it for a pair, resolves its component and blueprint from the folder
//! (named relative to the repository's root); the manifest and mock blueprints render the helm
//! DeployItem that installs the component's chart with values the chart renders into a running
//! deployer, and which the helm deployer installs from the folder; the hello blueprint renders a
//! manifest DeployItem.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;
use kube::api::{Api, PostParams};
use landscaper::controllers::deployer_registration::Pair;
use landscaper_api::constants::deploy_item_types;
use landscaper_api::core::{
    DeployItem, DeployItemPhase, DeployerRegistration, Environment, EnvironmentSpec, Installation,
    Target,
};
use landscaper_blueprint::registry::blueprint_from_archive;
use landscaper_blueprint::{
    DeployItemSpecification, ExecutionOptions, Filesystem, LocalRepository, MemoryState,
    RegistryAccess, RegistryOptions, Repository, Templater, imports, source,
};
use landscaper_chart::helm::chart::{self, Chart};
use landscaper_chart::helm::render::{self, ReleaseOptions, TemplateOptions};
use landscaper_deployer::controller::DeployerConfig;
use landscaper_e2e::charts::assert_packaged_from;
use landscaper_e2e::eventually_within;
use landscaper_e2e::rbac::{create_all, documents};
use landscaper_helm_deployer as helm;
use serde_json::{Value as Json, json};
use testbed::Testbed;

const ENVIRONMENT: &str = "default";
const NAMESPACE: &str = "ls-system";
const LANDSCAPER_KUBECONFIG: &str = "apiVersion: v1\nkind: Config\nclusters: []\n";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .expect("the repository root")
}

/// The examples name the local repository relative to the repository's root, where the
/// landscaper runs in dev mode; every test of this file runs there.
fn at_root() {
    std::env::set_current_dir(root()).expect("the repository root is a directory");
}

fn registration(name: &str) -> DeployerRegistration {
    let path = root().join(format!("examples/deployer-registrations/{name}.yaml"));
    let text = std::fs::read_to_string(&path).expect("the example is readable");
    let decoded = landscaper_api::decode::from_yaml::<DeployerRegistration>(
        &text,
        &path.display().to_string(),
    )
    .expect("the example is a DeployerRegistration");
    assert!(
        decoded.unknown_fields.is_empty(),
        "{name}: {:?}",
        decoded.unknown_fields
    );
    decoded.value
}

fn environment() -> Environment {
    let spec: EnvironmentSpec = serde_json::from_value(json!({
        "hostTarget": {"type": "landscaper.gardener.cloud/kubernetes-cluster",
            "secretRef": {"name": "default-target-access", "namespace": NAMESPACE, "key": "kubeconfig"}},
        "namespace": NAMESPACE,
        "landscaperClusterConfig": {"host": "https://landscaper.example:6443", "apiPath": ""},
        "targetSelectors": [{"annotations": [{"key": "landscaper.gardener.cloud/environment",
            "operator": "=", "values": [ENVIRONMENT]}]}],
    }))
    .expect("an environment spec");
    Environment::new(ENVIRONMENT, spec)
}

/// The environment's Target as the Environment controller writes it: a secretRef to the
/// agent's access Secret in the host cluster.
fn cluster_target() -> Json {
    json!({"apiVersion": "landscaper.gardener.cloud/v1alpha1", "kind": "Target",
        "metadata": {"name": ENVIRONMENT, "namespace": NAMESPACE},
        "spec": {"type": "landscaper.gardener.cloud/kubernetes-cluster",
            "secretRef": {"name": "default-target-access", "namespace": NAMESPACE, "key": "kubeconfig"}}})
}

/// What the pair's Installation gives the blueprint: its data mappings (constants here) and
/// its two targets; the landscaper cluster's Target with its kubeconfig inline.
fn pair_imports(installation: &Installation) -> serde_json::Map<String, Json> {
    let mut given: serde_json::Map<String, Json> = installation
        .spec
        .import_data_mappings
        .clone()
        .expect("the pair maps data")
        .into_iter()
        .collect();
    given.insert("cluster".into(), cluster_target());
    given.insert(
        "landscaperCluster".into(),
        json!({"apiVersion": "landscaper.gardener.cloud/v1alpha1", "kind": "Target",
            "metadata": {"name": installation.name_any(), "namespace": NAMESPACE},
            "spec": {"type": "landscaper.gardener.cloud/kubernetes-cluster",
                "config": {"kubeconfig": LANDSCAPER_KUBECONFIG}}}),
    );
    given
}

/// The pair Installation of the example registration `name` in environment `default`, its
/// blueprint resolved from the local folder and rendered with the pair's imports.
async fn render_pair(
    name: &str,
    adjust: impl FnOnce(&mut serde_json::Map<String, Json>),
) -> (Installation, Vec<DeployItemSpecification>) {
    at_root();
    let registration = registration(name);
    let environment = environment();
    let pair = Pair::new(&registration, &environment, NAMESPACE).expect("a valid pair");
    let installation = pair.installation();
    let access = RegistryAccess::new(RegistryOptions::default());
    let resolved = source::resolve(&installation.spec, None, &access)
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(
        matches!(resolved.repository, Some(Repository::Local { .. })),
        "{name}: {:?}",
        resolved.repository
    );
    let mut given = pair_imports(&installation);
    adjust(&mut given);
    let imports = imports::validate(&resolved.blueprint, &resolved.filesystem, &given)
        .unwrap_or_else(|problems| panic!("{name}: {problems:?}"));
    let options = ExecutionOptions {
        blueprint: resolved.blueprint,
        filesystem: Arc::new(resolved.filesystem),
        installation: Some(serde_json::to_value(&installation).unwrap()),
        component: resolved.component,
        components: resolved.components,
        imports,
        source: None,
        targets: None,
    };
    let state = MemoryState::default();
    let items = Templater::new(&state)
        .deploy_executions(&options)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    (installation, items)
}

/// The chart a helm item's `chart.fromResource` names, read as the helm deployer reads it.
async fn chart_of(item: &DeployItemSpecification) -> Chart {
    let from = &item.config["chart"]["fromResource"];
    let reference = &from["ref"];
    let repository = Repository::from_context(&reference["repositoryContext"]).unwrap();
    let access = RegistryAccess::new(RegistryOptions::default());
    let text = |key: &str| reference[key].as_str().unwrap().to_owned();
    let descriptor = access
        .descriptor(&repository, &text("componentName"), &text("version"))
        .await
        .unwrap();
    let resource = descriptor
        .resources(&[("name".into(), from["resourceName"].as_str().unwrap().into())])
        .remove(0);
    let archive = access
        .resource_content(&repository, &descriptor, &resource)
        .await
        .unwrap();
    chart::load_archive(&archive).expect("the chart resource is a chart archive")
}

/// Renders `chart` as the helm deployer does for `item`: release name and namespace, values.
fn install(chart: &Chart, item: &DeployItemSpecification) -> Vec<Json> {
    let values = landscaper_helm_deployer::render::values(Some(&item.config["values"]), &item.name)
        .expect("values");
    let options = TemplateOptions {
        release: ReleaseOptions {
            name: item.config["name"].as_str().unwrap().into(),
            namespace: item.config["namespace"].as_str().unwrap().into(),
            ..Default::default()
        },
        ..Default::default()
    };
    let release = render::install(chart, &values, &options).expect("the chart renders");
    documents(&render::template_output(release, &options).expect("template output"))
}

#[tokio::test]
async fn deployer_registrations_install_their_chart_through_a_helm_item() {
    for (name, kind) in [("manifest", "manifest"), ("mock", "mock")] {
        let (installation, items) = render_pair(name, |_| {}).await;
        let [item] = items.as_slice() else {
            panic!("{name}: one item, got {items:?}")
        };
        assert_eq!(item.type_, "landscaper.gardener.cloud/helm", "{name}");
        assert_eq!(
            item.target.as_ref().and_then(|t| t.import.as_deref()),
            Some("cluster")
        );
        let pair = installation.name_any();
        assert_eq!(item.config["name"], pair.as_str());
        assert_eq!(item.config["namespace"], NAMESPACE);
        // The chart is the component's chart resource, in the repository the pair found the
        // component in.
        assert_eq!(
            item.config["chart"]["fromResource"],
            json!({
                "ref": {
                    "componentName": format!("example.invalid/landscaper-rs/{kind}-deployer"),
                    "version": "v0.1.0",
                    "repositoryContext": {"type": "local", "filePath": "examples/components"},
                },
                "resourceName": format!("{kind}-deployer-chart"),
            }),
            "{name}"
        );
        let chart = chart_of(item).await;
        assert_eq!(chart.metadata.name, format!("{kind}-deployer"));

        // What the chart makes of the values: the agent image running `deployer <kind>` as
        // the pair's identity for the environment's Targets, reaching the landscaper cluster.
        let values = &item.config["values"];
        assert_eq!(
            values["image"],
            json!({"repository": "landscaper-agent", "tag": "0.1.0"})
        );
        let rendered = install(&chart, item);
        let fullname = format!("{pair}-{kind}-deployer");
        let deployment = rendered
            .iter()
            .find(|d| d["kind"] == "Deployment")
            .expect("a Deployment");
        let deployment: Deployment = serde_json::from_value(deployment.clone()).unwrap();
        let container = deployment.spec.unwrap().template.spec.unwrap().containers[0].clone();
        assert_eq!(container.image.as_deref(), Some("landscaper-agent:0.1.0"));
        let args = container.args.unwrap();
        assert_eq!(args[..2], ["deployer".to_owned(), kind.to_owned()]);
        let config = rendered
            .iter()
            .find(|d| d["metadata"]["name"] == format!("{fullname}-config"))
            .expect("the config Secret");
        let config: Json =
            serde_yaml_ng::from_str(config["stringData"]["config.yaml"].as_str().unwrap()).unwrap();
        assert_eq!(config["identity"], pair.as_str());
        assert_eq!(
            config["targetSelector"],
            json!([{"annotations": [{"key": "landscaper.gardener.cloud/environment", "operator": "=", "values": [ENVIRONMENT]}]}])
        );
        let kubeconfig = rendered
            .iter()
            .find(|d| d["metadata"]["name"] == format!("{fullname}-landscaper-cluster"))
            .expect("the landscaper cluster's kubeconfig Secret");
        use base64::Engine as _;
        let stored = base64::engine::general_purpose::STANDARD
            .decode(kubeconfig["data"]["kubeconfig"].as_str().unwrap())
            .unwrap();
        assert_eq!(stored, LANDSCAPER_KUBECONFIG.as_bytes());
        if kind == "manifest" {
            // The manifest deployer reads the environment Target's Secret in its own cluster.
            assert!(
                args.contains(
                    &"--secrets-kubeconfig=/etc/landscaper-deployer/secrets-cluster/kubeconfig"
                        .to_owned()
                ),
                "{args:?}"
            );
            assert_eq!(
                values["deployer"]["secretsKubeconfig"],
                json!({"secretRef": {"name": "default-target-access"}})
            );
            // The registration's own values reach the chart.
            assert_eq!(values["deployer"]["logLevel"], "info");
        }
    }
}

#[tokio::test]
async fn a_landscaper_kubeconfig_import_wins_over_the_targets() {
    let (_, items) = render_pair("mock", |given| {
        // The pair's Target as the registration controller writes it: a secretRef, which a
        // template cannot read; the kubeconfig comes as a data import instead.
        given["landscaperCluster"]["spec"] = json!({
            "type": "landscaper.gardener.cloud/kubernetes-cluster",
            "secretRef": {"name": "mock-default-landscaper-cluster", "key": "kubeconfig"},
        });
        given.insert(
            "landscaperClusterKubeconfig".into(),
            json!("kubeconfig from the Secret"),
        );
    })
    .await;
    assert_eq!(
        items[0].config["values"]["deployer"]["landscaperClusterKubeconfig"],
        json!({"kubeconfig": "kubeconfig from the Secret"})
    );
}

#[tokio::test]
async fn the_hello_registration_needs_the_manifest_deployer() {
    let (installation, items) = render_pair("hello", |_| {}).await;
    let [item] = items.as_slice() else {
        panic!("one item, got {items:?}")
    };
    assert_eq!(item.type_, "landscaper.gardener.cloud/kubernetes-manifest");
    assert_eq!(
        item.target.as_ref().and_then(|t| t.import.as_deref()),
        Some("cluster")
    );
    let manifest = &item.config["manifests"][0]["manifest"];
    assert_eq!(manifest["kind"], "ConfigMap");
    assert_eq!(
        manifest["metadata"]["name"],
        installation.name_any().as_str()
    );
    assert_eq!(manifest["metadata"]["namespace"], NAMESPACE);
    assert_eq!(manifest["data"]["identity"], "hello-default");
    assert_eq!(
        manifest["data"]["greeting"],
        "hello from a deployer installed by the manifest deployer"
    );
    let config: landscaper_api::deployer::ManifestProviderConfiguration =
        serde_json::from_value(item.config.clone()).expect("a manifest ProviderConfiguration");
    assert_eq!(config.manifests.len(), 1);
}

/// The mock registration's helm item, as its pair renders it, served by the helm deployer
/// (the agent's, here the library's on a testbed cluster): the chart comes from the local
/// repository and the mock deployer's objects appear in the environment's namespace.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_helm_deployer_installs_the_deployer_from_the_local_repository() {
    let (installation, items) = render_pair("mock", |_| {}).await;
    // The workload simulator makes the deployer's Deployment ready, as a kubelet would.
    let bed = Testbed::builder()
        .simulate_workloads(true)
        .start()
        .await
        .expect("testbed starts");
    let cluster = bed.cluster();
    let client = cluster.client();
    landscaper::crds::ensure(&client).await.expect("CRDs");
    create_all(
        &client,
        &[json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})],
        "",
    )
    .await;
    let target: Target = serde_json::from_value(json!({
        "metadata": {"name": ENVIRONMENT, "namespace": NAMESPACE},
        "spec": {"type": "landscaper.gardener.cloud/kubernetes-cluster",
            "config": {"kubeconfig": cluster.kubeconfig_yaml()}},
    }))
    .unwrap();
    Api::<Target>::namespaced(client.clone(), NAMESPACE)
        .create(&PostParams::default(), &target)
        .await
        .unwrap();
    let item: DeployItem = serde_json::from_value(json!({
        "metadata": {"name": "mock-default-deploy", "namespace": NAMESPACE,
            "annotations": {"landscaper.gardener.cloud/operation": "reconcile"}},
        "spec": {"type": items[0].type_, "target": {"name": ENVIRONMENT, "namespace": NAMESPACE},
            "config": items[0].config},
    }))
    .unwrap();
    let deploy_items: Api<DeployItem> = Api::namespaced(client.clone(), NAMESPACE);
    deploy_items
        .create(&PostParams::default(), &item)
        .await
        .unwrap();
    let mut config = DeployerConfig::new(deploy_item_types::HELM, "components-test");
    config.namespace = Some(NAMESPACE.into());
    tokio::spawn(landscaper_deployer::run(
        helm::setup(client.clone(), client.clone(), config),
        std::future::pending(),
    ));
    eventually_within(
        "the mock deployer's helm item succeeds",
        Duration::from_secs(120),
        || async {
            let item = deploy_items.get("mock-default-deploy").await.unwrap();
            item.status.and_then(|s| s.phase) == Some(DeployItemPhase::Succeeded)
        },
    )
    .await;
    let name = format!("{}-mock-deployer", installation.name_any());
    let deployment = Api::<Deployment>::namespaced(client.clone(), NAMESPACE)
        .get(&name)
        .await
        .expect("the deployer's Deployment");
    let args = deployment.spec.unwrap().template.spec.unwrap().containers[0]
        .args
        .clone()
        .unwrap();
    assert_eq!(args[..2], ["deployer".to_owned(), "mock".to_owned()]);
    let secrets: Api<Secret> = Api::namespaced(client.clone(), NAMESPACE);
    for secret in [
        format!("{name}-config"),
        format!("{name}-landscaper-cluster"),
    ] {
        assert!(
            secrets.get_opt(&secret).await.unwrap().is_some(),
            "{secret}"
        );
    }
}

fn blob(name: &str) -> Vec<u8> {
    LocalRepository::open(&root().join("examples/components"))
        .expect("the local repository opens")
        .blob(name)
        .expect("the blob exists")
}

#[test]
fn the_blobs_are_the_packaged_chart_and_blueprint_folders() {
    let hint = "regenerate examples/components/blobs as docs/components.md says";
    for kind in ["manifest", "mock"] {
        let packaged = chart::load_archive(&blob(&format!("{kind}-deployer-chart.tgz"))).unwrap();
        let folder = chart::load(&root().join(format!("charts/{kind}-deployer"))).unwrap();
        assert_eq!(packaged.metadata.name, folder.metadata.name);
        assert_packaged_from(&packaged, &folder, &format!("{kind}: {hint}"));
        assert_eq!(packaged.values, folder.values, "{kind}: {hint}");
    }
    for name in ["manifest-deployer", "mock-deployer", "hello-deployer"] {
        let packaged = blueprint_from_archive(&blob(&format!("{name}-blueprint.tar.gz"))).unwrap();
        let folder =
            Filesystem::from_dir(&root().join(format!("examples/blueprints/{name}"))).unwrap();
        assert_eq!(
            packaged.paths().collect::<Vec<_>>(),
            folder.paths().collect::<Vec<_>>(),
            "{name}: {hint}"
        );
        for path in folder.paths() {
            assert_eq!(
                packaged.read(path),
                folder.read(path),
                "{name} {path}: {hint}"
            );
        }
    }
}

#[test]
fn every_example_component_is_in_the_local_repository() {
    let local = LocalRepository::open(Path::new(&root().join("examples/components"))).unwrap();
    let mut names: Vec<&str> = local.descriptors().iter().map(|d| d.name()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "example.invalid/landscaper-rs/hello-deployer",
            "example.invalid/landscaper-rs/manifest-deployer",
            "example.invalid/landscaper-rs/mock-deployer",
        ]
    );
    for registration in ["manifest", "mock", "hello"].map(registration) {
        let reference = registration
            .spec
            .installation_template
            .component_descriptor
            .and_then(|c| c.reference)
            .expect("a component reference");
        assert!(names.contains(&reference.component_name.as_str()));
    }
}
