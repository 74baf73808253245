//! The examples stay true: the helm example carries exactly the chart checked in beside it,
//! and every example, applied as it is, does what it says.

use std::path::PathBuf;
use std::time::Duration;

use base64::Engine as _;
use kube::api::{Api, PostParams};
use landscaper_api::constants::{deploy_item_types, target_types};
use landscaper_api::core::{DeployItem, DeployItemPhase, Target, TargetSpec};
use landscaper_chart::formats::tree::Map;
use landscaper_chart::helm::chart::{self, Chart};
use landscaper_chart::helm::render::{self, ReleaseOptions, TemplateOptions};
use landscaper_deployer::controller::DeployerConfig;
use landscaper_deployer::deployers::manifest;
use landscaper_e2e::charts::assert_packaged_from;
use landscaper_e2e::rbac::{create_all, documents};
use landscaper_e2e::{LS_NAMESPACE, eventually, eventually_within};
use landscaper_helm_deployer as helm;
use serde_json::json;
use testbed::Testbed;

fn examples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples")
}

fn template(chart: &Chart) -> String {
    let options = TemplateOptions {
        release: ReleaseOptions {
            name: "hello".into(),
            namespace: "hello".into(),
            ..Default::default()
        },
        ..Default::default()
    };
    let release = render::install(chart, &Map::default(), &options).expect("the chart renders");
    render::template_output(release, &options).expect("template output")
}

#[test]
fn helm_example_archive_is_the_packaged_hello_chart() {
    let text = std::fs::read_to_string(examples().join("deploy-item-helm.yaml")).unwrap();
    let item = &documents(&text)[0];
    let raw = item["spec"]["config"]["chart"]["archive"]["raw"]
        .as_str()
        .expect("the example carries an inline archive");
    let compact: String = raw.split_whitespace().collect();
    let archive = base64::engine::general_purpose::STANDARD
        .decode(compact)
        .expect("base64");
    let inline = chart::load_archive(&archive).expect("the inline chart loads");
    let folder = chart::load(&examples().join("charts/hello")).expect("the chart folder loads");
    assert_packaged_from(
        &inline,
        &folder,
        "examples/deploy-item-helm.yaml: the archive is not examples/charts/hello; regenerate it (see the file's comment)",
    );
    assert_eq!(template(&inline), template(&folder));
}

/// The YAML files of examples/, sorted. Not the subfolders: `charts/` is the helm example's
/// chart; `deployer-registrations/`, `components/` and `blueprints/` need the landscaper's
/// controllers and the agent to act on them, and tests/tests/components.rs resolves and
/// renders each of them instead (`landscaper validate examples/` decodes them all).
fn example_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(examples())
        .expect("examples/ is readable")
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .collect();
    files.sort();
    files
}

/// Runs a deployer until the test ends (the runtime drops the task).
fn run_deployer<D: landscaper_deployer::Deployer>(
    setup: landscaper_deployer::controller::Setup<D>,
) {
    tokio::spawn(landscaper_deployer::run(setup, std::future::pending()));
}

fn deployer_config(type_: &str) -> DeployerConfig {
    let mut config = DeployerConfig::new(type_, "examples-deployer");
    config.namespace = Some(LS_NAMESPACE.into());
    config.retry_initial = Duration::from_millis(100);
    config.retry_max = Duration::from_secs(1);
    config
}

/// Every example file applied as it is, with the manifest and helm deployers running and the
/// Target `default` the examples name standing for the agent's host cluster: each DeployItem
/// of the examples is picked up and succeeds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_example_deploy_item_succeeds_when_applied() {
    let bed = Testbed::builder()
        .named(&["landscaper", "target"])
        .simulate_workloads(true)
        .start()
        .await
        .expect("testbed starts");
    let landscaper = bed.cluster_named("landscaper").expect("landscaper cluster");
    let target = bed.cluster_named("target").expect("target cluster");
    let client = landscaper.client();
    landscaper::crds::ensure(&client)
        .await
        .expect("CRDs are installed");
    let items: Api<DeployItem> = Api::namespaced(client.clone(), LS_NAMESPACE);
    eventually("the DeployItem CRD is served", || async {
        items.list(&Default::default()).await.is_ok()
    })
    .await;
    create_all(
        &client,
        &[json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": LS_NAMESPACE}})],
        "",
    )
    .await;
    let host_target = Target::new(
        "default",
        TargetSpec {
            type_: target_types::KUBERNETES_CLUSTER.into(),
            config: Some(json!({ "kubeconfig": target.kubeconfig_yaml() })),
            secret_ref: None,
        },
    );
    Api::<Target>::namespaced(client.clone(), LS_NAMESPACE)
        .create(&PostParams::default(), &host_target)
        .await
        .expect("Target default is created");
    run_deployer(manifest::setup(
        client.clone(),
        client.clone(),
        deployer_config(deploy_item_types::MANIFEST),
    ));
    run_deployer(helm::setup(
        client.clone(),
        client.clone(),
        deployer_config(deploy_item_types::HELM),
    ));

    let mut deploy_items = Vec::new();
    for file in example_files() {
        let text = std::fs::read_to_string(&file).expect("the example is readable");
        let documents = documents(&text);
        create_all(&client, &documents, "default").await;
        deploy_items.extend(
            documents
                .iter()
                .filter(|d| d["kind"] == "DeployItem")
                .map(|d| {
                    (
                        file.clone(),
                        d["metadata"]["name"]
                            .as_str()
                            .unwrap_or_default()
                            .to_owned(),
                    )
                }),
        );
    }
    assert!(
        deploy_items.len() >= 2,
        "the examples hold the manifest and helm DeployItems: {deploy_items:?}"
    );

    for (file, name) in &deploy_items {
        // Generous: the helm example's chart is rendered by a debug build on a shared machine.
        eventually_within(
            &format!("DeployItem {name} of {} succeeds", file.display()),
            Duration::from_secs(120),
            || async {
                let status = items.get(name).await.expect("item readable").status;
                status.and_then(|s| s.phase) == Some(DeployItemPhase::Succeeded)
            },
        )
        .await;
    }
}
