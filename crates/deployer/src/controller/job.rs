//! A job: its pickup, the writes that start it, its interrupt (timeout, abort), and the
//! deployer's part.

use super::context::Context;
use crate::contract::decision::{self, Decision, Work};
use crate::contract::interrupt::Interrupt;
use crate::contract::new_job_id;
use crate::contract::status::StatusWriter;
use crate::deployer::{Deployer, Failure, Job, Outcome};
use crate::error::Error;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::runtime::reflector::ObjectRef;
use landscaper_api::core::{DeployItem, DeployItemPhase, Target};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A timeout noticed before the next attempt, with the error the job was retrying (the
/// status's `lastError` of this job, as pickup clears it), so the item says why it did not
/// finish.
pub(super) fn with_retried_error(mut error: Error, item: &DeployItem) -> Error {
    let retried = item.status.as_ref().and_then(|s| s.last_error.as_ref());
    if error.reason == "ProgressingTimeout"
        && let Some(last) = retried
    {
        error.message = format!("{}; last error: {}", error.message, last.message);
    }
    error
}

impl<D: Deployer> Context<D> {
    pub(super) fn interrupt(&self, item: &DeployItem, key: &ObjectRef<DeployItem>) -> Interrupt {
        let timeout = match &item.spec.timeout {
            Some(t) if t.is_none() => None,
            Some(t) => Some(t.as_std()),
            None => self.config.progressing_default,
        };
        let deadline = timeout.map(|t| {
            let started = self.job_start(key, item);
            let end = started
                .checked_add(SignedDuration::try_from(t).unwrap_or(SignedDuration::MAX))
                .unwrap_or(Timestamp::MAX);
            let left = end.duration_since(Timestamp::now());
            Instant::now() + Duration::try_from(left).unwrap_or(Duration::ZERO)
        });
        let items = self.items.clone();
        let key = key.clone();
        Interrupt::new(
            deadline,
            timeout.unwrap_or(Duration::ZERO),
            Arc::new(move || {
                items.get(&key).is_some_and(|i| {
                    decision::operation(&i) == Some(landscaper_api::core::Operation::Abort)
                })
            }),
        )
    }

    /// The pickup of a job the default logic starts: phase Init (InitDelete), the job's start
    /// and, when the job has no ID yet, a new one; then the metadata the job needs (finalizer,
    /// operation and reconcile-time annotations) in the one metadata write a job makes.
    /// Returns the whole item and the job's ID.
    pub(super) async fn pickup(
        &self,
        key: &ObjectRef<DeployItem>,
        item: &DeployItem,
        decision: &Decision,
        work: Work,
    ) -> Result<(DeployItem, String), Error> {
        let job_id = if decision.mint_job_id {
            new_job_id()
        } else {
            item.status
                .as_ref()
                .and_then(|s| s.job_id.clone())
                .unwrap_or_default()
        };
        let deletion = work == Work::Delete;
        let phase = if deletion {
            DeployItemPhase::InitDelete
        } else {
            DeployItemPhase::Init
        };
        let now = Timestamp::now();
        let minted = decision.mint_job_id.then_some(job_id.as_str());
        let writer = StatusWriter::new(self.ls.clone(), item);
        let picked = writer
            .pickup(item, phase, minted, &self.config.info, now)
            .await?;
        self.record_start(key, now);
        tracing::info!(job = %job_id, deletion, "picked up");
        let whole = writer
            .metadata(&picked, !deletion, decision.remove_operation)
            .await?;
        Ok((whole, job_id))
    }

    /// Runs a job; returns a requeue delay when a transient error is retried. `picked_up` is
    /// the ID of the job [`Context::pickup`] just started on `item`.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn run_job(
        &self,
        key: &ObjectRef<DeployItem>,
        item: Arc<DeployItem>,
        target: Option<Arc<Target>>,
        decision: &Decision,
        work: Work,
        quiet: bool,
        picked_up: Option<String>,
    ) -> Result<Option<Duration>, Error> {
        let writer = StatusWriter::new(self.ls.clone(), &item);
        let job_id = picked_up.clone().unwrap_or_else(|| {
            item.status
                .as_ref()
                .and_then(|s| s.job_id.clone())
                .unwrap_or_default()
        });
        let deletion = work == Work::Delete;
        let mut current = (*item).clone();
        if work != Work::Abort {
            if quiet {
                let now = Timestamp::now();
                current = writer.touch(now).await?;
                self.record_start(key, now);
            } else if picked_up.is_none() {
                // The pickup answered with the whole item; a resumed job reads it, as the
                // cache's copy is slim.
                let Some(whole) = writer.get().await? else {
                    return Ok(None);
                };
                current = whole;
            }
            current = writer
                .metadata(&current, !deletion, decision.remove_operation)
                .await?;
            if !quiet {
                let want = if deletion {
                    DeployItemPhase::Deleting
                } else {
                    DeployItemPhase::Progressing
                };
                if current.status.as_ref().and_then(|s| s.phase.as_ref()) != Some(&want) {
                    current = writer.phase(want).await?;
                }
            }
        }
        let job = Job {
            item: Arc::new(current.clone()),
            target: target.clone(),
            job_id: job_id.clone(),
            force: work == Work::Reconcile { force: true },
            interrupt: self.interrupt(&current, key),
            ls_client: self.ls.clone(),
            targets: self.target_access.clone(),
        };
        // Only an uninstall needs the Target of an item being deleted.
        let needs_target = !(work == Work::Delete && decision::delete_without_uninstall(&current));
        let result: Result<Outcome, Failure> = match (work, &item.spec.target, &target) {
            (Work::Abort, _, _) => Err(Error::aborted("Abort").into()),
            // The Target was looked up in the API, not only in our store: it does not exist,
            // and waiting for it would only delay the same answer until the timeout.
            (_, Some(r), None) if needs_target => Err(Error::config(
                "ResponsibilityCheck",
                "TargetNotFound",
                format!(
                    "DeployItem {}: spec.target: Target {}/{} not found",
                    job.item_name(),
                    r.namespace
                        .as_deref()
                        .or(item.metadata.namespace.as_deref())
                        .unwrap_or_default(),
                    r.name
                ),
            )
            .into()),
            _ => match job.interrupt.check("Reconcile") {
                Err(e) => Err(with_retried_error(e, &current).into()),
                Ok(()) => job.interrupt.scope(self.work(&job, work, &current)).await,
            },
        };
        match result {
            Ok(outcome) => {
                self.succeeded(key, &writer, &job, current, outcome, deletion, quiet)
                    .await
            }
            Err(failure) => {
                self.failed(key, &writer, &job, current, failure, deletion)
                    .await
            }
        }
    }

    /// The deployer's part of a job.
    pub(super) async fn work(
        &self,
        job: &Job,
        work: Work,
        current: &DeployItem,
    ) -> Result<Outcome, Failure> {
        match work {
            Work::Delete if decision::delete_without_uninstall(current) => {
                tracing::info!("deleting without uninstall");
                Ok(Outcome::default())
            }
            Work::Delete => self.deployer.delete(job).await.map(|()| Outcome::default()),
            Work::Reconcile { force: true } => self.deployer.force_reconcile(job).await,
            _ => self.deployer.reconcile(job).await,
        }
    }
}
