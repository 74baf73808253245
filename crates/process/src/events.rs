//! Kubernetes Events for the state changes a person looks for, published through kube-rs'
//! [`Recorder`] so that a repeated event becomes one Event with a growing `series.count`, as
//! `kubectl get events` expects, instead of a new object each time.

use k8s_openapi::api::core::v1::ObjectReference;
use kube::Resource;
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use tracing::warn;

/// The events of one controller: its name is the Events' `reportingController`.
#[derive(Clone)]
pub struct Events {
    recorder: Recorder,
}

impl Events {
    /// Events reported as `controller` through `client`.
    pub fn new(client: kube::Client, controller: &str) -> Self {
        Self::of_instance(client, controller, None)
    }

    /// Events reported as `instance` of `controller` (the Events' `reportingInstance`, the
    /// controller's name when `None`) through `client`.
    pub fn of_instance(client: kube::Client, controller: &str, instance: Option<String>) -> Self {
        let reporter = Reporter {
            controller: controller.to_owned(),
            instance,
        };
        Self {
            recorder: Recorder::new(client, reporter),
        }
    }

    /// Publishes a Normal Event about `object`.
    pub async fn normal<K>(&self, object: &K, reason: &str, note: String)
    where
        K: Resource<DynamicType = ()>,
    {
        self.publish(object, EventType::Normal, reason, note).await;
    }

    /// Publishes a Warning Event about `object`.
    pub async fn warning<K>(&self, object: &K, reason: &str, note: String)
    where
        K: Resource<DynamicType = ()>,
    {
        self.publish(object, EventType::Warning, reason, note).await;
    }

    /// Publishes an Event about `object`; a failure is logged, never returned: an Event is a
    /// report, and the state change it reports has already been written.
    pub async fn publish<K>(&self, object: &K, type_: EventType, reason: &str, note: String)
    where
        K: Resource<DynamicType = ()>,
    {
        self.publish_about(&regarding(object), type_, reason, note)
            .await;
    }

    /// Publishes an Event about the object `reference` names (see [`regarding`]).
    pub async fn publish_about(
        &self,
        reference: &ObjectReference,
        type_: EventType,
        reason: &str,
        note: String,
    ) {
        let event = Event {
            type_,
            reason: reason.to_owned(),
            note: Some(note),
            action: "Reconcile".to_owned(),
            secondary: None,
        };
        if let Err(error) = self.recorder.publish(&event, reference).await {
            warn!(
                kind = reference.kind.as_deref().unwrap_or_default(),
                namespace = reference.namespace.as_deref().unwrap_or_default(),
                name = reference.name.as_deref().unwrap_or_default(),
                reason,
                %error,
                "could not publish an Event"
            );
        }
    }
}

/// The reference an Event names its object by: kind, namespace, name and uid, without the
/// `resourceVersion`, which changes with every write and would make the recorder see each
/// repetition of an event as a new one.
pub fn regarding<K: Resource<DynamicType = ()>>(object: &K) -> ObjectReference {
    ObjectReference {
        resource_version: None,
        ..object.object_ref(&())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::ObjectMeta;

    #[test]
    fn the_reference_names_the_object_without_its_resource_version() {
        let object = ConfigMap {
            metadata: ObjectMeta {
                name: Some("settings".into()),
                namespace: Some("apps".into()),
                uid: Some("1234".into()),
                resource_version: Some("42".into()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        };
        let reference = regarding(&object);
        assert_eq!(reference.kind.as_deref(), Some("ConfigMap"));
        assert_eq!(reference.api_version.as_deref(), Some("v1"));
        assert_eq!(reference.namespace.as_deref(), Some("apps"));
        assert_eq!(reference.name.as_deref(), Some("settings"));
        assert_eq!(reference.uid.as_deref(), Some("1234"));
        assert_eq!(reference.resource_version, None);
    }
}
