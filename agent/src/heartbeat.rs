//! The heartbeat: a Lease in the landscaper cluster renewed every period, and the
//! `AgentReady` condition with the agent's version on the Environment.

use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta, Time};
use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;
use kube::api::{Api, Patch, PatchParams, PostParams};
use landscaper_api::constants::conditions;
use landscaper_api::core::{
    AgentStatus, ConditionStatus, ConditionUpdate, Environment, set_condition,
};
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
    /// Renews the Lease and the Environment's `AgentReady` condition.
    pub async fn beat(&self) -> Result<Beat, RegistrationError> {
        let environments: Api<Environment> = Api::all(self.client.clone());
        let object = format!("Environment {}", self.names.environment);
        let environment = environments
            .get_opt(&self.names.environment)
            .await
            .map_err(api_error("reading", object.clone()))?;
        let Some(environment) = environment.filter(|e| e.metadata.deletion_timestamp.is_none())
        else {
            return Ok(Beat::Deregistered);
        };
        let now = Timestamp::now();
        self.renew_lease(now).await?;
        self.report(&environment, now).await?;
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

    /// Writes the condition and agent status, guarded by the resourceVersion they were
    /// computed from so the landscaper's conditions are never overwritten.
    async fn report(
        &self,
        environment: &Environment,
        now: Timestamp,
    ) -> Result<(), RegistrationError> {
        let mut status = environment.status.clone().unwrap_or_default();
        let update = ConditionUpdate {
            type_: conditions::AGENT_READY,
            status: ConditionStatus::True,
            reason: "HeartbeatRenewed",
            message: format!(
                "agent {} renews its heartbeat every {}s",
                self.version,
                self.period.as_secs()
            ),
        };
        set_condition(&mut status.conditions, update, Time(now));
        let agent = AgentStatus {
            version: Some(self.version.to_owned()),
            last_heartbeat_time: Some(Time(now)),
        };
        let patch = json!({
            "metadata": { "resourceVersion": environment.resource_version() },
            "status": { "conditions": status.conditions, "agent": agent },
        });
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
