//! The kubelet mode of the workload simulator: Deployments whose pod template runs an image
//! with a registered [`ContainerRunner`] get Pod objects,
//! one per replica (owned by the Deployment; ReplicaSets are not modelled), and each Pod's
//! container runs in-process, restarted with a growing backoff when it ends on its own. A
//! template change replaces every pod at once (as `Recreate` does); the Deployment's status
//! counts the pods, and a pod is Ready only while its container reports ready.

use crate::clock;
use crate::cluster::ClusterState;
use crate::ids;
mod volumes;
use crate::kubelet::{CancellationToken, Container, ContainerRunner, Readiness};
use crate::objects::{kinds, lifecycle};
use crate::store::{Event, EventType, Stored};
use crate::writes::{DeleteOptions, apply_update, create_in_txn, delete_in_txn};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tracing::Instrument;

const PODS: &str = "/pods";
const DEPLOYMENTS: &str = "apps/deployments";
/// The label that tells the pods of one template from another's, as on ReplicaSets' pods.
const TEMPLATE_HASH: &str = "pod-template-hash";
/// How long a stopping container may take before its run is dropped (a pod's default
/// `terminationGracePeriodSeconds`).
const GRACE: Duration = Duration::from_secs(30);

/// The runner of the first container of a pod template (or pod spec holder) with one.
fn runner_of(
    state: &ClusterState,
    template: Option<&Value>,
) -> Option<(usize, Arc<dyn ContainerRunner>)> {
    let containers = template?.pointer("/spec/containers")?.as_array()?;
    containers.iter().enumerate().find_map(|(i, c)| {
        let image = c.get("image").and_then(Value::as_str)?;
        state.runners.for_image(image).map(|r| (i, r))
    })
}

/// Whether a Deployment is run by the kubelet mode rather than simulated.
pub fn runs(state: &ClusterState, deployment: &Value) -> bool {
    !state.runners.is_empty() && runner_of(state, deployment.pointer("/spec/template")).is_some()
}

/// Reacts to a change of a Pod or a Deployment run in kubelet mode, or resynchronizes
/// everything when `ev` is `None`.
pub fn handle(state: &Arc<ClusterState>, ev: Option<&Event>) {
    if state.runners.is_empty() {
        return;
    }
    let Some(ev) = ev else {
        for d in state.store.list(DEPLOYMENTS, None, None).0 {
            if runs(state, &d.value()) {
                reconcile_deployment(state, &d);
            }
        }
        for pod in state.store.list(PODS, None, None).0 {
            pod_changed(state, &pod, false);
        }
        return;
    };
    match &*ev.storage_key {
        PODS => {
            pod_changed(state, &ev.object, ev.kind == EventType::Deleted);
            let owner = controller_owner(&ev.object.value());
            if let Some(d) = owner.and_then(|(name, uid)| {
                state
                    .store
                    .get(DEPLOYMENTS, &ev.object.namespace, &name)
                    .filter(|d| d.uid == uid)
            }) && runs(state, &d.value())
            {
                reconcile_deployment(state, &d);
            }
        }
        DEPLOYMENTS if ev.kind != EventType::Deleted && runs(state, &ev.object.value()) => {
            reconcile_deployment(state, &ev.object);
        }
        _ => {}
    }
}

/// The name and uid of the Deployment controlling a pod.
fn controller_owner(pod: &Value) -> Option<(String, String)> {
    pod.pointer("/metadata/ownerReferences")?
        .as_array()?
        .iter()
        .find(|o| {
            o.get("kind").and_then(Value::as_str) == Some("Deployment")
                && o.get("controller").and_then(Value::as_bool) == Some(true)
        })
        .map(|o| {
            let s = |k: &str| {
                o.get(k)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned()
            };
            (s("name"), s("uid"))
        })
}

/// Starts the container of a new pod, or stops the container of a pod that is gone.
fn pod_changed(state: &Arc<ClusterState>, pod: &Arc<Stored>, deleted: bool) {
    if deleted || pod.deleting {
        if let Some(stop) = state.kubelet.running().remove(&pod.uid) {
            tracing::info!(cluster = %state.name, namespace = %pod.namespace, pod = %pod.name, "stopping the pod's container");
            stop.cancel();
        }
        return;
    }
    let value = pod.value();
    let Some((index, runner)) = runner_of(state, Some(&value)) else {
        return;
    };
    let stop = {
        let mut running = state.kubelet.running();
        if running.contains_key(&pod.uid) {
            return;
        }
        let stop = state.kubelet.stopped.child_token();
        running.insert(pod.uid.clone(), stop.clone());
        stop
    };
    let span = tracing::info_span!("pod", cluster = %state.name, namespace = %pod.namespace, pod = %pod.name);
    let worker = PodWorker {
        state: state.clone(),
        namespace: pod.namespace.clone(),
        name: pod.name.clone(),
        uid: pod.uid.clone(),
        pod: value,
        index,
        stop,
    };
    tokio::spawn(worker.run(runner).instrument(span));
}

