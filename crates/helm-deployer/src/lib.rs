//! The helm deployer (`landscaper.gardener.cloud/helm`,
//! `helm.deployer.landscaper.gardener.cloud/v1alpha1`): resolves the chart, renders it with
//! `crates/chart` for the target cluster's version, applies the result with the library's
//! applier (CRDs first), waits for readiness, exports values and, with `helmDeployment: true`
//! (the default), records each revision as Helm does so the helm CLI sees and can take over
//! the release — and we take over releases helm installed. The chart's hooks run around
//! install, upgrade and delete as Helm runs them ([`chart_hooks`]), and templates see the
//! target's `.Capabilities` and `lookup` ([`render_target`]).

mod atomic;
pub mod chart_hooks;
pub mod config;
pub mod credentials;
mod metrics;
pub mod options;
pub mod release;
pub mod render;
pub mod render_target;
pub mod source;
pub mod storage;
pub mod takeover;
pub mod uninstall;

use chart_hooks::Event;
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::jiff::Timestamp;
use kube::Api;
use kube::api::PostParams;
use landscaper_api::constants::{HELM_API_VERSION, deploy_item_types};
use landscaper_api::deployer::{
    HelmProviderConfiguration, HelmProviderStatus, ManagedResourceStatus, Manifest, UpdateStrategy,
};
use landscaper_chart::formats::tree::Map;
use landscaper_chart::helm::chart::Chart;
use landscaper_chart::helm::render::ReleaseOptions;
use landscaper_deployer::applier::ApplySpec;
use landscaper_deployer::controller::{DeployerConfig, Setup};
use landscaper_deployer::deployer::{Deployer, Failure, Job, Outcome};
use landscaper_deployer::error::Error;
use landscaper_deployer::rollout::{self, Rollout};
use landscaper_deployer::target_access::TargetCluster;
use options::Operation;
use release::{Hook, Info, Release, Status};
use render_target::RenderTarget;
use serde_json::Value;
use source::Sources;
use std::sync::Arc;
use storage::Storage;
use tracing::Instrument;

/// The label tying deployed objects to their DeployItem (value: the item's name).
pub const DEPLOY_ITEM_LABEL: &str = "helm.deployer.landscaper.gardener.cloud/deployitem";
/// The field manager of the helm deployer's writes.
pub const FIELD_MANAGER: &str = "landscaper-helm-deployer";
/// The field manager of writes to releases recorded for helm: Helm's own, so a later
/// `helm upgrade` (server-side apply without forcing) owns the same fields and meets no
/// conflicts, and our upgrade of a release helm wrote drops the fields its chart dropped.
const HELM_FIELD_MANAGER: &str = "helm";
/// Helm's ownership label and annotations, which `helm upgrade` requires on existing objects.
const MANAGED_BY_LABEL: &str = "app.kubernetes.io/managed-by";
const RELEASE_NAME_ANNOTATION: &str = "meta.helm.sh/release-name";
const RELEASE_NAMESPACE_ANNOTATION: &str = "meta.helm.sh/release-namespace";

/// The helm deployer.
#[derive(Debug, Clone, Default)]
pub struct HelmDeployer {
    /// Resolves and caches chart sources for every worker.
    pub sources: Arc<Sources>,
}

/// A helm deployer ready to [`landscaper_deployer::controller::run`], with continuous reconcile, fetching
/// charts with the default [`source::SourceSettings`].
pub fn setup(
    ls_client: kube::Client,
    secrets_client: kube::Client,
    config: DeployerConfig,
) -> Setup<HelmDeployer> {
    setup_with(ls_client, secrets_client, config, HelmDeployer::default())
}

/// Like [`setup`], for a deployer with its own chart sources (several deployers may share
/// one `HelmDeployer`, and with it the cache of loaded charts).
pub fn setup_with(
    ls_client: kube::Client,
    secrets_client: kube::Client,
    config: DeployerConfig,
    deployer: HelmDeployer,
) -> Setup<HelmDeployer> {
    Setup::serving(
        deploy_item_types::HELM,
        deployer,
        ls_client,
        secrets_client,
        config,
    )
}

