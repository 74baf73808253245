//! Reconciles Environments: keeps the environment's host Target in the deployer management
//! namespace (a Target of that name that is not the environment's is reported and left
//! alone), holds the deployer management finalizer until that Target is deleted, and sets the
//! agent condition from the agent's heartbeat Lease: True while the agent renews it, Unknown
//! when it stops. The conditions and `observedGeneration` are this controller's; the agent
//! writes only `status.agent`, so neither overwrites (or conflicts with) the other.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, Preconditions};
use kube::runtime::controller::{Action, Config as ControllerConfig};
use kube::runtime::events::EventType;
use kube::runtime::finalizer::{Error as FinalizerError, Event as FinalizerEvent, finalizer};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::watcher;
use kube::{Resource, ResourceExt};
use landscaper_api::constants::annotations::HEARTBEAT_LEASE_NAMESPACE as LEASE_NAMESPACE_ANNOTATION;
use landscaper_api::constants::{conditions, finalizers, labels};
use landscaper_api::core::{
    ConditionStatus, ConditionUpdate, Environment, EnvironmentStatus, Installation, Target,
    TargetSpec, find_condition, set_condition,
};
use landscaper_api::meta::contains_all;
use landscaper_process::events::Events;
use serde_json::json;
use tracing::{info, warn};

use super::api_failure::ApiFailure;
use super::deployer_caches::drop_managed_fields;
use super::manager;
use super::ready::Ready;
use crate::health::Health;
use crate::metrics;
use crate::settings::Settings;

/// Field manager and event reporter of this controller.
const MANAGER: &str = "landscaper-environment-controller";
/// How long to wait before retrying after an error.
const ERROR_RETRY: Duration = Duration::from_secs(15);
/// How often an environment is looked at when nothing happens.
const RESYNC: Duration = Duration::from_secs(300);

/// Shared handles of the controller.
pub struct Context {
    client: kube::Client,
    settings: Settings,
    events: Events,
    /// The environments' Targets in the deployer management namespace, with only this
    /// controller's managedFields entry (what it last applied).
    targets: Store<Target>,
    /// The agents' heartbeat Leases: each is renewed every few seconds, and a reconcile
    /// per renewal reads it here, not from the API server.
    leases: Store<Lease>,
    /// Both caches have listed once.
    caches_ready: Ready,
}

/// What went wrong while reconciling an Environment.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An API request failed.
    #[error(transparent)]
    Api(ApiFailure),
    /// The environment's Target is being deleted, and others' finalizers still hold it.
    #[error("Environment {name}: waiting for its Target to be deleted (finalizers: {finalizers})")]
    TargetDeleting {
        /// The Environment (and Target).
        name: String,
        /// The finalizers still on the Target.
        finalizers: String,
    },
    /// Deployers registered for the environment are still installed: its Target stays until
    /// their installations are removed, since uninstalling them goes through it.
    #[error("Environment {name}: waiting for the deployers' installations to be removed: {pairs}")]
    PairsRemaining {
        /// The Environment.
        name: String,
        /// The pairs' Installations.
        pairs: String,
    },
    /// The finalizer helper failed.
    #[error("Environment finalizer: {0}")]
    Finalizer(#[source] Box<FinalizerError<Error>>),
}

/// Runs the controller on the landscaper cluster until `shutdown` completes.
pub async fn run(
    client: kube::Client,
    settings: Settings,
    health: Arc<Health>,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) {
    let namespace = settings.namespace.clone();
    let environments: Api<Environment> = Api::all(client.clone());
    let targets: Api<Target> = Api::namespaced(client.clone(), &namespace);
    // Each agent names the namespace of its Lease on its Environment, which need not be ours.
    let leases: Api<Lease> = Api::all(client.clone());
    info!(namespace = %namespace, "starting the Environment controller");
    let environment_label = watcher::Config::default().labels(labels::DEPLOYER_ENVIRONMENT);
    // Each watch fills its cache before it triggers the environment, so a reconcile never sees
    // a cache older than the change that caused it.
    let (target_cache, target_writer) = reflector::store();
    let target_watch = manager::cached_watch(
        targets,
        environment_label.clone(),
        keep_own_managed_fields,
        target_writer,
    );
    let (lease_cache, lease_writer) = reflector::store();
    let lease_watch =
        manager::cached_watch(leases, environment_label, drop_managed_fields, lease_writer);
    let context = Arc::new(Context {
        events: Events::new(client.clone(), MANAGER),
        client,
        settings,
        caches_ready: Ready::all([Ready::of(&target_cache), Ready::of(&lease_cache)]),
        targets: target_cache.clone(),
        leases: lease_cache.clone(),
    });
    let controller = manager::slim_controller(environments, watcher::Config::default())
        .with_config(ControllerConfig::default().concurrency(manager::DEFAULT_CONCURRENCY))
        // Not `owns`: it would key the cluster-scoped owner with the Target's namespace, a
        // second key for the same Environment, reconciled at the same time as the first.
        .watches_stream(target_watch, |target| owning_environment(&target))
        // A heartbeat Lease is named after its environment and labelled with it.
        .watches_stream(lease_watch, |lease| {
            lease
                .labels()
                .get(labels::DEPLOYER_ENVIRONMENT)
                .map(|environment| ObjectRef::<Environment>::new(environment))
        });
    let _counted = manager::count(&metrics::ENVIRONMENTS, controller.store(), agent_ready);
    manager::drive(
        "environment",
        controller,
        reconcile,
        error_policy,
        context,
        health,
        shutdown,
    )
    .await;
}

