//! What the contract asks of a deployer for an item it is responsible for: nothing, a
//! (force-)reconcile, a delete or an abort, decided from the job IDs, the phase, the deletion
//! timestamp and the operation annotation.

use landscaper_api::constants::{annotations, finalizers};
use landscaper_api::core::{DeployItem, DeployItemPhase, Operation};

/// The work a job does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Work {
    /// Apply the item; `force` for `force-reconcile`.
    Reconcile {
        /// Requested by `force-reconcile`.
        force: bool,
    },
    /// Uninstall what the item deployed and release the finalizer.
    Delete,
    /// Stop the running job and end it Failed.
    Abort,
}

/// The contract's decision for one item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// The work to do, if any.
    pub work: Option<Work>,
    /// The job has no ID yet (started by an annotation on an item without a pending job):
    /// the deployer mints one.
    pub mint_job_id: bool,
    /// The job was already picked up (phase Init/Progressing/...): resume it without a new
    /// pickup.
    pub resume: bool,
    /// The operation annotation is to be removed.
    pub remove_operation: bool,
}

impl Decision {
    fn nothing() -> Self {
        Self {
            work: None,
            mint_job_id: false,
            resume: false,
            remove_operation: false,
        }
    }
}

/// The operation requested by the annotation, if any.
pub fn operation(item: &DeployItem) -> Option<Operation> {
    item.metadata
        .annotations
        .as_ref()?
        .get(annotations::OPERATION)
        .and_then(|v| Operation::parse(v))
}

/// Whether the item carries our finalizer.
pub fn has_finalizer(item: &DeployItem) -> bool {
    item.metadata
        .finalizers
        .as_ref()
        .is_some_and(|f| f.iter().any(|f| f == finalizers::LANDSCAPER))
}

/// Whether the delete-without-uninstall annotation is set.
pub fn delete_without_uninstall(item: &DeployItem) -> bool {
    item.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(annotations::DELETE_WITHOUT_UNINSTALL))
        .is_some_and(|v| v == "true")
}

