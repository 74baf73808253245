//! Defaults and validation of the workload kinds (Deployment, StatefulSet, DaemonSet,
//! ReplicaSet, Job) and their pod templates, as kube-apiserver's scheme defaulting sets them.

use crate::status::Cause;
use serde_json::{Map, Value, json};

fn object<'a>(map: &'a mut Map<String, Value>, key: &str) -> Option<&'a mut Map<String, Value>> {
    map.entry(key).or_insert_with(|| json!({})).as_object_mut()
}

fn set_default(map: &mut Map<String, Value>, key: &str, value: Value) {
    map.entry(key).or_insert(value);
}

/// `Always` for `:latest` or untagged images, `IfNotPresent` otherwise.
fn pull_policy(image: &str) -> &'static str {
    let name = image.rsplit('/').next().unwrap_or(image);
    let tag = if name.contains('@') {
        None
    } else {
        name.split_once(':').map(|(_, t)| t)
    };
    match tag {
        None | Some("latest") if !name.contains('@') => "Always",
        _ => "IfNotPresent",
    }
}

fn default_container(c: &mut Map<String, Value>) {
    set_default(c, "resources", json!({}));
    set_default(c, "terminationMessagePath", "/dev/termination-log".into());
    set_default(c, "terminationMessagePolicy", "File".into());
    let image = c
        .get("image")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    set_default(c, "imagePullPolicy", pull_policy(&image).into());
    if let Some(ports) = c.get_mut("ports").and_then(Value::as_array_mut) {
        for p in ports.iter_mut().filter_map(Value::as_object_mut) {
            set_default(p, "protocol", "TCP".into());
        }
    }
}

/// Pod template defaults; `restart_policy` is `None` for Jobs, which must set one.
fn default_template(spec: &mut Map<String, Value>, restart_policy: Option<&str>) {
    let Some(template) = object(spec, "template") else {
        return;
    };
    if let Some(meta) = object(template, "metadata") {
        set_default(meta, "creationTimestamp", Value::Null);
    }
    let Some(pod) = object(template, "spec") else {
        return;
    };
    if let Some(policy) = restart_policy {
        set_default(pod, "restartPolicy", policy.into());
    }
    set_default(pod, "terminationGracePeriodSeconds", 30.into());
    set_default(pod, "dnsPolicy", "ClusterFirst".into());
    set_default(pod, "securityContext", json!({}));
    set_default(pod, "schedulerName", "default-scheduler".into());
    for list in ["initContainers", "containers"] {
        if let Some(cs) = pod.get_mut(list).and_then(Value::as_array_mut) {
            for c in cs.iter_mut().filter_map(Value::as_object_mut) {
                default_container(c);
            }
        }
    }
}

/// Applies the defaults of a workload kind to `obj`.
pub fn default(kind: &str, obj: &mut Value) {
    let Some(spec) = obj.as_object_mut().and_then(|m| object(m, "spec")) else {
        return;
    };
    match kind {
        "Deployment" => {
            set_default(spec, "replicas", 1.into());
            if let Some(s) = object(spec, "strategy") {
                set_default(s, "type", "RollingUpdate".into());
                if s.get("type").and_then(Value::as_str) == Some("RollingUpdate")
                    && let Some(ru) = object(s, "rollingUpdate")
                {
                    set_default(ru, "maxUnavailable", "25%".into());
                    set_default(ru, "maxSurge", "25%".into());
                }
            }
            set_default(spec, "revisionHistoryLimit", 10.into());
            set_default(spec, "progressDeadlineSeconds", 600.into());
            default_template(spec, Some("Always"));
        }
        "StatefulSet" => {
            set_default(spec, "replicas", 1.into());
            set_default(spec, "podManagementPolicy", "OrderedReady".into());
            set_default(
                spec,
                "updateStrategy",
                json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}),
            );
            set_default(spec, "revisionHistoryLimit", 10.into());
            set_default(
                spec,
                "persistentVolumeClaimRetentionPolicy",
                json!({"whenDeleted": "Retain", "whenScaled": "Retain"}),
            );
            default_template(spec, Some("Always"));
        }
        "DaemonSet" => {
            set_default(
                spec,
                "updateStrategy",
                json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}),
            );
            set_default(spec, "revisionHistoryLimit", 10.into());
            default_template(spec, Some("Always"));
        }
        "ReplicaSet" => {
            set_default(spec, "replicas", 1.into());
            default_template(spec, Some("Always"));
        }
        "Job" => {
            set_default(spec, "parallelism", 1.into());
            set_default(spec, "completions", 1.into());
            set_default(spec, "backoffLimit", 6.into());
            set_default(spec, "completionMode", "NonIndexed".into());
            set_default(spec, "suspend", false.into());
            set_default(spec, "podReplacementPolicy", "TerminatingOrFailed".into());
            default_template(spec, None);
        }
        _ => {}
    }
}

/// Checks the rules of a workload kind.
pub fn validate(kind: &str, obj: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    if kind == "Deployment"
        && obj.pointer("/spec/strategy/type").and_then(Value::as_str) == Some("Recreate")
        && obj
            .pointer("/spec/strategy/rollingUpdate")
            .is_some_and(|v| !v.is_null())
    {
        causes.push(Cause::new(
            "FieldValueForbidden",
            "Forbidden: may not be specified when strategy `type` is 'Recreate'",
            "spec.strategy.rollingUpdate",
        ));
    }
    causes
}

/// The label selector of a workload as a string (`a=b,c=d`), for Scale's `status.selector`.
pub fn selector_string(obj: &Value) -> String {
    let labels = obj
        .pointer("/spec/selector/matchLabels")
        .and_then(Value::as_object);
    let mut parts: Vec<String> = labels
        .into_iter()
        .flatten()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
        .collect();
    parts.sort();
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deployment_defaults_match_kube() {
        let mut d = json!({"spec": {"selector": {}, "template": {"spec": {"containers": [{"name": "a", "image": "busybox:1.36", "ports": [{"containerPort": 80}]}, {"name": "b", "image": "nginx"}]}}}});
        default("Deployment", &mut d);
        assert_eq!(
            d["spec"]["strategy"],
            json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}})
        );
        assert_eq!(
            d["spec"]["template"]["metadata"]["creationTimestamp"],
            Value::Null
        );
        let a = &d["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(
            (
                a["imagePullPolicy"].as_str(),
                a["ports"][0]["protocol"].as_str()
            ),
            (Some("IfNotPresent"), Some("TCP"))
        );
        assert_eq!(
            d["spec"]["template"]["spec"]["containers"][1]["imagePullPolicy"],
            "Always"
        );
    }

    #[test]
    fn recreate_with_rolling_update_is_invalid() {
        let d =
            json!({"spec": {"strategy": {"type": "Recreate", "rollingUpdate": {"maxSurge": 1}}}});
        assert_eq!(
            validate("Deployment", &d)[0].field,
            "spec.strategy.rollingUpdate"
        );
    }
}
