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
mod subobjects;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::events::{Event as KubeEvent, EventType, Recorder, Reporter};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;
use kube::{Resource, ResourceExt};
use landscaper_api::constants::finalizers;
use landscaper_api::core::{Execution, Installation};
use landscaper_blueprint::{RegistryAccess, RegistryOptions};
use serde_json::json;
use tracing::{Instrument, info_span, warn};

use crate::dataflow::{Scope, names::parent_name};
use crate::settings::Settings;

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
    recorder: Recorder,
    registry: RegistryAccess,
    /// Every Installation, as the controller's watch sees them: parents, siblings and
    /// children are read here, not listed per reconcile.
    cache: Store<Installation>,
}

impl Context {
    /// A context for the given landscaper cluster, reading installations from `cache`.
    fn new(client: kube::Client, cache: Store<Installation>) -> Self {
        let recorder = Recorder::new(
            client.clone(),
            Reporter {
                controller: MANAGER.into(),
                instance: None,
            },
        );
        Self {
            client,
            recorder,
            registry: RegistryAccess::new(RegistryOptions::default()),
            cache,
        }
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

    /// Publishes an Event on the installation; a failure to publish is only logged.
    async fn event(&self, installation: &Installation, warning: bool, reason: &str, note: String) {
        let event = KubeEvent {
            type_: if warning {
                EventType::Warning
            } else {
                EventType::Normal
            },
            reason: reason.into(),
            note: Some(note),
            action: "Reconcile".into(),
            secondary: None,
        };
        if let Err(error) = self
            .recorder
            .publish(&event, &installation.object_ref(&()))
            .await
        {
            warn!(name = %installation.name_any(), %error, "could not publish an Event");
        }
    }
}

/// What went wrong while reconciling an Installation.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An API request failed.
    #[error("Installation {namespace}/{name}: {action}: {source}")]
    Api {
        /// The installation's namespace.
        namespace: String,
        /// The installation.
        name: String,
        /// What was being done.
        action: String,
        /// The failure.
        #[source]
        source: kube::Error,
    },
    /// Reading or writing the installation's imports or exports failed at the API server.
    #[error(transparent)]
    Dataflow(crate::dataflow::DataflowError),
}

impl Error {
    fn api(installation: &Installation, action: impl Into<String>, source: kube::Error) -> Self {
        Self::Api {
            namespace: installation.namespace().unwrap_or_default(),
            name: installation.name_any(),
            action: action.into(),
            source,
        }
    }
}

/// Runs the controller on the landscaper cluster until `shutdown` completes.
pub async fn run(
    client: kube::Client,
    _settings: &Settings,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) {
    let installations: Api<Installation> = Api::all(client.clone());
    let executions: Api<Execution> = Api::all(client.clone());
    tracing::info!("starting the Installation controller");
    let controller = Controller::new(installations.clone(), watcher::Config::default());
    let context = Arc::new(Context::new(client, controller.store()));
    controller
        .owns(executions, watcher::Config::default())
        // A subinstallation's change (its job finished) wakes its parent.
        .watches(installations, watcher::Config::default(), |child| {
            let parent = child.labels().get(ENCOMPASSED_BY)?;
            Some(ObjectRef::<Installation>::new(parent).within(&child.namespace()?))
        })
        .graceful_shutdown_on(shutdown)
        .run(reconcile, error_policy, context)
        .for_each(|result| async move {
            if let Err(error) = result {
                warn!(%error, "Installation reconcile failed");
            }
        })
        .await;
}

async fn reconcile(
    installation: Arc<Installation>,
    context: Arc<Context>,
) -> Result<Action, Error> {
    let span = info_span!(
        "reconcile",
        kind = "Installation",
        namespace = %installation.namespace().unwrap_or_default(),
        name = %installation.name_any()
    );
    async {
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
    .instrument(span)
    .await
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

fn error_policy(installation: Arc<Installation>, error: &Error, _: Arc<Context>) -> Action {
    warn!(name = %installation.name_any(), %error, "will retry");
    Action::requeue(ERROR_RETRY)
}
