//! Leader election on a `coordination.k8s.io` Lease, as client-go's `leaderelection` does it,
//! so a second landscaper replica waits instead of reconciling the same objects at the same
//! time. The leader renews the Lease; a candidate takes it over when it is free, released, or
//! not renewed within its duration. Every write carries the `resourceVersion` read, so of two
//! candidates exactly one wins (the other gets a 409 and keeps waiting).

use std::future::Future;
use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::api::{Api, PostParams};
use tracing::{info, warn};

/// How a replica takes part in the election.
#[derive(Clone, Debug)]
pub struct Election {
    leases: Api<Lease>,
    name: String,
    identity: String,
    lease_duration: Duration,
    renew_period: Duration,
}

/// Why [`Election::run`] returned.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The work ended (shutdown); the Lease was released for the next replica.
    Finished,
    /// The Lease could not be renewed in time: another replica may lead now, so this one must
    /// stop reconciling at once.
    Lost,
}

impl Election {
    /// An election on the Lease `namespace/name`, as `identity` (unique per replica).
    pub fn new(client: kube::Client, namespace: &str, name: &str, identity: &str) -> Self {
        Self {
            leases: Api::namespaced(client, namespace),
            name: name.to_owned(),
            identity: identity.to_owned(),
            lease_duration: Duration::from_secs(15),
            renew_period: Duration::from_secs(5),
        }
    }

    /// The same election with other timings (client-go's defaults: 15 s lease, renewed every
    /// 5 s here; the renew period must be well below the lease duration).
    pub fn with_timing(mut self, lease_duration: Duration, renew_period: Duration) -> Self {
        self.lease_duration = lease_duration;
        self.renew_period = renew_period.min(lease_duration / 2);
        self
    }

    /// Waits until this replica leads, then runs `work` while renewing the Lease; returns when
    /// `work` ends (and releases the Lease) or when leadership is lost (and drops `work`).
    pub async fn run(&self, work: impl Future<Output = ()>) -> Outcome {
        self.acquire().await;
        info!(lease = %self.name, identity = %self.identity, "leading");
        tokio::pin!(work);
        let mut last_renewal = tokio::time::Instant::now();
        let mut tick = tokio::time::interval(self.renew_period);
        tick.tick().await;
        loop {
            tokio::select! {
                () = &mut work => {
                    self.release().await;
                    return Outcome::Finished;
                }
                _ = tick.tick() => match self.try_acquire_or_renew().await {
                    Ok(true) => last_renewal = tokio::time::Instant::now(),
                    Ok(false) => {
                        warn!(lease = %self.name, "another replica holds the Lease: stopping");
                        return Outcome::Lost;
                    }
                    Err(error) if last_renewal.elapsed() >= self.lease_duration => {
                        warn!(lease = %self.name, %error, "could not renew the Lease in time: stopping");
                        return Outcome::Lost;
                    }
                    Err(error) => warn!(lease = %self.name, %error, "renewing the Lease failed; retrying"),
                },
            }
        }
    }

    /// Waits until this replica holds the Lease.
    async fn acquire(&self) {
        let mut announced = false;
        loop {
            match self.try_acquire_or_renew().await {
                Ok(true) => return,
                Ok(false) if !announced => {
                    info!(lease = %self.name, "another replica leads; waiting for its Lease to expire");
                    announced = true;
                }
                Ok(false) => {}
                Err(error) => {
                    warn!(lease = %self.name, %error, "reading the Lease failed; retrying")
                }
            }
            tokio::time::sleep(self.renew_period).await;
        }
    }

    /// Takes or renews the Lease if it is free, ours, or expired; whether this replica holds it.
    async fn try_acquire_or_renew(&self) -> Result<bool, kube::Error> {
        let now = Timestamp::now();
        let seconds = i32::try_from(self.lease_duration.as_secs().max(1)).unwrap_or(i32::MAX);
        let Some(mut lease) = self.leases.get_opt(&self.name).await? else {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(self.name.clone()),
                    ..ObjectMeta::default()
                },
                spec: Some(LeaseSpec {
                    holder_identity: Some(self.identity.clone()),
                    lease_duration_seconds: Some(seconds),
                    acquire_time: Some(MicroTime(now)),
                    renew_time: Some(MicroTime(now)),
                    lease_transitions: Some(0),
                    ..LeaseSpec::default()
                }),
            };
            return conflict_is_lost(self.leases.create(&PostParams::default(), &lease).await);
        };
        let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
        let holder = spec.holder_identity.clone().unwrap_or_default();
        let ours = holder == self.identity;
        if !ours && !holder.is_empty() && !expired(spec, now) {
            return Ok(false);
        }
        if !ours {
            spec.acquire_time = Some(MicroTime(now));
            spec.lease_transitions = Some(spec.lease_transitions.unwrap_or(0) + 1);
            spec.holder_identity = Some(self.identity.clone());
        }
        spec.lease_duration_seconds = Some(seconds);
        spec.renew_time = Some(MicroTime(now));
        // `replace` sends the resourceVersion read: a concurrent change makes this a 409.
        conflict_is_lost(
            self.leases
                .replace(&self.name, &PostParams::default(), &lease)
                .await,
        )
    }

    /// Gives the Lease up so the next replica need not wait for it to expire.
    async fn release(&self) {
        let Ok(Some(mut lease)) = self.leases.get_opt(&self.name).await else {
            return;
        };
        let Some(spec) = lease.spec.as_mut() else {
            return;
        };
        if spec.holder_identity.as_deref() != Some(self.identity.as_str()) {
            return;
        }
        spec.holder_identity = None;
        spec.lease_duration_seconds = Some(1);
        match self
            .leases
            .replace(&self.name, &PostParams::default(), &lease)
            .await
        {
            Ok(_) => info!(lease = %self.name, "released the Lease"),
            Err(error) => {
                warn!(lease = %self.name, %error, "could not release the Lease; it expires by itself")
            }
        }
    }
}

/// Whether the holder failed to renew within the lease duration.
fn expired(spec: &LeaseSpec, now: Timestamp) -> bool {
    let Some(renewed) = spec.renew_time.as_ref().map(|time| time.0) else {
        return true;
    };
    let duration = SignedDuration::from_secs(i64::from(spec.lease_duration_seconds.unwrap_or(0)));
    renewed.checked_add(duration).is_ok_and(|until| until < now)
}

/// A write that lost a race (409 conflict or 409 already exists) means another replica holds the
/// Lease.
fn conflict_is_lost<T>(result: Result<T, kube::Error>) -> Result<bool, kube::Error> {
    match result {
        Ok(_) => Ok(true),
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(false),
        Err(error) => Err(error),
    }
}

/// A replica identity: the pod name (`POD_NAME`, else the host name) and a random suffix, so two
/// processes on one host differ too.
pub fn replica_identity() -> String {
    replica_identity_of(std::env::var("POD_NAME").ok().as_deref())
}

/// A replica identity for the pod `pod` (else the host name) and a random suffix, so two
/// replicas in one process (the testbed's kubelet mode) differ too.
pub fn replica_identity_of(pod: Option<&str>) -> String {
    let host = pod
        .map(str::to_owned)
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "landscaper".to_owned());
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.subsec_nanos())
        .unwrap_or_default();
    format!("{host}_{:08x}", nanos ^ std::process::id().rotate_left(16))
}