/// The helm deployer's provider status of `managed`.
fn provider_status(managed: Vec<ManagedResourceStatus>) -> Value {
    rollout::provider_status(HELM_API_VERSION, managed)
}

fn now() -> String {
    Timestamp::now().to_string()
}

async fn ensure_namespace(cluster: &TargetCluster, name: &str) -> Result<(), Error> {
    let api: Api<Namespace> = Api::all(cluster.client.clone());
    let ns = Namespace {
        metadata: kube::api::ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        ..Default::default()
    };
    match api.create(&PostParams::default(), &ns).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 409 => Ok(()),
        Err(e) => Err(Error::from_kube(
            "CreateNamespace",
            &format!("namespace {name}"),
            &e,
        )),
    }
}

/// Adds Helm's ownership metadata, so real helm accepts the objects as part of the release.
/// Charts often render an empty `annotations:` (null); that counts as no annotations.
fn with_helm_ownership(mut obj: Value, release: &str, namespace: &str) -> Value {
    let Some(root) = obj.as_object_mut() else {
        return obj;
    };
    edit_object(root, "metadata", |meta| {
        edit_object(meta, "labels", |labels| {
            labels.insert(MANAGED_BY_LABEL.into(), "Helm".into());
        });
        edit_object(meta, "annotations", |annotations| {
            annotations.insert(RELEASE_NAME_ANNOTATION.into(), release.into());
            annotations.insert(RELEASE_NAMESPACE_ANNOTATION.into(), namespace.into());
        });
    });
    obj
}

/// Helm 4's name for how objects were written, which `helm upgrade` repeats: server-side
/// apply for the `update` strategy, client-side writes otherwise.
fn apply_method(strategy: UpdateStrategy) -> &'static str {
    match strategy {
        UpdateStrategy::Update => "ssa",
        UpdateStrategy::Patch | UpdateStrategy::Merge | UpdateStrategy::MergeOverwrite => "csa",
    }
}

/// Edits the object under `key`, which is made one when missing or not an object (e.g. null).
fn edit_object(
    map: &mut serde_json::Map<String, Value>,
    key: &str,
    edit: impl FnOnce(&mut serde_json::Map<String, Value>),
) {
    match map.get_mut(key) {
        Some(Value::Object(inner)) => edit(inner),
        _ => {
            let mut inner = serde_json::Map::new();
            edit(&mut inner);
            map.insert(key.into(), Value::Object(inner));
        }
    }
}

/// Marks revisions left pending by an interrupted operation as failed, so they never block
/// the next one (Helm would answer "another operation is in progress").
async fn recover_pending(storage: &Storage, history: &mut [Release]) -> Result<(), Error> {
    for r in history.iter_mut().filter(|r| r.info.status.is_pending()) {
        tracing::info!(release = %r.name, revision = r.version, status = r.info.status.as_str(), "recovering helm release left pending");
        r.info.description = format!(
            "Interrupted while {}; recovered by the next operation",
            r.info.status.as_str()
        );
        r.info.status = Status::Failed;
        storage.update(r).await?;
    }
    Ok(())
}

/// What every render of one reconcile shares.
struct Input<'a> {
    chart: &'a Arc<Chart>,
    values: &'a Map,
    target: &'a RenderTarget,
}

/// One reconcile: everything that happens between reading the item and answering.
struct Run<'a> {
    job: &'a Job,
    sources: &'a Sources,
    config: HelmProviderConfiguration,
    cluster: TargetCluster,
}

