//! Our deployer components on the command line: `landscaper blueprint render` of their
//! blueprints from the local repository, and `landscaper component push` to a real OCI
//! registry (Debian's docker-registry), from which the blueprint library then resolves the
//! blueprint and the chart.

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::Arc;

use landscaper_blueprint::{
    ExecutionOptions, MemoryState, RegistryAccess, RegistryOptions, Repository, Templater, load,
    values,
};
use serde_json::{Value as Json, json};
use testbed::fixtures::registry::Registry;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn landscaper(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_landscaper"))
        .args(args)
        .current_dir(root())
        .env("RUST_LOG", "off")
        .output()
        .expect("landscaper runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn render_prints_the_helm_item_installing_the_components_chart() {
    for (deployer, chart) in [
        ("manifest-deployer", "manifest-deployer-chart"),
        ("mock-deployer", "mock-deployer-chart"),
    ] {
        let out = landscaper(&[
            "blueprint",
            "render",
            &format!("examples/blueprints/{deployer}"),
            "-f",
            "examples/blueprints/pair-imports.yaml",
            "--component-descriptor",
            &format!("examples/components/{deployer}.yaml"),
        ]);
        let stdout = text(&out.stdout);
        assert!(out.status.success(), "{}\n{stdout}", text(&out.stderr));
        assert!(stdout.starts_with("--- # deployItem deploy\n"), "{stdout}");
        for line in [
            "type: landscaper.gardener.cloud/helm".to_owned(),
            format!("componentName: example.invalid/landscaper-rs/{deployer}"),
            "filePath: examples/components".to_owned(),
            format!("resourceName: {chart}"),
            "repository: landscaper-agent".to_owned(),
            "identity: manifest-default".to_owned(),
        ] {
            assert!(
                stdout.contains(&line),
                "{deployer}: no {line:?} in\n{stdout}"
            );
        }
        assert_eq!(
            stdout.contains("name: default-target-access"),
            deployer == "manifest-deployer",
            "{stdout}"
        );
    }
    let out = landscaper(&[
        "blueprint",
        "render",
        "examples/blueprints/hello-deployer",
        "-f",
        "examples/blueprints/pair-imports.yaml",
        "--component-descriptor",
        "examples/components/hello-deployer.yaml",
    ]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}\n{stdout}", text(&out.stderr));
    assert!(
        stdout.contains("type: landscaper.gardener.cloud/kubernetes-manifest"),
        "{stdout}"
    );
}

#[test]
fn push_refuses_a_repository_that_is_not_an_oci_url() {
    let out = landscaper(&[
        "component",
        "push",
        "examples/components",
        "--repository",
        "localhost:5000/x",
    ]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("--repository \"localhost:5000/x\": expected oci://HOST/PATH"),
        "{}",
        text(&out.stderr)
    );
}

/// The pair imports of examples/blueprints/pair-imports.yaml.
fn pair_imports() -> serde_json::Map<String, Json> {
    let path = root().join("examples/blueprints/pair-imports.yaml");
    let text = std::fs::read_to_string(path).unwrap();
    let document = values::parse_yaml(&text).unwrap();
    document["imports"].as_object().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pushed_components_resolve_from_the_registry() {
    let Some(binary) = Registry::binary_or_skip() else {
        return;
    };
    let registry = Registry::start(&binary).expect("docker-registry starts");
    let repository = format!("oci://{}/landscaper", registry.address());
    let out = tokio::task::spawn_blocking(move || {
        landscaper(&[
            "component",
            "push",
            "examples/components",
            "--repository",
            &repository,
            "--plain-http",
        ])
    })
    .await
    .unwrap();
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}\n{stdout}", text(&out.stderr));
    let base_url = format!("{}/landscaper", registry.address());
    for name in ["hello-deployer", "manifest-deployer", "mock-deployer"] {
        assert!(
            stdout.contains(&format!(
                "{base_url}/component-descriptors/example.invalid/landscaper-rs/{name}:v0.1.0"
            )),
            "{stdout}"
        );
    }

    // Another process resolves the component, its blueprint and its chart from the registry.
    let access = RegistryAccess::new(RegistryOptions {
        plain_http: vec![registry.address().to_string()],
        ..Default::default()
    });
    let oci = Repository::Oci {
        base_url: base_url.clone(),
    };
    let descriptor = access
        .descriptor(
            &oci,
            "example.invalid/landscaper-rs/manifest-deployer",
            "v0.1.0",
        )
        .await
        .expect("the pushed descriptor");
    let filesystem = access
        .blueprint(&oci, &descriptor, "manifest-deployer-blueprint")
        .await
        .expect("the pushed blueprint");
    let blueprint = load::load(&filesystem).unwrap().blueprint;
    let options = ExecutionOptions {
        blueprint,
        filesystem: Arc::new(filesystem),
        component: Some(descriptor.clone()),
        imports: pair_imports(),
        ..Default::default()
    };
    let state = MemoryState::default();
    let items = Templater::new(&state).deploy_executions(&options).unwrap();
    let from = &items[0].config["chart"]["fromResource"];
    // Without an installation, the chart is looked up where the component is stored now.
    assert_eq!(
        from["ref"]["repositoryContext"],
        json!({"type": "ociRegistry", "baseUrl": base_url})
    );
    let resource = descriptor
        .resources(&[("name".into(), "manifest-deployer-chart".into())])
        .remove(0);
    assert_eq!(resource["access"]["type"], "localBlob");
    let chart = access
        .resource_content(&oci, &descriptor, &resource)
        .await
        .expect("the pushed chart");
    let local = std::fs::read(root().join("examples/components/blobs/manifest-deployer-chart.tgz"))
        .unwrap();
    assert_eq!(chart.as_slice(), local.as_slice());
    let loaded = landscaper_chart::helm::chart::load_archive(&chart).unwrap();
    assert_eq!(loaded.metadata.name, "manifest-deployer");
}