/// A short hash of a pod template, to tell its pods from an older template's.
fn template_hash(template: Option<&Value>) -> String {
    let text = template.map(Value::to_string).unwrap_or_default();
    // FNV-1a: stable across runs, unlike the standard library's hasher.
    let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{hash:016x}")[..10].to_owned()
}

/// Creates and deletes the pods of a Deployment so that `spec.replicas` pods of its current
/// template exist, then writes its status.
fn reconcile_deployment(state: &ClusterState, deployment: &Stored) {
    if deployment.deleting {
        return;
    }
    let value = deployment.value();
    let template = value.pointer("/spec/template");
    let hash = template_hash(template);
    let desired = value
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(1)
        .max(0);
    let Some(pods_res) = state.stored_resource(PODS) else {
        return;
    };
    let ns = deployment.namespace.clone();
    let result = state.store.write(|txn| {
        let mut current: Vec<Arc<Stored>> = Vec::new();
        for pod in txn.list(PODS, Some(&ns)) {
            if pod.deleting || !pod.owners.contains(&deployment.uid) {
                continue;
            }
            if pod.label(TEMPLATE_HASH) == Some(&hash) {
                current.push(pod);
            } else {
                tracing::info!(namespace = %ns, pod = %pod.name, deployment = %deployment.name, "replacing a pod of an older template");
                delete_in_txn(txn, &pods_res, &ns, &pod.name, &DeleteOptions::default())?;
            }
        }
        current.sort_by_key(|p| p.rv);
        let live = i64::try_from(current.len()).unwrap_or(i64::MAX);
        for pod in current.iter().skip(usize::try_from(desired).unwrap_or(0)) {
            tracing::info!(namespace = %ns, pod = %pod.name, deployment = %deployment.name, "scaling down");
            delete_in_txn(txn, &pods_res, &ns, &pod.name, &DeleteOptions::default())?;
        }
        for _ in live..desired {
            let pod = new_pod(&value, deployment, &hash);
            let mut pod = lifecycle::prepare_create(&pods_res, Some(&ns), pod)?;
            kinds::default(&pods_res, &mut pod)?;
            create_in_txn(txn, &pods_res, pod, false)?;
        }
        Ok::<_, crate::status::ApiError>(())
    });
    if let Err(e) = result {
        tracing::warn!(namespace = %ns, deployment = %deployment.name, error = %e.message, "kubelet mode: creating or deleting pods");
    }
    write_deployment_status(state, deployment, &hash, desired);
}

/// A pod of the Deployment's template.
fn new_pod(deployment: &Value, stored: &Stored, hash: &str) -> Value {
    let template = deployment
        .pointer("/spec/template")
        .cloned()
        .unwrap_or_default();
    let mut labels = template
        .pointer("/metadata/labels")
        .cloned()
        .unwrap_or_else(|| json!({}));
    labels[TEMPLATE_HASH] = json!(hash);
    let mut metadata = json!({
        "name": ids::generated_name(&format!("{}-{hash}-", stored.name)),
        "namespace": stored.namespace,
        "labels": labels,
        "ownerReferences": [{
            "apiVersion": "apps/v1", "kind": "Deployment", "name": stored.name, "uid": stored.uid,
            "controller": true, "blockOwnerDeletion": true
        }]
    });
    if let Some(a) = template.pointer("/metadata/annotations") {
        metadata["annotations"] = a.clone();
    }
    let mut spec = template.get("spec").cloned().unwrap_or_else(|| json!({}));
    spec["nodeName"] = json!("testbed");
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec})
}

fn pod_ready(pod: &Value) -> bool {
    pod.pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Ready" && c["status"] == "True")
}

