//! The workload simulator (off by default): Deployments, StatefulSets, DaemonSets,
//! ReplicaSets and Jobs report a ready status shortly after each change, as if their pods
//! had started. An object annotated [`NEVER_READY`] `"true"` is left alone, to simulate a
//! workload that never becomes ready.
//!
//! Pods of an image the cluster is told never becomes ready ([`Rollouts::never_ready`](crate::workloads::Rollouts::never_ready)) never
//! get ready: a workload created with one reports its pods unavailable, and a rollout to one
//! stays stuck the way the real controllers leave it, the pods of the template that was ready
//! before still running next to the new, unready ones.
//!
//! Deployments of an image with a registered container runner are not simulated here but run
//! by the kubelet mode (`super::kubelet`).

use crate::clock;
use crate::cluster::ClusterState;
use crate::store::{Event, EventType, Stored};
use crate::writes::apply_update;
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
    super::kubelet::handle(&state, ev.as_deref());
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
        Some(ev) if WORKLOADS.contains(&&*ev.storage_key) => {
            if ev.kind == EventType::Deleted {
                state.rollouts.forget(&ev.object.uid);
                return;
            }
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
        if opted_out || (key == "apps/deployments" && super::kubelet::runs(&state, &value)) {
            continue;
        }
        let template = value.pointer("/spec/template");
        let (status, ready) = if state.rollouts.stuck(template) {
            let old = state
                .rollouts
                .ready_template(&obj.uid)
                .filter(|t| Some(t) != template);
            (stuck_status(&key, &value, old.is_some()), false)
        } else {
            (ready_status(&key, &value), true)
        };
        let Some(status) = status else {
            continue;
        };
        if value.get("status") == Some(&status) {
            if ready {
                state.rollouts.record_ready(&obj.uid, template);
            }
            continue;
        }
        let state = state.clone();
        tokio::spawn(async move {
            tokio::time::sleep(ROLLOUT).await;
            if write_status(&state, &key, &obj, status) && ready {
                let value = obj.value();
                state
                    .rollouts
                    .record_ready(&obj.uid, value.pointer("/spec/template"));
            }
        });
    }
}

/// Writes `status` onto the version of the object it was computed for; whether it did.
fn write_status(state: &ClusterState, key: &str, obj: &Stored, status: Value) -> bool {
    let Some(res) = state.stored_resource(key) else {
        return false;
    };
    let result = state.store.write(|txn| {
        // Only the version this status was computed for; a later change gets its own turn.
        let Some(current) = txn
            .get(key, &obj.namespace, &obj.name)
            .filter(|c| c.rv == obj.rv)
        else {
            return Ok(false);
        };
        let mut next = current.value();
        if let Some(m) = next.as_object_mut() {
            m.insert("status".into(), status);
        }
        apply_update(txn, &res, &current, next, Some("status"), false).map(|_| true)
    });
    result.unwrap_or_else(|e| {
        tracing::warn!(resource = key, name = %obj.name, error = %e.message, "simulating workload status");
        false
    })
}

fn condition(ty: &str, reason: &str, message: &str, since: &Value) -> Value {
    condition_with(ty, "True", reason, message, since)
}

fn condition_with(ty: &str, status: &str, reason: &str, message: &str, since: &Value) -> Value {
    json!({"type": ty, "status": status, "lastUpdateTime": since, "lastTransitionTime": since, "reason": reason, "message": message})
}

/// A rolling update's `maxSurge` or `maxUnavailable` of `replicas` pods: a count, or a
/// percentage rounded up (surge) or down (unavailable) as the Deployment controller does.
pub(crate) fn rolling_bound(obj: &Value, field: &str, replicas: i64, round_up: bool) -> i64 {
    let value = obj
        .pointer(&format!("/spec/strategy/rollingUpdate/{field}"))
        .cloned()
        .unwrap_or_else(|| json!("25%"));
    if let Some(n) = value.as_i64() {
        return n;
    }
    let percent = value
        .as_str()
        .and_then(|s| s.strip_suffix('%'))
        .and_then(|p| p.parse::<i64>().ok())
        .unwrap_or(25);
    let scaled = replicas * percent;
    if round_up {
        (scaled + 99) / 100
    } else {
        scaled / 100
    }
}

/// What both status builders read from a workload: its generation, replicas and name, and
/// the time of its conditions (an already simulated status keeps its own, so a re-run changes
/// nothing).
fn facts(obj: &Value) -> (i64, i64, &str, Value) {
    let int = |pointer: &str| obj.pointer(pointer).and_then(Value::as_i64).unwrap_or(1);
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let since = obj
        .pointer("/status/conditions/0/lastTransitionTime")
        .cloned()
        .unwrap_or_else(|| clock::now_time().into());
    (
        int("/metadata/generation"),
        int("/spec/replicas"),
        name,
        since,
    )
}

