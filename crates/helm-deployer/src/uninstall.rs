//! Helm's uninstall of a recorded release around the deletion of its objects: the latest
//! revision is marked `uninstalling`, its delete hooks run as recorded (the chart is not
//! rendered again, so a broken or unreachable chart cannot block a deletion), and the
//! records go last.

use super::chart_hooks::{Event, Runner};
use super::options::{self, Operation};
use super::ownership::FIELD_MANAGER;
use super::release::{Release, Status};
use super::storage::Storage;
use k8s_openapi::jiff::Timestamp;
use landscaper_api::deployer::{HelmProviderConfiguration, ManagedResourceStatus};
use landscaper_deployer::applier::Applier;
use landscaper_deployer::contract::interrupt::Interrupt;
use landscaper_deployer::error::Error;
use landscaper_deployer::target_access::TargetCluster;
use std::time::Duration;

/// Deletes `managed` objects; with release records (`config` given), Helm's uninstall
/// around it: delete hooks and the records.
pub async fn run(
    cluster: &TargetCluster,
    config: Option<&HelmProviderConfiguration>,
    managed: &[ManagedResourceStatus],
    interrupt: &Interrupt,
    item: &str,
) -> Result<(), Error> {
    let recorded = config.filter(|c| c.helm_deployment.unwrap_or(true));
    let mut uninstall = match recorded {
        Some(c) => Some(Uninstall::begin(cluster, c, item).await?),
        None => None,
    };
    if let Some(u) = uninstall.as_mut() {
        u.hooks(cluster, interrupt, Event::PreDelete).await?;
    }
    if !managed.is_empty() {
        let groups = config
            .map(|c| c.deletion_groups.clone())
            .unwrap_or_default();
        Applier::new(cluster.clone(), FIELD_MANAGER)
            .delete(managed, &groups, interrupt)
            .await?;
    }
    if let Some(mut u) = uninstall {
        u.hooks(cluster, interrupt, Event::PostDelete).await?;
        u.finish().await?;
    }
    Ok(())
}

/// An uninstall under way.
pub struct Uninstall {
    storage: Storage,
    name: String,
    namespace: String,
    /// The latest revision, unless there is none or it was uninstalled already.
    latest: Option<Release>,
    timeout: Duration,
    item: String,
}

impl Uninstall {
    /// Reads the release and marks its latest revision `uninstalling`.
    pub async fn begin(
        cluster: &TargetCluster,
        config: &HelmProviderConfiguration,
        item: &str,
    ) -> Result<Uninstall, Error> {
        let timeout = options::timeout(config, Operation::Uninstall, item)?;
        let storage = Storage::new(cluster.client.clone(), &config.namespace);
        let mut latest = storage
            .history(&config.name)
            .await?
            .pop()
            .filter(|r| r.info.status != Status::Uninstalled);
        if let Some(r) = latest.as_mut() {
            r.info.status = Status::Uninstalling;
            r.info.deleted = Timestamp::now().to_string();
            r.info.description = "Deletion in progress (or silently failed)".into();
            storage.update(r).await?;
        }
        Ok(Uninstall {
            storage,
            name: config.name.clone(),
            namespace: config.namespace.clone(),
            latest,
            timeout,
            item: item.to_string(),
        })
    }

    /// Runs the recorded hooks of `event` and records their runs; a failure is also written
    /// to the revision's description, as Helm does.
    pub async fn hooks(
        &mut self,
        cluster: &TargetCluster,
        interrupt: &Interrupt,
        event: Event,
    ) -> Result<(), Error> {
        let Some(r) = self.latest.as_mut() else {
            return Ok(());
        };
        if !r
            .hooks
            .iter()
            .any(|h| h.events.iter().any(|e| e == event.as_str()))
        {
            return Ok(());
        }
        let runner = Runner {
            cluster,
            namespace: &self.namespace,
            timeout: self.timeout,
            interrupt,
            item: &self.item,
        };
        let result = runner.run(&mut r.hooks, event).await;
        if let Err(e) = &result {
            r.info.description = e.message.clone();
        }
        self.storage.update(r).await?;
        result
    }

    /// Deletes every revision's record.
    pub async fn finish(self) -> Result<(), Error> {
        for r in self.storage.history(&self.name).await? {
            self.storage.delete(&self.name, r.version).await?;
        }
        Ok(())
    }
}
