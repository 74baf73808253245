//! The heartbeat: a Lease in the landscaper cluster renewed every period, and the agent's
//! version and last heartbeat in the Environment's `status.agent`. The agent writes only that
//! field of the status; the conditions, `AgentReady` among them, are the landscaper's, which
//! reads the Lease.

use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta, Time};
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, Patch, PatchParams, PostParams};
use landscaper_api::core::{AgentStatus, Environment};
use serde_json::json;

use crate::names::Names;
use crate::registration::{RegistrationError, api_error, owned_labels};

/// What a heartbeat found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Beat {
    /// The heartbeat was renewed.
    Renewed,
    /// The Environment is gone or being deleted: the agent is no longer registered.
    Deregistered,
}

/// Renews the heartbeat of one environment.
pub struct Heartbeat<'a> {
    /// Client of the landscaper cluster.
    pub client: &'a kube::Client,
    /// Names of the environment's objects.
    pub names: &'a Names,
    /// Namespace of the Lease in the landscaper cluster.
    pub namespace: &'a str,
    /// The heartbeat period, written into the Lease so the landscaper knows what "late" is.
    pub period: Duration,
    /// The agent's version.
    pub version: &'a str,
}

impl Heartbeat<'_> {
    /// Renews the Lease and the Environment's `status.agent`.
    pub async fn beat(&self) -> Result<Beat, RegistrationError> {
        let environments: Api<Environment> = Api::all(self.client.clone());
        let object = format!("Environment {}", self.names.environment);
        let environment = environments
            .get_opt(&self.names.environment)
            .await
            .map_err(api_error("reading", object.clone()))?;
        if environment.is_none_or(|e| e.metadata.deletion_timestamp.is_some()) {
            return Ok(Beat::Deregistered);
        }
        let now = Timestamp::now();
        self.renew_lease(now).await?;
        self.report(now).await?;
        Ok(Beat::Renewed)
    }

    async fn renew_lease(&self, now: Timestamp) -> Result<(), RegistrationError> {
        let leases: Api<Lease> = Api::namespaced(self.client.clone(), self.namespace);
        let name = self.names.heartbeat_lease();
        let object = format!("Lease {}/{name}", self.namespace);
        let spec = LeaseSpec {
            holder_identity: Some(format!("landscaper-agent/{}", self.names.environment)),
            lease_duration_seconds: Some(
                i32::try_from(self.period.as_secs().max(1)).unwrap_or(i32::MAX),
            ),
            renew_time: Some(MicroTime(now)),
            ..Default::default()
        };
        match leases
            .get_opt(&name)
            .await
            .map_err(api_error("reading", object.clone()))?
        {
            None => {
                let lease = Lease {
                    metadata: ObjectMeta {
                        name: Some(name.clone()),
                        labels: Some(owned_labels(&self.names.environment)),
                        ..Default::default()
                    },
                    spec: Some(LeaseSpec {
                        acquire_time: Some(MicroTime(now)),
                        ..spec
                    }),
                };
                leases
                    .create(&PostParams::default(), &lease)
                    .await
                    .map_err(api_error("creating", object))?;
            }
            Some(mut lease) => {
                let acquired = lease.spec.as_ref().and_then(|s| s.acquire_time.clone());
                lease.spec = Some(LeaseSpec {
                    acquire_time: acquired.or(Some(MicroTime(now))),
                    ..spec
                });
                leases
                    .replace(&name, &PostParams::default(), &lease)
                    .await
                    .map_err(api_error("renewing", object))?;
            }
        }
        Ok(())
    }

    /// Writes `status.agent`, and nothing else of the status: a merge patch of that field
    /// alone, so it never conflicts with the landscaper's writes of the conditions.
    async fn report(&self, now: Timestamp) -> Result<(), RegistrationError> {
        let agent = AgentStatus {
            version: Some(self.version.to_owned()),
            last_heartbeat_time: Some(Time(now)),
        };
        let patch = json!({ "status": { "agent": agent } });
        let environments: Api<Environment> = Api::all(self.client.clone());
        environments
            .patch_status(
                &self.names.environment,
                &PatchParams::default(),
                &Patch::Merge(patch),
            )
            .await
            .map_err(api_error(
                "reporting the heartbeat on",
                format!("Environment {}", self.names.environment),
            ))?;
        Ok(())
    }
}
