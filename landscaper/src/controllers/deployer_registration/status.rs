//! What a registration reports: each environment's pair (its Installation's phase, what it
//! waits for), the ready count, a `Ready` and a `DependencyCycle` condition, and Events.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::events::EventType;
use kube::runtime::reflector::ObjectRef;
use landscaper_api::core::{
    ConditionStatus, ConditionUpdate, DeployerEnvironmentStatus, DeployerRegistration,
    DeployerRegistrationStatus, Installation, InstallationPhase, set_condition,
};
use serde_json::json;
use std::collections::BTreeSet;
use tracing::{info, warn};

use super::caches::Caches;
use super::order::Graph;
use super::pair::Pair;
use super::{Context, Error};
use crate::controllers::api_failure::ApiFailure;

/// The condition that all pairs are installed.
const READY: &str = "Ready";
/// The condition that the registration is part of a dependency cycle.
const DEPENDENCY_CYCLE: &str = "DependencyCycle";

/// Whether the Installation's last job succeeded.
pub fn succeeded(installation: &Installation) -> bool {
    installation
        .status
        .as_ref()
        .and_then(|status| status.phase.as_ref())
        .is_some_and(|phase| *phase == InstallationPhase::Succeeded)
}

/// The deploy item types of the Installation's Execution (named like the Installation).
pub fn needed_types(installation: &Installation, caches: &Caches) -> BTreeSet<String> {
    let key = ObjectRef::new(&installation.name_any())
        .within(&installation.namespace().unwrap_or_default());
    caches
        .executions
        .get(&key)
        .map(|execution| {
            execution
                .spec
                .deploy_items
                .iter()
                .map(|item| item.type_.clone())
                .collect()
        })
        .unwrap_or_default()
}

/// The status entry of a pair that exists.
pub fn pair_entry(pair: &Pair<'_>, graph: &Graph, caches: &Caches) -> DeployerEnvironmentStatus {
    let installation = caches
        .installations
        .get(&ObjectRef::new(pair.name()).within(pair.namespace));
    let phase = installation
        .as_ref()
        .and_then(|installation| installation.status.as_ref())
        .and_then(|status| status.phase.as_ref())
        .map(|phase| phase.to_string());
    let ready = installation.as_deref().is_some_and(succeeded);
    let waits = graph.waits(&pair.registration_name(), &pair.environment_name());
    let failure = installation
        .as_ref()
        .and_then(|installation| installation.status.as_ref())
        .filter(|_| !ready)
        .and_then(|status| status.last_error.as_ref())
        // The installation's errors name it already.
        .map(|error| error.message.clone());
    let message = if waits.is_empty() {
        failure
    } else {
        Some(waits.join("; "))
    };
    DeployerEnvironmentStatus {
        environment: pair.environment_name(),
        installation: Some(pair.name().to_owned()),
        phase,
        ready,
        message,
    }
}

/// Writes the registration's status when it changed, with an Event when a cycle is found.
pub async fn update(
    registration: &DeployerRegistration,
    environments: Vec<DeployerEnvironmentStatus>,
    graph: &Graph,
    context: &Context,
) -> Result<(), Error> {
    let name = registration.name_any();
    let previous = registration.status.clone().unwrap_or_default();
    let mut status = DeployerRegistrationStatus {
        observed_generation: registration.metadata.generation,
        conditions: previous.conditions.clone(),
        last_error: None,
        environments_ready: Some(format!(
            "{}/{}",
            environments.iter().filter(|entry| entry.ready).count(),
            environments.len()
        )),
        environments,
    };
    let now = Time(Timestamp::now());
    let not_ready: Vec<&str> = status
        .environments
        .iter()
        .filter(|entry| !entry.ready)
        .map(|entry| entry.environment.as_str())
        .collect();
    let ready = if not_ready.is_empty() {
        ConditionUpdate {
            type_: READY,
            status: ConditionStatus::True,
            reason: "DeployersInstalled",
            message: format!(
                "the deployer is installed in all {} environments",
                status.environments.len()
            ),
        }
    } else {
        ConditionUpdate {
            type_: READY,
            status: ConditionStatus::False,
            reason: "DeployersPending",
            message: format!("not installed yet in: {}", not_ready.join(", ")),
        }
    };
    set_condition(&mut status.conditions, ready, now.clone());
    let cycle = graph
        .cycles()
        .into_iter()
        .find(|cycle| cycle.contains(&name));
    let cycle_update = match &cycle {
        Some(path) => ConditionUpdate {
            type_: DEPENDENCY_CYCLE,
            status: ConditionStatus::True,
            reason: "CycleDetected",
            message: format!(
                "the deployers need each other and would wait forever: {}",
                path.join(" → ")
            ),
        },
        None => ConditionUpdate {
            type_: DEPENDENCY_CYCLE,
            status: ConditionStatus::False,
            reason: "NoCycle",
            message: "no dependency cycle".to_owned(),
        },
    };
    let cycle_message = cycle_update.message.clone();
    let cycle_is_new = cycle.is_some()
        && !previous
            .conditions
            .iter()
            .any(|c| c.type_ == DEPENDENCY_CYCLE && c.status == ConditionStatus::True);
    set_condition(&mut status.conditions, cycle_update, now);
    if cycle_is_new {
        warn!(registration = %name, cycle = %cycle_message, "dependency cycle between deployers");
        publish_as(
            context,
            registration,
            EventType::Warning,
            "DependencyCycle",
            cycle_message,
        )
        .await;
    }
    if !write(registration, &previous, &status, context).await? {
        return Ok(());
    }
    // Reported once written: a failed write retries, and the recorder counts a repetition.
    for entry in newly_ready(&previous, &status) {
        info!(registration = %name, environment = %entry.environment, "deployer installed");
        publish(
            context,
            registration,
            "DeployerInstalled",
            format!(
                "the deployer is installed in environment {} (Installation {})",
                entry.environment,
                entry.installation.as_deref().unwrap_or_default()
            ),
        )
        .await;
    }
    Ok(())
}

