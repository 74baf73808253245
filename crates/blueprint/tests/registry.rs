//! Component descriptors and blueprints in a real OCI registry (Debian's docker-registry on
//! loopback), laid out as the OCM tooling lays them out, and in a `type: local` folder:
//! resolved with and without credentials, errors that name the component, version and
//! resource, and a cache that serves repeated loads without the registry.

use std::path::Path;

use landscaper_blueprint::registry::{BLUEPRINT_MEDIA_TYPE, archive_blueprint, digest_of};
use landscaper_blueprint::{
    Descriptor, Error, ExecutionOptions, MemoryState, RegistryAccess, RegistryOptions, Repository,
    Templater, load,
};
use serde_json::{Value as Json, json};
use testbed::fixtures::registry::Registry;

const COMPONENT: &str = "example.test/hello";
const VERSION: &str = "1.0.0";

fn blueprint_dir(dir: &Path) {
    std::fs::write(
        dir.join("blueprint.yaml"),
        "apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Blueprint\nimports:\n- name: greeting\n  type: data\n  schema: {type: string}\ndeployExecutions:\n- name: main\n  type: GoTemplate\n  file: /deploy.yaml\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("deploy.yaml"),
        "deployItems:\n- name: hello\n  type: landscaper.gardener.cloud/mock\n  config:\n    greeting: {{ .imports.greeting }}\n    image: {{ (getResource .cd \"name\" \"image\").access.imageReference }}\n",
    )
    .unwrap();
}

fn descriptor(blueprint_access: Json) -> Descriptor {
    Descriptor::from_json(json!({"meta": {"schemaVersion": "v2"}, "component": {
        "name": COMPONENT, "version": VERSION, "provider": "internal",
        "repositoryContexts": [], "sources": [], "componentReferences": [],
        "resources": [
            {"name": "blueprint", "version": VERSION, "type": "landscaper.gardener.cloud/blueprint",
             "relation": "local", "access": blueprint_access},
            {"name": "image", "version": VERSION, "type": "ociImage", "relation": "external",
             "access": {"type": "ociRegistry", "imageReference": "example.test/hello:1.0.0"}},
            {"name": "broken", "version": VERSION, "type": "landscaper.gardener.cloud/blueprint",
             "relation": "local", "access": {"type": "localOciBlob", "digest": digest_of(b"not a tar")}}
        ]
    }}))
    .unwrap()
}

/// Renders the blueprint of the component and returns the greeting its deploy item holds.
async fn render(access: &RegistryAccess, repository: &Repository) -> Result<Json, Error> {
    let descriptor = access.descriptor(repository, COMPONENT, VERSION).await?;
    let fs = access
        .blueprint(repository, &descriptor, "blueprint")
        .await?;
    let blueprint = load::load(&fs)?.blueprint;
    let options = ExecutionOptions {
        blueprint,
        filesystem: std::sync::Arc::new(fs),
        component: Some(descriptor),
        imports: json!({"greeting": "hi"}).as_object().cloned().unwrap(),
        ..Default::default()
    };
    let state = MemoryState::default();
    let items = Templater::new(&state).deploy_executions(&options)?;
    Ok(items[0].config.clone())
}

async fn push(registry: &Registry, docker_config: Option<String>) -> (RegistryAccess, Repository) {
    let dir = tempfile::tempdir().unwrap();
    blueprint_dir(dir.path());
    let archive = archive_blueprint(dir.path()).unwrap();
    let descriptor = descriptor(
        json!({"type": "localOciBlob", "digest": digest_of(&archive),
        "mediaType": BLUEPRINT_MEDIA_TYPE}),
    );
    let access = RegistryAccess::new(RegistryOptions {
        plain_http: vec![registry.address().to_string()],
        docker_configs: docker_config.into_iter().collect(),
        ..Default::default()
    });
    let base_url = format!("{}/components", registry.address());
    access
        .push_component(
            &base_url,
            &descriptor,
            vec![
                (BLUEPRINT_MEDIA_TYPE.to_string(), archive),
                ("text/plain".to_string(), b"not a tar".to_vec()),
            ],
        )
        .await
        .expect("pushed");
    (access, Repository::Oci { base_url })
}

#[tokio::test]
async fn blueprints_resolve_from_an_oci_registry_and_are_fetched_once() {
    let Some(binary) = Registry::binary_or_skip() else {
        return;
    };
    let registry = Registry::start(&binary).expect("docker-registry starts");
    let (_, repository) = push(&registry, None).await;
    // A fresh client, as another landscaper process would have.
    let access = RegistryAccess::new(RegistryOptions {
        plain_http: vec![registry.address().to_string()],
        ..Default::default()
    });
    let config = render(&access, &repository).await.unwrap();
    assert_eq!(
        config,
        json!({"greeting": "hi", "image": "example.test/hello:1.0.0"})
    );
    let first = access.registry_requests();
    assert!(first > 0);
    // The registry is gone: the other 99 loads are served from the cache.
    drop(registry);
    for _ in 0..99 {
        render(&access, &repository).await.unwrap();
    }
    assert_eq!(access.registry_requests(), first);
}