/// Writes the Deployment's status from its pods, when it changed.
fn write_deployment_status(state: &ClusterState, deployment: &Stored, hash: &str, desired: i64) {
    let Some(res) = state.stored_resource(DEPLOYMENTS) else {
        return;
    };
    let result = state.store.write(|txn| {
        let Some(current) = txn
            .get(DEPLOYMENTS, &deployment.namespace, &deployment.name)
            .filter(|d| d.uid == deployment.uid)
        else {
            return Ok(());
        };
        let value = current.value();
        let pods: Vec<Value> = txn
            .list(PODS, Some(&deployment.namespace))
            .into_iter()
            .filter(|p| !p.deleting && p.owners.contains(&deployment.uid))
            .map(|p| p.value())
            .collect();
        let status = deployment_status(&value, &pods, hash, desired);
        if value.get("status") == Some(&status) {
            return Ok(());
        }
        let mut next = value;
        next["status"] = status;
        apply_update(txn, &res, &current, next, Some("status"), false).map(|_| ())
    });
    if let Err(e) = result {
        tracing::warn!(namespace = %deployment.namespace, deployment = %deployment.name, error = %e.message, "kubelet mode: writing the deployment status");
    }
}

fn count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// The status of a Deployment with these pods (its own, not being deleted).
fn deployment_status(deployment: &Value, pods: &[Value], hash: &str, desired: i64) -> Value {
    let generation = deployment
        .pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .unwrap_or(1);
    let name = deployment
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let updated = count(
        pods.iter()
            .filter(|p| {
                p.pointer(&format!("/metadata/labels/{TEMPLATE_HASH}"))
                    .and_then(Value::as_str)
                    == Some(hash)
            })
            .count(),
    );
    let ready = count(pods.iter().filter(|p| pod_ready(p)).count());
    let recreate = deployment
        .pointer("/spec/strategy/type")
        .and_then(Value::as_str)
        == Some("Recreate");
    let max_unavailable = if recreate {
        0
    } else {
        super::simulator::rolling_bound(deployment, "maxUnavailable", desired, false)
    };
    let available = ready >= desired - max_unavailable;
    let complete = updated == desired && ready == desired && count(pods.len()) == desired;
    let old = deployment
        .pointer("/status/conditions")
        .and_then(Value::as_array);
    let condition = |ty: &str, status: &str, reason: &str, message: String| {
        // A condition keeps its times while it says the same.
        let same = old
            .into_iter()
            .flatten()
            .find(|c| c["type"] == ty && c["status"] == status && c["reason"] == reason);
        let since = same
            .and_then(|c| c.get("lastTransitionTime").cloned())
            .unwrap_or_else(|| clock::now_time().into());
        json!({"type": ty, "status": status, "lastUpdateTime": since, "lastTransitionTime": since, "reason": reason, "message": message})
    };
    let available = if available {
        condition(
            "Available",
            "True",
            "MinimumReplicasAvailable",
            "Deployment has minimum availability.".into(),
        )
    } else {
        condition(
            "Available",
            "False",
            "MinimumReplicasUnavailable",
            "Deployment does not have minimum availability.".into(),
        )
    };
    let progressing = if complete {
        condition(
            "Progressing",
            "True",
            "NewReplicaSetAvailable",
            format!("ReplicaSet \"{name}-{hash}\" has successfully progressed."),
        )
    } else {
        condition(
            "Progressing",
            "True",
            "ReplicaSetUpdated",
            format!("ReplicaSet \"{name}-{hash}\" is progressing."),
        )
    };
    let mut status = json!({
        "observedGeneration": generation,
        "replicas": count(pods.len()),
        "updatedReplicas": updated,
        "conditions": [available, progressing],
    });
    if ready > 0 {
        status["readyReplicas"] = json!(ready);
        status["availableReplicas"] = json!(ready);
    }
    if desired - ready > 0 {
        status["unavailableReplicas"] = json!(desired - ready);
    }
    status
}

/// What one container did last, for its pod's status.
#[derive(Debug, Clone)]
enum State {
    Waiting {
        reason: &'static str,
        message: String,
    },
    Running {
        since: String,
        ready: bool,
    },
}

/// How a run ended, for `lastState.terminated`.
#[derive(Debug, Clone)]
struct Terminated {
    ok: bool,
    message: String,
    started: String,
    finished: String,
}

/// How one start of a container ended.
#[derive(Debug)]
enum Outcome {
    /// The pod is to stop.
    Stopped,
    /// Its volumes or environment could not be prepared.
    NotCreated,
    /// The run ended on its own.
    Ended(Terminated),
}

/// Runs one pod's container until the pod goes away.
struct PodWorker {
    state: Arc<ClusterState>,
    namespace: String,
    name: String,
    uid: String,
    pod: Value,
    index: usize,
    stop: CancellationToken,
}

impl PodWorker {
    fn container(&self) -> Value {
        self.pod
            .pointer(&format!("/spec/containers/{}", self.index))
            .cloned()
            .unwrap_or_default()
    }

