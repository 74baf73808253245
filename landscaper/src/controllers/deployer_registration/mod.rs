//! Reconciles DeployerRegistrations: for every (registration × environment) pair, the
//! deployer's ServiceAccount, RBAC of its own, a Target to the landscaper cluster with a
//! short-lived token of that ServiceAccount, and the Installation that installs the deployer
//! into the environment. Installations are triggered when created and again only when what
//! they are made from changed. Pairs are removed when their registration or environment goes,
//! a deployer only after the deployers that need it in that environment.

mod access;
mod caches;
mod order;
mod pair;
mod removal;
mod status;

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, Patch, PatchParams};
use kube::core::PartialObjectMeta;
use kube::runtime::controller::{Action, Config as ControllerConfig};
use kube::runtime::finalizer::{Error as FinalizerError, Event as FinalizerEvent, finalizer};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;
use kube::{Resource, ResourceExt};
use landscaper_api::constants::{annotations, finalizers, labels};
use landscaper_api::core::{
    DeployerEnvironmentStatus, DeployerRegistration, Environment, Installation, Operation,
};
use landscaper_process::events::Events;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::json;
use tracing::{info, warn};

use self::access::Access;
use self::caches::Caches;
use self::order::{Graph, PairState};
use self::pair::{recorded_hash, with_reconcile_annotation};
use self::removal::Removal;
use super::api_failure::ApiFailure;
use super::deployer_caches::DeployerCaches;
use super::manager;
use crate::health::Health;
use crate::metrics;
use crate::settings::Settings;

pub use self::pair::{Pair, agent_namespaces, pair_name, served_by_agent};

/// Field manager and event reporter of this controller.
const MANAGER: &str = "landscaper-deployer-registration-controller";
/// How long to wait before retrying after an error.
const ERROR_RETRY: Duration = Duration::from_secs(15);
/// How often a registration is looked at when nothing happens.
const RESYNC: Duration = Duration::from_secs(300);
/// How often removals in progress are looked at (the Installation watch usually comes first).
const REMOVAL_CHECK: Duration = Duration::from_secs(5);

/// Shared handles of the controller.
pub struct Context {
    client: kube::Client,
    settings: Settings,
    events: Events,
    caches: Caches,
}

/// What went wrong while reconciling a DeployerRegistration.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An API request failed.
    #[error(transparent)]
    Api(ApiFailure),
    /// The pair's access Secret could not be written.
    #[error(
        "DeployerRegistration {registration}: environment {environment}: the landscaper cluster access Secret: {source}"
    )]
    Access {
        /// The registration.
        registration: String,
        /// The environment.
        environment: String,
        /// The failure.
        #[source]
        source: access::AccessError,
    },
    /// The registration is being deleted and some of its pairs are still there.
    #[error("DeployerRegistration {registration}: waiting for its pairs to be removed: {pairs}")]
    PairsRemaining {
        /// The registration.
        registration: String,
        /// The pairs and what each waits for.
        pairs: String,
    },
    /// The finalizer helper failed.
    #[error("DeployerRegistration finalizer: {0}")]
    Finalizer(#[source] Box<FinalizerError<Error>>),
}

impl Error {
    /// When the API server refused a pair object as invalid (it refuses it again until the
    /// registration or the environment changes): what was refused and the server's message.
    fn refusal(&self) -> Option<String> {
        match self {
            Self::Api(failure) => failure.refusal(),
            _ => None,
        }
    }
}

