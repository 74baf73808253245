//! Kubernetes Events for the state changes a person looks for, through the Events API
//! (`events.k8s.io/v1`): a repeated event becomes one Event with a growing `series.count`, as
//! `kubectl get events` expects, instead of a new object each time.
//!
//! The Events are those kube-rs' `Recorder` writes, but what is remembered to count a
//! repetition is only the Event's name and series, not the whole Event: at 5,000 deployer
//! installations the recorder's cache of whole Events was the landscaper's largest table,
//! and it walked all of it on every publish.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::{Event as K8sEvent, EventSeries};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::Resource;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::runtime::events::EventType;
use serde_json::json;
use tracing::warn;

/// How long an Event is counted up rather than written anew (kube-rs' and client-go's).
const SERIES_TTL: SignedDuration = SignedDuration::from_mins(6);
/// How often the record of published Events forgets those past [`SERIES_TTL`].
const SWEEP_EVERY: SignedDuration = SignedDuration::from_secs(60);
/// The Events' `action`: every Event reports a reconcile.
const ACTION: &str = "Reconcile";

/// The events of one controller: its name is the Events' `reportingController`.
#[derive(Clone)]
pub struct Events {
    client: kube::Client,
    controller: String,
    instance: String,
    published: Arc<Mutex<Published>>,
}

/// The Events published within [`SERIES_TTL`], by what makes an Event the same one: its type,
/// reason and object.
#[derive(Default)]
struct Published {
    by_key: HashMap<String, Series>,
    swept: Option<Timestamp>,
}

/// An Event already written: its name and how often it happened.
#[derive(Clone)]
struct Series {
    name: String,
    count: i32,
    last: Timestamp,
}

impl Published {
    /// The series of `key` still counted at `now`, forgetting every expired one once per
    /// [`SWEEP_EVERY`].
    fn current(&mut self, key: &str, now: Timestamp) -> Option<Series> {
        if self.swept.is_none_or(|swept| swept + SWEEP_EVERY <= now) {
            self.by_key
                .retain(|_, series| series.last + SERIES_TTL > now);
            self.swept = Some(now);
        }
        self.by_key
            .get(key)
            .filter(|series| series.last + SERIES_TTL > now)
            .cloned()
    }
}

impl Events {
    /// Events reported as `controller` through `client`.
    pub fn new(client: kube::Client, controller: &str) -> Self {
        Self::of_instance(client, controller, None)
    }

