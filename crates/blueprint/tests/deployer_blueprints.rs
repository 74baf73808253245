//! Upstream's deployer blueprints (`ls-*-deployer-bp`, in shared/conformance/landscaper/
//! examples) render, with a v2 component descriptor naming their chart and image, to the helm
//! DeployItem upstream renders: the chart from the descriptor's chart resource, the image
//! split into repository and tag, and the deployer configuration from the imports.

use std::path::PathBuf;
use std::sync::Arc;

use landscaper_blueprint::{
    Descriptor, ExecutionOptions, Filesystem, MemoryState, Templater, filesystem::BLUEPRINT_FILE,
    imports, load,
};
use serde_json::{Value as Json, json};

fn examples() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/conformance/landscaper/examples");
    dir.exists().then_some(dir)
}

const REGISTRY: &str = "registry.example.test/landscaper";

fn resource(name: &str, type_: &str, reference: &str) -> Json {
    json!({"name": name, "version": "v1.2.3", "type": type_, "relation": "local",
        "access": {"type": "ociRegistry", "imageReference": reference}})
}

/// The descriptor of `deployer`, with its chart, images and blueprint as resources.
fn descriptor(deployer: &str) -> Descriptor {
    let mut resources = vec![
        json!({"name": format!("{deployer}-deployer-blueprint"), "version": "v1.2.3",
            "type": "landscaper.gardener.cloud/blueprint", "relation": "local",
            "access": {"type": "localOciBlob", "digest": "sha256:00"}}),
        resource(
            &format!("{deployer}-deployer-chart"),
            "helmChart",
            &format!("{REGISTRY}/charts/{deployer}-deployer:v1.2.3"),
        ),
        resource(
            &format!("{deployer}-deployer-image"),
            "ociImage",
            &format!("{REGISTRY}/images/{deployer}-deployer-controller:v1.2.3"),
        ),
    ];
    if deployer == "container" {
        for extra in ["init", "wait"] {
            resources.push(resource(
                &format!("container-{extra}-image"),
                "ociImage",
                &format!("{REGISTRY}/images/container-deployer-{extra}:v1.2.3"),
            ));
        }
    }
    Descriptor::from_json(json!({"meta": {"schemaVersion": "v2"}, "component": {
        "name": format!("github.com/gardener/landscaper/{deployer}-deployer"),
        "version": "v1.2.3", "provider": "internal",
        "repositoryContexts": [{"type": "ociRegistry", "baseUrl": REGISTRY}],
        "sources": [], "componentReferences": [], "resources": resources
    }}))
    .unwrap()
}

fn target(name: &str) -> Json {
    json!({"apiVersion": "landscaper.gardener.cloud/v1alpha1", "kind": "Target",
        "metadata": {"name": name, "namespace": "ls-system"},
        "spec": {"type": "landscaper.gardener.cloud/kubernetes-cluster",
            "config": {"kubeconfig": format!("kubeconfig of {name}")}}})
}

#[test]
fn upstream_deployer_blueprints_render_their_helm_deploy_items() {
    let Some(dir) = examples() else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "the conformance data is required in CI"
        );
        return;
    };
    for deployer in ["helm", "manifest", "container", "mock"] {
        let text =
            std::fs::read(dir.join(format!("ls-{deployer}-deployer-bp__blueprint.yaml"))).unwrap();
        let mut fs = Filesystem::new();
        fs.insert(BLUEPRINT_FILE, text);
        let blueprint = load::load(&fs).unwrap().blueprint;
        let given = json!({
            "cluster": target("env-default"),
            "landscaperCluster": target("landscaper"),
            "releaseName": format!("{deployer}-deployer"),
            "releaseNamespace": "ls-system",
            "identity": format!("{deployer}-default"),
            "values": {"replicaCount": 2},
            "targetSelectors": [{"targets": [{"name": "env-default"}]}]
        });
        let imports = imports::validate(&blueprint, &fs, given.as_object().unwrap())
            .unwrap_or_else(|p| panic!("{deployer}: {p:?}"));
        let options = ExecutionOptions {
            blueprint,
            filesystem: Arc::new(fs),
            component: Some(descriptor(deployer)),
            imports,
            ..Default::default()
        };
        let state = MemoryState::default();
        let items = Templater::new(&state)
            .deploy_executions(&options)
            .unwrap_or_else(|e| panic!("{deployer}: {e}"));
        assert_eq!(items.len(), 1, "{deployer}");
        let item = &items[0];
        assert_eq!(item.type_, "landscaper.gardener.cloud/helm", "{deployer}");
        assert_eq!(
            item.target.as_ref().and_then(|t| t.import.as_deref()),
            Some("cluster")
        );
        let config = &item.config;
        assert_eq!(config["name"], format!("{deployer}-deployer"));
        assert_eq!(config["namespace"], "ls-system");
        assert_eq!(
            config["chart"]["ref"],
            format!("{REGISTRY}/charts/{deployer}-deployer:v1.2.3"),
            "{deployer}"
        );
        let values = &config["values"];
        assert_eq!(values["replicaCount"], 2, "{deployer}: {values}");
        assert_eq!(
            values["image"],
            json!({"repository": format!("{REGISTRY}/images/{deployer}-deployer-controller"), "tag": "v1.2.3"}),
            "{deployer}"
        );
        let deployer_config = &values["deployer"];
        assert_eq!(deployer_config["identity"], format!("{deployer}-default"));
        assert_eq!(
            deployer_config["landscaperClusterKubeconfig"]["kubeconfig"],
            "kubeconfig of landscaper"
        );
        assert_eq!(
            deployer_config["targetSelector"],
            json!([{"targets": [{"name": "env-default"}]}])
        );
    }
}
