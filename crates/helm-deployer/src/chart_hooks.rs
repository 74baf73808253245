//! Helm hooks as Helm 3/4 run them: the chart's `helm.sh/hook` documents of one event run in
//! order of `helm.sh/hook-weight`, then name (kind order among equals); each hook object is
//! created anew (`before-hook-creation`, the default delete policy, removes the old one
//! first), Jobs are awaited until complete and Pods until they succeed, within the
//! operation's timeout; `hook-succeeded` and `hook-failed` remove hook objects afterwards.
//! Each run is recorded in the hook's `last_run`, as Helm stores it in the release.
//!
//! (Not to be confused with [`landscaper_deployer::hooks`], the deployer library's extension points.)

use super::ownership::FIELD_MANAGER;
use super::release::{Hook, HookExecution};
use k8s_openapi::jiff::Timestamp;
use kube::Api;
use kube::api::{DeleteParams, DynamicObject, PostParams};
use landscaper_chart::helm::render::Manifest;
use landscaper_deployer::contract::interrupt::{Backoff, Interrupt};
use landscaper_deployer::error::{Error, Retry, is_not_found};
use landscaper_deployer::target_access::TargetCluster;
use serde_json::Value;
use std::time::{Duration, Instant};

const OPERATION: &str = "HelmHook";
/// `helm.sh/hook-weight`: the order of hooks of one event (an integer, 0 when not one).
pub const WEIGHT_ANNOTATION: &str = "helm.sh/hook-weight";
/// `helm.sh/hook-delete-policy`: comma-separated delete policies.
pub const DELETE_POLICY_ANNOTATION: &str = "helm.sh/hook-delete-policy";
/// Delete the previous hook object before creating it anew (the default).
pub const BEFORE_HOOK_CREATION: &str = "before-hook-creation";
/// Delete the hook object after all hooks of the event succeeded.
pub const HOOK_SUCCEEDED: &str = "hook-succeeded";
/// Delete the hook object when it failed.
pub const HOOK_FAILED: &str = "hook-failed";

/// The hook events of the operations the deployer performs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// Before the objects of a first revision are created.
    PreInstall,
    /// After they are created (and ready).
    PostInstall,
    /// Before the objects of a new revision are updated.
    PreUpgrade,
    /// After they are updated.
    PostUpgrade,
    /// Before the release's objects are deleted.
    PreDelete,
    /// After they are deleted.
    PostDelete,
    /// Before a failed upgrade is rolled back (`atomic`).
    PreRollback,
    /// After it was rolled back.
    PostRollback,
}

impl Event {
    /// Helm's spelling in `helm.sh/hook` and in the release.
    pub fn as_str(self) -> &'static str {
        match self {
            Event::PreInstall => "pre-install",
            Event::PostInstall => "post-install",
            Event::PreUpgrade => "pre-upgrade",
            Event::PostUpgrade => "post-upgrade",
            Event::PreDelete => "pre-delete",
            Event::PostDelete => "post-delete",
            Event::PreRollback => "pre-rollback",
            Event::PostRollback => "post-rollback",
        }
    }
}

/// The release's hooks as Helm records them, from the rendered hook documents (in kind
/// order); a document without a name fails naming its template.
pub fn records(documents: &[Manifest], item: &str) -> Result<Vec<Hook>, Error> {
    documents
        .iter()
        .map(|doc| {
            let obj: Value = serde_yaml_ng::from_str(&doc.content).map_err(|e| {
                invalid_hook(item, &doc.path, &format!("rendered YAML is invalid: {e}"))
            })?;
            let name = obj
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .filter(|n| !n.is_empty())
                .ok_or_else(|| invalid_hook(item, &doc.path, "metadata.name is missing"))?;
            let annotation = |key: &str| {
                obj.pointer("/metadata/annotations")
                    .and_then(|a| a.get(key))
                    .and_then(Value::as_str)
            };
            Ok(Hook {
                name: name.to_string(),
                kind: doc.kind.clone(),
                path: doc.path.clone(),
                manifest: doc.content.clone(),
                events: doc.events.clone(),
                weight: annotation(WEIGHT_ANNOTATION)
                    .and_then(|w| w.trim().parse().ok())
                    .unwrap_or(0),
                delete_policies: annotation(DELETE_POLICY_ANNOTATION)
                    .map(|p| p.split(',').map(|p| p.trim().to_lowercase()).collect())
                    .unwrap_or_default(),
                ..Default::default()
            })
        })
        .collect()
}

