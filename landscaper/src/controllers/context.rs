//! Keeps a Context `default` in every namespace that is not excluded, as upstream's context
//! controller does, from `controllers.contexts.config.default` of the configuration: its
//! `repositoryContext` is written into each default Context; `excludedNamespaces` (default
//! `kube-system`) get none; `disable: true` turns the controller off. A Context that already
//! says what the configuration says is left alone, so a restart writes only what changed.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::{Action, Config as ControllerConfig};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use kube::{Resource, ResourceExt};
use landscaper_api::core::Context;
use landscaper_deployer::error::describe_kube_error;
use serde_json::json;
use tracing::info;

use super::manager;
use crate::health::Health;
use crate::settings::DefaultContext;

/// The controller's name in metrics and readiness.
pub const NAME: &str = "context";

/// Name of the Context created in every namespace.
pub const DEFAULT_CONTEXT: &str = "default";
/// Field manager of this controller.
const MANAGER: &str = "landscaper-context-controller";
/// How long to wait before retrying after an error.
const ERROR_RETRY: Duration = Duration::from_secs(15);

/// Shared handles of the controller.
pub struct ContextController {
    client: kube::Client,
    config: DefaultContext,
}

impl ContextController {
    /// A controller for the given landscaper cluster and default Context.
    pub fn new(client: kube::Client, config: DefaultContext) -> Self {
        Self { client, config }
    }
}

/// A failed API request, naming the Context.
#[derive(Debug, thiserror::Error)]
#[error("Context {namespace}/{DEFAULT_CONTEXT}: {action}: {}", describe_kube_error(.source))]
pub struct Error {
    namespace: String,
    action: &'static str,
    #[source]
    source: kube::Error,
}

/// Runs the controller until `shutdown` completes.
pub async fn run(
    controller: Arc<ContextController>,
    health: Arc<Health>,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) {
    if controller.config.disabled {
        info!("the Context controller is disabled");
        health.synced(NAME);
        return;
    }
    let namespaces: Api<Namespace> = Api::all(controller.client.clone());
    let contexts: Api<Context> = Api::all(controller.client.clone());
    info!(excluded = ?controller.config.excluded_namespaces, "starting the Context controller");
    let namespace_controller = manager::slim_controller(namespaces, watcher::Config::default())
        .with_config(ControllerConfig::default().concurrency(manager::DEFAULT_CONCURRENCY))
        // A deleted or edited default Context is put back.
        .watches(contexts, watcher::Config::default(), |context| {
            (context.name_any() == DEFAULT_CONTEXT)
                .then(|| context.namespace())
                .flatten()
                .map(|namespace| ObjectRef::<Namespace>::new(&namespace))
        });
    manager::drive(
        NAME,
        namespace_controller,
        reconcile,
        manager::retry_after(ERROR_RETRY),
        controller,
        health,
        shutdown,
    )
    .await;
}

async fn reconcile(
    namespace: Arc<Namespace>,
    controller: Arc<ContextController>,
) -> Result<Action, Error> {
    let name = namespace.name_any();
    if namespace.meta().deletion_timestamp.is_some()
        || controller.config.excluded_namespaces.contains(&name)
    {
        return Ok(Action::await_change());
    }
    let api: Api<Context> = Api::namespaced(controller.client.clone(), &name);
    let existing = api.get_opt(DEFAULT_CONTEXT).await.map_err(|source| Error {
        namespace: name.clone(),
        action: "read",
        source,
    })?;
    let wanted = &controller.config.repository_context;
    if existing
        .as_ref()
        .is_some_and(|c| &c.repository_context == wanted)
    {
        return Ok(Action::await_change());
    }
    let context = json!({
        "apiVersion": "landscaper.gardener.cloud/v1alpha1",
        "kind": "Context",
        "metadata": { "name": DEFAULT_CONTEXT, "namespace": name },
        "repositoryContext": wanted,
    });
    api.patch(
        DEFAULT_CONTEXT,
        &PatchParams::apply(MANAGER).force(),
        &Patch::Apply(&context),
    )
    .await
    .map_err(|source| Error {
        namespace: name.clone(),
        action: "write",
        source,
    })?;
    info!(namespace = %name, created = existing.is_none(), "default Context written");
    Ok(Action::await_change())
}