/// The status of the environment's `AgentReady` condition, as the metrics count it.
fn agent_ready(environment: &Environment) -> Vec<String> {
    let status = environment
        .status
        .as_ref()
        .and_then(|status| {
            status
                .conditions
                .iter()
                .find(|condition| condition.type_ == conditions::AGENT_READY)
        })
        .map_or_else(
            || "Unknown".to_owned(),
            |condition| condition.status.to_string(),
        );
    vec![status]
}

/// The Environment controlling `target`, keyed without a namespace as the cluster-scoped
/// Environment is.
fn owning_environment(target: &Target) -> Option<ObjectRef<Environment>> {
    target
        .owner_references()
        .iter()
        .find(|owner| {
            owner.controller == Some(true)
                && owner.kind == Environment::kind(&())
                && owner.api_version == Environment::api_version(&())
        })
        .map(|owner| ObjectRef::new(&owner.name))
}

/// Keeps only this controller's entry of a Target's managedFields: what it last applied
/// ([`applied_keys`]); the others are most of the object and nothing reads them.
fn keep_own_managed_fields(target: &mut Target) {
    if let Some(entries) = target.metadata.managed_fields.as_mut() {
        entries.retain(|entry| entry.manager.as_deref() == Some(MANAGER));
    }
}

async fn reconcile(environment: Arc<Environment>, context: Arc<Context>) -> Result<Action, Error> {
    // Decisions are taken on the Target and Lease caches: before their first list they know
    // nothing (a shutdown stops the wait).
    context.caches_ready.wait().await;
    let api: Api<Environment> = Api::all(context.client.clone());
    finalizer(
        &api,
        finalizers::DEPLOYER_MANAGEMENT,
        environment,
        |event| async {
            match event {
                FinalizerEvent::Apply(environment) => apply(&environment, &context).await,
                FinalizerEvent::Cleanup(environment) => cleanup(&environment, &context).await,
            }
        },
    )
    .await
    .map_err(|error| Error::Finalizer(Box::new(error)))
}

fn error_policy(environment: Arc<Environment>, error: &Error, _: Arc<Context>) -> Action {
    let waiting = matches!(error, Error::Finalizer(failed)
    if matches!(**failed, FinalizerError::CleanupFailed(
        Error::TargetDeleting { .. } | Error::PairsRemaining { .. }
    )));
    if waiting {
        info!(name = %environment.name_any(), %error, "will look again");
    } else {
        warn!(name = %environment.name_any(), %error, "will retry");
    }
    Action::requeue(ERROR_RETRY)
}

