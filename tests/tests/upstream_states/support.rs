//! What the state tests share: the blueprints of upstream's local registries, and the
//! landscaper's controllers run one at a time on a loaded state, as upstream's envtest tests
//! run one reconciler.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use kube::Api;
use kube::api::{Patch, PatchParams};
use landscaper::dataflow::{self, DataflowError, Imports, Scope};
use landscaper_api::core::Installation;
use landscaper_blueprint::source::{self, ResolvedBlueprint};
use landscaper_blueprint::{ExecutionOptions, RegistryAccess, RegistryOptions};
use landscaper_e2e::states::states_dir;
use serde_json::{Value as Json, json};
use tokio::sync::oneshot;

/// The local registry of `folder` (relative to the states folder).
pub fn registry(folder: &str) -> PathBuf {
    states_dir().join(folder)
}

/// The repository context of a local registry folder, in our spelling (`filePath`).
pub fn local_repository(root: &Path) -> Json {
    json!({"type": "local", "filePath": root.display().to_string()})
}

/// Resolves the installation's blueprint from the local registry `root`. Upstream's tests give
/// the registry's folder as `LocalRegistryConfiguration.RootPath`, whatever the state's
/// `repositoryContext {type: local, baseUrl}` says; so does this.
pub async fn resolve(installation: &Installation, root: &Path) -> ResolvedBlueprint {
    let mut spec = installation.spec.clone();
    if let Some(reference) = spec
        .component_descriptor
        .as_mut()
        .and_then(|c| c.reference.as_mut())
    {
        reference.repository_context = Some(local_repository(root));
    }
    let access = RegistryAccess::new(RegistryOptions::default());
    source::resolve(&spec, None, &access)
        .await
        .unwrap_or_else(|error| {
            panic!(
                "the blueprint of {:?} resolves: {error}",
                installation.metadata.name
            )
        })
}

/// The installation `namespace/name` as the API server has it now.
pub async fn installation(client: &kube::Client, namespace: &str, name: &str) -> Installation {
    Api::<Installation>::namespaced(client.clone(), namespace)
        .get(name)
        .await
        .unwrap_or_else(|error| panic!("Installation {namespace}/{name}: {error}"))
}

/// The installation's scope, blueprint and the options its executions run with.
pub async fn prepare(
    client: &kube::Client,
    installation: &Installation,
    root: &Path,
) -> (Scope, ResolvedBlueprint) {
    let scope = dataflow::scope(client, installation)
        .await
        .expect("the scope is read");
    (scope, resolve(installation, root).await)
}

/// Upstream's `imports.NewConstructor(op).Construct`: the imports of `namespace/name`, its
/// blueprint from the registry `root`.
pub async fn construct_imports(
    client: &kube::Client,
    root: &Path,
    namespace: &str,
    name: &str,
) -> Result<Imports, DataflowError> {
    let installation = installation(client, namespace, name).await;
    let (scope, resolved) = prepare(client, &installation, root).await;
    dataflow::read_imports(
        client,
        &installation,
        &resolved.blueprint,
        &resolved.filesystem,
        &scope,
    )
    .await
}

/// The options every execution of a resolved blueprint runs with.
pub fn options(installation: &Installation, resolved: &ResolvedBlueprint) -> ExecutionOptions {
    ExecutionOptions {
        blueprint: resolved.blueprint.clone(),
        filesystem: Arc::new(resolved.filesystem.clone()),
        installation: serde_json::to_value(installation).ok(),
        component: resolved.component.clone(),
        ..ExecutionOptions::default()
    }
}

/// Writes `status` (a merge patch) through the status subresource of `api`'s object `name`.
pub async fn patch_status<K>(api: &Api<K>, name: &str, status: Json)
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    api.patch_status(
        name,
        &PatchParams::default(),
        &Patch::Merge(json!({ "status": status })),
    )
    .await
    .unwrap_or_else(|error| panic!("the status of {name} is written: {error}"));
}

/// Merges `patch` into `api`'s object `name`.
pub async fn patch<K>(api: &Api<K>, name: &str, patch: Json)
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    api.patch(name, &PatchParams::default(), &Patch::Merge(patch))
        .await
        .unwrap_or_else(|error| panic!("{name} is patched: {error}"));
}

/// A controller running in the background until this is dropped.
pub struct Running {
    _stop: oneshot::Sender<()>,
}

/// Runs `controller` (given its shutdown signal) until the returned handle is dropped.
pub fn run<F, Fut>(controller: F) -> Running
where
    F: FnOnce(std::pin::Pin<Box<dyn Future<Output = ()> + Send + Sync>>) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let (stop, stopped) = oneshot::channel::<()>();
    let shutdown = Box::pin(async move {
        let _ = stopped.await;
    });
    tokio::spawn(controller(shutdown));
    Running { _stop: stop }
}

/// Runs the Installation controller alone (upstream's envtest tests run one reconciler).
pub fn installation_controller(client: &kube::Client) -> Running {
    let client = client.clone();
    run(move |shutdown| {
        landscaper::controllers::installation::run(
            client,
            2,
            landscaper::health::Health::new(),
            shutdown,
        )
    })
}

/// Runs the Execution controller alone.
pub fn execution_controller(client: &kube::Client) -> Running {
    let client = client.clone();
    run(move |shutdown| {
        landscaper::controllers::execution::run(
            client,
            2,
            landscaper::health::Health::new(),
            shutdown,
        )
    })
}
