//! Continuous reconcile: re-apply an item on a schedule (`every` or `cron` in its config) even
//! when nothing changed, so drift in the target is repaired. It is a `ShouldReconcile` hook,
//! paused by the `continuousreconcile.extensions.landscaper.gardener.cloud/active: "false"`
//! annotation.

mod cron;

pub use cron::CronSchedule;

use crate::error::Error;
use crate::hooks::{HookCall, HookResult, HookSetup, HookType, hook_fn};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use landscaper_api::constants::annotations;
use landscaper_api::core::DeployItem;
use landscaper_api::deployer::ContinuousReconcileSpec;
use std::time::Duration;

/// When an item is due again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Schedule {
    /// A fixed interval after the last reconcile.
    Every(Duration),
    /// The next time a cron schedule fires after the last reconcile.
    Cron(CronSchedule),
}

impl Schedule {
    /// Validates a spec: exactly one of `every` and `cron` (a zero or `none` interval counts
    /// as not set). `Ok(None)` when neither is set.
    pub fn from_spec(spec: &ContinuousReconcileSpec) -> Result<Option<Self>, String> {
        let every = spec
            .every
            .as_ref()
            .filter(|d| !d.is_none() && !d.as_std().is_zero());
        let cron = spec.cron.as_deref().filter(|c| !c.trim().is_empty());
        match (every, cron) {
            (Some(_), Some(_)) => {
                Err("continuousReconcile: only one of every and cron may be set".into())
            }
            (Some(d), None) => Ok(Some(Self::Every(d.as_std()))),
            (None, Some(c)) => CronSchedule::parse(c)
                .map(|s| Some(Self::Cron(s)))
                .map_err(|e| format!("continuousReconcile.cron: {e}")),
            (None, None) => Ok(None),
        }
    }

    /// Like [`Schedule::from_spec`], but lenient as upstream's mock deployer: when both are
    /// set, `cron` wins; an invalid schedule counts as none.
    pub fn from_spec_lenient(spec: &ContinuousReconcileSpec) -> Option<Self> {
        if let Some(c) = spec.cron.as_deref().filter(|c| !c.trim().is_empty()) {
            return CronSchedule::parse(c).ok().map(Self::Cron);
        }
        Self::from_spec(spec).ok().flatten()
    }

    /// The next due time after `last`.
    pub fn next_after(&self, last: Timestamp) -> Option<Timestamp> {
        match self {
            Self::Every(d) => SignedDuration::try_from(*d)
                .ok()
                .and_then(|d| last.checked_add(d).ok()),
            Self::Cron(c) => c.next_after(last),
        }
    }
}

/// The `continuousReconcile` node of an item's `spec.config`, where every deployer of this
/// project keeps it.
pub fn spec_from_config(item: &DeployItem) -> Option<ContinuousReconcileSpec> {
    let node = item.spec.config.as_ref()?.get("continuousReconcile")?;
    serde_json::from_value(node.clone()).ok()
}

/// Whether the pause annotation is set.
pub fn is_paused(item: &DeployItem) -> bool {
    item.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(annotations::CONTINUOUS_RECONCILE_ACTIVE))
        .is_some_and(|v| v == "false")
}

/// What the hook decides for `item` at `now`: `None` when continuous reconcile does not apply
/// (paused, or the item is being deleted); otherwise force a reconcile when due
/// (`abort_reconcile: false`) or not (`true`), with a requeue at the next due time.
pub fn decide(item: &DeployItem, now: Timestamp) -> Option<HookResult> {
    if is_paused(item) || item.metadata.deletion_timestamp.is_some() {
        return None;
    }
    let schedule = Schedule::from_spec_lenient(&spec_from_config(item)?)?;
    let last = item
        .status
        .as_ref()
        .and_then(|s| s.last_reconcile_time.as_ref())
        .map(|t| t.0)
        .or_else(|| item.metadata.creation_timestamp.as_ref().map(|t| t.0))
        .unwrap_or(now);
    let due = schedule.next_after(last)?;
    if now >= due {
        let following = schedule.next_after(now)?;
        Some(HookResult {
            abort_reconcile: false,
            requeue: false,
            requeue_after: until(now, following),
        })
    } else {
        Some(HookResult {
            abort_reconcile: true,
            requeue: false,
            requeue_after: until(now, due),
        })
    }
}

