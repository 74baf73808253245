//! The one step every registration object goes through: read it, create it when it is
//! missing, and write to an existing one only what differs, so a restart whose objects are
//! right makes no write.

use std::fmt::Debug;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Resource;
use kube::api::{Api, DeleteParams, PostParams};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tracing::info;

use super::{RegistrationError, api_error, owned_labels};

/// What an existing object needs to become what the agent wants.
pub(crate) enum Repair<K> {
    /// Nothing: it is right, and is not written.
    Keep(K),
    /// Replacing by this object: the one read, changed, so its resourceVersion guards the
    /// write against a concurrent change.
    Replace(K),
    /// Deleting it and creating this one, because what differs cannot change in place.
    Recreate(K),
}

impl<K> Repair<K> {
    /// Replaces `existing` when `changed`, else keeps it.
    pub(crate) fn replace_if(changed: bool, existing: K) -> Self {
        if changed {
            Self::Replace(existing)
        } else {
            Self::Keep(existing)
        }
    }
}

/// An object a registration step keeps, as it was read.
pub(crate) struct Stored<'a, K> {
    api: &'a Api<K>,
    name: &'a str,
    object: String,
    found: Option<K>,
}

impl<'a, K> Stored<'a, K>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Serialize + Debug,
{
    /// Reads the object `name`, which may be missing.
    pub(crate) async fn read(api: &'a Api<K>, name: &'a str) -> Result<Self, RegistrationError> {
        let object = describe(api, name);
        let found = api
            .get_opt(name)
            .await
            .map_err(api_error("reading", object.clone()))?;
        Ok(Self {
            api,
            name,
            object,
            found,
        })
    }

    /// The object as it was read, if it exists.
    pub(crate) fn found(&self) -> Option<&K> {
        self.found.as_ref()
    }

    /// Creates `desired` if the object is missing, else writes what `repair` (given the
    /// existing object and `desired`) asks for; returns the object as it now is. A refusal
    /// of `repair` is returned as it is, with nothing written.
    pub(crate) async fn ensure(
        self,
        desired: K,
        repair: impl FnOnce(K, K) -> Result<Repair<K>, RegistrationError>,
    ) -> Result<K, RegistrationError> {
        let (api, name, object) = (self.api, self.name, self.object);
        let post = PostParams::default();
        let Some(existing) = self.found else {
            let created = api
                .create(&post, &desired)
                .await
                .map_err(api_error("creating", object.clone()))?;
            info!(object = %object, "created");
            return Ok(created);
        };
        let (written, done) = match repair(existing, desired)? {
            Repair::Keep(existing) => return Ok(existing),
            Repair::Replace(changed) => (
                api.replace(name, &post, &changed)
                    .await
                    .map_err(api_error("updating", object.clone()))?,
                "updated",
            ),
            Repair::Recreate(desired) => {
                api.delete(name, &DeleteParams::default())
                    .await
                    .map_err(api_error("deleting", object.clone()))?;
                let created = api
                    .create(&post, &desired)
                    .await
                    .map_err(api_error("recreating", object.clone()))?;
                (created, "recreated")
            }
        };
        info!(object = %object, "{done}");
        Ok(written)
    }
}

/// Reads the object `name` and ensures it is `desired`, as [`Stored::ensure`] does.
pub(crate) async fn ensure<K>(
    api: &Api<K>,
    name: &str,
    desired: K,
    repair: impl FnOnce(K, K) -> Result<Repair<K>, RegistrationError>,
) -> Result<K, RegistrationError>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Serialize + Debug,
{
    Stored::read(api, name).await?.ensure(desired, repair).await
}

/// Deletes the object `name`; one already gone is fine.
pub(crate) async fn delete<K>(api: &Api<K>, name: &str) -> Result<(), RegistrationError>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug,
{
    let object = describe(api, name);
    match api.delete(name, &DeleteParams::default()).await {
        Ok(_) => {
            info!(object = %object, "deleted");
            Ok(())
        }
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
        Err(source) => Err(api_error("deleting", object)(source)),
    }
}

/// Adds the labels of the environment's objects that `metadata` lacks; whether it lacked
/// any.
pub(crate) fn add_owned_labels(metadata: &mut ObjectMeta, environment: &str) -> bool {
    let labels = metadata.labels.get_or_insert_with(Default::default);
    let mut added = false;
    for (key, value) in owned_labels(environment) {
        if labels.get(&key) != Some(&value) {
            labels.insert(key, value);
            added = true;
        }
    }
    added
}

/// The object as errors and logs name it: `Kind namespace/name`, or `Kind name` for a
/// cluster-wide one.
pub(crate) fn describe<K: Resource<DynamicType = ()>>(api: &Api<K>, name: &str) -> String {
    match api.namespace() {
        Some(namespace) => format!("{} {namespace}/{name}", K::kind(&())),
        None => format!("{} {name}", K::kind(&())),
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;
    use testbed::Testbed;
    use testbed::{Fault, Matcher};

    use super::*;

    fn config_map(value: &str) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some("settings".into()),
                ..Default::default()
            },
            data: Some([("key".to_owned(), value.to_owned())].into()),
            ..Default::default()
        }
    }

    #[tokio::test]
    async fn a_refusal_writes_nothing_and_keeps_its_error() {
        let testbed = Testbed::start().await.unwrap();
        let cluster = testbed.cluster();
        let api = Api::<ConfigMap>::namespaced(cluster.client(), "default");
        ensure(&api, "settings", config_map("a"), |e, _| {
            Ok(Repair::Keep(e))
        })
        .await
        .unwrap();
        cluster.reset_requests();

        let refuse = |_, _| Err(RegistrationError::BeingDeleted { name: "x".into() });
        let error = ensure(&api, "settings", config_map("b"), refuse)
            .await
            .unwrap_err();

        assert!(matches!(error, RegistrationError::BeingDeleted { .. }));
        assert!(cluster.writes().is_empty(), "{:?}", cluster.writes());
    }

    #[tokio::test]
    async fn a_recreated_object_is_a_new_one_and_failures_name_the_object() {
        let testbed = Testbed::start().await.unwrap();
        let cluster = testbed.cluster();
        let api = Api::<ConfigMap>::namespaced(cluster.client(), "default");
        let first = ensure(&api, "settings", config_map("a"), |e, _| {
            Ok(Repair::Keep(e))
        })
        .await
        .unwrap();

        let second = ensure(&api, "settings", config_map("b"), |_, d| {
            Ok(Repair::Recreate(d))
        })
        .await
        .unwrap();
        assert_ne!(first.metadata.uid, second.metadata.uid);
        assert_eq!(second.data, config_map("b").data);

        let failing = Matcher::any().verb("get").resource("configmaps");
        cluster.faults().fail_next(1, failing, Fault::InternalError);
        let error = ensure(&api, "settings", config_map("c"), |e, _| {
            Ok(Repair::Keep(e))
        })
        .await
        .unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("reading ConfigMap default/settings: "),
            "{error}"
        );
    }
}