/// The status of a workload whose current template runs an image that never becomes ready.
/// `rolling`: the workload had finished a rollout of another template before, whose pods
/// stay where the controller keeps them.
fn stuck_status(key: &str, obj: &Value, rolling: bool) -> Option<Value> {
    let (generation, replicas, name, since) = facts(obj);
    Some(match key {
        "apps/deployments" => {
            let recreate =
                obj.pointer("/spec/strategy/type").and_then(Value::as_str) == Some("Recreate");
            // Old pods the rolling update may not take down while no new pod is available.
            let min_available = replicas - rolling_bound(obj, "maxUnavailable", replicas, false);
            let old = if rolling && !recreate {
                min_available.max(0)
            } else {
                0
            };
            let new = if rolling && !recreate {
                (replicas + rolling_bound(obj, "maxSurge", replicas, true) - old).min(replicas)
            } else {
                replicas
            };
            let mut status = json!({
                "observedGeneration": generation, "replicas": old + new, "updatedReplicas": new,
                "unavailableReplicas": new,
                "conditions": [
                    if old >= min_available {
                        condition("Available", "MinimumReplicasAvailable", "Deployment has minimum availability.", &since)
                    } else {
                        condition_with("Available", "False", "MinimumReplicasUnavailable", "Deployment does not have minimum availability.", &since)
                    },
                    condition("Progressing", "ReplicaSetUpdated", &format!("ReplicaSet \"{name}\" is progressing."), &since),
                ]
            });
            if old > 0 {
                status["readyReplicas"] = json!(old);
                status["availableReplicas"] = json!(old);
            }
            status
        }
        "apps/statefulsets" => {
            // The highest ordinal is replaced first and never gets ready, so the rollout
            // stops there; a new set stops at its first pod.
            let current = obj
                .pointer("/status/currentRevision")
                .and_then(Value::as_str)
                .map_or_else(|| format!("{name}-{generation}"), str::to_owned);
            let update = format!("{name}-{generation}");
            let (ready, updated) = if rolling {
                (replicas - 1, 1)
            } else {
                (0, replicas.min(1))
            };
            let mut status = json!({
                "observedGeneration": generation, "replicas": if rolling { replicas } else { updated },
                "currentReplicas": if rolling { ready } else { updated }, "updatedReplicas": updated,
                "currentRevision": if rolling { current } else { update.clone() }, "updateRevision": update,
                "collisionCount": 0
            });
            if ready > 0 {
                status["readyReplicas"] = json!(ready);
                status["availableReplicas"] = json!(ready);
            }
            status
        }
        // One node: its old daemon pod is replaced by the new one, which never gets ready.
        "apps/daemonsets" => json!({
            "observedGeneration": generation, "desiredNumberScheduled": 1, "currentNumberScheduled": 1,
            "numberReady": 0, "updatedNumberScheduled": 1, "numberAvailable": 0, "numberUnavailable": 1,
            "numberMisscheduled": 0
        }),
        "apps/replicasets" => json!({
            "observedGeneration": generation, "replicas": replicas, "fullyLabeledReplicas": replicas
        }),
        "batch/jobs" => {
            let start = obj
                .pointer("/status/startTime")
                .cloned()
                .unwrap_or_else(|| since.clone());
            json!({"startTime": start, "active": 1, "ready": 0, "terminating": 0, "uncountedTerminatedPods": {}})
        }
        _ => return None,
    })
}

/// The status of a workload whose pods all run, for its current generation.
fn ready_status(key: &str, obj: &Value) -> Option<Value> {
    let (generation, replicas, name, since) = facts(obj);
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
    fn a_stuck_statefulset_rollout_stops_at_its_highest_pod() {
        let sts = json!({"metadata": {"name": "db", "generation": 2}, "spec": {"replicas": 3},
            "status": {"currentRevision": "db-1"}});
        let s = stuck_status("apps/statefulsets", &sts, true).unwrap();
        assert_eq!(
            (
                s["readyReplicas"].as_i64(),
                s["updatedReplicas"].as_i64(),
                s["currentRevision"].as_str(),
                s["updateRevision"].as_str()
            ),
            (Some(2), Some(1), Some("db-1"), Some("db-2"))
        );
        let fresh = stuck_status("apps/statefulsets", &sts, false).unwrap();
        assert_eq!(fresh.get("readyReplicas"), None);
        assert_eq!(fresh["currentRevision"], fresh["updateRevision"]);
    }

    #[test]
    fn a_stuck_daemonset_has_its_pod_updated_but_unavailable() {
        let ds = json!({"metadata": {"name": "agent", "generation": 4}});
        let s = stuck_status("apps/daemonsets", &ds, true).unwrap();
        assert_eq!(
            (
                s["observedGeneration"].as_i64(),
                s["updatedNumberScheduled"].as_i64(),
                s["numberAvailable"].as_i64()
            ),
            (Some(4), Some(1), Some(0))
        );
    }

    #[test]
    fn a_stuck_deployment_rollout_keeps_what_max_unavailable_protects() {
        let d = json!({"metadata": {"name": "web", "generation": 2}, "spec": {"replicas": 4}});
        let s = stuck_status("apps/deployments", &d, true).unwrap();
        // 25% of 4: one old pod may go, one new pod may surge; 3 old + 2 new, none ready.
        assert_eq!(
            (
                s["replicas"].as_i64(),
                s["updatedReplicas"].as_i64(),
                s["availableReplicas"].as_i64(),
                s["unavailableReplicas"].as_i64()
            ),
            (Some(5), Some(2), Some(3), Some(2))
        );
        let mut recreate = d.clone();
        recreate["spec"]["strategy"] = json!({"type": "Recreate"});
        let s = stuck_status("apps/deployments", &recreate, true).unwrap();
        assert_eq!(
            (s["replicas"].as_i64(), s.get("availableReplicas")),
            (Some(4), None)
        );
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