/// Decides what to do with an item.
pub fn decide(item: &DeployItem) -> Decision {
    let status = item.status.clone().unwrap_or_default();
    let pending = status.has_pending_job();
    let phase = status.phase.clone();
    let picked_up = pending
        && phase.as_ref().is_some_and(|p| {
            matches!(
                p,
                DeployItemPhase::Init
                    | DeployItemPhase::Progressing
                    | DeployItemPhase::Completing
                    | DeployItemPhase::InitDelete
                    | DeployItemPhase::Deleting
            )
        });
    let op = operation(item);
    let deleting = item.metadata.deletion_timestamp.is_some();

    if op == Some(Operation::Abort) {
        return if picked_up || (pending && phase.is_none()) {
            Decision {
                work: Some(Work::Abort),
                mint_job_id: false,
                resume: true,
                remove_operation: true,
            }
        } else {
            Decision {
                remove_operation: true,
                ..Decision::nothing()
            }
        };
    }
    let requested = matches!(
        op,
        Some(Operation::Reconcile | Operation::ForceReconcile | Operation::TestReconcile)
    );
    if deleting {
        if !has_finalizer(item) {
            return Decision::nothing();
        }
        let failed_before = !pending && phase == Some(DeployItemPhase::DeleteFailed);
        if failed_before && !requested {
            return Decision::nothing();
        }
        return Decision {
            work: Some(Work::Delete),
            mint_job_id: !pending && requested,
            resume: picked_up,
            remove_operation: requested,
        };
    }
    if requested || pending {
        return Decision {
            work: Some(Work::Reconcile {
                force: op == Some(Operation::ForceReconcile),
            }),
            mint_job_id: !pending,
            resume: picked_up,
            remove_operation: requested,
        };
    }
    Decision::nothing()
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use landscaper_api::core::{DeployItemSpec, DeployItemStatus};

    fn item(
        job: Option<&str>,
        finished: Option<&str>,
        phase: Option<DeployItemPhase>,
    ) -> DeployItem {
        let mut di = DeployItem::new("a", DeployItemSpec::default());
        di.status = Some(DeployItemStatus {
            job_id: job.map(str::to_string),
            job_id_finished: finished.map(str::to_string),
            phase,
            ..Default::default()
        });
        di
    }

    fn annotate(mut di: DeployItem, op: &str) -> DeployItem {
        di.metadata.annotations =
            Some([(annotations::OPERATION.to_string(), op.to_string())].into());
        di
    }

    fn deleting(mut di: DeployItem, finalizer: bool) -> DeployItem {
        di.metadata.deletion_timestamp = Some(Time(k8s_openapi::jiff::Timestamp::now()));
        if finalizer {
            di.metadata.finalizers = Some(vec![finalizers::LANDSCAPER.to_string()]);
        }
        di
    }

    #[test]
    fn a_pending_job_is_picked_up_and_a_finished_one_is_left_alone() {
        let d = decide(&item(
            Some("2"),
            Some("1"),
            Some(DeployItemPhase::Succeeded),
        ));
        assert_eq!(d.work, Some(Work::Reconcile { force: false }));
        assert!(!d.resume && !d.mint_job_id);
        assert_eq!(
            decide(&item(
                Some("2"),
                Some("2"),
                Some(DeployItemPhase::Succeeded)
            ))
            .work,
            None
        );
        assert_eq!(decide(&item(None, None, None)).work, None);
    }

    #[test]
    fn a_job_in_progress_is_resumed() {
        let d = decide(&item(
            Some("2"),
            Some("1"),
            Some(DeployItemPhase::Progressing),
        ));
        assert!(d.resume);
    }

    #[test]
    fn operation_annotations_start_jobs_and_are_removed() {
        let d = decide(&annotate(
            item(Some("1"), Some("1"), Some(DeployItemPhase::Succeeded)),
            "force-reconcile",
        ));
        assert_eq!(d.work, Some(Work::Reconcile { force: true }));
        assert!(d.mint_job_id && d.remove_operation);
        let d = decide(&annotate(item(None, None, None), "test-reconcile"));
        assert_eq!(d.work, Some(Work::Reconcile { force: false }));
        assert!(d.mint_job_id);
        let d = decide(&annotate(item(Some("2"), Some("1"), None), "reconcile"));
        assert!(!d.mint_job_id && d.remove_operation);
    }

    #[test]
    fn abort_stops_a_running_job_and_is_only_removed_otherwise() {
        let d = decide(&annotate(
            item(Some("2"), Some("1"), Some(DeployItemPhase::Progressing)),
            "abort",
        ));
        assert_eq!(d.work, Some(Work::Abort));
        let d = decide(&annotate(
            item(Some("1"), Some("1"), Some(DeployItemPhase::Succeeded)),
            "abort",
        ));
        assert_eq!(d.work, None);
        assert!(d.remove_operation);
    }

    #[test]
    fn deletion_needs_our_finalizer_and_a_failed_delete_waits_for_a_new_job() {
        let d = decide(&deleting(
            item(Some("2"), Some("1"), Some(DeployItemPhase::Succeeded)),
            true,
        ));
        assert_eq!(d.work, Some(Work::Delete));
        let d = decide(&deleting(
            item(Some("2"), Some("1"), Some(DeployItemPhase::Succeeded)),
            false,
        ));
        assert_eq!(d.work, None);
        let d = decide(&deleting(
            item(Some("2"), Some("2"), Some(DeployItemPhase::Succeeded)),
            true,
        ));
        assert_eq!(d.work, Some(Work::Delete));
        let failed = deleting(
            item(Some("2"), Some("2"), Some(DeployItemPhase::DeleteFailed)),
            true,
        );
        assert_eq!(decide(&failed).work, None);
        assert_eq!(
            decide(&annotate(failed, "reconcile")).work,
            Some(Work::Delete)
        );
    }
}