async fn apply(environment: &Environment, context: &Context) -> Result<Action, Error> {
    let name = environment.name_any();
    let namespace = &context.settings.namespace;
    // A failure on the Target is reported in status like the heartbeat, which is still
    // checked, and then retried.
    let mut failure = None;
    let target = match desired_target(environment, namespace) {
        Err(problem) => {
            warn!(name = %name, %problem, "invalid Environment");
            target_condition(ConditionStatus::False, "InvalidSpec", problem)
        }
        Ok(target) => match ensure_target(environment, target, context).await {
            Ok(TargetState::Reconciled) => target_condition(
                ConditionStatus::True,
                "TargetReconciled",
                format!("Target {namespace}/{name} is up to date"),
            ),
            Ok(TargetState::Foreign(owner)) => {
                warn!(name = %name, namespace = %namespace, owner = %owner, "the environment's Target exists and is not the environment's");
                target_condition(
                    ConditionStatus::False,
                    "TargetConflict",
                    format!(
                        "Target {namespace}/{name} exists and is not this Environment's ({owner}); it is left as it is: rename or delete it"
                    ),
                )
            }
            Err(error) => {
                let update =
                    target_condition(ConditionStatus::False, "TargetError", error.to_string());
                failure = Some(error);
                update
            }
        },
    };
    let (heartbeat, next_check) = heartbeat_state(environment, context);
    let change = heartbeat_change(environment, &heartbeat);
    update_conditions(environment, vec![target, heartbeat], context).await?;
    if let Some((type_, reason, note)) = change {
        info!(name = %name, reason, "the agent's heartbeat changed");
        context
            .events
            .publish(environment, type_, reason, note)
            .await;
    }
    match failure {
        Some(error) => Err(error),
        None => Ok(Action::requeue(next_check.min(RESYNC))),
    }
}

fn target_condition(
    status: ConditionStatus,
    reason: &'static str,
    message: String,
) -> ConditionUpdate<'static> {
    ConditionUpdate {
        type_: conditions::TARGET_READY,
        status,
        reason,
        message,
    }
}

async fn cleanup(environment: &Environment, context: &Context) -> Result<Action, Error> {
    let name = environment.name_any();
    let namespace = &context.settings.namespace;
    let pairs = remaining_pairs(&name, context).await?;
    if !pairs.is_empty() {
        return Err(Error::PairsRemaining {
            name,
            pairs: pairs.join(", "),
        });
    }
    let (targets, existing) = read_target(&name, context).await?;
    let Some(existing) = existing else {
        return Ok(Action::await_change());
    };
    if let Some(owner) = foreign_owner(&existing, &name) {
        info!(name = %name, namespace = %namespace, owner = %owner, "kept the Target of the same name, which is not the environment's");
        return Ok(Action::await_change());
    }
    // Only the Target just read: one made again in between is not the environment's.
    let only_this = DeleteParams {
        preconditions: Some(Preconditions {
            uid: existing.uid(),
            resource_version: None,
        }),
        ..DeleteParams::default()
    };
    match targets.delete(&name, &only_this).await {
        // Finalizers of others hold it: the finalizer stays until the Target is gone, which
        // the Target watch reports.
        Ok(deleting) if deleting.is_left() => {
            let finalizers = deleting.left().map(|held| held.finalizers().join(", "));
            return Err(Error::TargetDeleting {
                name,
                finalizers: finalizers.unwrap_or_default(),
            });
        }
        Ok(_) => {
            info!(name = %name, namespace = %namespace, "deleted the environment's Target");
            publish(
                context,
                environment,
                "TargetDeleted",
                format!("deleted Target {namespace}/{name}"),
            )
            .await;
        }
        Err(kube::Error::Api(status)) if status.code == 404 => {}
        Err(source) => return Err(api_error(&name, "deleting its Target", source)),
    }
    Ok(Action::await_change())
}

/// The Installations of deployers registered for the environment `name` (the DeployerRegistration
/// controller removes them when the environment is deleted).
async fn remaining_pairs(name: &str, context: &Context) -> Result<Vec<String>, Error> {
    let installations: Api<Installation> =
        Api::namespaced(context.client.clone(), &context.settings.namespace);
    let selector = format!("{}={name}", labels::DEPLOYER_ENVIRONMENT);
    let pairs = installations
        .list_metadata(&ListParams::default().labels(&selector))
        .await
        .map_err(|e| api_error(name, "listing the deployers' installations", e))?;
    Ok(pairs.items.iter().map(|pair| pair.name_any()).collect())
}

/// The Target named like the environment `name` in the deployer management namespace, if
/// any, and the API it was read through.
async fn read_target(
    name: &str,
    context: &Context,
) -> Result<(Api<Target>, Option<Target>), Error> {
    let targets: Api<Target> = Api::namespaced(context.client.clone(), &context.settings.namespace);
    let existing = targets
        .get_opt(name)
        .await
        .map_err(|e| api_error(name, "reading its Target", e))?;
    Ok((targets, existing))
}

