//! The default readiness checks of workload kinds: a rollout is finished as `kubectl rollout
//! status` requires it, with no replica of an older template left (Deployment, StatefulSet,
//! DaemonSet) and all replicas ready (ReplicaSet), a Pod runs and is ready, a Job completed.

use serde_json::Value;

/// What a check says about one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Ready.
    Ready,
    /// Not ready yet, and why.
    NotReady(String),
    /// Will never become ready (a failed Job or Pod).
    Failed(String),
}

/// Whether the default checks cover this kind.
pub fn applies_to(api_version: &str, kind: &str) -> bool {
    matches!(
        (api_version, kind),
        (
            "apps/v1",
            "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet"
        ) | ("v1", "Pod")
            | ("batch/v1", "Job")
    )
}

fn int(v: &Value, path: &[&str]) -> Option<i64> {
    path.iter()
        .try_fold(v, |v, k| v.get(k))
        .and_then(Value::as_i64)
}

fn text<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    path.iter()
        .try_fold(v, |v, k| v.get(k))
        .and_then(Value::as_str)
}

fn condition<'a>(obj: &'a Value, type_: &str) -> Option<&'a str> {
    obj.pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(type_))?
        .get("status")?
        .as_str()
}

fn observed_current(obj: &Value) -> Result<(), String> {
    let generation = int(obj, &["metadata", "generation"]).unwrap_or(0);
    let observed = int(obj, &["status", "observedGeneration"]).unwrap_or(0);
    if observed < generation {
        return Err(format!(
            "observed generation {observed} is behind generation {generation}"
        ));
    }
    Ok(())
}

/// A status field counted as zero when it is absent, as the API omits zero counts.
fn count(obj: &Value, field: &str) -> i64 {
    int(obj, &["status", field]).unwrap_or(0)
}

/// `spec.replicas`, one when absent (the API's default).
fn wanted_replicas(obj: &Value) -> i64 {
    int(obj, &["spec", "replicas"]).unwrap_or(1)
}

/// What `kubectl rollout status` waits for: every replica updated, no old replica left, every
/// updated replica available.
fn deployment(obj: &Value) -> Verdict {
    if let Err(e) = observed_current(obj) {
        return Verdict::NotReady(e);
    }
    let want = wanted_replicas(obj);
    let updated = count(obj, "updatedReplicas");
    let total = count(obj, "replicas");
    let available = count(obj, "availableReplicas");
    let unavailable = count(obj, "unavailableReplicas");
    if updated < want {
        return Verdict::NotReady(format!("{updated} of {want} replicas updated"));
    }
    if total > updated {
        return Verdict::NotReady(format!(
            "{} old replicas pending termination",
            total - updated
        ));
    }
    if available < updated {
        return Verdict::NotReady(format!(
            "{available} of {updated} updated replicas available"
        ));
    }
    if unavailable > 0 {
        return Verdict::NotReady(format!("{unavailable} replicas unavailable"));
    }
    Verdict::Ready
}

/// What `kubectl rollout status` waits for: every replica ready and, for a rolling update,
/// every replica at the update revision (with a partition: the replicas above it updated).
fn stateful_set(obj: &Value) -> Verdict {
    let all_ready = replica_set(obj);
    if all_ready != Verdict::Ready {
        return all_ready;
    }
    let want = wanted_replicas(obj);
    let strategy = text(obj, &["spec", "updateStrategy", "type"]).unwrap_or("RollingUpdate");
    if strategy != "RollingUpdate" {
        // OnDelete: pods change only when deleted, there is no rollout to wait for.
        return Verdict::Ready;
    }
    if let Some(partition) = int(
        obj,
        &["spec", "updateStrategy", "rollingUpdate", "partition"],
    ) {
        let updated = count(obj, "updatedReplicas");
        let due = want - partition;
        if updated < due {
            return Verdict::NotReady(format!(
                "partitioned rollout: {updated} of {due} replicas updated"
            ));
        }
        return Verdict::Ready;
    }
    let current = text(obj, &["status", "currentRevision"]).unwrap_or_default();
    let update = text(obj, &["status", "updateRevision"]).unwrap_or_default();
    if current != update {
        return Verdict::NotReady(format!(
            "rolling update: {} of {want} replicas at revision {update}",
            count(obj, "updatedReplicas")
        ));
    }
    Verdict::Ready
}

