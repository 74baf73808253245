//! How a job ends: its exports and final status written, what the controller remembers of
//! it, a retry of a transient error, and an Event.

use super::context::Context;
use super::flow::sooner;
use super::memory::{Done, Retrying};
use crate::contract::status::{Final, StatusWriter, last_error};
use crate::deployer::{Deployer, Failure, Job, Outcome};
use crate::error::{Error, Retry};
use crate::exports;
use k8s_openapi::jiff::Timestamp;
use kube::runtime::events::EventType;
use kube::runtime::reflector::ObjectRef;
use landscaper_api::core::{DeployItem, DeployItemPhase};
use std::time::{Duration, Instant};

impl<D: Deployer> Context<D> {
    pub(super) async fn event(
        &self,
        item: &DeployItem,
        type_: EventType,
        reason: &str,
        note: String,
    ) {
        self.events.publish(item, type_, reason, note).await;
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) async fn succeeded(
        &self,
        key: &ObjectRef<DeployItem>,
        writer: &StatusWriter,
        job: &Job,
        current: DeployItem,
        outcome: Outcome,
        deletion: bool,
        quiet: bool,
    ) -> Result<Option<Duration>, Error> {
        if deletion {
            let after = writer.remove_finalizer(&current).await?;
            self.remember(
                key,
                Done {
                    job_id: job.job_id.clone(),
                    deleted: true,
                    touched: None,
                },
            );
            self.reset_backoff(key);
            tracing::info!("deleted");
            if after
                .metadata
                .finalizers
                .as_ref()
                .is_some_and(|f| !f.is_empty())
            {
                let done = Final {
                    phase: DeployItemPhase::Succeeded,
                    job_id: job.job_id.clone(),
                    error: None,
                    provider_status: None,
                    export_ref: None,
                };
                writer.finish(&after, &done, Timestamp::now()).await?;
            }
            return Ok(None);
        }
        let export_ref = match &outcome.exports {
            Some(values) => match exports::write_secret(&self.ls, &current, values).await {
                Ok(r) => Some(r),
                Err(e) => {
                    let failure = Failure {
                        error: e,
                        provider_status: outcome.provider_status,
                    };
                    return self.failed(key, writer, job, current, failure, false).await;
                }
            },
            None => None,
        };
        let done = Final {
            phase: DeployItemPhase::Succeeded,
            job_id: job.job_id.clone(),
            error: None,
            provider_status: outcome.provider_status,
            export_ref,
        };
        let was_failed = current.status.as_ref().and_then(|s| s.phase.as_ref())
            == Some(&DeployItemPhase::Failed);
        let changed = !quiet || StatusWriter::final_changes(&current, &done);
        if changed {
            writer.finish(&current, &done, Timestamp::now()).await?;
        }
        self.remember(
            key,
            Done {
                job_id: job.job_id.clone(),
                deleted: false,
                touched: current
                    .status
                    .as_ref()
                    .and_then(|s| s.last_reconcile_time.as_ref())
                    .map(|t| t.0),
            },
        );
        self.reset_backoff(key);
        tracing::info!(job = %job.job_id, "succeeded");
        if was_failed {
            self.event(
                &current,
                EventType::Normal,
                "Succeeded",
                "the deploy item succeeded again".into(),
            )
            .await;
        }
        Ok(None)
    }

    pub(super) async fn failed(
        &self,
        key: &ObjectRef<DeployItem>,
        writer: &StatusWriter,
        job: &Job,
        current: DeployItem,
        failure: Failure,
        deletion: bool,
    ) -> Result<Option<Duration>, Error> {
        let Failure {
            mut error,
            provider_status,
        } = failure;
        if error.retry == Retry::Transient
            && let Err(timeout) = job.interrupt.check(&error.operation)
            && timeout.retry == Retry::Never
        {
            error = Error {
                message: format!("{}; last error: {}", timeout.message, error.message),
                ..timeout
            };
        }
        if error.retry == Retry::Transient {
            let previous = current.status.as_ref().and_then(|s| s.last_error.as_ref());
            let unchanged =
                previous.is_some_and(|p| p.reason == error.reason && p.message == error.message);
            let mut latest = current.clone();
            if !unchanged {
                let mut le = last_error(&error, previous, Timestamp::now());
                le.codes = error.codes.clone();
                latest = writer.error(&le).await?;
                if let Some(p) = provider_status {
                    latest = writer.provider_status(p).await?;
                }
            }
            // The next attempt comes no later than the deadline, so the timeout ends the job
            // on time instead of after a backoff that outlasts it.
            let delay =
                sooner(Some(self.backoff(key)), job.interrupt.remaining()).unwrap_or_default();
            self.retrying
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(
                    key.clone(),
                    Retrying {
                        job_id: job.job_id.clone(),
                        item_version: latest.metadata.resource_version,
                        target_version: job
                            .target
                            .as_ref()
                            .and_then(|t| t.metadata.resource_version.clone()),
                        due: Instant::now() + delay,
                    },
                );
            tracing::info!(error = %error, retry_in = ?delay, "transient error, retrying");
            return Ok(Some(delay));
        }
        if error.retry == Retry::Aborted
            && let Err(e) = self.deployer.abort(job).await
        {
            tracing::warn!(error = %e, "cleanup after abort failed");
        }
        let phase = if deletion {
            DeployItemPhase::DeleteFailed
        } else {
            DeployItemPhase::Failed
        };
        let done = Final {
            phase,
            job_id: job.job_id.clone(),
            error: Some(error.clone()),
            provider_status,
            export_ref: None,
        };
        let after = writer.finish(&current, &done, Timestamp::now()).await?;
        if error.retry == Retry::Aborted {
            writer.metadata(&after, false, true).await?;
        }
        self.remember(
            key,
            Done {
                job_id: job.job_id.clone(),
                deleted: deletion,
                touched: None,
            },
        );
        self.reset_backoff(key);
        tracing::warn!(job = %job.job_id, error = %error, "failed");
        self.event(
            &current,
            EventType::Warning,
            &error.reason,
            error.message.clone(),
        )
        .await;
        Ok(None)
    }
}