fn until(now: Timestamp, then: Timestamp) -> Duration {
    let d = then.duration_since(now);
    // Never zero: a zero delay means "no requeue" in a hook result.
    Duration::try_from(d)
        .unwrap_or(Duration::ZERO)
        .max(Duration::from_millis(100))
}

/// The continuous reconcile hook, registered at `ShouldReconcile`.
pub fn setup() -> HookSetup {
    HookSetup {
        hook: hook_fn(|call: &HookCall| -> Result<Option<HookResult>, Error> {
            Ok(call
                .item
                .as_ref()
                .and_then(|item| decide(item, Timestamp::now())))
        }),
        hook_types: vec![HookType::ShouldReconcile],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use landscaper_api::core::{DeployItemSpec, DeployItemStatus};
    use serde_json::json;

    fn item(config: serde_json::Value, last: &str) -> DeployItem {
        let mut di = DeployItem::new(
            "a",
            DeployItemSpec {
                type_: "t".into(),
                config: Some(config),
                ..Default::default()
            },
        );
        di.status = Some(DeployItemStatus {
            last_reconcile_time: Some(Time(last.parse().unwrap())),
            ..Default::default()
        });
        di
    }

    fn at(t: &str) -> Timestamp {
        t.parse().unwrap()
    }

    #[test]
    fn every_is_due_after_the_interval_since_the_last_reconcile() {
        let di = item(
            json!({"continuousReconcile": {"every": "1m"}}),
            "2026-01-01T00:00:00Z",
        );
        let early = decide(&di, at("2026-01-01T00:00:30Z")).unwrap();
        assert!(early.abort_reconcile);
        assert_eq!(early.requeue_after, Duration::from_secs(30));
        let due = decide(&di, at("2026-01-01T00:01:00Z")).unwrap();
        assert!(!due.abort_reconcile);
        assert_eq!(due.requeue_after, Duration::from_secs(60));
    }

    #[test]
    fn cron_is_due_at_the_next_firing_after_the_last_reconcile() {
        let di = item(
            json!({"continuousReconcile": {"cron": "@hourly"}}),
            "2026-01-01T00:10:00Z",
        );
        assert!(
            decide(&di, at("2026-01-01T00:59:00Z"))
                .unwrap()
                .abort_reconcile
        );
        let due = decide(&di, at("2026-01-01T01:00:00Z")).unwrap();
        assert!(!due.abort_reconcile);
        assert_eq!(due.requeue_after, Duration::from_secs(3600));
    }

    #[test]
    fn the_pause_annotation_and_a_missing_spec_turn_it_off() {
        let mut di = item(
            json!({"continuousReconcile": {"every": "1s"}}),
            "2026-01-01T00:00:00Z",
        );
        di.metadata.annotations = Some(
            [(
                annotations::CONTINUOUS_RECONCILE_ACTIVE.to_string(),
                "false".to_string(),
            )]
            .into(),
        );
        assert_eq!(decide(&di, at("2026-01-02T00:00:00Z")), None);
        let plain = item(json!({}), "2026-01-01T00:00:00Z");
        assert_eq!(decide(&plain, at("2026-01-02T00:00:00Z")), None);
    }

    #[test]
    fn an_item_being_deleted_is_not_reconciled() {
        let mut di = item(
            json!({"continuousReconcile": {"every": "1s"}}),
            "2026-01-01T00:00:00Z",
        );
        di.metadata.deletion_timestamp = Some(Time(at("2026-01-01T00:00:01Z")));
        assert_eq!(decide(&di, at("2026-01-02T00:00:00Z")), None);
    }

    #[test]
    fn both_every_and_cron_is_a_validation_error_but_cron_wins_leniently() {
        let spec: ContinuousReconcileSpec =
            serde_json::from_value(json!({"every": "1h", "cron": "@daily"})).unwrap();
        assert!(Schedule::from_spec(&spec).unwrap_err().contains("only one"));
        assert!(matches!(
            Schedule::from_spec_lenient(&spec),
            Some(Schedule::Cron(_))
        ));
        let bad: ContinuousReconcileSpec =
            serde_json::from_value(json!({"cron": "99 * * * *"})).unwrap();
        assert!(Schedule::from_spec(&bad).unwrap_err().contains("minute"));
    }
}
