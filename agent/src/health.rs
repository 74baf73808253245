//! The agent's health for the kubelet's probes: `/healthz` answers whether the agent's loop
//! still comes round (a wedged agent is restarted), `/readyz` whether its environment is
//! registered. An unreachable landscaper makes the agent unready, never dead: the loop keeps
//! coming round while it retries, so a fenced cluster's agent does not crash-loop.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use landscaper_process::probes::Probes;
pub use landscaper_process::probes::{bind, serve};

/// What the probes report, updated by the agent's loop.
#[derive(Debug)]
pub struct Health {
    started: Instant,
    /// Milliseconds after `started` at which the loop last came round.
    last_round: AtomicU64,
    registered: AtomicBool,
    stall_after: Duration,
}

impl Health {
    /// A health record that calls the agent dead once its loop has not come round for
    /// `stall_after`.
    pub fn new(stall_after: Duration) -> Arc<Self> {
        Arc::new(Self {
            started: Instant::now(),
            last_round: AtomicU64::new(0),
            registered: AtomicBool::new(false),
            stall_after,
        })
    }

    /// The loop came round: a registration attempt or a heartbeat period ended, whether it
    /// succeeded or not.
    pub fn round_done(&self) {
        let now = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_round.store(now, Ordering::Relaxed);
    }

    /// Whether the environment is registered (and not being deleted).
    pub fn set_registered(&self, registered: bool) {
        self.registered.store(registered, Ordering::Relaxed);
    }

    /// How long ago the loop last came round (or the record was made, before its first round).
    pub fn quiet_for(&self) -> Duration {
        let last = Duration::from_millis(self.last_round.load(Ordering::Relaxed));
        self.started.elapsed().saturating_sub(last)
    }
}

impl Probes for Health {
    /// `Ok` while the loop comes round, else why the agent counts as dead.
    fn live(&self) -> Result<(), String> {
        let quiet = self.quiet_for();
        if quiet > self.stall_after {
            return Err(format!(
                "the agent's loop has not come round for {}s (limit {}s)",
                quiet.as_secs(),
                self.stall_after.as_secs()
            ));
        }
        Ok(())
    }

    /// `Ok` once the environment is registered, else why not.
    fn ready(&self) -> Result<(), String> {
        self.live()?;
        if !self.registered.load(Ordering::Relaxed) {
            return Err("the environment is not registered (yet, or any more)".to_owned());
        }
        Ok(())
    }
}

/// The health of `landscaper-agent deployer`: alive while the process answers, ready once
/// the deployer is set up (its clients built) and serving.
#[derive(Debug, Default)]
pub struct DeployerHealth {
    serving: AtomicBool,
}

impl DeployerHealth {
    /// A deployer that is not serving yet.
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// The deployer is set up and serves its items.
    pub fn set_serving(&self) {
        self.serving.store(true, Ordering::Relaxed);
    }
}

impl Probes for DeployerHealth {
    fn live(&self) -> Result<(), String> {
        Ok(())
    }

    fn ready(&self) -> Result<(), String> {
        if self.serving.load(Ordering::Relaxed) {
            Ok(())
        } else {
            Err("the deployer is not set up yet".to_owned())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loop_that_stops_coming_round_is_dead_and_unready() {
        let health = Health::new(Duration::from_millis(50));
        health.round_done();
        assert_eq!(health.live(), Ok(()));
        assert!(health.ready().unwrap_err().contains("not registered"));
        health.set_registered(true);
        assert_eq!(health.ready(), Ok(()));
        std::thread::sleep(Duration::from_millis(120));
        assert!(health.live().unwrap_err().contains("not come round"));
        assert!(health.ready().is_err());
        health.round_done();
        assert_eq!(health.ready(), Ok(()));
    }

    #[test]
    fn a_deployer_is_ready_once_serving() {
        let health = DeployerHealth::new();
        assert_eq!(health.live(), Ok(()));
        assert!(health.ready().unwrap_err().contains("not set up"));
        health.set_serving();
        assert_eq!(health.ready(), Ok(()));
    }
}