fn invalid_hook(item: &str, path: &str, why: &str) -> Error {
    Error::config(
        OPERATION,
        "InvalidHook",
        format!("DeployItem {item}: helm hook {path}: {why}"),
    )
}

/// Runs the hooks of one event in one target cluster.
pub struct Runner<'a> {
    /// The target cluster.
    pub cluster: &'a TargetCluster,
    /// The release namespace, for hook objects that name none.
    pub namespace: &'a str,
    /// How long one hook may take to complete (and its old object to go away).
    pub timeout: Duration,
    /// Ends the wait on abort or when the item's own timeout runs out.
    pub interrupt: &'a Interrupt,
    /// `namespace/name` of the item, for messages.
    pub item: &'a str,
}

/// A hook's object, resolved in the cluster.
struct HookObject {
    api: Api<DynamicObject>,
    body: DynamicObject,
    /// `Job` or `Pod` of the built-in APIs, whose completion is awaited; `None` otherwise.
    workload: Option<&'static str>,
    name: String,
    label: String,
}

impl Runner<'_> {
    /// Runs the hooks of `event` among `hooks`, recording each run in its `last_run`. The
    /// first failure stops the run and is returned, naming the hook.
    pub async fn run(&self, hooks: &mut [Hook], event: Event) -> Result<(), Error> {
        let mut order: Vec<usize> = (0..hooks.len())
            .filter(|&i| hooks[i].events.iter().any(|e| e == event.as_str()))
            .collect();
        // A stable sort: among equal weights and names the kind order of the render stays.
        order.sort_by(|&a, &b| {
            (hooks[a].weight, &hooks[a].name).cmp(&(hooks[b].weight, &hooks[b].name))
        });
        let mut objects = Vec::with_capacity(order.len());
        for &i in &order {
            let hook = &mut hooks[i];
            if hook.delete_policies.is_empty() {
                hook.delete_policies.push(BEFORE_HOOK_CREATION.into());
            }
            let obj = match self.object(hook).await {
                Ok(obj) => obj,
                Err(e) => return Err(self.failure(event, hook, Stop::Error(e))),
            };
            if has_policy(hook, BEFORE_HOOK_CREATION)
                && let Err(stop) = self.delete(&obj, true).await
            {
                return Err(self.failure(event, hook, stop));
            }
            tracing::info!(event = event.as_str(), hook = %obj.label, weight = hook.weight, "running helm hook");
            hook.last_run = HookExecution {
                started_at: now(),
                completed_at: String::new(),
                phase: "Running".into(),
            };
            let outcome = match self.create(&obj).await {
                Ok(()) => self.await_completion(&obj).await,
                Err(e) => Err(e),
            };
            hook.last_run.completed_at = now();
            if let Err(stop) = outcome {
                hook.last_run.phase = "Failed".into();
                let error = self.failure(event, hook, stop);
                if has_policy(hook, HOOK_FAILED)
                    && let Err(Stop::Failed(e) | Stop::Error(Error { message: e, .. })) =
                        self.delete(&obj, false).await
                {
                    tracing::warn!(hook = %obj.label, error = %e, "deleting a failed helm hook");
                }
                return Err(error);
            }
            hook.last_run.phase = "Succeeded".into();
            objects.push((i, obj));
        }
        for (i, obj) in objects.iter().rev() {
            if has_policy(&hooks[*i], HOOK_SUCCEEDED) {
                self.delete(obj, false)
                    .await
                    .map_err(|stop| self.failure(event, &hooks[*i], stop))?;
            }
        }
        Ok(())
    }

    /// The error naming the hook. A hook that failed or timed out is final, so the item
    /// ends Failed; other errors keep their classification (an abort, the item's own
    /// timeout, an API problem worth retrying).
    fn failure(&self, event: Event, hook: &Hook, stop: Stop) -> Error {
        let which = format!(
            "DeployItem {}: helm hook {} {} ({} {})",
            self.item,
            event.as_str(),
            hook.path,
            hook.kind,
            hook.name
        );
        match stop {
            Stop::Failed(why) => Error {
                operation: OPERATION.into(),
                reason: if why.starts_with("timed out") {
                    "HookTimeout"
                } else {
                    "HookFailed"
                }
                .into(),
                message: format!("{which} failed: {why}"),
                codes: Vec::new(),
                retry: Retry::Never,
            },
            Stop::Error(e) => Error {
                message: format!("{which}: {}", e.message),
                ..e
            },
        }
    }

    async fn object(&self, hook: &Hook) -> Result<HookObject, Error> {
        let invalid = |why: String| Error::config(OPERATION, "InvalidHook", why);
        let mut value: Value = serde_yaml_ng::from_str(&hook.manifest)
            .map_err(|e| invalid(format!("invalid YAML: {e}")))?;
        let api_version = value
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let resolved = self
            .cluster
            .discovery
            .resolve(&api_version, &hook.kind)
            .await?;
        let mut namespace = None;
        if resolved.namespaced {
            let ns = value
                .pointer("/metadata/namespace")
                .and_then(Value::as_str)
                .filter(|n| !n.is_empty())
                .unwrap_or(self.namespace)
                .to_string();
            if let Some(meta) = value.get_mut("metadata").and_then(Value::as_object_mut) {
                meta.insert("namespace".into(), ns.clone().into());
            }
            namespace = Some(ns);
        }
        let body: DynamicObject =
            serde_json::from_value(value).map_err(|e| invalid(e.to_string()))?;
        let api = self.cluster.api(&resolved, namespace.as_deref());
        let workload = match (api_version.as_str(), hook.kind.as_str()) {
            ("batch/v1", "Job") => Some("Job"),
            ("v1", "Pod") => Some("Pod"),
            _ => None,
        };
        let label = match &namespace {
            Some(ns) => format!("{} {ns}/{}", hook.kind, hook.name),
            None => format!("{} {}", hook.kind, hook.name),
        };
        Ok(HookObject {
            api,
            body,
            workload,
            name: hook.name.clone(),
            label,
        })
    }

    async fn create(&self, obj: &HookObject) -> Result<(), Stop> {
        let params = PostParams {
            field_manager: Some(FIELD_MANAGER.into()),
            ..Default::default()
        };
        match obj.api.create(&params, &obj.body).await {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(s)) if s.code == 409 => Err(Stop::Failed(format!(
                "{} already exists; hook objects are created anew, so it must be deleted first (helm.sh/hook-delete-policy {BEFORE_HOOK_CREATION})",
                obj.label
            ))),
            Err(e) => Err(Stop::api("creating", obj, &e)),
        }
    }

    /// Waits until a Job completed or a Pod succeeded, as Helm does; other kinds are done
    /// once created.
    async fn await_completion(&self, obj: &HookObject) -> Result<(), Stop> {
        let Some(kind) = obj.workload else {
            return Ok(());
        };
        let end = Instant::now() + self.timeout;
        let mut backoff = Backoff::new(Duration::from_millis(50), Duration::from_secs(2));
        loop {
            let live = obj
                .api
                .get_opt(&obj.name)
                .await
                .map_err(|e| Stop::api("reading", obj, &e))?
                .ok_or_else(|| {
                    Stop::Failed(format!("{} was deleted before it completed", obj.label))
                })?;
            let status = live.data.get("status").cloned().unwrap_or(Value::Null);
            match completion(kind, &status) {
                Completion::Done => return Ok(()),
                Completion::Failed(why) => {
                    return Err(Stop::Failed(format!("{} {why}", obj.label)));
                }
                Completion::Running => {}
            }
            self.pause(end, &mut backoff, &obj.label, "to complete")
                .await?;
        }
    }

    /// Deletes a hook object (gone already is fine); with `wait`, until it is gone.
    async fn delete(&self, obj: &HookObject, wait: bool) -> Result<(), Stop> {
        match obj.api.delete(&obj.name, &DeleteParams::background()).await {
            Ok(_) => {}
            Err(e) if is_not_found(&e) => return Ok(()),
            Err(e) => return Err(Stop::api("deleting", obj, &e)),
        }
        if !wait {
            return Ok(());
        }
        let end = Instant::now() + self.timeout;
        let mut backoff = Backoff::new(Duration::from_millis(20), Duration::from_secs(1));
        loop {
            match obj.api.get_opt(&obj.name).await {
                Ok(None) => return Ok(()),
                Ok(Some(_)) => {}
                Err(e) => return Err(Stop::api("reading", obj, &e)),
            }
            self.pause(end, &mut backoff, &obj.label, "to be deleted")
                .await?;
        }
    }

    async fn pause(
        &self,
        end: Instant,
        backoff: &mut Backoff,
        label: &str,
        what: &str,
    ) -> Result<(), Stop> {
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Stop::Failed(format!(
                "timed out after {} waiting for {label} {what}",
                landscaper_api::format_go_duration(self.timeout)
            )));
        }
        self.interrupt
            .sleep(backoff.next_delay().min(left), OPERATION)
            .await
            .map_err(Stop::Error)
    }
}

