//! The cluster fixture of the data-flow tests (`installation_imports`, `installation_exports`):
//! one testbed cluster with the Landscaper CRDs, a namespace named like upstream's state
//! folder, objects built inline with upstream's names and contexts, and the blueprints of the
//! shared registry `installations/testdata/registry`.

#![allow(dead_code)] // each test file uses its own part of the fixture

use std::path::PathBuf;

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, Patch, PatchParams, PostParams};
use landscaper::dataflow::{self, DataflowError, Imports};
use landscaper_api::core::{Blueprint, DataObject, Installation, Target, data_object_name};
use landscaper_blueprint::Filesystem;
use serde_json::{Value as Json, json};
use testbed::Testbed;

/// The directory of a blueprint of upstream's shared registry.
pub fn registry_blob(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/conformance/landscaper/states/installations/testdata/registry/blobs")
        .join(name)
}

/// A registry blueprint and its filesystem.
pub fn blueprint(blob: &str) -> (Blueprint, Filesystem) {
    let fs = Filesystem::from_dir(&registry_blob(blob)).expect("blueprint filesystem");
    let loaded = landscaper_blueprint::load::load(&fs).expect("blueprint loads");
    (loaded.blueprint, fs)
}

/// A testbed cluster with the CRDs and one namespace.
pub struct Fixture {
    _bed: Testbed,
    /// A client of the cluster.
    pub client: kube::Client,
    /// The namespace of the test.
    pub ns: String,
}

impl Fixture {
    /// Starts the cluster and creates namespace `ns`.
    pub async fn start(ns: &str) -> Self {
        let bed = Testbed::start().await.expect("testbed starts");
        let client = bed.cluster().client();
        landscaper::crds::ensure(&client).await.expect("CRDs");
        landscaper_e2e::eventually("the DataObject CRD is served", || async {
            Api::<DataObject>::all(client.clone())
                .list(&Default::default())
                .await
                .is_ok()
        })
        .await;
        let namespace: Namespace =
            serde_json::from_value(json!({"metadata": {"name": ns}})).unwrap();
        Api::<Namespace>::all(client.clone())
            .create(&PostParams::default(), &namespace)
            .await
            .expect("namespace");
        Self {
            _bed: bed,
            client,
            ns: ns.to_owned(),
        }
    }

    /// Creates `object` in the namespace.
    pub async fn create<K>(&self, object: Json) -> K
    where
        K: kube::Resource<Scope = kube::core::NamespaceResourceScope, DynamicType = ()>
            + Clone
            + serde::Serialize
            + serde::de::DeserializeOwned
            + std::fmt::Debug,
    {
        let object: K = serde_json::from_value(object).expect("object decodes");
        Api::<K>::namespaced(self.client.clone(), &self.ns)
            .create(&PostParams::default(), &object)
            .await
            .expect("object is created")
    }

    /// A DataObject holding `data` under `key` in `context`.
    pub async fn data_object(&self, context: &str, key: &str, data: Json) {
        self.create::<DataObject>(json!({
            "apiVersion": "landscaper.gardener.cloud/v1alpha1", "kind": "DataObject",
            "metadata": {"name": data_object_name(context, key)},
            "data": data
        }))
        .await;
    }

    /// A Target of the mock type with `config` under `key` in `context`.
    pub async fn target(&self, context: &str, key: &str, config: &str) {
        self.create::<Target>(json!({
            "metadata": {"name": data_object_name(context, key)},
            "spec": {"type": "landscaper.gardener.cloud/mock", "config": config}
        }))
        .await;
    }

    /// An installation; `parent` sets the `encompassed-by` label as subinstallations have.
    pub async fn installation(&self, name: &str, parent: Option<&str>, spec: Json) -> Installation {
        let labels = parent.map_or(
            json!({}),
            |p| json!({"landscaper.gardener.cloud/encompassed-by": p}),
        );
        let mut spec = spec;
        spec["blueprint"] = json!({"ref": {"resourceName": "unused"}});
        self.create::<Installation>(json!({
            "apiVersion": "landscaper.gardener.cloud/v1alpha1", "kind": "Installation",
            "metadata": {"name": name, "labels": labels},
            "spec": spec
        }))
        .await
    }

    /// Reads the imports of `installation` for the registry blueprint `blob`.
    pub async fn imports(
        &self,
        installation: &Installation,
        blob: &str,
    ) -> Result<Imports, DataflowError> {
        let (blueprint, fs) = blueprint(blob);
        let scope = dataflow::scope(&self.client, installation)
            .await
            .expect("scope");
        dataflow::read_imports(&self.client, installation, &blueprint, &fs, &scope).await
    }
}

/// The imports as one JSON object.
pub fn values(imports: &Imports) -> Json {
    Json::Object(imports.values.clone())
}

impl Fixture {
    /// Writes `status` (a merge patch) through the status subresource, as controllers do.
    pub async fn status<K>(&self, name: &str, status: Json)
    where
        K: kube::Resource<Scope = kube::core::NamespaceResourceScope, DynamicType = ()>
            + Clone
            + serde::de::DeserializeOwned
            + std::fmt::Debug,
    {
        Api::<K>::namespaced(self.client.clone(), &self.ns)
            .patch_status(
                name,
                &PatchParams::default(),
                &Patch::Merge(json!({"status": status})),
            )
            .await
            .expect("status is written");
    }

    /// The installation as the API server has it now.
    pub async fn get_installation(&self, name: &str) -> Installation {
        Api::<Installation>::namespaced(self.client.clone(), &self.ns)
            .get(name)
            .await
            .expect("installation")
    }

    /// The scope of `installation`.
    pub async fn scope(&self, installation: &Installation) -> dataflow::Scope {
        dataflow::scope(&self.client, installation)
            .await
            .expect("scope")
    }
}
