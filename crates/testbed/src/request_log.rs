//! The request log: one record per request a cluster answered, so a test can assert who
//! did what to which object ("this identity never wrote that Secret", "the second
//! reconcile wrote nothing").

use std::collections::VecDeque;
use std::sync::Mutex;

/// Verbs that change state.
pub const WRITE_VERBS: &[&str] = &["create", "update", "patch", "delete", "deletecollection"];

/// How many records a log keeps; older ones are dropped so a long-running
/// `testbed serve` does not grow without bound.
pub const CAPACITY: usize = 200_000;

/// One answered request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestRecord {
    /// The authenticated (or impersonated) user name, e.g.
    /// `system:serviceaccount:ns:name`; empty when authentication failed (401).
    pub user: String,
    /// Kubernetes verb: `create`, `update`, `patch`, `delete`, `deletecollection`, `get`,
    /// `list`, `watch`; for non-resource paths (`/api`, `/version`, ...) the lowercase HTTP
    /// method.
    pub verb: String,
    /// API group (`""` for core and for non-resource paths).
    pub group: String,
    /// API version (`""` for non-resource paths).
    pub version: String,
    /// Plural resource (`deployments`) without subresource; for non-resource requests the
    /// path.
    pub resource: String,
    /// Subresource (`status`, `scale`, `token`, ...), empty when none.
    pub subresource: String,
    /// Namespace from the path (empty for cluster-scoped and all-namespace requests).
    pub namespace: String,
    /// Object name: from the path, or for a create the name of the created object (the
    /// drawn name when `generateName` was used; the requested name when the create
    /// failed). Empty for collection requests.
    pub name: String,
    /// HTTP status of the response; 0 when no response was sent (a hang fault).
    pub code: u16,
}

impl RequestRecord {
    /// Whether the verb changes state (create/update/patch/delete/deletecollection).
    /// Failed writes count too: check `code` for those that succeeded.
    pub fn is_write(&self) -> bool {
        WRITE_VERBS.contains(&self.verb.as_str())
    }

    /// `resource/subresource`, or `resource` when there is no subresource (the form the
    /// counters and RBAC rules use).
    pub fn full_resource(&self) -> String {
        if self.subresource.is_empty() {
            self.resource.clone()
        } else {
            format!("{}/{}", self.resource, self.subresource)
        }
    }

    /// Whether the response was a success (2xx).
    pub fn succeeded(&self) -> bool {
        (200..300).contains(&self.code)
    }
}

/// The bounded, ordered log of one cluster.
#[derive(Debug, Default)]
pub struct RequestLog {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    records: VecDeque<RequestRecord>,
}

impl RequestLog {
    /// Appends a record, dropping the oldest beyond [`CAPACITY`].
    pub fn push(&self, record: RequestRecord) {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if inner.records.len() >= CAPACITY {
            inner.records.pop_front();
        }
        inner.records.push_back(record);
    }

    /// Every kept record, oldest first.
    pub fn records(&self) -> Vec<RequestRecord> {
        let inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner.records.iter().cloned().collect()
    }

    /// Kept records that are writes (whether they succeeded or not), oldest first.
    pub fn writes(&self) -> Vec<RequestRecord> {
        let inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner
            .records
            .iter()
            .filter(|r| r.is_write())
            .cloned()
            .collect()
    }

    /// Forgets every record.
    pub fn reset(&self) {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner.records.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(verb: &str, name: &str) -> RequestRecord {
        RequestRecord {
            user: "alice".into(),
            verb: verb.into(),
            group: "apps".into(),
            version: "v1".into(),
            resource: "deployments".into(),
            subresource: String::new(),
            namespace: "ns".into(),
            name: name.into(),
            code: 200,
        }
    }

    #[test]
    fn keeps_order_filters_writes_and_resets() {
        let log = RequestLog::default();
        log.push(rec("get", "a"));
        log.push(rec("patch", "a"));
        log.push(rec("list", ""));
        log.push(rec("delete", "b"));
        let names: Vec<_> = log.records().into_iter().map(|r| r.verb).collect();
        assert_eq!(names, ["get", "patch", "list", "delete"]);
        let writes: Vec<_> = log.writes().into_iter().map(|r| r.verb).collect();
        assert_eq!(writes, ["patch", "delete"]);
        log.reset();
        assert!(log.records().is_empty());
    }

    #[test]
    fn drops_the_oldest_beyond_capacity() {
        let log = RequestLog::default();
        for i in 0..CAPACITY + 3 {
            log.push(rec("get", &i.to_string()));
        }
        let records = log.records();
        assert_eq!(records.len(), CAPACITY);
        assert_eq!(records[0].name, "3");
    }

    #[test]
    fn full_resource_joins_the_subresource() {
        let mut r = rec("patch", "a");
        assert_eq!(r.full_resource(), "deployments");
        r.subresource = "status".into();
        assert_eq!(r.full_resource(), "deployments/status");
    }
}
