//! Request counters per verb, resource and user, so tests can assert what a client did.

use crate::request_log::WRITE_VERBS;
use std::collections::BTreeMap;
use std::sync::Mutex;

/// One counted request kind.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RequestKey {
    /// Kubernetes verb (`get`, `list`, `watch`, `create`, `update`, `patch`, `delete`, ...).
    pub verb: String,
    /// Resource, with the subresource after a slash (`deployments/status`); for
    /// non-resource requests the path.
    pub resource: String,
    /// The authenticated user name (`system:anonymous` when none).
    pub user: String,
}

/// Request counters of one cluster.
#[derive(Debug, Default)]
pub struct Counters {
    counts: Mutex<BTreeMap<RequestKey, u64>>,
}

impl Counters {
    /// Counts one request.
    pub fn record(&self, verb: &str, resource: &str, user: &str) {
        let key = RequestKey {
            verb: verb.into(),
            resource: resource.into(),
            user: user.into(),
        };
        *self
            .counts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(key)
            .or_default() += 1;
    }

    /// All counts so far.
    pub fn snapshot(&self) -> BTreeMap<RequestKey, u64> {
        self.counts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Requests matching the filters (`None` matches anything).
    pub fn count(&self, verb: Option<&str>, resource: Option<&str>, user: Option<&str>) -> u64 {
        self.snapshot()
            .iter()
            .filter(|(k, _)| {
                verb.is_none_or(|v| k.verb == v)
                    && resource.is_none_or(|r| k.resource == r)
                    && user.is_none_or(|u| k.user == u)
            })
            .map(|(_, n)| n)
            .sum()
    }

    /// Requests that change state (create/update/patch/delete/deletecollection), optionally
    /// only those of one user.
    pub fn writes(&self, user: Option<&str>) -> u64 {
        self.snapshot()
            .iter()
            .filter(|(k, _)| {
                WRITE_VERBS.contains(&k.verb.as_str()) && user.is_none_or(|u| k.user == u)
            })
            .map(|(_, n)| n)
            .sum()
    }

    /// Forgets every count.
    pub fn reset(&self) {
        self.counts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_by_verb_resource_and_user() {
        let c = Counters::default();
        c.record("get", "configmaps", "alice");
        c.record("update", "configmaps", "alice");
        c.record("patch", "deployments/status", "bob");
        assert_eq!(c.count(Some("get"), None, None), 1);
        assert_eq!(c.count(None, Some("configmaps"), Some("alice")), 2);
        assert_eq!(c.writes(None), 2);
        assert_eq!(c.writes(Some("bob")), 1);
        c.reset();
        assert_eq!(c.writes(None), 0);
    }
}