/// Who controls a Target named like the environment `environment`, when that is not an
/// Environment of this name (this one, or an earlier one of the same name whose Target was
/// left behind): another controller, or nobody.
fn foreign_owner(target: &Target, environment: &str) -> Option<String> {
    let controller = target
        .metadata
        .owner_references
        .iter()
        .flatten()
        .find(|o| o.controller == Some(true));
    match controller {
        Some(o)
            if o.kind == Environment::kind(&())
                && o.api_version == Environment::api_version(&())
                && o.name == environment =>
        {
            None
        }
        Some(o) => Some(format!("controlled by {} {}", o.kind, o.name)),
        None => Some("made by someone else: it has no controller".to_owned()),
    }
}

/// The Target the environment's `hostTarget` describes, owned by the environment.
pub fn desired_target(environment: &Environment, namespace: &str) -> Result<Target, String> {
    let name = environment.name_any();
    let template = &environment.spec.host_target;
    if template.type_.is_empty() {
        return Err("spec.hostTarget.type must name a target type, e.g. landscaper.gardener.cloud/kubernetes-cluster".to_owned());
    }
    if template.config.is_none() && template.secret_ref.is_none() {
        return Err("spec.hostTarget needs either config or secretRef".to_owned());
    }
    let mut target_labels = template.labels.clone().unwrap_or_default();
    target_labels.insert(labels::DEPLOYER_ENVIRONMENT.to_owned(), name.clone());
    let owner = OwnerReference {
        api_version: Environment::api_version(&()).into_owned(),
        kind: Environment::kind(&()).into_owned(),
        name: name.clone(),
        uid: environment.uid().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    };
    Ok(Target {
        metadata: ObjectMeta {
            name: Some(name),
            namespace: Some(namespace.to_owned()),
            labels: Some(target_labels),
            annotations: template.annotations.clone(),
            owner_references: Some(vec![owner]),
            ..Default::default()
        },
        spec: TargetSpec {
            type_: template.type_.clone(),
            config: template.config.clone(),
            secret_ref: template.secret_ref.clone(),
        },
    })
}

/// What became of the environment's Target.
enum TargetState {
    /// It is as the environment describes it.
    Reconciled,
    /// A Target of that name is someone else's (who, in words); it was left alone.
    Foreign(String),
}

/// Creates the Target, or updates it when it differs from what the environment describes;
/// a Target of that name that is not the environment's is left alone.
///
/// Writes are server-side applies by [`MANAGER`], so that labels and annotations the
/// environment no longer lists are removed, while those others put on the Target stay.
async fn ensure_target(
    environment: &Environment,
    desired: Target,
    context: &Context,
) -> Result<TargetState, Error> {
    let name = environment.name_any();
    let namespace = &context.settings.namespace;
    let targets: Api<Target> = Api::namespaced(context.client.clone(), namespace);
    // A Target written since the cache saw it makes the update below conflict (409), and the
    // reconcile is retried on the newer one. The cache holds the environments' Targets (by
    // their label): one of that name without it is not there, and is read when the creation
    // conflicts with it.
    let mut existing = context
        .targets
        .get(&ObjectRef::new(&name).within(namespace))
        .map(|cached| (*cached).clone());
    if existing.is_none() {
        let (_, read) = read_target(&name, context).await?;
        existing = read;
    }
    let write = match &existing {
        None => TargetWrite::Create,
        Some(existing) if target_is_current(existing, &desired) => {
            return Ok(TargetState::Reconciled);
        }
        Some(existing) if let Some(owner) = foreign_owner(existing, &name) => {
            return Ok(TargetState::Foreign(owner));
        }
        Some(existing) => TargetWrite::Update {
            resource_version: existing.resource_version(),
        },
    };
    let (params, body) = write.apply(desired);
    targets
        .patch(&name, &params, &Patch::Apply(&body))
        .await
        .map_err(|e| api_error(&name, write.action(), e))?;
    let done = write.done();
    info!(name = %name, namespace = %namespace, "{done} the environment's Target");
    publish(
        context,
        environment,
        write.reason(),
        format!("{done} Target {namespace}/{name}"),
    )
    .await;
    Ok(TargetState::Reconciled)
}

/// How [`ensure_target`] writes the Target.
enum TargetWrite {
    /// There was none.
    Create,
    /// The environment's own Target, as read, differs.
    Update {
        /// The version read.
        resource_version: Option<String>,
    },
}

impl TargetWrite {
    /// The apply's parameters and body. An update is forced, to set back what others changed
    /// in the environment's Target, and guarded by the version read, so that it only ever
    /// changes the Target checked to be the environment's. A creation is not forced: a
    /// Target someone made since the read is reported as a conflict, not taken over.
    fn apply(&self, mut desired: Target) -> (PatchParams, Target) {
        match self {
            TargetWrite::Create => (PatchParams::apply(MANAGER), desired),
            TargetWrite::Update { resource_version } => {
                desired.metadata.resource_version = resource_version.clone();
                (PatchParams::apply(MANAGER).force(), desired)
            }
        }
    }

