//! Dev mode: the whole system in one process. Two testbed clusters (the landscaper cluster
//! with our CRDs, and a fenced cluster), the landscaper's controllers, an agent for the
//! environment `default` with its embedded helm deployer, and the example manifests applied;
//! progress is logged as it happens.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use kube::core::GroupVersionKind;
use kube::discovery::{Scope, pinned_kind};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Resource, ResourceExt};
use landscaper_agent::Agent;
use landscaper_agent::clients::ClusterAccess;
use landscaper_agent::settings::{Overrides, Settings as AgentSettings};
use landscaper_api::config::AgentConfiguration;
use landscaper_api::core::{DeployItem, Environment, Target};
use landscaper_api::decode::yaml_documents;
use testbed::Testbed;
use tokio::task::JoinSet;
use tracing::info;

use crate::settings::Settings;

/// Field manager of the manifests dev mode applies.
const MANAGER: &str = "landscaper-dev";
/// Workers of the agent's embedded helm deployer (the agent's default).
const HELM_WORKERS: u16 = 8;
/// The name of the landscaper cluster in the two-cluster world.
pub const LANDSCAPER_CLUSTER: &str = "landscaper";
/// The name of the fenced cluster (the agent's host) in the two-cluster world.
pub const FENCED_CLUSTER: &str = "fenced";

/// The two-cluster world that dev mode and the end-to-end tests run on: a testbed with the
/// landscaper cluster and a fenced cluster, for the caller to finish configuring and start.
/// While the workload simulator is on, Deployments of the agent's image run in-process (the
/// testbed's kubelet mode), so deployers that the helm deployer installs actually run.
pub fn two_clusters() -> testbed::Builder {
    Testbed::builder()
        .named(&[LANDSCAPER_CLUSTER, FENCED_CLUSTER])
        .container_runner(
            landscaper_agent::kubelet::IMAGE,
            std::sync::Arc::new(landscaper_agent::kubelet::AgentImage),
        )
}

/// Makes the landscaper cluster ready for the landscaper's controllers: the Landscaper CRDs
/// and the deployer management namespace.
pub async fn prepare_landscaper_cluster(
    client: &kube::Client,
    namespace: &str,
) -> Result<(), DevError> {
    crate::crds::ensure(client)
        .await
        .map_err(api("installing the Landscaper CRDs"))?;
    info!("installed the Landscaper CRDs into the landscaper cluster");
    ensure_namespace(client, namespace).await
}

/// What dev mode is started with.
#[derive(Clone, Debug)]
pub struct Options {
    /// Where the clusters' kubeconfigs are written.
    pub dir: PathBuf,
    /// Manifests to apply to the landscaper cluster (a file or folder); none when `None`.
    pub examples: Option<PathBuf>,
    /// The agent's heartbeat period (Go duration).
    pub heartbeat_period: String,
    /// The landscaper's settings (`landscaper dev --config`).
    pub settings: Settings,
}

/// Why dev mode could not start.
#[derive(Debug, thiserror::Error)]
pub enum DevError {
    /// The testbed did not start.
    #[error("starting the in-process clusters: {0}")]
    Testbed(String),
    /// A request failed.
    #[error("{action}: {source}")]
    Api {
        /// What was being done.
        action: String,
        /// The failure.
        #[source]
        source: kube::Error,
    },
    /// An example could not be read or applied.
    #[error("example {file}: {message}")]
    Example {
        /// The file.
        file: String,
        /// What is wrong.
        message: String,
    },
}

/// The running system; dropping it stops everything.
pub struct DevMode {
    bed: Testbed,
    tasks: JoinSet<()>,
}

