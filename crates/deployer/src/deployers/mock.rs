//! The mock deployer (`landscaper.gardener.cloud/mock`): reports the phase, provider status
//! and exports its configuration asks for, so the landscaper can be tested without a cluster.

use crate::contract::status::StatusWriter;
use crate::controller::{DeployerConfig, Setup};
use crate::deployer::{Deployer, Failure, Job, Outcome};
use crate::error::Error;
use landscaper_api::constants::deploy_item_types;
use landscaper_api::core::DeployItemPhase;
use landscaper_api::deployer::MockProviderConfiguration;

/// The mock deployer.
#[derive(Debug, Clone, Default)]
pub struct MockDeployer;

/// A mock deployer ready to [`crate::controller::run`], with continuous reconcile.
pub fn setup(
    ls_client: kube::Client,
    secrets_client: kube::Client,
    config: DeployerConfig,
) -> Setup<MockDeployer> {
    Setup::serving(
        deploy_item_types::MOCK,
        MockDeployer,
        ls_client,
        secrets_client,
        config,
    )
}

impl Deployer for MockDeployer {
    async fn reconcile(&self, job: &Job) -> Result<Outcome, Failure> {
        let config: MockProviderConfiguration = job.config()?;
        if let Some(initial) = config.initial_phase.clone() {
            StatusWriter::new(job.ls_client.clone(), &job.item)
                .phase(initial)
                .await?;
        }
        if config.phase == Some(DeployItemPhase::Failed) {
            return Err(Failure {
                error: Error::config(
                    "Reconcile",
                    "MockFailed",
                    format!(
                        "DeployItem {}: spec.config.phase asks the mock to fail",
                        job.item_name()
                    ),
                ),
                provider_status: config.provider_status,
            });
        }
        Ok(Outcome {
            provider_status: config.provider_status,
            exports: config.export,
        })
    }

    async fn delete(&self, _job: &Job) -> Result<(), Failure> {
        Ok(())
    }

    async fn abort(&self, _job: &Job) -> Result<(), Error> {
        Ok(())
    }
}
