//! Progress in the logs: a line whenever an object's description changes, for the kinds a
//! person follows in dev mode.

use std::collections::HashMap;
use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use kube::ResourceExt;
use kube::api::Api;
use kube::runtime::{WatchStreamExt, watcher};
use landscaper_api::core::{DeployItem, DeployerRegistration, Environment, Installation, Target};
use tokio::task::JoinSet;
use tracing::info;

use crate::controllers::manager::Watched;

/// Starts a progress log for each kind dev mode shows.
pub fn spawn_all(tasks: &mut JoinSet<()>, client: &kube::Client) {
    tasks.spawn(progress::<Environment>(
        client.clone(),
        describe_environment,
    ));
    tasks.spawn(progress::<Target>(client.clone(), describe_target));
    tasks.spawn(progress::<DeployerRegistration>(
        client.clone(),
        describe_registration,
    ));
    tasks.spawn(progress::<Installation>(
        client.clone(),
        describe_installation,
    ));
    tasks.spawn(progress::<DeployItem>(client.clone(), describe_deploy_item));
}

/// Logs a line whenever an object's description changes, until the watch ends.
async fn progress<K: Watched>(client: kube::Client, describe: fn(&K) -> String) {
    let api: Api<K> = Api::all(client);
    let mut seen: HashMap<String, String> = HashMap::new();
    let mut events = watcher(api, watcher::Config::default())
        .default_backoff()
        .touched_objects()
        .boxed();
    loop {
        match events.try_next().await {
            Ok(Some(object)) => {
                let key = format!(
                    "{}/{}",
                    object.namespace().unwrap_or_default(),
                    object.name_any()
                );
                let description = describe(&object);
                if seen.get(&key) != Some(&description) {
                    info!(kind = %K::kind(&()), object = %key.trim_start_matches('/'), "{description}");
                    seen.insert(key, description);
                }
            }
            Ok(None) => return,
            Err(error) => {
                tracing::warn!(%error, "progress watch interrupted; retrying");
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    }
}

fn conditions_summary(conditions: &[landscaper_api::core::Condition]) -> String {
    conditions
        .iter()
        .map(|c| format!("{}={} ({})", c.type_, c.status, c.reason))
        .collect::<Vec<_>>()
        .join(", ")
}

fn describe_environment(environment: &Environment) -> String {
    let finalizers = environment.finalizers().len();
    let status = environment
        .status
        .as_ref()
        .map(|s| conditions_summary(&s.conditions))
        .unwrap_or_default();
    let state = if environment.metadata.deletion_timestamp.is_some() {
        "being deleted"
    } else {
        "registered"
    };
    format!("Environment {state}; {finalizers} finalizers; {status}")
}

fn describe_target(target: &Target) -> String {
    let secret = target
        .spec
        .secret_ref
        .as_ref()
        .map(|r| format!(", secretRef {}", r.name))
        .unwrap_or_default();
    format!("Target of type {}{secret}", target.spec.type_)
}

fn describe_deploy_item(item: &DeployItem) -> String {
    let status = item.status.clone().unwrap_or_default();
    let phase = status
        .phase
        .as_ref()
        .map_or("no phase yet".to_owned(), |p| format!("phase {p}"));
    let error = status
        .last_error
        .map(|e| format!("; last error: {}", e.message))
        .unwrap_or_default();
    format!("DeployItem of type {}: {phase}{error}", item.spec.type_)
}

fn describe_registration(registration: &DeployerRegistration) -> String {
    let status = registration.status.clone().unwrap_or_default();
    let ready = status.environments_ready.unwrap_or_else(|| "0/0".into());
    let error = status
        .last_error
        .map(|e| format!("; last error: {}", e.message))
        .unwrap_or_default();
    format!("DeployerRegistration: {ready} environments ready{error}")
}

fn describe_installation(installation: &Installation) -> String {
    let status = installation.status.clone().unwrap_or_default();
    let phase = status
        .phase
        .as_ref()
        .map_or("no phase yet".to_owned(), |p| format!("phase {p}"));
    let job = status
        .job_id
        .map(|j| format!(", job {j}"))
        .unwrap_or_default();
    let error = status
        .last_error
        .map(|e| format!("; last error: {}", e.message))
        .unwrap_or_default();
    format!("Installation: {phase}{job}{error}")
}