/// The pairs that are ready in `status` and were not in `previous`.
fn newly_ready<'a>(
    previous: &DeployerRegistrationStatus,
    status: &'a DeployerRegistrationStatus,
) -> impl Iterator<Item = &'a DeployerEnvironmentStatus> {
    let was_ready: BTreeSet<&str> = previous
        .environments
        .iter()
        .filter(|entry| entry.ready)
        .map(|entry| entry.environment.as_str())
        .collect();
    status
        .environments
        .iter()
        .filter(move |entry| entry.ready && !was_ready.contains(entry.environment.as_str()))
}

/// Reports a registration whose spec cannot be installed: `Ready` False with the problem,
/// written when it changed.
pub async fn invalid(
    registration: &DeployerRegistration,
    problem: &str,
    context: &Context,
) -> Result<(), Error> {
    let previous = registration.status.clone().unwrap_or_default();
    let mut status = DeployerRegistrationStatus {
        observed_generation: registration.metadata.generation,
        ..previous.clone()
    };
    set_condition(
        &mut status.conditions,
        ConditionUpdate {
            type_: READY,
            status: ConditionStatus::False,
            reason: "InvalidSpec",
            message: problem.to_owned(),
        },
        Time(Timestamp::now()),
    );
    write(registration, &previous, &status, context).await?;
    Ok(())
}

/// Writes `status` on the registration unless it is `previous` (what the registration holds);
/// true when written.
async fn write(
    registration: &DeployerRegistration,
    previous: &DeployerRegistrationStatus,
    status: &DeployerRegistrationStatus,
    context: &Context,
) -> Result<bool, Error> {
    if status == previous {
        return Ok(false);
    }
    Api::<DeployerRegistration>::all(context.client.clone())
        .patch_status(
            &registration.name_any(),
            &PatchParams::default(),
            &Patch::Merge(json!({ "status": status })),
        )
        .await
        .map_err(|source| {
            Error::Api(ApiFailure::new(registration, "writing its status", source))
        })?;
    Ok(true)
}

/// Reports a pair object the API server refused as invalid: a Warning Event the first time
/// the environment's status entry says so (a reconcile finding it refused again, as each
/// change of the registration's status causes, publishes nothing new).
pub async fn refused(
    registration: &DeployerRegistration,
    environment: &str,
    message: &str,
    context: &Context,
) {
    let reported = registration
        .status
        .iter()
        .flat_map(|status| &status.environments)
        .any(|entry| entry.environment == environment && entry.message.as_deref() == Some(message));
    if reported {
        return;
    }
    warn!(registration = %registration.name_any(), %environment, %message, "the API server refused a pair object");
    let note = format!("environment {environment}: {message}");
    publish_as(
        context,
        registration,
        EventType::Warning,
        "PairRefused",
        note,
    )
    .await;
}

/// Publishes a Normal event on the registration.
pub async fn publish(
    context: &Context,
    registration: &DeployerRegistration,
    reason: &str,
    note: String,
) {
    publish_as(context, registration, EventType::Normal, reason, note).await;
}

async fn publish_as(
    context: &Context,
    registration: &DeployerRegistration,
    type_: EventType,
    reason: &str,
    note: String,
) {
    context
        .events
        .publish(registration, type_, reason, note)
        .await;
}
