//! Reconciles Installations: runs one *job* per reconcile request through the phases `Init`
//! (blueprint, predecessors, imports, subobjects), `ObjectsCreated` (job ID passed down),
//! `Progressing` (waits for the Execution and the subinstallations), `Completing` (checks,
//! exports, successors) to `Succeeded` or `Failed`, and deletes through `InitDelete`,
//! `TriggerDelete` and `Deleting`. All state lives on the objects, so a restart resumes.

mod deletion;
mod imports;
mod operations;
mod phases;
mod retry;
mod scope;
mod status;
mod subobjects;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::events::{Event as KubeEvent, EventType, Recorder, Reporter};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use kube::{Resource, ResourceExt};
use landscaper_api::constants::finalizers;
use landscaper_api::core::{Execution, Installation};
use landscaper_blueprint::{RegistryAccess, RegistryOptions};
use serde_json::json;
use tracing::{Instrument, info_span, warn};

use crate::controllers::manager::{self, phase_label};
use crate::health::Health;
use crate::metrics;
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
    /// Installations reconciled at once; 0: no limit.
    workers: u16,
}

impl Context {
    /// A context for the given landscaper cluster.
    pub fn new(client: kube::Client, settings: &Settings) -> Self {
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
            workers: settings.installation_workers,
        }
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

/// Runs the controller until `shutdown` completes.
pub async fn run(
    context: Arc<Context>,
    health: Arc<Health>,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) {
    let installations: Api<Installation> = Api::all(context.client.clone());
    let executions: Api<Execution> = Api::all(context.client.clone());
    tracing::info!(
        workers = context.workers,
        "starting the Installation controller"
    );
    let controller = Controller::new(installations.clone(), watcher::Config::default())
        .with_config(kube::runtime::controller::Config::default().concurrency(context.workers))
        .owns(executions, watcher::Config::default())
        // A subinstallation's change (its job finished) wakes its parent.
        .watches(installations, watcher::Config::default(), |child| {
            let parent = child.labels().get(ENCOMPASSED_BY)?;
            Some(ObjectRef::<Installation>::new(parent).within(&child.namespace()?))
        });
    let _counted = manager::count(
        &metrics::INSTALLATIONS,
        controller.store(),
        |installation| {
            vec![phase_label(
                installation.status.as_ref().and_then(|s| s.phase.as_ref()),
            )]
        },
    );
    manager::drive(
        "installation",
        controller,
        reconcile,
        error_policy,
        context,
        health,
        shutdown,
    )
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
