//! Reconciles Installations: runs one *job* per reconcile request through the phases `Init`
//! (blueprint, predecessors, imports, subobjects), `ObjectsCreated` (job ID passed down),
//! `Progressing` (waits for the Execution and the subinstallations), `Completing` (checks,
//! exports, successors) to `Succeeded` or `Failed`, and deletes through `InitDelete`,
//! `TriggerDelete` and `Deleting`. All state lives on the objects, so a restart resumes.

mod deletion;
mod operations;
mod order;
mod phases;
mod retry;
mod state;
mod status;
mod subinstallation_spec;
mod subobjects;
mod targets;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::events::EventType;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::watcher;
use kube::{Resource, ResourceExt};
use landscaper_api::constants::finalizers;
use landscaper_api::core::{Context as LsContext, Execution, Installation};
use landscaper_blueprint::{RegistryAccess, RegistryOptions};
use landscaper_process::events::Events;
use serde_json::json;

use crate::controllers::api_failure::ApiFailure;
use crate::controllers::deployer_caches::drop_managed_fields;
use crate::controllers::manager::{self, cached_watch, phase_label};
use crate::dataflow::{Scope, names::parent_name};
use crate::health::Health;
use crate::metrics;

pub use status::CONDITION;

/// Field manager and event reporter of this controller.
const MANAGER: &str = "landscaper-installation-controller";
/// How long to wait before retrying after an API error.
const ERROR_RETRY: Duration = Duration::from_secs(5);
/// How long to wait before looking again at an installation that waits for another one.
const WAIT_RETRY: Duration = Duration::from_secs(2);
/// The label naming the installation that created an Installation or Execution.
pub const ENCOMPASSED_BY: &str = "landscaper.gardener.cloud/encompassed-by";
/// The annotation naming the template a subinstallation was created from.
pub const SUBINSTALLATION_NAME: &str = "landscaper.gardener.cloud/subinstallation-name";

/// Shared handles of the controller.
pub struct Context {
    client: kube::Client,
    events: Events,
    registry: Arc<RegistryAccess>,
    /// Every Installation, as the controller's watch sees them: parents, siblings and
    /// children are read here, not listed per reconcile.
    cache: Store<Installation>,
    /// Every Execution, as the controller's watch of its Executions sees them.
    execution_cache: Store<Execution>,
    /// Every Context (a miss is read from the API server: it may have just been created).
    context_cache: Store<LsContext>,
}

impl Context {
    /// A context for the given landscaper cluster, reading from the caches.
    fn new(client: kube::Client, caches: Caches) -> Self {
        Self {
            events: Events::new(client.clone(), MANAGER),
            client,
            registry: Arc::new(RegistryAccess::new(RegistryOptions::default())),
            cache: caches.installations,
            execution_cache: caches.executions,
            context_cache: caches.contexts,
        }
    }

    /// The Installation `namespace/name`, as the cache sees it.
    fn installation(&self, namespace: &str, name: &str) -> Option<Arc<Installation>> {
        self.cache.get(&ObjectRef::new(name).within(namespace))
    }

    /// The installation's Execution (named as the installation), as the cache sees it.
    fn execution(&self, installation: &Installation) -> Option<Arc<Execution>> {
        let namespace = installation.namespace().unwrap_or_default();
        self.execution_cache
            .get(&ObjectRef::new(&installation.name_any()).within(&namespace))
    }

    /// The Context `name` in `namespace`: from the cache, else from the API server.
    async fn ls_context(
        &self,
        installation: &Installation,
        name: &str,
    ) -> Result<Option<LsContext>, Error> {
        let namespace = installation.namespace().unwrap_or_default();
        if let Some(cached) = self
            .context_cache
            .get(&ObjectRef::new(name).within(&namespace))
        {
            return Ok(Some((*cached).clone()));
        }
        Api::<LsContext>::namespaced(self.client.clone(), &namespace)
            .get_opt(name)
            .await
            .map_err(|source| Error::api(installation, format!("read Context {name}"), source))
    }

    /// Where `installation` sits, from the cache; `Err` names the parent that is missing.
    fn scope(&self, installation: &Installation) -> Result<Scope, String> {
        let namespace = installation.namespace().unwrap_or_default();
        let parent = match parent_name(installation) {
            Some(name) => Some(
                self.cache
                    .get(&ObjectRef::new(&name).within(&namespace))
                    .ok_or_else(|| {
                        format!("its parent Installation {namespace}/{name} is not found")
                    })?,
            ),
            None => None,
        };
        Ok(Scope::new(installation, parent, self.cache.state()))
    }

    /// The siblings of `installation` in the cache (found by their parent's name, so also
    /// when the parent itself is gone).
    fn siblings(&self, installation: &Installation) -> Vec<Arc<Installation>> {
        Scope::new(installation, None, self.cache.state()).siblings
    }

    /// The subinstallations of `installation` as the cache sees them (they may lag a moment
    /// behind; a child's change wakes the parent again).
    fn children(&self, installation: &Installation) -> Vec<Arc<Installation>> {
        let namespace = installation.namespace();
        let name = installation.name_any();
        self.cache
            .state()
            .into_iter()
            .filter(|child| child.namespace() == namespace)
            .filter(|child| parent_name(child).as_deref() == Some(name.as_str()))
            .collect()
    }

