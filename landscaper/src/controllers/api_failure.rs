//! A failed API request about one object, as every controller reports it: the object's kind
//! and identity, what was being done, and the server's answer.

use kube::Resource;
use landscaper_deployer::error::describe_kube_error;

/// An API request made while reconciling an object failed.
#[derive(Debug, thiserror::Error)]
#[error("{object}: {action}: {}", describe_kube_error(.source))]
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

#[cfg(test)]
mod tests {
    use super::*;
    use landscaper_api::core::Installation;

    fn conflict() -> kube::Error {
        kube::Error::Api(Box::new(kube::core::Status {
            code: 409,
            reason: "Conflict".to_owned(),
            message: "the object has been modified".to_owned(),
            ..kube::core::Status::default()
        }))
    }

    #[test]
    fn a_failure_names_the_object_and_gives_the_servers_words() {
        let mut installation = Installation::new("root", Default::default());
        installation.metadata.namespace = Some("demo".to_owned());
        let failure = ApiFailure::new(&installation, "writing its status", conflict());
        assert_eq!(
            failure.to_string(),
            "Installation demo/root: writing its status: the object has been modified (409)"
        );
        assert!(failure.is_conflict());
        assert_eq!(failure.refusal(), None);
    }
}