impl DevMode {
    /// Starts the clusters, the landscaper, the agent, the progress log, and applies the examples.
    pub async fn start(options: &Options) -> Result<Self, DevError> {
        let bed = two_clusters()
            .kubeconfig_dir(&options.dir)
            .simulate_workloads(true)
            .start()
            .await
            .map_err(|e| DevError::Testbed(e.to_string()))?;
        let mut dev = Self {
            bed,
            tasks: JoinSet::new(),
        };
        let landscaper = dev.landscaper_client();
        let settings = options.settings.clone();
        prepare_landscaper_cluster(&landscaper, &settings.namespace).await?;
        dev.tasks.spawn(progress::<Environment>(
            landscaper.clone(),
            describe_environment,
        ));
        dev.tasks
            .spawn(progress::<Target>(landscaper.clone(), describe_target));
        dev.tasks.spawn(progress::<DeployItem>(
            landscaper.clone(),
            describe_deploy_item,
        ));
        dev.tasks.spawn(crate::controllers::run(
            landscaper.clone(),
            settings,
            std::future::pending(),
        ));
        info!("the landscaper's controllers are running");
        let agent = dev.agent(&options.heartbeat_period).await?;
        dev.tasks
            .spawn(landscaper_agent::helm_deployer::run_with_agent(
                agent,
                HELM_WORKERS,
                std::future::pending(),
            ));
        info!(
            "the agent of environment default and its helm deployer are running in the fenced cluster"
        );
        if let Some(examples) = &options.examples {
            apply_examples(&landscaper, examples).await?;
        }
        Ok(dev)
    }

    /// The kubeconfig of the landscaper cluster.
    pub fn landscaper_kubeconfig(&self) -> &Path {
        self.cluster(LANDSCAPER_CLUSTER).kubeconfig_path()
    }

    /// The kubeconfig of the fenced cluster.
    pub fn fenced_kubeconfig(&self) -> &Path {
        self.cluster(FENCED_CLUSTER).kubeconfig_path()
    }

    /// A client of the landscaper cluster (admin).
    pub fn landscaper_client(&self) -> kube::Client {
        self.cluster(LANDSCAPER_CLUSTER).client()
    }

    /// A client of the fenced cluster (admin).
    pub fn fenced_client(&self) -> kube::Client {
        self.cluster(FENCED_CLUSTER).client()
    }

    fn cluster(&self, name: &str) -> &testbed::Cluster {
        // Both clusters are created in `start`, so the lookup cannot miss.
        self.bed
            .cluster_named(name)
            .unwrap_or_else(|| self.bed.cluster())
    }

    async fn agent(&self, heartbeat_period: &str) -> Result<Agent, DevError> {
        let config = AgentConfiguration {
            name: Some("default".to_owned()),
            landscaper_cluster_kubeconfig: Some(self.landscaper_kubeconfig().display().to_string()),
            ..Default::default()
        };
        let overrides = Overrides {
            heartbeat_period: Some(heartbeat_period.to_owned()),
            ..Default::default()
        };
        let settings =
            AgentSettings::resolve(config, overrides).map_err(|e| DevError::Example {
                file: "agent settings".into(),
                message: e.to_string(),
            })?;
        let connect = |path: &Path, what: &'static str| {
            let path = path.to_owned();
            async move {
                ClusterAccess::from_kubeconfig_file(&path, what)
                    .await
                    .map_err(|e| DevError::Testbed(e.to_string()))
            }
        };
        let host = connect(self.fenced_kubeconfig(), "fenced cluster").await?;
        let landscaper = connect(self.landscaper_kubeconfig(), "landscaper cluster").await?;
        Ok(Agent::new(
            settings,
            host,
            landscaper,
            env!("CARGO_PKG_VERSION"),
        ))
    }
}

fn api(action: &str) -> impl FnOnce(kube::Error) -> DevError + '_ {
    move |source| DevError::Api {
        action: action.to_owned(),
        source,
    }
}

async fn ensure_namespace(client: &kube::Client, name: &str) -> Result<(), DevError> {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let namespace = serde_json::json!({ "apiVersion": "v1", "kind": "Namespace", "metadata": { "name": name } });
    namespaces
        .patch(
            name,
            &PatchParams::apply(MANAGER).force(),
            &Patch::Apply(namespace),
        )
        .await
        .map_err(api(&format!("creating namespace {name}")))?;
    Ok(())
}

/// Applies every document of the example files (server-side apply, so re-running is harmless).
async fn apply_examples(client: &kube::Client, path: &Path) -> Result<(), DevError> {
    let mut files = Vec::new();
    if path.is_dir() {
        let entries = std::fs::read_dir(path).map_err(|e| DevError::Example {
            file: path.display().to_string(),
            message: e.to_string(),
        })?;
        files.extend(
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml")),
        );
        files.sort();
    } else {
        files.push(path.to_owned());
    }
    for file in files {
        let name = file.display().to_string();
        let text = std::fs::read_to_string(&file).map_err(|e| DevError::Example {
            file: name.clone(),
            message: e.to_string(),
        })?;
        let documents = yaml_documents(&text, &name).map_err(|e| DevError::Example {
            file: name.clone(),
            message: e.to_string(),
        })?;
        for document in documents {
            apply_document(client, document, &name).await?;
        }
    }
    Ok(())
}