/// Why a hook stopped.
enum Stop {
    /// The hook failed or timed out.
    Failed(String),
    /// An error that keeps its own classification.
    Error(Error),
}

impl Stop {
    /// An API error while `verb`ing the hook object, classified by its status code.
    fn api(verb: &str, obj: &HookObject, e: &kube::Error) -> Stop {
        Stop::Error(Error::from_kube(
            OPERATION,
            &format!("{verb} {}", obj.label),
            e,
        ))
    }
}

fn has_policy(hook: &Hook, policy: &str) -> bool {
    hook.delete_policies.iter().any(|p| p == policy)
}

fn now() -> String {
    Timestamp::now().to_string()
}

/// Where a hook's workload stands.
#[derive(Debug, PartialEq, Eq)]
enum Completion {
    Running,
    Done,
    Failed(String),
}

/// Helm's completion rules: a Job is done when `Complete` and failed when `Failed`; a Pod
/// when its phase is `Succeeded` or `Failed`.
fn completion(kind: &str, status: &Value) -> Completion {
    let condition = |type_: &str| {
        status
            .get("conditions")
            .and_then(Value::as_array)
            .and_then(|cs| {
                cs.iter().find(|c| {
                    c.get("type").and_then(Value::as_str) == Some(type_)
                        && c.get("status").and_then(Value::as_str) == Some("True")
                })
            })
    };
    match kind {
        "Job" => {
            if condition("Complete").is_some() {
                return Completion::Done;
            }
            match condition("Failed") {
                Some(c) => {
                    let text = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or_default();
                    Completion::Failed(
                        format!("failed: {} {}", text("reason"), text("message"))
                            .trim_end()
                            .to_string(),
                    )
                }
                None => Completion::Running,
            }
        }
        "Pod" => match status.get("phase").and_then(Value::as_str) {
            Some("Succeeded") => Completion::Done,
            Some("Failed") => Completion::Failed(format!(
                "failed: {}",
                status
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("the pod failed")
            )),
            _ => Completion::Running,
        },
        _ => Completion::Done,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(path: &str, kind: &str, events: &[&str], annotations: Value) -> Manifest {
        Manifest {
            path: path.into(),
            content: serde_yaml_ng::to_string(&json!({
                "apiVersion": "v1", "kind": kind,
                "metadata": {"name": path.rsplit('/').next().unwrap(), "annotations": annotations}
            }))
            .unwrap(),
            kind: kind.into(),
            events: events.iter().map(|e| e.to_string()).collect(),
        }
    }

    #[test]
    fn weights_and_delete_policies_are_read_like_helm() {
        let hooks = records(
            &[
                doc("c/templates/a", "ConfigMap", &["pre-install"], json!({WEIGHT_ANNOTATION: "-5", DELETE_POLICY_ANNOTATION: " Hook-Succeeded, hook-failed"})),
                doc("c/templates/b", "ConfigMap", &["pre-install"], json!({WEIGHT_ANNOTATION: "x"})),
            ],
            "ns/i",
        )
        .unwrap();
        assert_eq!(hooks[0].weight, -5);
        assert_eq!(hooks[0].delete_policies, vec![HOOK_SUCCEEDED, HOOK_FAILED]);
        assert_eq!((hooks[1].weight, hooks[1].delete_policies.len()), (0, 0));
        assert_eq!(hooks[1].name, "b");
    }

    #[test]
    fn a_hook_without_a_name_is_an_error_naming_its_template() {
        let mut d = doc("c/templates/x.yaml", "Job", &["pre-install"], json!({}));
        d.content = "kind: Job\nmetadata: {}\n".into();
        let e = records(&[d], "ns/i").unwrap_err();
        assert!(
            e.message.contains("c/templates/x.yaml") && e.message.contains("metadata.name"),
            "{}",
            e.message
        );
    }

    #[test]
    fn jobs_and_pods_complete_or_fail_as_helm_sees_them() {
        let job = |t: &str| json!({"conditions": [{"type": t, "status": "True", "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit"}]});
        assert_eq!(completion("Job", &job("Complete")), Completion::Done);
        assert_eq!(
            completion("Job", &job("Failed")),
            Completion::Failed(
                "failed: BackoffLimitExceeded Job has reached the specified backoff limit".into()
            )
        );
        assert_eq!(completion("Job", &json!({})), Completion::Running);
        assert_eq!(
            completion("Pod", &json!({"phase": "Running"})),
            Completion::Running
        );
        assert_eq!(
            completion("Pod", &json!({"phase": "Succeeded"})),
            Completion::Done
        );
        assert_eq!(completion("ConfigMap", &Value::Null), Completion::Done);
    }
}
