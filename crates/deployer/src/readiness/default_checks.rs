//! The default readiness checks of workload kinds: a rollout is finished and all replicas are
//! ready (Deployment, StatefulSet, DaemonSet, ReplicaSet), a Pod runs and is ready, a Job
//! completed.

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

fn replicas_ready(obj: &Value, ready_field: &str, also_updated: bool) -> Verdict {
    if let Err(e) = observed_current(obj) {
        return Verdict::NotReady(e);
    }
    let want = int(obj, &["spec", "replicas"]).unwrap_or(1);
    let ready = int(obj, &["status", ready_field]).unwrap_or(0);
    if ready < want {
        return Verdict::NotReady(format!("{ready} of {want} replicas ready"));
    }
    if also_updated {
        let updated = int(obj, &["status", "updatedReplicas"]).unwrap_or(0);
        if updated < want {
            return Verdict::NotReady(format!("{updated} of {want} replicas updated"));
        }
    }
    Verdict::Ready
}

/// Checks one object of a covered kind.
pub fn check(kind: &str, obj: &Value) -> Verdict {
    match kind {
        "Deployment" => replicas_ready(obj, "availableReplicas", true),
        "StatefulSet" => replicas_ready(obj, "readyReplicas", true),
        "ReplicaSet" => replicas_ready(obj, "readyReplicas", false),
        "DaemonSet" => {
            if let Err(e) = observed_current(obj) {
                return Verdict::NotReady(e);
            }
            let want = int(obj, &["status", "desiredNumberScheduled"]).unwrap_or(0);
            let ready = int(obj, &["status", "numberReady"]).unwrap_or(0);
            let updated = int(obj, &["status", "updatedNumberScheduled"]).unwrap_or(0);
            if ready < want || updated < want {
                Verdict::NotReady(format!(
                    "{ready} of {want} daemon pods ready, {updated} updated"
                ))
            } else {
                Verdict::Ready
            }
        }
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
        let done = json!({"metadata": {"generation": 2}, "spec": {"replicas": 2}, "status": {"observedGeneration": 2, "availableReplicas": 2, "updatedReplicas": 2}});
        assert_eq!(check("Deployment", &done), Verdict::Ready);
    }

    #[test]
    fn statefulsets_replicasets_and_daemonsets() {
        let sts =
            json!({"spec": {"replicas": 1}, "status": {"readyReplicas": 1, "updatedReplicas": 1}});
        assert_eq!(check("StatefulSet", &sts), Verdict::Ready);
        let rs = json!({"spec": {"replicas": 3}, "status": {"readyReplicas": 2}});
        assert!(matches!(check("ReplicaSet", &rs), Verdict::NotReady(_)));
        let ds = json!({"status": {"desiredNumberScheduled": 2, "numberReady": 2, "updatedNumberScheduled": 2}});
        assert_eq!(check("DaemonSet", &ds), Verdict::Ready);
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