async fn apply_document(
    client: &kube::Client,
    document: serde_json::Value,
    file: &str,
) -> Result<(), DevError> {
    let fail = |message: String| DevError::Example {
        file: file.to_owned(),
        message,
    };
    let object: DynamicObject =
        serde_json::from_value(document.clone()).map_err(|e| fail(e.to_string()))?;
    let types = object
        .types
        .as_ref()
        .ok_or_else(|| fail("a document has no apiVersion/kind".into()))?;
    let gvk = GroupVersionKind::try_from(types).map_err(|e| fail(e.to_string()))?;
    let (resource, capabilities) = pinned_kind(client, &gvk)
        .await
        .map_err(|e| fail(format!("{}: {e}", types.kind)))?;
    let name = object.name_any();
    let objects: Api<DynamicObject> = match capabilities.scope {
        Scope::Namespaced => {
            let namespace = object.namespace().unwrap_or_else(|| "default".to_owned());
            ensure_namespace(client, &namespace).await?;
            Api::namespaced_with(client.clone(), &namespace, &resource)
        }
        Scope::Cluster => Api::all_with(client.clone(), &resource),
    };
    objects
        .patch(
            &name,
            &PatchParams::apply(MANAGER).force(),
            &Patch::Apply(document),
        )
        .await
        .map_err(api(&format!("applying {} {name} from {file}", types.kind)))?;
    info!(kind = %types.kind, name = %name, file = %file, "applied example");
    Ok(())
}

/// Logs a line whenever an object's description changes, until the watch ends.
async fn progress<K>(client: kube::Client, describe: fn(&K) -> String)
where
    K: Resource<DynamicType = ()>
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug
        + Send
        + 'static,
{
    let api: Api<K> = Api::all(client);
    let mut seen: HashMap<String, String> = HashMap::new();
    let mut events = watcher(api, watcher::Config::default())
        .default_backoff()
        .touched_objects()
        .boxed();
    loop {
        match events.try_next().await {
            Ok(Some(object)) => {
                let key = format!(
                    "{}/{}",
                    object.namespace().unwrap_or_default(),
                    object.name_any()
                );
                let description = describe(&object);
                if seen.get(&key) != Some(&description) {
                    info!(kind = %K::kind(&()), object = %key.trim_start_matches('/'), "{description}");
                    seen.insert(key, description);
                }
            }
            Ok(None) => return,
            Err(error) => {
                tracing::warn!(%error, "progress watch interrupted; retrying");
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    }
}

fn conditions_summary(conditions: &[landscaper_api::core::Condition]) -> String {
    conditions
        .iter()
        .map(|c| format!("{}={} ({})", c.type_, c.status, c.reason))
        .collect::<Vec<_>>()
        .join(", ")
}

fn describe_environment(environment: &Environment) -> String {
    let finalizers = environment.finalizers().len();
    let status = environment
        .status
        .as_ref()
        .map(|s| conditions_summary(&s.conditions))
        .unwrap_or_default();
    let state = if environment.metadata.deletion_timestamp.is_some() {
        "being deleted"
    } else {
        "registered"
    };
    format!("Environment {state}; {finalizers} finalizers; {status}")
}

fn describe_target(target: &Target) -> String {
    let secret = target
        .spec
        .secret_ref
        .as_ref()
        .map(|r| format!(", secretRef {}", r.name))
        .unwrap_or_default();
    format!("Target of type {}{secret}", target.spec.type_)
}

fn describe_deploy_item(item: &DeployItem) -> String {
    let status = item.status.clone().unwrap_or_default();
    let phase = status
        .phase
        .as_ref()
        .map_or("no phase yet".to_owned(), |p| format!("phase {p}"));
    let error = status
        .last_error
        .map(|e| format!("; last error: {}", e.message))
        .unwrap_or_default();
    format!("DeployItem of type {}: {phase}{error}", item.spec.type_)
}
