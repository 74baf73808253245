//! Updating the condition list of a status the way Kubernetes conventions expect.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::shared::{Condition, ConditionStatus};

/// The new state of one condition.
#[derive(Clone, Debug, PartialEq)]
pub struct ConditionUpdate<'a> {
    /// Type of the condition.
    pub type_: &'a str,
    /// Its status.
    pub status: ConditionStatus,
    /// Machine-readable reason.
    pub reason: &'a str,
    /// Human-readable message.
    pub message: String,
}

/// Sets a condition, keeping `lastTransitionTime` unless the status changes. Returns whether
/// the list changed; an identical condition is left alone, so callers can skip the write.
pub fn set_condition(
    conditions: &mut Vec<Condition>,
    update: ConditionUpdate<'_>,
    now: Time,
) -> bool {
    match conditions.iter_mut().find(|c| c.type_ == update.type_) {
        Some(existing) => {
            if existing.status == update.status
                && existing.reason == update.reason
                && existing.message == update.message
            {
                return false;
            }
            if existing.status != update.status {
                existing.last_transition_time = now.clone();
            }
            existing.status = update.status;
            existing.reason = update.reason.to_owned();
            existing.message = update.message;
            existing.last_update_time = now;
            true
        }
        None => {
            conditions.push(Condition {
                type_: update.type_.to_owned(),
                status: update.status,
                last_transition_time: now.clone(),
                last_update_time: now,
                reason: update.reason.to_owned(),
                message: update.message,
                codes: Vec::new(),
            });
            true
        }
    }
}

/// The condition of the given type, if present.
pub fn find_condition<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: i64) -> Time {
        Time(k8s_openapi::jiff::Timestamp::from_second(seconds).unwrap())
    }

    fn update(status: ConditionStatus, message: &str) -> ConditionUpdate<'static> {
        ConditionUpdate {
            type_: "AgentReady",
            status,
            reason: "Heartbeat",
            message: message.to_owned(),
        }
    }

    #[test]
    fn transition_time_moves_only_when_the_status_changes() {
        let mut conditions = Vec::new();
        assert!(set_condition(
            &mut conditions,
            update(ConditionStatus::True, "a"),
            at(10)
        ));
        assert!(set_condition(
            &mut conditions,
            update(ConditionStatus::True, "b"),
            at(20)
        ));
        assert_eq!(conditions[0].last_transition_time, at(10));
        assert_eq!(conditions[0].last_update_time, at(20));
        assert!(set_condition(
            &mut conditions,
            update(ConditionStatus::Unknown, "b"),
            at(30)
        ));
        assert_eq!(conditions[0].last_transition_time, at(30));
        assert_eq!(conditions.len(), 1);
    }

    #[test]
    fn identical_update_changes_nothing() {
        let mut conditions = Vec::new();
        set_condition(&mut conditions, update(ConditionStatus::True, "a"), at(10));
        assert!(!set_condition(
            &mut conditions,
            update(ConditionStatus::True, "a"),
            at(20)
        ));
        assert_eq!(conditions[0].last_update_time, at(10));
        assert_eq!(
            find_condition(&conditions, "AgentReady").unwrap().message,
            "a"
        );
    }
}