impl Run<'_> {
    fn records(&self) -> bool {
        self.config.helm_deployment.unwrap_or(true)
    }

    async fn reconcile(&self) -> Result<Outcome, Failure> {
        let item = self.job.item_name();
        let config = &self.config;
        let chart = self.sources.resolve(self.job, &config.chart).await?;
        let values = render::values(config.values.as_ref(), &item)?;
        if config.create_namespace.unwrap_or(false) {
            ensure_namespace(&self.cluster, &config.namespace).await?;
        }
        let storage = Storage::new(self.cluster.client.clone(), &config.namespace);
        let mut history = if self.records() {
            storage.history(&config.name).await?
        } else {
            Vec::new()
        };
        recover_pending(&storage, &mut history).await?;
        let deployed = history
            .iter()
            .rev()
            .find(|r| r.info.status == Status::Deployed)
            .cloned();
        let revision = history.last().map_or(1, |r| r.version + 1);
        let (operation, pre, post) = match deployed {
            Some(_) => (Operation::Upgrade, Event::PreUpgrade, Event::PostUpgrade),
            None => (Operation::Install, Event::PreInstall, Event::PostInstall),
        };
        let hook_timeout = options::timeout(config, operation, &item)?;
        let target = RenderTarget::of(&self.cluster, &self.job.interrupt).await?;
        let input = Input {
            chart: &chart,
            values: &values,
            target: &target,
        };
        let config_record = match render::data_record(&values) {
            Value::Object(m) => m,
            _ => Default::default(),
        };
        let chart_record = render::chart_record(&chart);
        // An unchanged release (same chart and values, rendered as its own revision) is
        // re-applied to repair drift without a new revision, so continuous reconcile does not
        // churn through the history.
        let same_input = deployed
            .as_ref()
            .filter(|d| d.config == config_record && d.chart == chart_record);
        let unchanged = match same_input {
            Some(d) => {
                let again = self.render(&input, d.version, d.version > 1).await?;
                (again.manifest == d.manifest).then_some(again)
            }
            None => None,
        };
        let unchanged_flag = unchanged.is_some();
        let rendered = match unchanged {
            Some(r) => r,
            None => self.render(&input, revision, deployed.is_some()).await?,
        };
        // Hooks belong to Helm's operations: they run for a new revision of a recorded
        // release, never for a re-apply of the same one or without release records.
        let mut hooks = if self.records() && !unchanged_flag {
            chart_hooks::records(&rendered.hooks, &item)?
        } else {
            Vec::new()
        };
        let deployed_at = now();
        let mut record = (self.records() && !unchanged_flag).then(|| Release {
            name: config.name.clone(),
            info: Info {
                first_deployed: deployed
                    .as_ref()
                    .map(|r| r.info.first_deployed.clone())
                    .filter(|t| !t.is_empty())
                    .unwrap_or_else(|| deployed_at.clone()),
                last_deployed: deployed_at,
                description: if deployed.is_some() {
                    "Preparing upgrade"
                } else {
                    "Initial install underway"
                }
                .into(),
                status: if deployed.is_some() {
                    Status::PendingUpgrade
                } else {
                    Status::PendingInstall
                },
                notes: rendered.notes.clone(),
                ..Default::default()
            },
            chart: chart_record,
            config: config_record,
            manifest: rendered.manifest.clone(),
            hooks: hooks.clone(),
            version: revision,
            namespace: config.namespace.clone(),
            apply_method: apply_method(config.update_strategy.unwrap_or_default()).into(),
            ..Default::default()
        });
        if let Some(r) = &record {
            storage.create(r).await?;
        }
        let Some(r) = record.as_mut() else {
            return self.apply(&rendered, deployed.as_ref()).await;
        };
        let result = self
            .deploy(
                &rendered,
                deployed.as_ref(),
                &mut hooks,
                (pre, post),
                hook_timeout,
            )
            .await;
        r.hooks = hooks;
        match &result {
            Ok(_) => {
                r.info.status = Status::Deployed;
                r.info.description = if deployed.is_some() {
                    "Upgrade complete"
                } else {
                    "Install complete"
                }
                .into();
                storage.update(r).await?;
                if let Some(mut d) = deployed {
                    d.info.status = Status::Superseded;
                    storage.update(&d).await?;
                }
                storage.prune(&config.name).await?;
            }
            Err(f) => {
                r.info.status = Status::Failed;
                r.info.description = f.error.message.clone();
                storage.update(r).await?;
                if options::atomic(config, operation, &item)? {
                    let failed = f.clone();
                    return Err(match &deployed {
                        Some(d) => {
                            self.roll_back(failed, d, &rendered.crds, revision + 1, &storage)
                                .await
                        }
                        None => self.uninstall_failed(failed).await,
                    });
                }
            }
        }
        result
    }

    async fn render(
        &self,
        input: &Input<'_>,
        revision: i64,
        is_upgrade: bool,
    ) -> Result<render::Rendered, Error> {
        let started = std::time::Instant::now();
        let rendered = render::render(&render::Request {
            chart: input.chart,
            values: input.values,
            release: ReleaseOptions {
                name: self.config.name.clone(),
                namespace: self.config.namespace.clone(),
                revision,
                is_upgrade,
            },
            target: input.target,
            item: &self.job.item_name(),
        })
        .await;
        crate::metrics::helm_rendered(started.elapsed(), rendered.is_err());
        rendered
    }

    /// A new revision: the pre hooks, the objects, the post hooks.
    async fn deploy(
        &self,
        rendered: &render::Rendered,
        deployed: Option<&Release>,
        hooks: &mut [Hook],
        (pre, post): (Event, Event),
        timeout: std::time::Duration,
    ) -> Result<Outcome, Failure> {
        let item = self.job.item_name();
        let runner = chart_hooks::Runner {
            cluster: &self.cluster,
            namespace: &self.config.namespace,
            timeout,
            interrupt: &self.job.interrupt,
            item: &item,
        };
        runner.run(hooks, pre).await?;
        let outcome = self.apply(rendered, deployed).await?;
        runner.run(hooks, post).await.map_err(|error| Failure {
            error,
            provider_status: outcome.provider_status.clone(),
        })?;
        Ok(outcome)
    }

    /// Applies the revision; what `deployed` (maybe written by helm) holds and this revision
    /// no longer renders is pruned.
    async fn apply(
        &self,
        rendered: &render::Rendered,
        deployed: Option<&Release>,
    ) -> Result<Outcome, Failure> {
        let previous: HelmProviderStatus = self.job.previous_provider_status();
        let previous = match deployed {
            Some(d) => {
                takeover::with_release_objects(&self.cluster, d, &previous.managed_resources)
                    .await?
            }
            None => previous.managed_resources,
        };
        self.apply_over(rendered, &previous).await
    }

    /// Applies `rendered` where `previous` objects are managed now, pruning those no longer
    /// wanted.
    async fn apply_over(
        &self,
        rendered: &render::Rendered,
        previous: &[ManagedResourceStatus],
    ) -> Result<Outcome, Failure> {
        let config = &self.config;
        let manifests: Vec<Manifest> = rendered
            .crds
            .iter()
            .chain(&rendered.objects)
            .map(|o| {
                let o = if self.records() {
                    with_helm_ownership(o.clone(), &config.name, &config.namespace)
                } else {
                    o.clone()
                };
                Manifest {
                    policy: Some(takeover::policy(&o)),
                    manifest: Some(o),
                    ..Default::default()
                }
            })
            .collect();
        let manager = if self.records() {
            HELM_FIELD_MANAGER
        } else {
            FIELD_MANAGER
        };
        Rollout {
            cluster: &self.cluster,
            field_manager: manager,
            spec: ApplySpec {
                manifests: &manifests,
                previous,
                default_namespace: Some(&config.namespace),
                owner_label: (
                    DEPLOY_ITEM_LABEL.to_string(),
                    self.job.item.metadata.name.clone().unwrap_or_default(),
                ),
                update_strategy: config.update_strategy.unwrap_or_default(),
                deletion_groups_during_update: &config.deletion_groups_during_update,
            },
            readiness_checks: config.readiness_checks.as_ref(),
            exports: config.exports.as_ref(),
            status_api_version: HELM_API_VERSION,
        }
        .run(&self.job.interrupt)
        .await
    }
}