    /// Events reported as `instance` of `controller` (the Events' `reportingInstance`, the
    /// controller's name when `None`) through `client`.
    pub fn of_instance(client: kube::Client, controller: &str, instance: Option<String>) -> Self {
        Self {
            client,
            controller: controller.to_owned(),
            instance: instance.unwrap_or_else(|| controller.to_owned()),
            published: Arc::default(),
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
        if let Err(error) = self.write(reference, type_, reason, note).await {
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

    /// Counts up the Event of this type, reason and object published within [`SERIES_TTL`],
    /// or creates one (also when the one counted is gone from the server).
    async fn write(
        &self,
        reference: &ObjectReference,
        type_: EventType,
        reason: &str,
        note: String,
    ) -> Result<(), kube::Error> {
        let now = Timestamp::now();
        let key = event_key(reference, type_, reason);
        let previous = self.lock().current(&key, now);
        let namespace = reference.namespace.as_deref().unwrap_or("default");
        let events: Api<K8sEvent> = Api::namespaced(self.client.clone(), namespace);
        if let Some(previous) = previous {
            let series = EventSeries {
                count: previous.count + 1,
                last_observed_time: MicroTime(now),
            };
            let patch = json!({ "series": series });
            match events
                .patch(
                    &previous.name,
                    &PatchParams::default(),
                    &Patch::Merge(&patch),
                )
                .await
            {
                Ok(_) => {
                    self.remember(
                        key,
                        Series {
                            name: previous.name,
                            count: series.count,
                            last: now,
                        },
                    );
                    return Ok(());
                }
                Err(kube::Error::Api(status)) if status.code == 404 => {}
                Err(error) => return Err(error),
            }
        }
        let event = self.event(reference, type_, reason, note, now);
        let name = event.metadata.name.clone().unwrap_or_default();
        events.create(&PostParams::default(), &event).await?;
        self.remember(
            key,
            Series {
                name,
                count: 1,
                last: now,
            },
        );
        Ok(())
    }

    /// A new Event, named and filled as kube-rs' recorder does.
    fn event(
        &self,
        reference: &ObjectReference,
        type_: EventType,
        reason: &str,
        note: String,
        now: Timestamp,
    ) -> K8sEvent {
        let object = reference.name.as_deref().unwrap_or(&self.controller);
        K8sEvent {
            action: Some(ACTION.to_owned()),
            reason: Some(reason.to_owned()),
            event_time: Some(MicroTime(now)),
            regarding: Some(reference.clone()),
            note: Some(note),
            metadata: ObjectMeta {
                namespace: reference.namespace.clone(),
                name: Some(format!("{object}.{:x}", now.as_nanosecond())),
                ..ObjectMeta::default()
            },
            reporting_controller: Some(self.controller.clone()),
            reporting_instance: Some(self.instance.clone()),
            type_: Some(
                match type_ {
                    EventType::Normal => "Normal",
                    EventType::Warning => "Warning",
                }
                .to_owned(),
            ),
            ..K8sEvent::default()
        }
    }

    fn remember(&self, key: String, series: Series) {
        self.lock().by_key.insert(key, series);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Published> {
        self.published
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// What makes two Events the same one (the reporter is the [`Events`]' own).
fn event_key(reference: &ObjectReference, type_: EventType, reason: &str) -> String {
    let part = |field: &Option<String>| field.clone().unwrap_or_default();
    [
        format!("{type_:?}"),
        reason.to_owned(),
        part(&reference.api_version),
        part(&reference.kind),
        part(&reference.namespace),
        part(&reference.name),
        part(&reference.uid),
    ]
    .join("\u{0}")
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

    fn reference(name: &str, uid: &str) -> ObjectReference {
        ObjectReference {
            api_version: Some("v1".into()),
            kind: Some("ConfigMap".into()),
            namespace: Some("apps".into()),
            name: Some(name.into()),
            uid: Some(uid.into()),
            ..ObjectReference::default()
        }
    }

    #[test]
    fn an_event_is_the_same_by_type_reason_and_object() {
        let key = |r: &ObjectReference, t, reason| event_key(r, t, reason);
        let settings = reference("settings", "1");
        let same = key(&settings, EventType::Normal, "Updated");
        assert_eq!(same, key(&settings, EventType::Normal, "Updated"));
        for other in [
            key(&settings, EventType::Warning, "Updated"),
            key(&settings, EventType::Normal, "Deleted"),
            key(&reference("other", "1"), EventType::Normal, "Updated"),
            key(&reference("settings", "2"), EventType::Normal, "Updated"),
        ] {
            assert_ne!(same, other);
        }
    }

    #[test]
    fn a_series_is_counted_within_its_time_and_forgotten_after() {
        let start = Timestamp::UNIX_EPOCH + SignedDuration::from_hours(1);
        let mut published = Published::default();
        assert!(published.current("a", start).is_none());
        for key in ["a", "b"] {
            published.by_key.insert(
                key.to_owned(),
                Series {
                    name: format!("{key}.1"),
                    count: 1,
                    last: start,
                },
            );
        }
        let later = start + SERIES_TTL - SignedDuration::from_secs(1);
        let series = published.current("a", later).expect("still counted");
        assert_eq!((series.name.as_str(), series.count), ("a.1", 1));
        let expired = start + SERIES_TTL;
        assert!(published.current("a", expired).is_none());
        // The next sweep, a minute after the last, forgets every expired series.
        assert_eq!(published.by_key.len(), 2, "no sweep within a minute");
        assert!(published.current("c", expired + SWEEP_EVERY).is_none());
        assert!(published.by_key.is_empty(), "expired series are swept");
    }
}
