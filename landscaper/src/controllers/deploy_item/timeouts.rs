//! The two timeouts the landscaper enforces on a DeployItem's job, as pure decisions over the
//! item and the clock: the *pickup* timeout (no deployer picked the job up in time) and the
//! *abort* timeout (a deployer asked to abort did not end the job in time). The progressing
//! timeout is the deployers' own.

use std::time::Duration;

use k8s_openapi::jiff::{SignedDuration, Timestamp};
use landscaper_api::constants::annotations;
use landscaper_api::core::{DeployItem, Operation};

/// The annotation recording when an abort was requested (upstream's name); the abort timeout
/// runs from it.
pub const ABORT_TIME: &str = "landscaper.gardener.cloud/abort-time";

/// Whether the item's job is running: a job ID that is not finished.
pub fn job_running(item: &DeployItem) -> bool {
    item.status
        .as_ref()
        .is_some_and(|status| status.has_pending_job())
}

/// Whether a deployer picked the running job up: it wrote `lastReconcileTime` at or after the
/// job was started (`jobIDGenerationTime`), as deployers do when they start a job.
pub fn picked_up(item: &DeployItem) -> bool {
    let Some(status) = &item.status else {
        return false;
    };
    match (&status.last_reconcile_time, &status.job_id_generation_time) {
        (Some(reconciled), Some(started)) => reconciled.0 >= started.0,
        (Some(_), None) => true,
        (None, _) => false,
    }
}

/// When the running job started: its `jobIDGenerationTime`, or for a job written without one
/// the item's creation (it has waited for a deployer since then at least).
pub fn job_started(item: &DeployItem) -> Option<Timestamp> {
    item.status
        .as_ref()
        .and_then(|status| status.job_id_generation_time.as_ref())
        .or(item.metadata.creation_timestamp.as_ref())
        .map(|time| time.0)
}

/// Where a timer stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timer {
    /// Not over yet: look again at `deadline`.
    Running {
        /// When the timeout is reached.
        deadline: Timestamp,
    },
    /// The timeout is reached.
    Exceeded,
}

impl Timer {
    /// The timer of `timeout` started at `start`, read at `now`.
    pub fn at(start: Timestamp, timeout: Duration, now: Timestamp) -> Self {
        let timeout = SignedDuration::try_from(timeout).unwrap_or(SignedDuration::MAX);
        match start.checked_add(timeout) {
            Ok(deadline) if deadline > now => Self::Running { deadline },
            Ok(_) => Self::Exceeded,
            // Past the end of time: never reached.
            Err(_) => Self::Running {
                deadline: Timestamp::MAX,
            },
        }
    }

    /// How long to wait from `now` until the deadline (at least a millisecond, so a timer read
    /// a moment early is looked at again right at its deadline rather than in a loop).
    pub fn wait(deadline: Timestamp, now: Timestamp) -> Duration {
        Duration::try_from(deadline.duration_since(now))
            .unwrap_or_default()
            .max(Duration::from_millis(1))
    }
}

/// What the abort timeout asks for on a job that was picked up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Abort {
    /// No abort was requested for this job.
    NotRequested,
    /// An abort is requested and not recorded yet: record `at` in [`ABORT_TIME`].
    Record {
        /// The time to record.
        at: Timestamp,
    },
    /// An abort was requested at the recorded time; the timer runs from it.
    Requested(Timer),
}

/// The abort timeout of `item` (whose job runs and was picked up) at `now`. An abort time
/// recorded before the job started belongs to an earlier job and is ignored.
pub fn abort(item: &DeployItem, timeout: Duration, now: Timestamp) -> Abort {
    let recorded = item
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(ABORT_TIME))
        .and_then(|text| text.parse::<Timestamp>().ok());
    let started = item
        .status
        .as_ref()
        .and_then(|status| status.job_id_generation_time.as_ref())
        .map(|time| time.0);
    let current = recorded.filter(|at| started.is_none_or(|started| *at >= started));
    if let Some(at) = current {
        return Abort::Requested(Timer::at(at, timeout, now));
    }
    let requested = item
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(annotations::OPERATION))
        .and_then(|value| Operation::parse(value))
        == Some(Operation::Abort);
    if requested {
        Abort::Record { at: now }
    } else {
        Abort::NotRequested
    }
}