#[tokio::test]
async fn missing_components_and_broken_blueprints_are_named() {
    let Some(binary) = Registry::binary_or_skip() else {
        return;
    };
    let registry = Registry::start(&binary).expect("docker-registry starts");
    let (access, repository) = push(&registry, None).await;
    let missing = access
        .descriptor(&repository, COMPONENT, "9.9.9")
        .await
        .unwrap_err()
        .to_string();
    assert!(
        missing.contains("component example.test/hello:9.9.9 in 127.0.0.1:"),
        "{missing}"
    );
    let descriptor = access
        .descriptor(&repository, COMPONENT, VERSION)
        .await
        .unwrap();
    let no_resource = access
        .blueprint(&repository, &descriptor, "nope")
        .await
        .unwrap_err()
        .to_string();
    assert_eq!(
        no_resource,
        "component: component example.test/hello:1.0.0 has no resource \"nope\""
    );
    let not_a_blueprint = access
        .blueprint(&repository, &descriptor, "image")
        .await
        .unwrap_err()
        .to_string();
    assert!(
        not_a_blueprint.contains("is of type \"ociImage\", not a blueprint"),
        "{not_a_blueprint}"
    );
    let broken = access
        .blueprint(&repository, &descriptor, "broken")
        .await
        .unwrap_err()
        .to_string();
    assert!(
        broken.starts_with("component: resource \"broken\" of component example.test/hello:1.0.0:"),
        "{broken}"
    );
}

/// An htpasswd line for `user`, made with the chart engine's own `htpasswd` (bcrypt).
fn htpasswd_line(user: &str, password: &str) -> String {
    let mut engine =
        landscaper_chart::engine::Engine::new(landscaper_chart::helm::funcs::helm_funcs());
    engine
        .add_template("h", &format!("{{{{ htpasswd {user:?} {password:?} }}}}"))
        .unwrap();
    engine
        .render("h", &landscaper_chart::engine::value::Value::Nil)
        .unwrap()
}

#[tokio::test]
async fn pull_secrets_give_access_to_a_registry_that_demands_a_login() {
    let Some(binary) = Registry::binary_or_skip() else {
        return;
    };
    let line = htpasswd_line("alice", "s3cret");
    let registry = Registry::start_with_htpasswd(&binary, &format!("{line}\n"))
        .expect("docker-registry starts");
    let docker_config = format!(
        r#"{{"auths": {{"{}": {{"username": "alice", "password": "s3cret"}}}}}}"#,
        registry.address()
    );
    let (_, repository) = push(&registry, Some(docker_config.clone())).await;
    let anonymous = RegistryAccess::new(RegistryOptions {
        plain_http: vec![registry.address().to_string()],
        ..Default::default()
    });
    let denied = render(&anonymous, &repository)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        denied.contains("component example.test/hello:1.0.0"),
        "{denied}"
    );
    let with_secret = RegistryAccess::new(RegistryOptions {
        plain_http: vec![registry.address().to_string()],
        docker_configs: vec![docker_config],
        ..Default::default()
    });
    assert_eq!(
        render(&with_secret, &repository).await.unwrap()["greeting"],
        "hi"
    );
}

#[tokio::test]
async fn a_local_repository_folder_serves_descriptors_and_blobs() {
    let dir = tempfile::tempdir().unwrap();
    let bp = tempfile::tempdir().unwrap();
    blueprint_dir(bp.path());
    std::fs::create_dir(dir.path().join("blobs")).unwrap();
    std::fs::write(
        dir.path().join("blobs/blueprint.tar.gz"),
        archive_blueprint(bp.path()).unwrap(),
    )
    .unwrap();
    let descriptor = descriptor(
        json!({"type": "localFilesystemBlob", "filename": "blueprint.tar.gz",
        "mediaType": BLUEPRINT_MEDIA_TYPE}),
    );
    std::fs::write(
        dir.path().join("hello.yaml"),
        serde_json::to_string(descriptor.v2()).unwrap(),
    )
    .unwrap();
    let repository = Repository::from_context(
        &json!({"type": "local", "filePath": dir.path().to_string_lossy()}),
    )
    .unwrap();
    let access = RegistryAccess::new(RegistryOptions::default());
    assert_eq!(
        render(&access, &repository).await.unwrap()["greeting"],
        "hi"
    );
}
