//! Automatic retries of failed jobs (`spec.automaticReconcile.failedReconcile`): the first
//! retry at once, the next ones after `interval` (or at the next time of `cronSpec`), at most
//! `numberOfReconciles` times for a generation; `status.automaticReconcileStatus` counts them.

use std::time::Duration;

use k8s_openapi::jiff::{SignedDuration, Timestamp, tz::TimeZone};
use kube::ResourceExt;
use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use landscaper_api::constants::annotations;
use landscaper_api::core::{Installation, InstallationPhase, Operation};
use serde_json::json;
use tracing::info;

use super::{Context, Error, status};

/// The interval of retries when neither `interval` nor `cronSpec` is given, as upstream.
const DEFAULT_INTERVAL: Duration = Duration::from_secs(5 * 60);

/// Retries a failed, finished job when the installation asks for it.
pub async fn reconcile(installation: &Installation, context: &Context) -> Result<Action, Error> {
    let current = installation.status.clone().unwrap_or_default();
    let Some(failed) = installation
        .spec
        .automatic_reconcile
        .as_ref()
        .and_then(|a| a.failed_reconcile.as_ref())
    else {
        return Ok(Action::await_change());
    };
    if current.phase != Some(InstallationPhase::Failed) {
        return Ok(Action::await_change());
    }
    let previous = current
        .automatic_reconcile_status
        .filter(|s| s.generation == installation.metadata.generation && s.on_failed == Some(true));
    let count = previous
        .as_ref()
        .and_then(|s| s.number_of_reconciles)
        .unwrap_or(0);
    if failed
        .number_of_reconciles
        .is_some_and(|limit| count >= limit)
    {
        return Ok(Action::await_change());
    }
    let now = Timestamp::now();
    if let Some(last) = previous
        .as_ref()
        .and_then(|s| s.last_reconcile_time.as_ref())
        .map(|t| t.0)
    {
        let due = match &failed.cron_spec {
            Some(spec) => match next_cron(spec, last) {
                Ok(due) => due,
                Err(message) => {
                    info!(name = %installation.name_any(), %message, "automatic retries stopped");
                    return Ok(Action::await_change());
                }
            },
            None => {
                let interval = failed
                    .interval
                    .as_ref()
                    .map(|i| i.as_std())
                    .unwrap_or(DEFAULT_INTERVAL);
                last + SignedDuration::try_from(interval).unwrap_or(SignedDuration::MAX)
            }
        };
        if now < due {
            return Ok(Action::requeue(due.duration_since(now).unsigned_abs()));
        }
    }
    let name = installation.name_any();
    let api = context.installations(&installation.namespace().unwrap_or_default());
    let retry = count + 1;
    info!(name = %name, retry, "automatic retry of a failed job");
    status::patch(
        &api,
        installation,
        json!({"automaticReconcileStatus": {
            "generation": installation.metadata.generation,
            "numberOfReconciles": retry,
            "lastReconcileTime": status::now(),
            "onFailed": true,
        }}),
    )
    .await?;
    api.patch(
        &name,
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"annotations": {
            annotations::OPERATION: Operation::Reconcile.as_str(),
            annotations::RECONCILE_REASON: "failed-reconcile",
        }}})),
    )
    .await
    .map_err(|source| Error::api(installation, "request an automatic retry", source))?;
    context
        .event(
            installation,
            false,
            "AutomaticRetry",
            format!("Installation {name}: failed job retried automatically ({retry})"),
        )
        .await;
    Ok(Action::await_change())
}

/// The first time after `after` that the five-field cron `spec` (minute hour day month
/// weekday; `*`, numbers, lists and `*/n`) names, in UTC.
pub fn next_cron(spec: &str, after: Timestamp) -> Result<Timestamp, String> {
    let fields: Vec<&str> = spec.split_whitespace().collect();
    let [minute, hour, day, month, weekday] = fields[..] else {
        return Err(format!("cronSpec {spec:?}: expected five fields"));
    };
    let matches = |field: &str, value: i64| -> Result<bool, String> {
        for part in field.split(',') {
            let hit = match part.split_once('/') {
                Some((range, step)) => {
                    let step: i64 = step
                        .parse()
                        .map_err(|_| format!("cronSpec {spec:?}: bad step {part:?}"))?;
                    range == "*" && step > 0 && value % step == 0
                }
                None if part == "*" => true,
                None => {
                    part.parse::<i64>()
                        .map_err(|_| format!("cronSpec {spec:?}: bad field {part:?}"))?
                        == value
                }
            };
            if hit {
                return Ok(true);
            }
        }
        Ok(false)
    };
    let start = after.as_second() / 60 + 1;
    // One year of minutes covers every schedule these fields can express.
    for minute_index in start..start + 366 * 24 * 60 {
        let at = Timestamp::from_second(minute_index * 60).map_err(|e| e.to_string())?;
        let civil = at.to_zoned(TimeZone::UTC);
        if matches(minute, civil.minute().into())?
            && matches(hour, civil.hour().into())?
            && matches(day, civil.day().into())?
            && matches(month, civil.month().into())?
            && matches(weekday, civil.weekday().to_sunday_zero_offset().into())?
        {
            return Ok(at);
        }
    }
    Err(format!("cronSpec {spec:?} names no time within a year"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hourly_cron_runs_at_the_next_full_hour() {
        let after: Timestamp = "2020-05-01T08:00:00Z".parse().unwrap();
        assert_eq!(
            next_cron("0 * * * *", after).unwrap().to_string(),
            "2020-05-01T09:00:00Z"
        );
        let mid: Timestamp = "2020-05-01T08:30:00Z".parse().unwrap();
        assert_eq!(
            next_cron("*/15 * * * *", mid).unwrap().to_string(),
            "2020-05-01T08:45:00Z"
        );
        assert!(next_cron("0 * *", after).is_err());
    }
}