impl Deployer for HelmDeployer {
    async fn reconcile(&self, job: &Job) -> Result<Outcome, Failure> {
        let config = config::read(job)?;
        let cluster = job.target_cluster().await?;
        let span = tracing::info_span!("helm_release", release = %config.name, namespace = %config.namespace);
        Run {
            job,
            sources: &self.sources,
            config,
            cluster,
        }
        .reconcile()
        .instrument(span)
        .await
    }

    async fn delete(&self, job: &Job) -> Result<(), Failure> {
        let previous: HelmProviderStatus = job.previous_provider_status();
        // A broken configuration must not keep what was deployed alive: the objects are
        // known from the provider status, only the records need the release's name.
        let config = config::read(job).ok();
        let cluster = job.target_cluster().await?;
        // Objects of the deployed revision go too, as `helm uninstall` removes them, even
        // when helm wrote that revision and the item never listed them.
        let deployed = match config
            .as_ref()
            .filter(|c| c.helm_deployment.unwrap_or(true))
        {
            Some(c) => Storage::new(cluster.client.clone(), &c.namespace)
                .history(&c.name)
                .await?
                .into_iter()
                .rev()
                .find(|r| r.info.status == Status::Deployed),
            None => None,
        };
        let managed = match &deployed {
            Some(d) => {
                takeover::with_release_objects(&cluster, d, &previous.managed_resources).await?
            }
            None => previous.managed_resources,
        };
        uninstall::run(
            &cluster,
            config.as_ref(),
            &managed,
            &job.interrupt,
            &job.item_name(),
        )
        .await?;
        Ok(())
    }

