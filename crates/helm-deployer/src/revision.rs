//! The release records of one operation, as Helm keeps them: the history read (revisions an
//! interrupted operation left pending are recovered as failed), the new revision recorded as
//! pending, then deployed (superseding the revision deployed before, the history pruned) or
//! failed.

use crate::chart_hooks::Event;
use crate::options::Operation;
use crate::release::{Hook, Info, Release, Status};
use crate::render::Rendered;
use crate::storage::Storage;
use k8s_openapi::jiff::Timestamp;
use landscaper_api::deployer::{HelmProviderConfiguration, UpdateStrategy};
use landscaper_deployer::error::Error;
use serde_json::{Map, Value};

/// What a revision records of its input: the chart's metadata and the values.
pub(crate) struct Input {
    /// The chart's record (`render::chart_record`).
    pub(crate) chart: Value,
    /// The values' record (`render::data_record`).
    pub(crate) config: Map<String, Value>,
}

impl Input {
    /// Whether `release` was rendered from this input.
    pub(crate) fn made(&self, release: &Release) -> bool {
        release.config == self.config && release.chart == self.chart
    }
}

/// A release's history in the target cluster.
pub(crate) struct History {
    /// Where the records are.
    pub(crate) storage: Storage,
    /// The revision deployed now, if any.
    pub(crate) deployed: Option<Release>,
    /// The number of the next revision.
    pub(crate) next_revision: i64,
}

impl History {
    /// Reads the history of release `name` (none when `records` is off), recovering the
    /// revisions left pending.
    pub(crate) async fn read(storage: Storage, name: &str, records: bool) -> Result<Self, Error> {
        let mut history = if records {
            storage.history(name).await?
        } else {
            Vec::new()
        };
        recover_pending(&storage, &mut history).await?;
        let deployed = history
            .iter()
            .rev()
            .find(|r| r.info.status == Status::Deployed)
            .cloned();
        let next_revision = history.last().map_or(1, |r| r.version + 1);
        Ok(Self {
            storage,
            deployed,
            next_revision,
        })
    }

    /// The operation the next revision is, with the hook events around it.
    pub(crate) fn operation(&self) -> (Operation, Event, Event) {
        match self.deployed {
            Some(_) => (Operation::Upgrade, Event::PreUpgrade, Event::PostUpgrade),
            None => (Operation::Install, Event::PreInstall, Event::PostInstall),
        }
    }

    /// Records the next revision as pending; returns its record.
    pub(crate) async fn begin(
        &self,
        config: &HelmProviderConfiguration,
        input: Input,
        rendered: &Rendered,
        hooks: Vec<Hook>,
    ) -> Result<Release, Error> {
        let upgrade = self.deployed.is_some();
        let deployed_at = now();
        let record = Release {
            name: config.name.clone(),
            info: Info {
                first_deployed: self
                    .deployed
                    .as_ref()
                    .map(|r| r.info.first_deployed.clone())
                    .filter(|t| !t.is_empty())
                    .unwrap_or_else(|| deployed_at.clone()),
                last_deployed: deployed_at,
                description: if upgrade {
                    "Preparing upgrade"
                } else {
                    "Initial install underway"
                }
                .into(),
                status: if upgrade {
                    Status::PendingUpgrade
                } else {
                    Status::PendingInstall
                },
                notes: rendered.notes.clone(),
                ..Default::default()
            },
            chart: input.chart,
            config: input.config,
            manifest: rendered.manifest.clone(),
            hooks,
            version: self.next_revision,
            namespace: config.namespace.clone(),
            apply_method: apply_method(config.update_strategy.unwrap_or_default()).into(),
            ..Default::default()
        };
        self.storage.create(&record).await?;
        Ok(record)
    }

    /// Records `record` deployed, the revision deployed before superseded, and prunes the
    /// history.
    pub(crate) async fn deployed(&self, record: &mut Release) -> Result<(), Error> {
        record.info.status = Status::Deployed;
        record.info.description = if self.deployed.is_some() {
            "Upgrade complete"
        } else {
            "Install complete"
        }
        .into();
        self.storage.update(record).await?;
        if let Some(mut d) = self.deployed.clone() {
            d.info.status = Status::Superseded;
            self.storage.update(&d).await?;
        }
        self.storage.prune(&record.name).await
    }

    /// Records `record` failed with `message`.
    pub(crate) async fn failed(&self, record: &mut Release, message: &str) -> Result<(), Error> {
        record.info.status = Status::Failed;
        record.info.description = message.to_owned();
        self.storage.update(record).await
    }
}

/// Now, as release records write times.
pub(crate) fn now() -> String {
    Timestamp::now().to_string()
}

/// Helm 4's name for how objects were written, which `helm upgrade` repeats: server-side
/// apply for the `update` strategy, client-side writes otherwise.
fn apply_method(strategy: UpdateStrategy) -> &'static str {
    match strategy {
        UpdateStrategy::Update => "ssa",
        UpdateStrategy::Patch | UpdateStrategy::Merge | UpdateStrategy::MergeOverwrite => "csa",
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
