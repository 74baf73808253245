//! `atomic` (Helm 4's `--rollback-on-failure`): a failed operation is undone as Helm undoes
//! it — a failed install is uninstalled (delete hooks, objects, records), a failed upgrade is
//! rolled back to the revision that was deployed, as a new revision `Rollback to N` with the
//! rollback hooks. The item still ends Failed, saying what was undone.

use super::chart_hooks::{Event, Runner};
use super::options::{self, Operation};
use super::release::{Release, Status};
use super::revision::now;
use super::storage::Storage;
use super::{Run, provider_status, render, uninstall};
use landscaper_api::deployer::{HelmProviderStatus, ManagedResourceStatus};
use landscaper_deployer::deployer::Failure;
use landscaper_deployer::error::Error;
use serde_json::Value;

impl Run<'_> {
    /// What the failed job left managed: its provider status, else the item's last one.
    fn managed_after(&self, failed: &Failure) -> Vec<ManagedResourceStatus> {
        let status: HelmProviderStatus = match &failed.provider_status {
            Some(v) => serde_json::from_value(v.clone()).unwrap_or_default(),
            None => self.job.previous_provider_status(),
        };
        status.managed_resources
    }

    /// Uninstalls what a failed install wrote.
    pub(super) async fn uninstall_failed(&self, failed: Failure) -> Failure {
        let managed = self.managed_after(&failed);
        let item = self.job.item_name();
        let undone = uninstall::run(
            &self.cluster,
            Some(&self.config),
            &managed,
            &self.job.interrupt,
            &item,
        )
        .await;
        match undone {
            Ok(()) => Failure {
                error: Error {
                    message: format!(
                        "release {} failed, and has been uninstalled due to atomic being set: {}",
                        self.config.name, failed.error.message
                    ),
                    ..failed.error
                },
                provider_status: Some(provider_status(Vec::new())),
            },
            Err(e) => Failure {
                error: Error {
                    message: format!(
                        "{}; uninstalling the release (atomic) failed too: {}",
                        failed.error.message, e.message
                    ),
                    ..failed.error
                },
                provider_status: failed.provider_status,
            },
        }
    }

    /// Rolls a failed upgrade back to `deployed` as revision `version`; the CRDs of the failed
    /// render stay (Helm never deletes CRDs).
    pub(super) async fn roll_back(
        &self,
        failed: Failure,
        deployed: &Release,
        crds: &[Value],
        version: i64,
        storage: &Storage,
    ) -> Failure {
        match self
            .try_roll_back(&failed, deployed, crds, version, storage)
            .await
        {
            Ok(status) => Failure {
                error: Error {
                    message: format!(
                        "release {} failed, and has been rolled back due to atomic being set: {}",
                        self.config.name, failed.error.message
                    ),
                    ..failed.error
                },
                provider_status: status,
            },
            Err(e) => Failure {
                error: Error {
                    message: format!(
                        "{}; rolling back to revision {} (atomic) failed too: {}",
                        failed.error.message, deployed.version, e.error.message
                    ),
                    ..failed.error
                },
                provider_status: e.provider_status.or(failed.provider_status),
            },
        }
    }

    async fn try_roll_back(
        &self,
        failed: &Failure,
        deployed: &Release,
        crds: &[Value],
        version: i64,
        storage: &Storage,
    ) -> Result<Option<Value>, Failure> {
        let item = self.job.item_name();
        let chart = format!("{} revision {}", self.config.name, deployed.version);
        let rendered = render::Rendered {
            manifest: deployed.manifest.clone(),
            objects: render::parse_documents(&deployed.manifest, &chart, &item)?,
            crds: crds.to_vec(),
            ..Default::default()
        };
        let mut target = deployed.clone();
        target.version = version;
        target.info.last_deployed = now();
        target.info.deleted = String::new();
        target.info.description = format!("Rollback to {}", deployed.version);
        target.info.status = Status::PendingRollback;
        storage.create(&target).await?;
        let runner = Runner {
            cluster: &self.cluster,
            namespace: &self.config.namespace,
            timeout: options::timeout(&self.config, Operation::Upgrade, &item)?,
            interrupt: &self.job.interrupt,
            item: &item,
        };
        let previous = self.managed_after(failed);
        let result = async {
            runner.run(&mut target.hooks, Event::PreRollback).await?;
            let outcome = self.apply_over(&rendered, &previous).await?;
            runner
                .run(&mut target.hooks, Event::PostRollback)
                .await
                .map_err(|error| Failure {
                    error,
                    provider_status: outcome.provider_status.clone(),
                })?;
            Ok::<_, Failure>(outcome)
        }
        .await;
        match result {
            Ok(outcome) => {
                target.info.status = Status::Deployed;
                storage.update(&target).await?;
                let mut superseded = deployed.clone();
                superseded.info.status = Status::Superseded;
                storage.update(&superseded).await?;
                storage.prune(&self.config.name).await?;
                Ok(outcome.provider_status)
            }
            Err(f) => {
                target.info.status = Status::Failed;
                target.info.description = f.error.message.clone();
                storage.update(&target).await?;
                Err(f)
            }
        }
    }
}