    fn installations(&self, namespace: &str) -> Api<Installation> {
        Api::namespaced(self.client.clone(), namespace)
    }

    fn executions(&self, namespace: &str) -> Api<Execution> {
        Api::namespaced(self.client.clone(), namespace)
    }

    /// Whether the installation's Execution exists, as the API server says (not the cache).
    async fn execution_exists(&self, installation: &Installation) -> Result<bool, Error> {
        let namespace = installation.namespace().unwrap_or_default();
        let execution = self
            .executions(&namespace)
            .get_opt(&installation.name_any())
            .await
            .map_err(|source| Error::api(installation, "read its Execution", source))?;
        Ok(execution.is_some())
    }

    /// Publishes an Event on the installation; a failure to publish is only logged.
    async fn event(&self, installation: &Installation, warning: bool, reason: &str, note: String) {
        let type_ = if warning {
            EventType::Warning
        } else {
            EventType::Normal
        };
        self.events.publish(installation, type_, reason, note).await;
    }
}

/// What went wrong while reconciling an Installation.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An API request failed.
    #[error(transparent)]
    Api(ApiFailure),
    /// Reading or writing the installation's imports or exports failed at the API server.
    #[error(transparent)]
    Dataflow(crate::dataflow::DataflowError),
}

impl Error {
    /// When the API server refused the request as invalid (400 or 422), which it will do
    /// again: what was refused and the server's message.
    fn refusal(&self) -> Option<String> {
        match self {
            Self::Api(failure) => failure.refusal(),
            Self::Dataflow(_) => None,
        }
    }

    fn api(installation: &Installation, action: impl Into<String>, source: kube::Error) -> Self {
        Self::Api(ApiFailure::new(installation, action, source))
    }
}

/// The caches the controller reads instead of the API server.
struct Caches {
    installations: Store<Installation>,
    executions: Store<Execution>,
    contexts: Store<LsContext>,
}

/// Runs the controller on the landscaper cluster until `shutdown` completes.
pub async fn run(
    client: kube::Client,
    workers: u16,
    health: Arc<Health>,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) {
    tracing::info!(workers, "starting the Installation controller");
    // One watch of Installations feeds the cache and then triggers each changed installation
    // and its parent (a child's job finishing moves the parent on), so a reconcile never sees
    // a cache older than the event that caused it.
    let (installations, writer) = reflector::store();
    let parents = installations.clone();
    let every = watcher::Config::default;
    let installation_watch = cached_watch(
        Api::<Installation>::all(client.clone()),
        every(),
        drop_managed_fields,
        writer,
    );
    let trigger = installation_watch.flat_map(move |changed| {
        let parent = changed.as_ref().ok().and_then(|child| {
            let name = child.labels().get(ENCOMPASSED_BY)?;
            parents.get(&ObjectRef::new(name).within(&child.namespace()?))
        });
        let parent = parent.map(|p| Ok((*p).clone()));
        futures::stream::iter(std::iter::once(changed).chain(parent))
    });
    let (executions, execution_writer) = reflector::store();
    let execution_watch = cached_watch(
        Api::<Execution>::all(client.clone()),
        every(),
        drop_managed_fields,
        execution_writer,
    );
    let (contexts, context_writer) = reflector::store();
    let context_watch = cached_watch(
        Api::<LsContext>::all(client.clone()),
        every(),
        drop_managed_fields,
        context_writer,
    )
    .for_each(|_| async {});
    let caches = Caches {
        installations: installations.clone(),
        executions,
        contexts,
    };
    let context = Arc::new(Context::new(client, caches));
    let controller = Controller::for_stream(trigger, installations)
        .owns_stream(execution_watch)
        .with_config(kube::runtime::controller::Config::default().concurrency(workers));
    let _counted = manager::count(
        &metrics::INSTALLATIONS,
        controller.store(),
        |installation| {
            vec![phase_label(
                installation.status.as_ref().and_then(|s| s.phase.as_ref()),
            )]
        },
    );
    let running = manager::drive(
        "installation",
        controller,
        reconcile,
        manager::retry_after(ERROR_RETRY),
        context,
        health,
        shutdown,
    );
    // The Context watch ends with the controller.
    tokio::select! {
        () = running => {}
        () = context_watch => {}
    }
}

async fn reconcile(
    installation: Arc<Installation>,
    context: Arc<Context>,
) -> Result<Action, Error> {
    if installation.meta().deletion_timestamp.is_some() {
        return deletion::reconcile(&installation, &context).await;
    }
    if !installation
        .finalizers()
        .iter()
        .any(|f| f == finalizers::LANDSCAPER)
    {
        add_finalizer(&installation, &context).await?;
        return Ok(Action::await_change());
    }
    if let Some(action) = operations::handle(&installation, &context).await? {
        return Ok(action);
    }
    phases::reconcile(&installation, &context).await
}

async fn add_finalizer(installation: &Installation, context: &Context) -> Result<(), Error> {
    let mut list = installation.finalizers().to_vec();
    list.push(finalizers::LANDSCAPER.to_owned());
    let api = context.installations(&installation.namespace().unwrap_or_default());
    api.patch(
        &installation.name_any(),
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": list, "resourceVersion": installation.resource_version()}})),
    )
    .await
    .map_err(|source| Error::api(installation, "add the finalizer", source))?;
    Ok(())
}