/// `at` as Go's RFC 3339 without fractions, as upstream writes [`ABORT_TIME`].
pub fn rfc3339(at: Timestamp) -> String {
    Timestamp::from_second(at.as_second())
        .unwrap_or(at)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ts(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    fn item(status: serde_json::Value, annotations: serde_json::Value) -> DeployItem {
        serde_json::from_value(json!({
            "apiVersion": "landscaper.gardener.cloud/v1alpha1",
            "kind": "DeployItem",
            "metadata": {
                "name": "a",
                "creationTimestamp": "2026-01-01T00:00:00Z",
                "annotations": annotations,
            },
            "spec": { "type": "landscaper.gardener.cloud/mock" },
            "status": status,
        }))
        .unwrap()
    }

    #[test]
    fn a_job_is_picked_up_by_a_reconcile_at_or_after_its_start() {
        let started = json!({"jobID": "2", "jobIDFinished": "1", "jobIDGenerationTime": "2026-01-01T10:00:00Z"});
        let mut status = started.clone();
        assert!(!picked_up(&item(status.clone(), json!({}))));
        status["lastReconcileTime"] = json!("2026-01-01T09:59:59Z");
        assert!(
            !picked_up(&item(status.clone(), json!({}))),
            "an earlier job's pickup"
        );
        status["lastReconcileTime"] = json!("2026-01-01T10:00:00Z");
        assert!(picked_up(&item(status, json!({}))));
        let running = item(started, json!({}));
        assert!(job_running(&running));
        assert!(!job_running(&item(
            json!({"jobID": "1", "jobIDFinished": "1"}),
            json!({})
        )));
    }

    #[test]
    fn a_job_without_a_start_time_counts_from_the_items_creation() {
        let it = item(json!({"jobID": "1"}), json!({}));
        assert_eq!(job_started(&it), Some(ts("2026-01-01T00:00:00Z")));
    }

    #[test]
    fn the_timer_is_exceeded_at_its_deadline_and_waits_exactly_until_it() {
        let start = ts("2026-01-01T10:00:00Z");
        let five = Duration::from_secs(300);
        let before = ts("2026-01-01T10:04:58Z");
        let Timer::Running { deadline } = Timer::at(start, five, before) else {
            panic!("not over yet");
        };
        assert_eq!(deadline, ts("2026-01-01T10:05:00Z"));
        assert_eq!(Timer::wait(deadline, before), Duration::from_secs(2));
        assert_eq!(Timer::at(start, five, deadline), Timer::Exceeded);
        assert_eq!(
            Timer::wait(deadline, ts("2026-01-01T10:05:01Z")),
            Duration::from_millis(1)
        );
    }

    #[test]
    fn an_abort_is_recorded_once_and_times_out_from_the_record() {
        let now = ts("2026-01-01T10:10:00Z");
        let status = json!({"jobID": "2", "jobIDFinished": "1", "jobIDGenerationTime": "2026-01-01T10:00:00Z"});
        let op = json!({"landscaper.gardener.cloud/operation": "abort"});
        assert_eq!(
            abort(&item(status.clone(), op), Duration::from_secs(60), now),
            Abort::Record { at: now }
        );
        let recorded = json!({ABORT_TIME: "2026-01-01T10:08:00Z"});
        assert_eq!(
            abort(
                &item(status.clone(), recorded),
                Duration::from_secs(60),
                now
            ),
            Abort::Requested(Timer::Exceeded)
        );
        let stale = json!({ABORT_TIME: "2026-01-01T09:00:00Z"});
        assert_eq!(
            abort(&item(status.clone(), stale), Duration::from_secs(60), now),
            Abort::NotRequested,
            "an abort of an earlier job"
        );
        assert_eq!(
            abort(&item(status, json!({})), Duration::from_secs(60), now),
            Abort::NotRequested
        );
    }

    #[test]
    fn the_abort_time_is_written_as_go_writes_rfc3339() {
        let at = ts("2026-01-01T10:08:00.123456Z");
        assert_eq!(rfc3339(at), "2026-01-01T10:08:00Z");
        assert_eq!(
            rfc3339(at).parse::<Timestamp>().unwrap().as_second(),
            at.as_second()
        );
    }
}