    async fn run(self, runner: Arc<dyn ContainerRunner>) {
        let root = std::env::temp_dir().join(ids::generated_name(&format!(
            "testbed-kubelet-{}-{}-",
            self.state.name, self.name
        )));
        let mut restarts = 0_i64;
        let mut last: Option<Terminated> = None;
        let mut backoff: Option<Duration> = None;
        self.write_status(
            &State::Waiting {
                reason: "ContainerCreating",
                message: String::new(),
            },
            restarts,
            last.as_ref(),
        );
        loop {
            let started = Instant::now();
            let outcome = self
                .run_once(runner.as_ref(), &root, restarts, last.as_ref())
                .await;
            let policy = self.state.runners.backoff();
            let wait = if started.elapsed() >= policy.max {
                policy.initial
            } else {
                policy.next(backoff)
            };
            backoff = Some(wait);
            match outcome {
                Outcome::Stopped => break,
                // The waiting reason says why; it is no restart.
                Outcome::NotCreated => {}
                Outcome::Ended(terminated) => {
                    restarts += 1;
                    tracing::warn!(restarts, backoff_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX), error = %terminated.message, "container ended; restarting after a backoff");
                    let message = format!(
                        "back-off {}ms restarting failed container={} pod={}_{}({})",
                        wait.as_millis(),
                        self.container()["name"].as_str().unwrap_or_default(),
                        self.name,
                        self.namespace,
                        self.uid
                    );
                    last = Some(terminated);
                    self.write_status(
                        &State::Waiting {
                            reason: "CrashLoopBackOff",
                            message,
                        },
                        restarts,
                        last.as_ref(),
                    );
                }
            }
            tokio::select! {
                () = self.stop.cancelled() => break,
                () = tokio::time::sleep(wait) => {}
            }
        }
        if let Err(e) = std::fs::remove_dir_all(&root)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(dir = %root.display(), error = %e, "removing the pod's files");
        }
        self.state.kubelet.running().remove(&self.uid);
        tracing::info!("container stopped");
    }

    /// One start of the container.
    async fn run_once(
        &self,
        runner: &dyn ContainerRunner,
        root: &std::path::Path,
        restarts: i64,
        last: Option<&Terminated>,
    ) -> Outcome {
        let container = self.container();
        let started = clock::now_time();
        let prepared = match volumes::prepare(&self.state, &self.pod, &container, root) {
            Ok(p) => p,
            Err(message) => {
                tracing::warn!(error = %message, "preparing the container");
                let reason = "CreateContainerConfigError";
                self.write_status(&State::Waiting { reason, message }, restarts, last);
                return Outcome::NotCreated;
            }
        };
        let (ready, mut ready_changes) = Readiness::new();
        let run_stop = self.stop.child_token();
        let s = |k: &str| {
            container
                .get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let strings = |k: &str| -> Vec<String> {
            container
                .get(k)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        };
        let spec = Container {
            namespace: self.namespace.clone(),
            pod: self.name.clone(),
            name: s("name"),
            image: s("image"),
            command: strings("command"),
            args: strings("args"),
            env: prepared.env,
            mounts: prepared.mounts,
            kubeconfig: prepared.kubeconfig,
            root: root.to_owned(),
            stop: run_stop.clone(),
            ready,
        };
        tracing::info!(container = %spec.name, image = %spec.image, restarts, "starting the container");
        let mut run = tokio::spawn(runner.run(spec).in_current_span());
        self.write_status(
            &State::Running {
                since: started.clone(),
                ready: false,
            },
            restarts,
            last,
        );
        let result = loop {
            tokio::select! {
                () = self.stop.cancelled() => {
                    run_stop.cancel();
                    if tokio::time::timeout(GRACE, &mut run).await.is_err() {
                        tracing::warn!(grace_s = GRACE.as_secs(), "the container did not stop within its grace period; dropping it");
                        run.abort();
                    }
                    return Outcome::Stopped;
                }
                changed = ready_changes.changed() => {
                    if changed.is_ok() {
                        let now_ready = *ready_changes.borrow_and_update();
                        self.write_status(&State::Running { since: started.clone(), ready: now_ready }, restarts, last);
                    }
                }
                result = &mut run => break result,
            }
        };
        let message = match result {
            Ok(Ok(())) => String::new(),
            Ok(Err(message)) => message,
            Err(e) => format!("the container's task ended abnormally: {e}"),
        };
        Outcome::Ended(Terminated {
            ok: message.is_empty(),
            message,
            started,
            finished: clock::now_time(),
        })
    }

    /// Writes the pod's status for the container's state.
    fn write_status(&self, state: &State, restarts: i64, last: Option<&Terminated>) {
        let container = self.container();
        let name = container["name"].clone();
        let image = container["image"].clone();
        let (container_state, ready, running) = match state {
            State::Waiting { reason, message } => {
                let mut waiting = json!({"reason": reason});
                if !message.is_empty() {
                    waiting["message"] = json!(message);
                }
                (json!({"waiting": waiting}), false, false)
            }
            State::Running { since, ready } => {
                (json!({"running": {"startedAt": since}}), *ready, true)
            }
        };
        let mut ours = json!({
            "name": name, "image": image, "imageID": "", "ready": ready, "started": running,
            "restartCount": restarts, "state": container_state, "lastState": {}
        });
        if let Some(t) = last {
            let mut terminated = json!({
                "exitCode": if t.ok { 0 } else { 1 }, "reason": if t.ok { "Completed" } else { "Error" },
                "startedAt": t.started, "finishedAt": t.finished
            });
            if !t.message.is_empty() {
                terminated["message"] = json!(t.message);
            }
            ours["lastState"] = json!({"terminated": terminated});
        }
        // The other containers of the pod are simulated as running and ready.
        let statuses: Vec<Value> = self
            .pod
            .pointer("/spec/containers")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
            .map(|(i, c)| {
                if i == self.index {
                    return ours.clone();
                }
                json!({"name": c["name"], "image": c["image"], "imageID": "", "ready": true, "started": true,
                       "restartCount": 0, "state": {"running": {"startedAt": clock::now_time()}}, "lastState": {}})
            })
            .collect();
        let write = |txn: &mut crate::store::Txn<'_>| -> Result<(), crate::status::ApiError> {
            let Some(res) = self.state.stored_resource(PODS) else {
                return Ok(());
            };
            let Some(current) = txn
                .get(PODS, &self.namespace, &self.name)
                .filter(|p| p.uid == self.uid && !p.deleting)
            else {
                return Ok(());
            };
            let mut value = current.value();
            let old = value.get("status").cloned().unwrap_or_default();
            let since = |ty: &str, status: &str| {
                old.pointer("/conditions")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .find(|c| c["type"] == ty && c["status"] == status)
                    .and_then(|c| c.get("lastTransitionTime").cloned())
                    .unwrap_or_else(|| clock::now_time().into())
            };
            let cond = |ty: &str, on: bool| {
                let status = if on { "True" } else { "False" };
                json!({"type": ty, "status": status, "lastProbeTime": null, "lastTransitionTime": since(ty, status)})
            };
            let start = old
                .get("startTime")
                .cloned()
                .unwrap_or_else(|| clock::now_time().into());
            let status = json!({
                "phase": if running || restarts > 0 { "Running" } else { "Pending" },
                "conditions": [cond("Initialized", true), cond("Ready", ready), cond("ContainersReady", ready), cond("PodScheduled", true)],
                "hostIP": "127.0.0.1", "podIP": "127.0.0.1", "startTime": start,
                "containerStatuses": statuses,
            });
            if old == status {
                return Ok(());
            }
            value["status"] = status;
            apply_update(txn, &res, &current, value, Some("status"), false).map(|_| ())
        };
        if let Err(e) = self.state.store.write(write) {
            tracing::warn!(error = %e.message, "kubelet mode: writing the pod status");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_template_change_changes_the_hash() {
        let a = json!({"spec": {"containers": [{"image": "a"}]}});
        let b = json!({"spec": {"containers": [{"image": "b"}]}});
        assert_eq!(template_hash(Some(&a)), template_hash(Some(&a.clone())));
        assert_ne!(template_hash(Some(&a)), template_hash(Some(&b)));
        assert_eq!(template_hash(Some(&a)).len(), 10);
    }

    #[test]
    fn readiness_counts_only_ready_pods() {
        let d = json!({"metadata": {"name": "d", "generation": 2}, "spec": {"replicas": 2, "strategy": {"type": "Recreate"}}});
        let pod = |ready: &str| json!({"metadata": {"labels": {TEMPLATE_HASH: "h"}}, "status": {"conditions": [{"type": "Ready", "status": ready}]}});
        let s = deployment_status(&d, &[pod("True"), pod("False")], "h", 2);
        assert_eq!(
            (
                s["replicas"].as_i64(),
                s["updatedReplicas"].as_i64(),
                s["availableReplicas"].as_i64(),
                s["unavailableReplicas"].as_i64()
            ),
            (Some(2), Some(2), Some(1), Some(1))
        );
        assert_eq!(s["conditions"][0]["status"], "False");
        let s = deployment_status(&d, &[pod("True"), pod("True")], "h", 2);
        assert_eq!(s["conditions"][0]["status"], "True");
        assert_eq!(s["conditions"][1]["reason"], "NewReplicaSetAvailable");
    }
}
