//! Clean uninstall: delete the Environment, wait for the landscaper to release it, remove the
//! deployer identity from the host cluster, then drop the agent's own finalizer.

use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use landscaper_api::constants::finalizers;
use landscaper_api::core::Environment;
use serde_json::json;
use tokio::time::Instant;
use tracing::{info, warn};

use crate::names::Names;
use crate::registration::host::HostRegistration;
use crate::registration::{RegistrationError, api_error};

/// How often the Environment is polled while waiting for other finalizers.
const POLL: Duration = Duration::from_secs(1);

/// Why cleanup did not finish.
#[derive(Debug, thiserror::Error)]
pub enum CleanupError {
    /// A request failed.
    #[error(transparent)]
    Registration(#[from] RegistrationError),
    /// Other finalizers stayed on the Environment past the timeout.
    #[error(
        "Environment {name} still has finalizers {finalizers:?} after {timeout:?}: the landscaper has not released it \
         (is it running?); rerun with --force to remove them"
    )]
    TimedOut {
        /// The environment.
        name: String,
        /// The finalizers that remain.
        finalizers: Vec<String>,
        /// How long was waited.
        timeout: Duration,
    },
}

/// What cleanup needs.
pub struct Cleanup<'a> {
    /// Client of the landscaper cluster.
    pub landscaper: &'a kube::Client,
    /// The host cluster side.
    pub host: HostRegistration<'a>,
    /// Namespace of the heartbeat Lease in the landscaper cluster.
    pub landscaper_namespace: &'a str,
    /// Names of the environment's objects.
    pub names: &'a Names,
    /// How long to wait for the landscaper.
    pub timeout: Duration,
    /// Remove every finalizer when the landscaper does not answer within the timeout.
    pub force: bool,
}

impl Cleanup<'_> {
    /// Runs every step, logging progress.
    pub async fn run(&self) -> Result<(), CleanupError> {
        let environments: Api<Environment> = Api::all(self.landscaper.clone());
        let name = &self.names.environment;
        let object = format!("Environment {name}");
        info!(step = 1, object = %object, "deleting the Environment");
        match environments.delete(name, &DeleteParams::default()).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 404 => {
                info!(object = %object, "already gone")
            }
            Err(source) => {
                return Err(RegistrationError::Api {
                    action: "deleting",
                    object,
                    source,
                }
                .into());
            }
        }
        info!(
            step = 2,
            timeout_seconds = self.timeout.as_secs(),
            "waiting for the landscaper to release the Environment"
        );
        let forced = self.wait_for_other_finalizers(&environments).await?;
        info!(
            step = 3,
            "removing the deployer identity from the host cluster"
        );
        self.host.remove().await?;
        self.delete_lease().await?;
        info!(step = 4, "removing the agent's finalizer");
        self.release(&environments, forced).await?;
        info!(environment = %name, "cleanup finished");
        Ok(())
    }

    /// Waits until only the agent's finalizer is left; returns whether the timeout passed and
    /// `--force` allows going on anyway.
    async fn wait_for_other_finalizers(
        &self,
        environments: &Api<Environment>,
    ) -> Result<bool, CleanupError> {
        let name = &self.names.environment;
        let deadline = Instant::now() + self.timeout;
        loop {
            let environment = match environments.get_opt(name).await {
                Ok(environment) => environment,
                Err(source) if worth_repeating(&source) && Instant::now() < deadline => {
                    warn!(environment = %name, error = %source, "reading the Environment failed; retrying");
                    tokio::time::sleep(POLL).await;
                    continue;
                }
                Err(source) => {
                    return Err(api_error("reading", format!("Environment {name}"))(source).into());
                }
            };
            let Some(environment) = environment else {
                return Ok(false);
            };
            let others: Vec<String> = environment
                .finalizers()
                .iter()
                .filter(|f| *f != finalizers::AGENT)
                .cloned()
                .collect();
            if others.is_empty() {
                return Ok(false);
            }
            if Instant::now() >= deadline {
                if self.force {
                    warn!(environment = %name, finalizers = ?others, "the landscaper did not release the Environment in time; --force removes its finalizers");
                    return Ok(true);
                }
                return Err(CleanupError::TimedOut {
                    name: name.clone(),
                    finalizers: others,
                    timeout: self.timeout,
                });
            }
            tokio::time::sleep(POLL.min(deadline.saturating_duration_since(Instant::now()))).await;
        }
    }

    async fn delete_lease(&self) -> Result<(), RegistrationError> {
        let leases: Api<Lease> =
            Api::namespaced(self.landscaper.clone(), self.landscaper_namespace);
        let name = self.names.heartbeat_lease();
        match leases.delete(&name, &DeleteParams::default()).await {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
            Err(source) => Err(RegistrationError::Api {
                action: "deleting",
                object: format!("Lease {}/{name}", self.landscaper_namespace),
                source,
            }),
        }
    }

    /// Drops the agent's finalizer (every finalizer when forced), guarded by resourceVersion.
    async fn release(
        &self,
        environments: &Api<Environment>,
        forced: bool,
    ) -> Result<(), RegistrationError> {
        let name = &self.names.environment;
        let object = format!("Environment {name}");
        loop {
            let Some(environment) = environments
                .get_opt(name)
                .await
                .map_err(api_error("reading", object.clone()))?
            else {
                return Ok(());
            };
            let remaining: Vec<&String> = if forced {
                Vec::new()
            } else {
                environment
                    .finalizers()
                    .iter()
                    .filter(|f| *f != finalizers::AGENT)
                    .collect()
            };
            let patch = json!({ "metadata": { "resourceVersion": environment.resource_version(), "finalizers": remaining } });
            match environments
                .patch(name, &PatchParams::default(), &Patch::Merge(patch))
                .await
            {
                Ok(_) => return Ok(()),
                Err(kube::Error::Api(status)) if status.code == 409 => continue,
                Err(kube::Error::Api(status)) if status.code == 404 => return Ok(()),
                Err(source) => {
                    return Err(RegistrationError::Api {
                        action: "removing the finalizer of",
                        object,
                        source,
                    });
                }
            }
        }
    }
}

/// Whether a failed request may succeed when repeated: the cluster failed (5xx), asked to slow
/// down (429) or was not reached, rather than refusing the request.
fn worth_repeating(error: &kube::Error) -> bool {
    match error {
        kube::Error::Api(status) => status.code >= 500 || status.code == 429,
        _ => true,
    }
}
