//! The workload simulator (off by default): Deployments, StatefulSets, DaemonSets,
//! ReplicaSets and Jobs report a ready status shortly after each change, as if their pods
//! had started. An object annotated [`NEVER_READY`] `"true"` is left alone, to simulate a
//! workload that never becomes ready.

use super::resource;
use crate::clock;
use crate::cluster::ClusterState;
use crate::handlers::apply_update;
use crate::store::{Event, EventType, Stored};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

/// Annotation that keeps the simulator away from one object.
pub const NEVER_READY: &str = "testbed.landscaper.gardener.cloud/never-ready";

/// How long a simulated rollout takes.
const ROLLOUT: Duration = Duration::from_millis(50);

const WORKLOADS: &[&str] = &[
    "apps/deployments",
    "apps/statefulsets",
    "apps/daemonsets",
    "apps/replicasets",
    "batch/jobs",
];

/// Reacts to a change (or looks at every workload when `ev` is `None`).
pub async fn handle(state: Arc<ClusterState>, ev: Option<Arc<Event>>) {
    if !state.simulating() {
        return;
    }
    let objects: Vec<(String, Arc<Stored>)> = match ev {
        None => WORKLOADS
            .iter()
            .flat_map(|k| {
                state
                    .store
                    .list(k, None, None)
                    .0
                    .into_iter()
                    .map(|o| (k.to_string(), o))
            })
            .collect(),
        Some(ev) if ev.kind != EventType::Deleted && WORKLOADS.contains(&&*ev.storage_key) => {
            vec![(ev.storage_key.to_string(), ev.object.clone())]
        }
        Some(_) => return,
    };
    for (key, obj) in objects {
        if obj.deleting {
            continue;
        }
        let value = obj.value();
        let opted_out = value
            .pointer("/metadata/annotations")
            .and_then(|a| a.get(NEVER_READY))
            .and_then(Value::as_str)
            == Some("true");
        let Some(status) = ready_status(&key, &value) else {
            continue;
        };
        if opted_out || value.get("status") == Some(&status) {
            continue;
        }
        let state = state.clone();
        tokio::spawn(async move {
            tokio::time::sleep(ROLLOUT).await;
            write_status(&state, &key, &obj, status);
        });
    }
}

fn write_status(state: &ClusterState, key: &str, obj: &Stored, status: Value) {
    let Some(res) = resource(state, key) else {
        return;
    };
    let result = state.store.write(|txn| {
        // Only the version this status was computed for; a later change gets its own turn.
        let Some(current) = txn
            .get(key, &obj.namespace, &obj.name)
            .filter(|c| c.rv == obj.rv)
        else {
            return Ok(());
        };
        let mut next = current.value();
        if let Some(m) = next.as_object_mut() {
            m.insert("status".into(), status);
        }
        apply_update(txn, &res, &current, next, Some("status"), false).map(|_| ())
    });
    if let Err(e) = result {
        tracing::warn!(resource = key, name = %obj.name, error = %e.message, "simulating workload status");
    }
}

fn condition(ty: &str, reason: &str, message: &str, since: &Value) -> Value {
    json!({"type": ty, "status": "True", "lastUpdateTime": since, "lastTransitionTime": since, "reason": reason, "message": message})
}

/// The status of a workload whose pods all run, for its current generation.
fn ready_status(key: &str, obj: &Value) -> Option<Value> {
    let generation = obj
        .pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .unwrap_or(1);
    let replicas = obj
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(1);
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    // Keep condition times of an already simulated status, so a re-run changes nothing.
    let since = obj
        .pointer("/status/conditions/0/lastTransitionTime")
        .cloned()
        .unwrap_or_else(|| clock::now_time().into());
    Some(match key {
        "apps/deployments" => json!({
            "observedGeneration": generation, "replicas": replicas, "updatedReplicas": replicas,
            "readyReplicas": replicas, "availableReplicas": replicas,
            "conditions": [
                condition("Available", "MinimumReplicasAvailable", "Deployment has minimum availability.", &since),
                condition("Progressing", "NewReplicaSetAvailable", &format!("ReplicaSet \"{name}\" has successfully progressed."), &since),
            ]
        }),
        "apps/statefulsets" => json!({
            "observedGeneration": generation, "replicas": replicas, "readyReplicas": replicas,
            "currentReplicas": replicas, "updatedReplicas": replicas, "availableReplicas": replicas,
            "currentRevision": format!("{name}-{generation}"), "updateRevision": format!("{name}-{generation}"),
            "collisionCount": 0
        }),
        "apps/daemonsets" => json!({
            "observedGeneration": generation, "desiredNumberScheduled": 1, "currentNumberScheduled": 1,
            "numberReady": 1, "updatedNumberScheduled": 1, "numberAvailable": 1, "numberMisscheduled": 0
        }),
        "apps/replicasets" => json!({
            "observedGeneration": generation, "replicas": replicas, "fullyLabeledReplicas": replicas,
            "readyReplicas": replicas, "availableReplicas": replicas
        }),
        "batch/jobs" => {
            let completions = obj
                .pointer("/spec/completions")
                .and_then(Value::as_i64)
                .unwrap_or(1);
            let start = obj
                .pointer("/status/startTime")
                .cloned()
                .unwrap_or_else(|| since.clone());
            json!({
                "startTime": start, "completionTime": since, "succeeded": completions, "ready": 0, "terminating": 0,
                "uncountedTerminatedPods": {},
                "conditions": [
                    {"type": "SuccessCriteriaMet", "status": "True", "lastProbeTime": since, "lastTransitionTime": since, "reason": "CompletionsReached", "message": "Reached expected number of succeeded pods"},
                    {"type": "Complete", "status": "True", "lastProbeTime": since, "lastTransitionTime": since, "reason": "CompletionsReached", "message": "Reached expected number of succeeded pods"}
                ]
            })
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deployment_status_follows_generation_and_replicas() {
        let d = json!({"metadata": {"name": "web", "generation": 3}, "spec": {"replicas": 2}});
        let s = ready_status("apps/deployments", &d).unwrap();
        assert_eq!(
            (
                s["observedGeneration"].as_i64(),
                s["readyReplicas"].as_i64()
            ),
            (Some(3), Some(2))
        );
        assert_eq!(s["conditions"][0]["type"], "Available");
    }

    #[test]
    fn jobs_complete() {
        let s = ready_status(
            "batch/jobs",
            &json!({"metadata": {"name": "j"}, "spec": {}}),
        )
        .unwrap();
        assert_eq!(s["succeeded"], 1);
        assert_eq!(s["conditions"][1]["type"], "Complete");
    }
}
