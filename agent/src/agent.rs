//! The agent's life: register, then renew the heartbeat every period, keep the deployer token
//! fresh and repair the host objects, until shut down or deregistered.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use tracing::{error, info, warn};

use crate::clients::ClusterAccess;
use crate::health::Health;
use crate::heartbeat::{Beat, Heartbeat};
use crate::names::Names;
use crate::registration::RegistrationError;
use crate::registration::environment::{agent_annotations, desired_spec, ensure};
use crate::registration::host::HostRegistration;
use crate::settings::Settings;
use crate::token::TokenLifetime;

/// Longest wait between registration attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(300);

/// Least time without a round of the loop after which the agent counts as dead. A round may
/// wait the longest backoff plus several requests of up to five minutes each (the clients'
/// read timeout) when an API server hangs; a restart then makes new connections.
const MIN_STALL: Duration = Duration::from_secs(15 * 60);

/// Heartbeat periods without a round of the loop after which the agent counts as dead, when
/// that is longer than [`MIN_STALL`].
const STALL_PERIODS: u32 = 4;

/// A running agent for one environment.
pub struct Agent {
    settings: Settings,
    names: Names,
    host: ClusterAccess,
    landscaper: ClusterAccess,
    version: String,
    health: Arc<Health>,
}

/// Why the agent stopped.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// Registration failed in a way a person must resolve.
    #[error(transparent)]
    Registration(#[from] RegistrationError),
}

impl Agent {
    /// An agent with the given settings and connections.
    pub fn new(
        settings: Settings,
        host: ClusterAccess,
        landscaper: ClusterAccess,
        version: &str,
    ) -> Self {
        let names = Names::new(&settings.name);
        let health = Health::new(MIN_STALL.max(settings.heartbeat_period * STALL_PERIODS));
        Self {
            settings,
            names,
            host,
            landscaper,
            version: version.to_owned(),
            health,
        }
    }

    /// What the agent's probes report; [`Agent::run`] keeps it up to date.
    pub fn health(&self) -> Arc<Health> {
        self.health.clone()
    }

    /// The agent's settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The connection to the host (fenced) cluster, as the agent's own identity.
    pub fn host(&self) -> &ClusterAccess {
        &self.host
    }

    /// The connection to the landscaper cluster.
    pub fn landscaper(&self) -> &ClusterAccess {
        &self.landscaper
    }

    fn host_registration(&self) -> HostRegistration<'_> {
        HostRegistration {
            client: &self.host.client,
            endpoint: &self.host.endpoint,
            names: &self.names,
            namespace: &self.settings.namespace,
            token_lifetime: self.settings.token_lifetime,
        }
    }

    /// Registers the environment once: host objects, then the Environment.
    pub async fn register(&self) -> Result<TokenLifetime, RegistrationError> {
        let host = self.host_registration();
        let lifetime = host.ensure().await?;
        let cluster_id = host.cluster_id().await?;
        let spec = desired_spec(&self.settings, &self.names, &self.landscaper.endpoint);
        ensure(
            &self.landscaper.client,
            spec,
            &self.names,
            &cluster_id,
            agent_annotations(&self.settings),
        )
        .await?;
        Ok(lifetime)
    }

    /// Runs until `shutdown` completes. Failures are retried with backoff (and logged), never
    /// by exiting: a fenced cluster's agent must not crash-loop while the landscaper is away.
    pub async fn run(self, shutdown: impl Future<Output = ()>) {
        tokio::pin!(shutdown);
        let mut backoff = Duration::from_secs(1);
        let mut lifetime = loop {
            let registered = self.register().await;
            self.health.round_done();
            match registered {
                Ok(lifetime) => break lifetime,
                Err(error) => {
                    log_failure(&error, backoff);
                    tokio::select! {
                        () = &mut shutdown => return,
                        () = tokio::time::sleep(backoff) => {}
                    }
                    backoff = (backoff * 2).min(if error.is_transient() {
                        Duration::from_secs(60)
                    } else {
                        MAX_BACKOFF
                    });
                }
            }
        };
        info!(environment = %self.names.environment, token_expires = %lifetime.expires, "environment registered");
        self.health.set_registered(true);
        let mut deregistered = false;
        loop {
            if !deregistered {
                match self.tick(&mut lifetime).await {
                    Ok(Beat::Renewed) => {}
                    Ok(Beat::Deregistered) => {
                        deregistered = true;
                        self.health.set_registered(false);
                        warn!(environment = %self.names.environment, "the Environment is gone or being deleted; the agent stops renewing its registration until it is restarted");
                    }
                    Err(error) => log_failure(&error, self.settings.heartbeat_period),
                }
            }
            self.health.round_done();
            tokio::select! {
                () = &mut shutdown => return,
                () = tokio::time::sleep(self.settings.heartbeat_period) => {}
            }
        }
    }

    /// One period of [`Agent::run`] after the registration: the heartbeat, then renewal of the
    /// token `lifetime` describes when it is due, else repair of the host objects. The host
    /// steps run even when the heartbeat failed: the embedded deployer keeps using the token,
    /// and must not meet an expired one once the landscaper answers again. A failure of both
    /// is logged for the host and returned for the heartbeat.
    pub async fn tick(&self, lifetime: &mut TokenLifetime) -> Result<Beat, RegistrationError> {
        let heartbeat = Heartbeat {
            client: &self.landscaper.client,
            names: &self.names,
            namespace: &self.settings.landscaper_namespace,
            period: self.settings.heartbeat_period,
            version: &self.version,
        };
        let beat = heartbeat.beat().await;
        if matches!(beat, Ok(Beat::Deregistered)) {
            return beat;
        }
        let host = self.host_registration();
        let host_step = if Timestamp::now() >= lifetime.renew_at() {
            host.renew_token().await
        } else {
            host.ensure().await
        };
        match host_step {
            Ok(renewed) => *lifetime = renewed,
            Err(error) if beat.is_err() => log_failure(&error, self.settings.heartbeat_period),
            Err(error) => return Err(error),
        }
        beat
    }
}

fn log_failure(error: &RegistrationError, retry_in: Duration) {
    if error.is_transient() {
        warn!(%error, retry_in_seconds = retry_in.as_secs(), "registration step failed; retrying");
    } else {
        error!(%error, retry_in_seconds = retry_in.as_secs(), "registration refused; retrying after the backoff");
    }
}
