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
mod ownership;
pub mod release;
pub mod render;
pub mod render_target;
mod revision;
pub mod source;
pub mod storage;
pub mod takeover;
pub mod uninstall;

use chart_hooks::Event;
use k8s_openapi::api::core::v1::Namespace;
use kube::Api;
use kube::api::PostParams;
use landscaper_api::constants::{HELM_API_VERSION, deploy_item_types};
use landscaper_api::deployer::{
    HelmProviderConfiguration, HelmProviderStatus, ManagedResourceStatus, Manifest,
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
use ownership::{HELM_FIELD_MANAGER, with_helm_ownership};
use release::{Hook, Release, Status};
use render_target::RenderTarget;
use revision::History;
use serde_json::Value;
use source::Sources;
use std::sync::Arc;
use storage::Storage;
use tracing::Instrument;

pub use ownership::{DEPLOY_ITEM_LABEL, FIELD_MANAGER};

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
        let history = History::read(storage, &config.name, self.records()).await?;
        let (operation, _, _) = history.operation();
        let hook_timeout = options::timeout(config, operation, &item)?;
        let target = RenderTarget::of(&self.cluster, &self.job.interrupt).await?;
        let input = Input {
            chart: &chart,
            values: &values,
            target: &target,
        };
        let recorded = revision::Input {
            chart: render::chart_record(&chart),
            config: match render::data_record(&values) {
                Value::Object(m) => m,
                _ => Default::default(),
            },
        };
        let deployed = history.deployed.as_ref();
        // An unchanged release (same chart and values, rendered as its own revision) is
        // re-applied to repair drift without a new revision, so continuous reconcile does not
        // churn through the history; hooks belong to Helm's operations and do not run.
        if let Some(d) = deployed.filter(|d| recorded.made(d)) {
            let again = self.render(&input, d.version, d.version > 1).await?;
            if again.manifest == d.manifest {
                return self.apply(&again, deployed).await;
            }
        }
        let rendered = self
            .render(&input, history.next_revision, deployed.is_some())
            .await?;
        if !self.records() {
            return self.apply(&rendered, deployed).await;
        }
        self.new_revision(&history, &rendered, recorded, hook_timeout)
            .await
    }

    /// A new revision of a recorded release: its record pending, the hooks and objects, then
    /// the record deployed, or failed (and undone when `atomic`).
    async fn new_revision(
        &self,
        history: &History,
        rendered: &render::Rendered,
        recorded: revision::Input,
        hook_timeout: std::time::Duration,
    ) -> Result<Outcome, Failure> {
        let item = self.job.item_name();
        let (operation, pre, post) = history.operation();
        let mut hooks = chart_hooks::records(&rendered.hooks, &item)?;
        let mut record = history
            .begin(&self.config, recorded, rendered, hooks.clone())
            .await?;
        let deployed = history.deployed.as_ref();
        let result = self
            .deploy(rendered, deployed, &mut hooks, (pre, post), hook_timeout)
            .await;
        record.hooks = hooks;
        let failure = match &result {
            Ok(_) => {
                history.deployed(&mut record).await?;
                return result;
            }
            Err(f) => f.clone(),
        };
        history.failed(&mut record, &failure.error.message).await?;
        if !options::atomic(&self.config, operation, &item)? {
            return result;
        }
        Err(match deployed {
            Some(d) => {
                self.roll_back(
                    failure,
                    d,
                    &rendered.crds,
                    history.next_revision + 1,
                    &history.storage,
                )
                .await
            }
            None => self.uninstall_failed(failure).await,
        })
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
}
