//! One cluster's state: its objects, served kinds, tokens, policy, counters and the state
//! of its built-in controllers. [`crate::pipeline`] serves requests on it.

use crate::clock::Clock;
use crate::counters::Counters;
use crate::faults::Faults;
use crate::rbac::Policy;
use crate::request_log::RequestLog;
use crate::resources::{Registry, ResourceDef, builtin_resources};
use crate::server::Control;
use crate::store::{DEFAULT_HISTORY, Store};
use crate::store::{Event, EventType};
use crate::token::{TokenError, TokenIssuer};
use crate::users::{StaticTokens, UserInfo};
use serde_json::Value;
use std::net::SocketAddr;
use std::sync::RwLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

/// Everything one cluster holds.
pub struct ClusterState {
    /// Cluster name (also the kubeconfig context).
    pub name: String,
    /// Objects.
    pub store: Store,
    /// Served resources.
    pub registry: Registry,
    /// Static bearer tokens (the admin's and test users').
    pub tokens: StaticTokens,
    /// The admin token of the kubeconfig.
    pub admin_token: String,
    /// Fault rules.
    pub faults: Faults,
    /// Request counters.
    pub counters: Counters,
    /// Every answered request, in order.
    pub requests: RequestLog,
    /// Connection control of the listener.
    pub control: Control,
    /// The CA certificate clients trust (PEM).
    pub ca_pem: String,
    /// Where the cluster listens.
    pub addr: SocketAddr,
    /// Whether the workload simulator runs.
    pub simulate_workloads: AtomicBool,
    /// What the workload simulator keeps of rollouts and images that never become ready.
    pub rollouts: crate::workloads::Rollouts,
    /// The container runners of the kubelet mode, by image name.
    pub runners: crate::kubelet::Runners,
    /// The containers the kubelet mode runs.
    pub kubelet: crate::workloads::Kubelet,
    /// Signs and verifies ServiceAccount tokens.
    pub issuer: TokenIssuer,
    /// The RBAC policy, kept in step with the store by a hook.
    pub policy: Arc<RwLock<Policy>>,
    /// What the cluster reads as now for ages.
    pub clock: Clock,
    /// The clusters Shoots may name, when the cluster serves Gardener's Shoots.
    pub gardener: std::sync::OnceLock<Garden>,
}

/// `--service-account-issuer` of every cluster, as on the recording rig.
pub const ISSUER: &str = "https://kubernetes.default.svc.cluster.local";

const RBAC_KEYS: &[&str] = &[
    "rbac.authorization.k8s.io/roles",
    "rbac.authorization.k8s.io/clusterroles",
    "rbac.authorization.k8s.io/rolebindings",
    "rbac.authorization.k8s.io/clusterrolebindings",
];

/// The admin user of every cluster.
pub const ADMIN_USER: &str = "testbed-admin";

impl ClusterState {
    /// A new empty cluster state listening at `addr`.
    pub fn new(name: &str, addr: SocketAddr, ca_pem: String) -> Result<Self, TokenError> {
        let tokens = StaticTokens::default();
        let admin_token = tokens.issue(UserInfo::new(ADMIN_USER, &[crate::users::MASTERS]));
        let store = Store::new(DEFAULT_HISTORY);
        let policy = Arc::new(RwLock::new(Policy::default()));
        let hook_policy = policy.clone();
        store.add_hook(Box::new(move |ev: &Event| {
            if !RBAC_KEYS.contains(&&*ev.storage_key) {
                return;
            }
            let mut p = hook_policy.write().unwrap_or_else(|e| e.into_inner());
            let value = ev.object.value();
            match ev.kind {
                EventType::Deleted => {
                    let kind = value
                        .get("kind")
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    p.remove(kind, &ev.object.namespace, &ev.object.name);
                }
                _ => p.upsert(&value),
            }
        }));
        Ok(Self {
            name: name.into(),
            store,
            registry: Registry::new(builtin_resources()),
            tokens,
            admin_token,
            faults: Faults::default(),
            counters: Counters::default(),
            requests: RequestLog::default(),
            control: Control::default(),
            ca_pem,
            addr,
            simulate_workloads: AtomicBool::new(false),
            rollouts: Default::default(),
            runners: Default::default(),
            kubelet: Default::default(),
            issuer: TokenIssuer::generate(ISSUER)?,
            policy,
            clock: Clock::default(),
            gardener: std::sync::OnceLock::new(),
        })
    }

    /// Whether the workload simulator is on.
    pub fn simulating(&self) -> bool {
        self.simulate_workloads.load(Ordering::Relaxed)
    }

    /// The resource stored under a storage key, in its preferred (first registered) version.
    pub fn stored_resource(&self, key: &str) -> Option<Arc<ResourceDef>> {
        let all = self.registry.by_storage_key(key);
        all.iter()
            .find(|r| {
                r.crd
                    .as_ref()
                    .is_none_or(|c| c.storage_version == r.version)
                    && !r.group.starts_with("events.")
            })
            .or(all.first())
            .cloned()
    }
}

/// The clusters of the testbed a Shoot's advertised address may name (Gardener's test double,
/// [`crate::gardener`]).
#[derive(Default)]
pub struct Garden {
    clusters: Vec<Weak<ClusterState>>,
}

impl Garden {
    /// A garden whose shoots are these clusters.
    pub fn new(clusters: &[Arc<ClusterState>]) -> Self {
        Self {
            clusters: clusters.iter().map(Arc::downgrade).collect(),
        }
    }

    /// The cluster served at `host:port`, if it still runs.
    pub fn cluster_at(&self, host_port: &str) -> Option<Arc<ClusterState>> {
        self.clusters
            .iter()
            .filter_map(Weak::upgrade)
            .find(|c| c.addr.to_string() == host_port)
    }
}
