//! A failed API request about one object, as every controller reports it: the object's kind
//! and identity, what was being done, and the server's answer.

use kube::Resource;

/// An API request made while reconciling an object failed.
#[derive(Debug, thiserror::Error)]
#[error("{object}: {action}: {source}")]
pub struct ApiFailure {
    /// The reconciled object: its kind and `namespace/name` (its name when cluster-scoped).
    object: String,
    /// What was being done.
    action: String,
    /// The failure.
    #[source]
    source: kube::Error,
}

impl ApiFailure {
    /// `action` on behalf of `object` failed with `source`.
    pub fn new<K: Resource<DynamicType = ()>>(
        object: &K,
        action: impl Into<String>,
        source: kube::Error,
    ) -> Self {
        let name = object.meta().name.clone().unwrap_or_default();
        let object = match object.meta().namespace.as_deref() {
            Some(namespace) => format!("{} {namespace}/{name}", K::kind(&())),
            None => format!("{} {name}", K::kind(&())),
        };
        Self {
            object,
            action: action.into(),
            source,
        }
    }

    /// `action` on behalf of the cluster-scoped `K` called `name` failed with `source`.
    pub fn named<K: Resource<DynamicType = ()>>(
        name: &str,
        action: impl Into<String>,
        source: kube::Error,
    ) -> Self {
        Self {
            object: format!("{} {name}", K::kind(&())),
            action: action.into(),
            source,
        }
    }

    /// When the API server refused the request as invalid (it will refuse it again): what was
    /// refused and the server's message.
    pub fn refusal(&self) -> Option<String> {
        crate::refusal::permanent(&self.source)
            .map(|message| format!("{}: {}: {message}", self.object, self.action))
    }

    /// Whether the server refused the write because the object changed since it was read.
    pub fn is_conflict(&self) -> bool {
        matches!(&self.source, kube::Error::Api(status) if status.code == 409)
    }
}