/// Runs the controller until `shutdown` completes, reading registrations, environments and the
/// pairs' Installations from `shared` (whose driver the caller polls).
pub async fn run(
    client: kube::Client,
    settings: Settings,
    shared: DeployerCaches,
    health: Arc<Health>,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) {
    let (caches, changes) = Caches::start(&client, &settings.namespace, shared);
    info!(namespace = %settings.namespace, "starting the DeployerRegistration controller");
    let context = Arc::new(Context {
        client: client.clone(),
        settings,
        events: Events::new(client.clone(), MANAGER),
        caches,
    });
    let registrations: Api<DeployerRegistration> = Api::all(client);
    let controller = manager::slim_controller(registrations, watcher::Config::default())
        // Environments, the pairs' objects and the deployers' progress concern every
        // registration (the order between deployers spans registrations); the debounce folds a
        // burst of changes into one pass.
        .reconcile_all_on(changes)
        .with_config(
            ControllerConfig::default()
                .debounce(Duration::from_millis(200))
                .concurrency(manager::DEFAULT_CONCURRENCY),
        );
    let store = controller.store();
    // Each pair once: `<registration>/<environment>`, by registration and readiness.
    let _counted = metrics::DEPLOYER_PAIRS.count(move || {
        let mut pairs = Vec::new();
        for registration in store.state() {
            let name = registration.name_any();
            for environment in registration.status.iter().flat_map(|s| &s.environments) {
                pairs.push((
                    format!("{name}/{}", environment.environment),
                    vec![name.clone(), environment.ready.to_string()],
                ));
            }
        }
        pairs
    });
    manager::drive(
        "deployerregistration",
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
    registration: Arc<DeployerRegistration>,
    context: Arc<Context>,
) -> Result<Action, Error> {
    context.caches.ready().await;
    let api: Api<DeployerRegistration> = Api::all(context.client.clone());
    finalizer(
        &api,
        finalizers::DEPLOYER_MANAGEMENT,
        registration,
        |event| async {
            match event {
                FinalizerEvent::Apply(registration) => apply(&registration, &context).await,
                FinalizerEvent::Cleanup(registration) => cleanup(&registration, &context).await,
            }
        },
    )
    .await
    .map_err(|error| Error::Finalizer(Box::new(error)))
}

fn error_policy(registration: Arc<DeployerRegistration>, error: &Error, _: Arc<Context>) -> Action {
    let waiting = matches!(error, Error::Finalizer(failed)
        if matches!(**failed, FinalizerError::CleanupFailed(Error::PairsRemaining { .. })));
    if waiting {
        info!(name = %registration.name_any(), %error, "will look again");
        Action::requeue(REMOVAL_CHECK)
    } else {
        warn!(name = %registration.name_any(), %error, "will retry");
        Action::requeue(ERROR_RETRY)
    }
}

/// Brings every pair of the registration to what it and its environment describe, removes
/// pairs of environments that are gone, and reports it all in status.
async fn apply(registration: &DeployerRegistration, context: &Context) -> Result<Action, Error> {
    let graph = graph(&context.caches);
    let name = registration.name_any();
    if registration.spec.types.is_empty() {
        // Nothing would ever wait for such a deployer, nor could one tell which items it
        // serves: it is not installed anywhere. Pairs made before the types were removed are
        // left as they are until the types are back or the registration is deleted.
        let problem = "spec.types is empty: a registration names the deploy item types its deployer serves (e.g. landscaper.gardener.cloud/mock); it is installed nowhere until it does";
        warn!(registration = %name, problem, "invalid DeployerRegistration");
        status::invalid(registration, problem, context).await?;
        return Ok(Action::await_change());
    }
    let mut environments: Vec<Arc<Environment>> = context.caches.environments.state();
    environments.sort_by_key(|environment| environment.name_any());
    let mut entries = Vec::new();
    let mut next_look = RESYNC;
    let mut failure = None;
    let mut present = BTreeSet::new();
    let (mut created, mut updated) = (Vec::new(), Vec::new());
    for environment in &environments {
        let environment_name = environment.name_any();
        present.insert(environment_name.clone());
        if environment.meta().deletion_timestamp.is_some() {
            let removal = removal::remove(context, &graph, &name, &environment_name).await;
            let entry = removal_entry(&name, &environment_name, removal, &mut failure);
            next_look = next_look.min(REMOVAL_CHECK);
            entries.push(entry);
            continue;
        }
        let pair = match Pair::new(registration, environment, &context.settings.namespace) {
            Ok(pair) => pair,
            Err(problem) => {
                warn!(registration = %name, environment = %environment_name, %problem, "the pair cannot be made");
                entries.push(DeployerEnvironmentStatus {
                    environment: environment_name,
                    message: Some(problem),
                    ..DeployerEnvironmentStatus::default()
                });
                continue;
            }
        };
        match ensure_pair(&pair, context).await {
            Ok((renew_at, written)) => {
                match written {
                    Some(PairWrite::Created) => created.push(environment_name.clone()),
                    Some(PairWrite::Updated) => updated.push(environment_name.clone()),
                    None => {}
                }
                let until = renew_at.duration_since(Timestamp::now());
                let until = Duration::try_from(until).unwrap_or_default();
                next_look = next_look.min(until.max(Duration::from_secs(1)));
                entries.push(status::pair_entry(&pair, &graph, &context.caches));
            }
            Err(error) => {
                let message = match error.refusal() {
                    // Written again it is refused again: reported, and tried again on the
                    // registration's next pass (a change in its caches), not on the error timer.
                    Some(message) => {
                        status::refused(registration, &environment_name, &message, context).await;
                        message
                    }
                    None => {
                        let message = error.to_string();
                        failure = Some(error);
                        message
                    }
                };
                entries.push(DeployerEnvironmentStatus {
                    environment: environment_name,
                    installation: Some(pair.name().to_owned()),
                    message: Some(message),
                    ..DeployerEnvironmentStatus::default()
                });
            }
        }
    }
    // Pairs whose environment is gone (deleted without this controller running).
    for environment_name in pair_environments(&name, &context.caches) {
        if present.contains(&environment_name) {
            continue;
        }
        let removal = removal::remove(context, &graph, &name, &environment_name).await;
        if !matches!(removal, Ok(Removal::Done)) {
            next_look = next_look.min(REMOVAL_CHECK);
        }
        if let Err(error) = removal {
            failure = Some(error);
        }
    }
    // One Event per pass, not one per pair: a registration meeting 1,000 environments
    // would otherwise write 1,000 Events.
    for (reason, done, names) in [
        ("PairCreated", "created", created),
        ("PairUpdated", "updated", updated),
    ] {
        if !names.is_empty() {
            let namespace = &context.settings.namespace;
            let note = format!(
                "{done} and started the Installations in {namespace} of {} environment(s): {}",
                names.len(),
                listed(&names)
            );
            status::publish(context, registration, reason, note).await;
        }
    }
    status::update(registration, entries, &graph, context).await?;
    match failure {
        Some(error) => Err(error),
        None => Ok(Action::requeue(next_look)),
    }
}

/// The status entry of a pair being removed.
fn removal_entry(
    registration: &str,
    environment: &str,
    removal: Result<Removal, Error>,
    failure: &mut Option<Error>,
) -> DeployerEnvironmentStatus {
    let message = match removal {
        Ok(Removal::Done) => "the environment is being deleted; the deployer is removed".to_owned(),
        Ok(Removal::Waiting(why)) => format!("the environment is being deleted; {why}"),
        Err(error) => {
            let message = error.to_string();
            *failure = Some(error);
            message
        }
    };
    DeployerEnvironmentStatus {
        environment: environment.to_owned(),
        installation: pair_name(registration, environment).ok(),
        message: Some(message),
        ..DeployerEnvironmentStatus::default()
    }
}

/// Removes every pair of a registration being deleted, in order; the finalizer goes when none
/// is left.
async fn cleanup(registration: &DeployerRegistration, context: &Context) -> Result<Action, Error> {
    let graph = graph(&context.caches);
    let name = registration.name_any();
    let mut remaining = Vec::new();
    for environment in pair_environments(&name, &context.caches) {
        match removal::remove(context, &graph, &name, &environment).await? {
            Removal::Done => {}
            Removal::Waiting(why) => remaining.push(format!("{name}-{environment} ({why})")),
        }
    }
    if remaining.is_empty() {
        info!(registration = %name, "every pair is removed");
        Ok(Action::await_change())
    } else {
        Err(Error::PairsRemaining {
            registration: name,
            pairs: remaining.join("; "),
        })
    }
}

/// The environments in which a pair object of `registration` exists.
fn pair_environments(registration: &str, caches: &Caches) -> BTreeSet<String> {
    let of_registration = |object_labels: &BTreeMap<String, String>| {
        (object_labels
            .get(labels::DEPLOYER_REGISTRATION)
            .map(String::as_str)
            == Some(registration))
        .then(|| object_labels.get(labels::DEPLOYER_ENVIRONMENT).cloned())
        .flatten()
    };
    let mut environments = BTreeSet::new();
    environments.extend(
        caches
            .installations
            .state()
            .iter()
            .filter_map(|o| of_registration(o.labels())),
    );
    environments.extend(
        caches
            .service_accounts
            .state()
            .iter()
            .filter_map(|o| of_registration(o.labels())),
    );
    environments.extend(
        caches
            .cluster_roles
            .state()
            .iter()
            .filter_map(|o| of_registration(o.labels())),
    );
    environments.extend(
        caches
            .cluster_role_bindings
            .state()
            .iter()
            .filter_map(|o| of_registration(o.labels())),
    );
    environments.extend(
        caches
            .secrets
            .state()
            .iter()
            .filter_map(|o| of_registration(o.labels())),
    );
    environments.extend(
        caches
            .targets
            .state()
            .iter()
            .filter_map(|o| of_registration(o.labels())),
    );
    environments
}

/// What every registration serves and every pair needs, from the caches.
fn graph(caches: &Caches) -> Graph {
    let serves = caches
        .registrations
        .state()
        .iter()
        .map(|registration| {
            (
                registration.name_any(),
                registration.spec.types.iter().cloned().collect(),
            )
        })
        .collect();
    let mut pairs = BTreeMap::new();
    for installation in caches.installations.state() {
        let installation_labels = installation.labels();
        let (Some(registration), Some(environment)) = (
            installation_labels.get(labels::DEPLOYER_REGISTRATION),
            installation_labels.get(labels::DEPLOYER_ENVIRONMENT),
        ) else {
            continue;
        };
        let needs = status::needed_types(&installation, caches);
        pairs.insert(
            (registration.clone(), environment.clone()),
            PairState {
                ready: status::succeeded(&installation),
                needs,
            },
        );
    }
    Graph { serves, pairs }
}

/// Names for a message: the first ten, and how many more.
fn listed(names: &[String]) -> String {
    const SHOWN: usize = 10;
    let mut text = names
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > SHOWN {
        text.push_str(&format!(" and {} more", names.len() - SHOWN));
    }
    text
}

/// What [`ensure_pair`] did to the pair's Installation.
enum PairWrite {
    /// Created it (and so started it).
    Created,
    /// Updated it and started it again.
    Updated,
}

/// Creates or updates the pair's objects that differ from what they should be; returns when
/// the pair's token is to be renewed, and whether the Installation was written.
async fn ensure_pair(
    pair: &Pair<'_>,
    context: &Context,
) -> Result<(Timestamp, Option<PairWrite>), Error> {
    let caches = &context.caches;
    let client = &context.client;
    let namespace = context.settings.namespace.as_str();
    write_if_changed(
        Api::namespaced(client.clone(), namespace),
        &caches.service_accounts,
        pair,
        pair.service_account(),
    )
    .await?;
    write_if_changed(
        Api::all(client.clone()),
        &caches.cluster_roles,
        pair,
        pair.cluster_role(),
    )
    .await?;
    write_if_changed(
        Api::all(client.clone()),
        &caches.cluster_role_bindings,
        pair,
        pair.cluster_role_binding(),
    )
    .await?;
    let secret = caches
        .secrets
        .get(&here(namespace, &pair.access_secret_name()));
    let access = access::ensure(
        client,
        pair,
        secret.as_ref().map(|cached| &cached.metadata),
        context.settings.pair_token_lifetime,
        MANAGER,
    )
    .await
    .map_err(|source| Error::Access {
        registration: pair.registration_name(),
        environment: pair.environment_name(),
        source,
    })?;
    if let Access::Renewed(_) = access {
        info!(pair = %pair.name(), "wrote a new landscaper cluster token for the pair");
    }
    write_if_changed(
        Api::namespaced(client.clone(), namespace),
        &caches.targets,
        pair,
        pair.target(),
    )
    .await?;
    let existing = caches.installations.get(&here(namespace, pair.name()));
    let desired = pair.installation();
    let changed = existing.as_deref().is_none_or(|existing| {
        recorded_hash(&existing.metadata) != recorded_hash(&desired.metadata)
    });
    let mut written = None;
    if changed {
        // A new or changed pair installs its deployer again; an unchanged one is never
        // re-triggered.
        let (write_kind, done) = match existing {
            None => (PairWrite::Created, "created"),
            Some(_) => (PairWrite::Updated, "updated"),
        };
        write(
            Api::namespaced(client.clone(), namespace),
            pair,
            with_reconcile_annotation(desired),
        )
        .await?;
        info!(pair = %pair.name(), "{done} the pair's Installation and started it");
        written = Some(write_kind);
    } else if matches!(access, Access::Renewed(_)) {
        // The deployer reads the landscaper cluster with the token it was installed with:
        // a new token means installing it again.
        Api::<Installation>::namespaced(client.clone(), namespace)
            .patch(
                pair.name(),
                &PatchParams::default(),
                &Patch::Merge(json!({"metadata": {"annotations": {
                    annotations::OPERATION: Operation::Reconcile.as_str(),
                }}})),
            )
            .await
            .map_err(|source| {
                api_error(
                    pair,
                    &format!(
                        "start Installation {namespace}/{} with the new token",
                        pair.name()
                    ),
                    source,
                )
            })?;
        info!(pair = %pair.name(), "the pair's token was renewed: its deployer is installed again");
    }
    Ok((access.renew_at(), written))
}

/// Writes `desired` unless the object, as `cache` holds it, was written from the same hash.
async fn write_if_changed<K>(
    api: Api<K>,
    cache: &Store<PartialObjectMeta<K>>,
    pair: &Pair<'_>,
    desired: K,
) -> Result<(), Error>
where
    K: Resource<DynamicType = ()> + Clone + Serialize + DeserializeOwned + std::fmt::Debug,
{
    let meta = desired.meta();
    let mut key = ObjectRef::new(meta.name.as_deref().unwrap_or_default());
    if let Some(namespace) = meta.namespace.as_deref() {
        key = key.within(namespace);
    }
    let cached = cache.get(&key);
    if cached.is_some_and(|cached| recorded_hash(&cached.metadata) == recorded_hash(meta)) {
        return Ok(());
    }
    write(api, pair, desired).await
}

/// Server-side applies `desired` as this controller, taking over fields others changed.
async fn write<K>(api: Api<K>, pair: &Pair<'_>, desired: K) -> Result<(), Error>
where
    K: Resource<DynamicType = ()> + Clone + Serialize + DeserializeOwned + std::fmt::Debug,
{
    let name = desired.meta().name.clone().unwrap_or_default();
    api.patch(
        &name,
        &PatchParams::apply(MANAGER).force(),
        &Patch::Apply(&desired),
    )
    .await
    .map_err(|source| api_error(pair, &format!("writing {} {name}", K::kind(&())), source))?;
    Ok(())
}

/// The key of a cached object in the deployer management namespace.
fn here<K: Resource<DynamicType = ()>>(namespace: &str, name: &str) -> ObjectRef<K> {
    ObjectRef::new(name).within(namespace)
}

fn api_error(pair: &Pair<'_>, action: &str, source: kube::Error) -> Error {
    let action = format!("environment {}: {action}", pair.environment_name());
    Error::Api(ApiFailure::named::<DeployerRegistration>(
        &pair.registration_name(),
        action,
        source,
    ))
}