    fn action(&self) -> &'static str {
        match self {
            TargetWrite::Create => "creating its Target",
            TargetWrite::Update { .. } => "updating its Target",
        }
    }

    fn reason(&self) -> &'static str {
        match self {
            TargetWrite::Create => "TargetCreated",
            TargetWrite::Update { .. } => "TargetUpdated",
        }
    }

    fn done(&self) -> &'static str {
        match self {
            TargetWrite::Create => "created",
            TargetWrite::Update { .. } => "updated",
        }
    }
}

/// Whether `existing` is as `desired` describes it: same spec, the environment as an owner,
/// the desired labels and annotations present, and none left over that this controller
/// applied earlier and the environment no longer lists.
fn target_is_current(existing: &Target, desired: &Target) -> bool {
    let Some(applied) = applied_keys(existing) else {
        return false;
    };
    let spec_is_current = existing.spec == desired.spec;
    let (existing, desired) = (&existing.metadata, &desired.metadata);
    spec_is_current
        && contains_all(existing.labels.as_ref(), desired.labels.as_ref())
        && contains_all(existing.annotations.as_ref(), desired.annotations.as_ref())
        && applied
            .labels
            .iter()
            .all(|key| has_key(&desired.labels, key))
        && applied
            .annotations
            .iter()
            .all(|key| has_key(&desired.annotations, key))
        && desired.owner_references.iter().flatten().all(|owner| {
            existing
                .owner_references
                .iter()
                .flatten()
                .any(|o| o == owner)
        })
}

fn has_key(map: &Option<BTreeMap<String, String>>, key: &str) -> bool {
    map.as_ref().is_some_and(|m| m.contains_key(key))
}

/// The label and annotation keys a Target's fields record as applied by this controller.
struct AppliedKeys {
    labels: Vec<String>,
    annotations: Vec<String>,
}

/// What this controller last applied to `target`, from its `managedFields` entry; `None` when
/// it never applied to it (a Target made before it used server-side apply).
fn applied_keys(target: &Target) -> Option<AppliedKeys> {
    let entry = target
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .find(|entry| {
            entry.manager.as_deref() == Some(MANAGER) && entry.operation.as_deref() == Some("Apply")
        })?;
    let metadata = entry.fields_v1.as_ref()?.0.get("f:metadata");
    let keys = |field: &str| -> Vec<String> {
        metadata
            .and_then(|m| m.get(field))
            .and_then(serde_json::Value::as_object)
            .into_iter()
            .flat_map(|fields| fields.keys())
            .filter_map(|key| key.strip_prefix("f:"))
            .map(str::to_owned)
            .collect()
    };
    Some(AppliedKeys {
        labels: keys("f:labels"),
        annotations: keys("f:annotations"),
    })
}

/// The namespace of the environment's heartbeat Lease: the one its agent names, else the
/// deployer management namespace (agents that name none write it there).
fn lease_namespace<'a>(environment: &'a Environment, settings: &'a Settings) -> &'a str {
    environment
        .annotations()
        .get(LEASE_NAMESPACE_ANNOTATION)
        .map(String::as_str)
        .filter(|namespace| !namespace.is_empty())
        .unwrap_or(&settings.namespace)
}

