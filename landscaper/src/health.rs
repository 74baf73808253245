//! The landscaper's health for the kubelet's probes: `/healthz` answers while the process
//! serves at all (the controllers run inside kube-runtime, which has no loop of ours to watch),
//! `/readyz` once every controller's cache is synced, or at once on a standby replica that
//! waits for the leader election Lease and does not reconcile.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use landscaper_process::probes::Probes;

/// What this replica does now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// The controllers are being started (or leader election has not begun).
    Starting,
    /// Waiting for the leader election Lease: ready, and reconciling nothing.
    Standby,
    /// Running the controllers.
    Leading,
}

/// What the probes report, updated by the controllers and the leader election.
#[derive(Debug)]
pub struct Health {
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    role: Role,
    /// Each controller's cache and whether it is synced.
    caches: BTreeMap<String, bool>,
}

impl Health {
    /// A health record of a replica that has not started its controllers yet (unready).
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            state: Mutex::new(State {
                role: Role::Starting,
                caches: BTreeMap::new(),
            }),
        })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// This replica waits for the leader election Lease: ready, not reconciling.
    pub fn standby(&self) {
        self.state().role = Role::Standby;
    }

    /// The controllers named start now: unready until each one's cache is synced.
    pub fn starting(&self, controllers: &[&str]) {
        let mut state = self.state();
        state.role = Role::Leading;
        state.caches = controllers
            .iter()
            .map(|name| ((*name).to_owned(), false))
            .collect();
    }

    /// The cache of `controller` holds a complete list.
    pub fn synced(&self, controller: &str) {
        self.state().caches.insert(controller.to_owned(), true);
    }

    /// Whether this replica is waiting for the leader election Lease.
    pub fn is_standby(&self) -> bool {
        self.state().role == Role::Standby
    }
}

impl Probes for Health {
    /// Always `Ok`: a process that answers is alive.
    fn live(&self) -> Result<(), String> {
        Ok(())
    }

    /// `Ok` on a standby replica, and on the leader once every controller's cache is synced.
    fn ready(&self) -> Result<(), String> {
        let state = self.state();
        match state.role {
            Role::Standby => Ok(()),
            Role::Starting => Err("the controllers are not started yet".to_owned()),
            Role::Leading => {
                let waiting: Vec<&str> = state
                    .caches
                    .iter()
                    .filter(|(_, synced)| !**synced)
                    .map(|(name, _)| name.as_str())
                    .collect();
                if waiting.is_empty() {
                    Ok(())
                } else {
                    Err(format!(
                        "waiting for the caches of the controllers {}",
                        waiting.join(", ")
                    ))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ready_once_every_cache_is_synced_or_on_standby() {
        let health = Health::new();
        assert!(health.ready().unwrap_err().contains("not started"));
        health.standby();
        assert_eq!(health.ready(), Ok(()));
        health.starting(&["environment", "installation"]);
        assert_eq!(
            health.ready().unwrap_err(),
            "waiting for the caches of the controllers environment, installation"
        );
        health.synced("installation");
        assert!(
            health
                .ready()
                .unwrap_err()
                .ends_with("controllers environment")
        );
        health.synced("environment");
        assert_eq!(health.ready(), Ok(()));
        assert_eq!(health.live(), Ok(()));
    }
}