    async fn abort(&self, _job: &Job) -> Result<(), Error> {
        // The applier stops between objects and every written object is recorded in the
        // provider status; a revision left pending is recovered by the next operation.
        Ok(())
    }

    /// Drops `chart.archive.raw`: an inline archive (often over 100 KiB of base64) is read by
    /// jobs only, and would otherwise stay in memory for every item.
    fn slim_config(config: &mut Value) {
        if let Some(archive) = config
            .pointer_mut("/chart/archive")
            .and_then(Value::as_object_mut)
        {
            archive.remove("raw");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_cache_keeps_an_item_without_its_inline_archive() {
        let mut config = json!({
            "name": "web",
            "namespace": "apps",
            "chart": { "archive": { "raw": "H4sIAAAA" } },
            "values": { "replicas": 2 },
            "continuousReconcile": { "every": "1h" },
        });
        let mut expected = config.clone();
        expected["chart"]["archive"] = json!({});
        HelmDeployer::slim_config(&mut config);
        assert_eq!(config, expected);

        let mut remote =
            json!({ "chart": { "archive": { "remote": { "url": "https://c/x.tgz" } } } });
        let unchanged = remote.clone();
        HelmDeployer::slim_config(&mut remote);
        assert_eq!(remote, unchanged);
    }

    #[test]
    fn ownership_is_added_to_empty_rendered_annotations() {
        let rendered = json!({
            "kind": "Service",
            "metadata": { "name": "web", "labels": { "app": "web" }, "annotations": null },
        });
        let owned = with_helm_ownership(rendered, "rel", "ns1");
        assert_eq!(
            owned["metadata"],
            json!({
                "name": "web",
                "labels": { "app": "web", "app.kubernetes.io/managed-by": "Helm" },
                "annotations": {
                    "meta.helm.sh/release-name": "rel",
                    "meta.helm.sh/release-namespace": "ns1",
                },
            })
        );
    }
}