/// What `kubectl rollout status` waits for: a daemon pod of the current template available
/// on every node that should run one.
fn daemon_set(obj: &Value) -> Verdict {
    if let Err(e) = observed_current(obj) {
        return Verdict::NotReady(e);
    }
    let want = count(obj, "desiredNumberScheduled");
    let updated = count(obj, "updatedNumberScheduled");
    let available = count(obj, "numberAvailable");
    if updated < want {
        return Verdict::NotReady(format!("{updated} of {want} daemon pods updated"));
    }
    if available < want {
        return Verdict::NotReady(format!("{available} of {want} daemon pods available"));
    }
    Verdict::Ready
}

/// Every replica ready.
fn replica_set(obj: &Value) -> Verdict {
    if let Err(e) = observed_current(obj) {
        return Verdict::NotReady(e);
    }
    let want = wanted_replicas(obj);
    let ready = count(obj, "readyReplicas");
    if ready < want {
        return Verdict::NotReady(format!("{ready} of {want} replicas ready"));
    }
    Verdict::Ready
}

/// Checks one object of a covered kind.
pub fn check(kind: &str, obj: &Value) -> Verdict {
    match kind {
        "Deployment" => deployment(obj),
        "StatefulSet" => stateful_set(obj),
        "ReplicaSet" => replica_set(obj),
        "DaemonSet" => daemon_set(obj),
        "Pod" => match obj.pointer("/status/phase").and_then(Value::as_str) {
            Some("Succeeded") => Verdict::Ready,
            Some("Failed") => Verdict::Failed("the pod failed".into()),
            Some("Running") if condition(obj, "Ready") == Some("True") => Verdict::Ready,
            phase => Verdict::NotReady(format!("pod phase {}", phase.unwrap_or("unknown"))),
        },
        "Job" => {
            if condition(obj, "Complete") == Some("True") {
                Verdict::Ready
            } else if condition(obj, "Failed") == Some("True") {
                Verdict::Failed("the job failed".into())
            } else {
                Verdict::NotReady("the job has not completed".into())
            }
        }
        _ => Verdict::Ready,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn deployments_wait_for_the_observed_generation_and_available_replicas() {
        let fresh = json!({"metadata": {"generation": 2}, "spec": {"replicas": 2}, "status": {"observedGeneration": 1}});
        assert!(
            matches!(check("Deployment", &fresh), Verdict::NotReady(m) if m.contains("generation"))
        );
        let partial = json!({"metadata": {"generation": 2}, "spec": {"replicas": 2}, "status": {"observedGeneration": 2, "availableReplicas": 1, "updatedReplicas": 2}});
        assert!(
            matches!(check("Deployment", &partial), Verdict::NotReady(m) if m.contains("1 of 2"))
        );
        let done = json!({"metadata": {"generation": 2}, "spec": {"replicas": 2}, "status": {"observedGeneration": 2, "replicas": 2, "availableReplicas": 2, "updatedReplicas": 2}});
        assert_eq!(check("Deployment", &done), Verdict::Ready);
    }

    /// The status a real Deployment controller reported in the middle of a rollout to an
    /// image that does not start: the one available replica is the old Pod.
    #[test]
    fn a_deployment_with_an_old_replica_left_is_not_ready() {
        let mid_rollout = json!({"metadata": {"generation": 2}, "spec": {"replicas": 1}, "status": {
            "observedGeneration": 2, "replicas": 2, "updatedReplicas": 1, "readyReplicas": 1,
            "availableReplicas": 1, "unavailableReplicas": 1}});
        assert!(
            matches!(check("Deployment", &mid_rollout), Verdict::NotReady(m) if m.contains("1 old replicas")),
            "{:?}",
            check("Deployment", &mid_rollout)
        );
        let unavailable = json!({"metadata": {"generation": 2}, "spec": {"replicas": 1}, "status": {
            "observedGeneration": 2, "replicas": 1, "updatedReplicas": 1, "availableReplicas": 1,
            "unavailableReplicas": 1}});
        assert!(
            matches!(check("Deployment", &unavailable), Verdict::NotReady(m) if m.contains("unavailable"))
        );
    }

    #[test]
    fn statefulsets_wait_for_the_update_revision_or_their_partition() {
        let done = json!({"metadata": {"generation": 2}, "spec": {"replicas": 2}, "status": {
            "observedGeneration": 2, "readyReplicas": 2, "updatedReplicas": 2,
            "currentRevision": "db-2", "updateRevision": "db-2"}});
        assert_eq!(check("StatefulSet", &done), Verdict::Ready);
        // The last pod was replaced by one of the new revision that is not ready yet.
        let rolling = json!({"metadata": {"generation": 2}, "spec": {"replicas": 2}, "status": {
            "observedGeneration": 2, "readyReplicas": 1, "updatedReplicas": 1,
            "currentRevision": "db-1", "updateRevision": "db-2"}});
        assert!(
            matches!(check("StatefulSet", &rolling), Verdict::NotReady(m) if m.contains("1 of 2 replicas ready"))
        );
        // All pods ready again, one still at the old revision.
        let behind = json!({"metadata": {"generation": 2}, "spec": {"replicas": 2}, "status": {
            "observedGeneration": 2, "readyReplicas": 2, "updatedReplicas": 1,
            "currentRevision": "db-1", "updateRevision": "db-2"}});
        assert!(
            matches!(check("StatefulSet", &behind), Verdict::NotReady(m) if m.contains("db-2"))
        );
        // With a partition of 1, only the pod above it is updated: that rollout is done.
        let mut partitioned = behind.clone();
        partitioned["spec"]["updateStrategy"] =
            json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 1}});
        assert_eq!(check("StatefulSet", &partitioned), Verdict::Ready);
        partitioned["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = json!(0);
        assert!(
            matches!(check("StatefulSet", &partitioned), Verdict::NotReady(m) if m.contains("partitioned"))
        );
        let mut on_delete = behind;
        on_delete["spec"]["updateStrategy"] = json!({"type": "OnDelete"});
        assert_eq!(check("StatefulSet", &on_delete), Verdict::Ready);
    }

    #[test]
    fn daemonsets_wait_for_updated_and_available_pods() {
        let done = json!({"metadata": {"generation": 2}, "status": {"observedGeneration": 2,
            "desiredNumberScheduled": 2, "numberReady": 2, "updatedNumberScheduled": 2, "numberAvailable": 2}});
        assert_eq!(check("DaemonSet", &done), Verdict::Ready);
        let rolling = json!({"metadata": {"generation": 2}, "status": {"observedGeneration": 2,
            "desiredNumberScheduled": 2, "numberReady": 2, "updatedNumberScheduled": 1, "numberAvailable": 2}});
        assert!(
            matches!(check("DaemonSet", &rolling), Verdict::NotReady(m) if m.contains("1 of 2 daemon pods updated"))
        );
        let starting = json!({"metadata": {"generation": 2}, "status": {"observedGeneration": 2,
            "desiredNumberScheduled": 2, "numberReady": 1, "updatedNumberScheduled": 2, "numberAvailable": 1,
            "numberUnavailable": 1}});
        assert!(
            matches!(check("DaemonSet", &starting), Verdict::NotReady(m) if m.contains("1 of 2 daemon pods available"))
        );
        let stale = json!({"metadata": {"generation": 3}, "status": {"observedGeneration": 2,
            "desiredNumberScheduled": 2, "updatedNumberScheduled": 2, "numberAvailable": 2}});
        assert!(
            matches!(check("DaemonSet", &stale), Verdict::NotReady(m) if m.contains("generation"))
        );
    }

    #[test]
    fn replicasets_wait_for_ready_replicas() {
        let rs = json!({"spec": {"replicas": 3}, "status": {"readyReplicas": 2}});
        assert!(matches!(check("ReplicaSet", &rs), Verdict::NotReady(_)));
        let rs = json!({"spec": {"replicas": 3}, "status": {"readyReplicas": 3}});
        assert_eq!(check("ReplicaSet", &rs), Verdict::Ready);
    }

    #[test]
    fn pods_and_jobs() {
        let running = json!({"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}});
        assert_eq!(check("Pod", &running), Verdict::Ready);
        let pending = json!({"status": {"phase": "Pending"}});
        assert!(matches!(check("Pod", &pending), Verdict::NotReady(_)));
        let failed_job = json!({"status": {"conditions": [{"type": "Failed", "status": "True"}]}});
        assert!(matches!(check("Job", &failed_job), Verdict::Failed(_)));
        let done_job = json!({"status": {"conditions": [{"type": "Complete", "status": "True"}]}});
        assert_eq!(check("Job", &done_job), Verdict::Ready);
        assert!(applies_to("batch/v1", "Job"));
        assert!(!applies_to("v1", "ConfigMap"));
    }
}