/// The agent condition as the heartbeat Lease shows it, and when to look again.
fn heartbeat_state(
    environment: &Environment,
    context: &Context,
) -> (ConditionUpdate<'static>, Duration) {
    let name = environment.name_any();
    let namespace = lease_namespace(environment, &context.settings);
    let lease = context.leases.get(&ObjectRef::new(&name).within(namespace));
    let lease_name = format!("{namespace}/{name}");
    let Some((renewed, period)) = lease.as_deref().and_then(renewal) else {
        let unknown = ConditionUpdate {
            type_: conditions::AGENT_READY,
            status: ConditionStatus::Unknown,
            reason: "NoHeartbeat",
            message: format!("no heartbeat Lease {lease_name} from the agent yet"),
        };
        return (unknown, RESYNC);
    };
    let tolerance =
        period * i32::try_from(context.settings.heartbeat_tolerance).unwrap_or(i32::MAX);
    let deadline = renewed.saturating_add(tolerance).unwrap_or(Timestamp::MAX);
    let now = Timestamp::now();
    if now < deadline {
        let wait = Duration::try_from(deadline.duration_since(now)).unwrap_or(RESYNC)
            + Duration::from_secs(1);
        let version = environment
            .status
            .as_ref()
            .and_then(|s| s.agent.as_ref())
            .and_then(|agent| agent.version.as_deref())
            .unwrap_or("of unknown version");
        let ready = ConditionUpdate {
            type_: conditions::AGENT_READY,
            status: ConditionStatus::True,
            reason: "HeartbeatRenewed",
            message: format!(
                "agent {version} renews its heartbeat Lease {lease_name} every {}s",
                period.as_secs()
            ),
        };
        return (ready, wait);
    }
    let unknown = ConditionUpdate {
        type_: conditions::AGENT_READY,
        status: ConditionStatus::Unknown,
        reason: "HeartbeatMissed",
        message: format!(
            "the agent has not renewed Lease {lease_name} since {renewed} ({} periods of {}s)",
            context.settings.heartbeat_tolerance,
            period.as_secs()
        ),
    };
    (unknown, RESYNC)
}

/// When the Lease was last renewed and the agent's heartbeat period.
fn renewal(lease: &Lease) -> Option<(Timestamp, SignedDuration)> {
    let spec = lease.spec.as_ref()?;
    let renewed = spec.renew_time.as_ref().or(spec.acquire_time.as_ref())?.0;
    let period = SignedDuration::from_secs(i64::from(spec.lease_duration_seconds?.max(1)));
    Some((renewed, period))
}

/// Writes the given conditions and the observed generation, if anything changed.
async fn update_conditions(
    environment: &Environment,
    updates: Vec<ConditionUpdate<'_>>,
    context: &Context,
) -> Result<(), Error> {
    let name = environment.name_any();
    let mut status = environment.status.clone().unwrap_or_default();
    let now = Time(Timestamp::now());
    let mut changed = false;
    for update in updates {
        changed |= set_condition(&mut status.conditions, update, now.clone());
    }
    let generation = environment.metadata.generation;
    changed |= status.observed_generation != generation;
    if !changed {
        return Ok(());
    }
    status.observed_generation = generation;
    patch_status(&context.client, environment, &status)
        .await
        .map_err(|e| api_error(&name, "updating its status", e))
}

/// Patches an Environment's status conditions and observed generation, the fields of the
/// status this controller owns, and no other: the agent's `status.agent` is left as the
/// agent last wrote it. Not guarded by a resourceVersion, which every heartbeat of the agent
/// changes; this controller is the only writer of these fields.
pub async fn patch_status(
    client: &kube::Client,
    environment: &Environment,
    status: &EnvironmentStatus,
) -> Result<(), kube::Error> {
    let api: Api<Environment> = Api::all(client.clone());
    let patch = json!({
        "status": { "conditions": status.conditions, "observedGeneration": status.observed_generation },
    });
    api.patch_status(
        &environment.name_any(),
        &PatchParams::default(),
        &Patch::Merge(patch),
    )
    .await?;
    Ok(())
}

async fn publish(context: &Context, environment: &Environment, reason: &str, note: String) {
    context.events.normal(environment, reason, note).await;
}

/// The Event a change of the `AgentReady` condition to `heartbeat` deserves: the heartbeat
/// lost (it was renewed), recovered (it had been missed) or the agent's first one.
fn heartbeat_change(
    environment: &Environment,
    heartbeat: &ConditionUpdate<'_>,
) -> Option<(EventType, &'static str, String)> {
    let previous = environment
        .status
        .as_ref()
        .and_then(|status| find_condition(&status.conditions, conditions::AGENT_READY));
    let was_ready = previous.is_some_and(|c| c.status == ConditionStatus::True);
    let is_ready = heartbeat.status == ConditionStatus::True;
    let note = heartbeat.message.clone();
    match (was_ready, is_ready) {
        (true, false) => Some((EventType::Warning, "HeartbeatLost", note)),
        (false, true) if previous.is_some_and(|c| c.reason == "HeartbeatMissed") => {
            Some((EventType::Normal, "HeartbeatRecovered", note))
        }
        (false, true) => Some((EventType::Normal, "AgentReady", note)),
        _ => None,
    }
}

fn api_error(name: &str, action: &str, source: kube::Error) -> Error {
    Error::Api(ApiFailure::named::<Environment>(name, action, source))
}
