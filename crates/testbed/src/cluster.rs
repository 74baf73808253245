//! One cluster's state and the request pipeline: authenticate, count, inject faults,
//! authorize, dispatch, log.

use crate::auth::{StaticTokens, UserInfo};
use crate::authn;
use crate::clock::Clock;
use crate::counters::Counters;
use crate::faults::{Faults, Injected, RequestFacts};
use crate::handlers;
use crate::rbac::{Attributes, Policy, ResourceRequest, forbidden_status};
use crate::request_log::{RequestLog, RequestRecord};
use crate::resources::{Registry, builtin_resources};
use crate::server::path::{self, Route};
use crate::server::reply::Reply;
use crate::server::{Control, Request};
use crate::store::{DEFAULT_HISTORY, Store};
use crate::store::{Event, EventType};
use crate::token::{TokenError, TokenIssuer};
use serde_json::Value;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::RwLock;
use std::sync::atomic::{AtomicBool, Ordering};

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
    pub rollouts: crate::controllers::simulator::Rollouts,
    /// The container runners of the kubelet mode, by image name.
    pub runners: crate::kubelet::Runners,
    /// The containers the kubelet mode runs.
    pub kubelet: crate::controllers::kubelet::Kubelet,
    /// Signs and verifies ServiceAccount tokens.
    pub issuer: TokenIssuer,
    /// The RBAC policy, kept in step with the store by a hook.
    pub policy: Arc<RwLock<Policy>>,
    /// What the cluster reads as now for ages.
    pub clock: Clock,
    /// The clusters Shoots may name, when the cluster serves Gardener's Shoots.
    pub gardener: std::sync::OnceLock<crate::gardener::Garden>,
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
        let admin_token = tokens.issue(UserInfo::new(ADMIN_USER, &[crate::auth::MASTERS]));
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

    /// Serves one request and records it in the request log.
    pub async fn handle(self: &Arc<Self>, req: Request) -> Reply {
        let route = path::parse(&req.path);
        let info = RequestInfo::of(&route, &req);
        let (user, reply) = self.respond(&req, route, &info).await;
        tracing::debug!(cluster = %self.name, method = %req.method, path = %req.path, user = %user, status = reply.status(), "request");
        self.requests
            .push(info.record(user, created_name(&info, &req, &reply), reply.status()));
        reply
    }

    /// Authenticates, counts, injects faults, authorizes and dispatches; returns the user
    /// name (empty when authentication failed, the authenticated one when impersonation
    /// was refused) with the reply.
    async fn respond(
        self: &Arc<Self>,
        req: &Request,
        route: Route,
        info: &RequestInfo,
    ) -> (String, Reply) {
        let user = match authn::authenticate(self, req) {
            Ok(u) => u,
            Err(e) => return (String::new(), e.into()),
        };
        let authenticated = user.name.clone();
        let user = match authn::impersonate(self, req, user) {
            Ok(u) => u,
            Err(reply) => return (authenticated, reply),
        };
        self.counters.record(&info.verb, &info.resource, &user.name);
        let facts = RequestFacts {
            verb: &info.verb,
            resource: &info.resource,
            namespace: &info.namespace,
            name: &info.name,
        };
        match self.faults.check(facts) {
            Some(Injected::Fail(e)) => return (user.name, e.into()),
            Some(Injected::Hang) => {
                // The request never gets an answer; log it now with code 0.
                let name = info.name.clone();
                self.requests.push(info.record(user.name.clone(), name, 0));
                std::future::pending::<()>().await;
            }
            None => {}
        }
        if let Err(reply) = self.authorize(&user, &route, info) {
            return (user.name, reply);
        }
        let reply = handlers::dispatch(self, req, &user, route).await;
        (user.name, reply)
    }

    /// Decides a request with the RBAC policy (superusers may do anything).
    fn authorize(&self, user: &UserInfo, route: &Route, info: &RequestInfo) -> Result<(), Reply> {
        if user.is_superuser() {
            return Ok(());
        }
        let attrs = match route {
            Route::Resource(p) => {
                let (resource, sub) = info
                    .resource
                    .split_once('/')
                    .unwrap_or((&info.resource, ""));
                Attributes::resource(
                    user.to_rbac(),
                    &info.verb,
                    ResourceRequest {
                        api_group: p.group.clone(),
                        api_version: p.version.clone(),
                        resource: resource.into(),
                        subresource: sub.into(),
                        namespace: info.namespace.clone(),
                        name: info.name.clone(),
                    },
                )
            }
            _ => Attributes::non_resource(user.to_rbac(), &info.verb, &info.resource),
        };
        let decision = self
            .policy
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .authorize(&attrs);
        if decision.allowed() {
            return Ok(());
        }
        Err(Reply::status_value(&forbidden_status(
            &attrs,
            decision.reason(),
        )))
    }
}

/// The verb and target of a request, as RBAC and counters see them.
#[derive(Debug, Clone, Default)]
pub struct RequestInfo {
    /// Kubernetes verb (`get`, `list`, `watch`, `create`, ...), or the lowercase HTTP
    /// method for non-resource paths.
    pub verb: String,
    /// Resource with `/subresource`, or the path for non-resource requests.
    pub resource: String,
    /// API group.
    pub group: String,
    /// API version (empty for non-resource requests).
    pub version: String,
    /// Plural resource without subresource, or the path for non-resource requests.
    pub plural: String,
    /// Subresource (empty when none).
    pub subresource: String,
    /// Namespace (empty when none).
    pub namespace: String,
    /// Name (empty when none).
    pub name: String,
}

impl RequestInfo {
    /// Derives verb and target from the route and method.
    pub fn of(route: &Route, req: &Request) -> Self {
        let Route::Resource(p) = route else {
            return Self {
                verb: req.method.as_str().to_ascii_lowercase(),
                resource: req.path.clone(),
                plural: req.path.clone(),
                ..Self::default()
            };
        };
        let watching = matches!(req.param("watch"), Some("1" | "true"));
        let verb = match (req.method.as_str(), p.name.is_some()) {
            ("GET", true) => "get",
            ("GET", false) if watching => "watch",
            ("GET", false) => "list",
            ("POST", _) => "create",
            ("PUT", _) => "update",
            ("PATCH", _) => "patch",
            ("DELETE", true) => "delete",
            ("DELETE", false) => "deletecollection",
            _ => "unknown",
        };
        let resource = match &p.subresource {
            Some(s) => format!("{}/{s}", p.plural),
            None => p.plural.clone(),
        };
        // A namespace's own name is its namespace for authorization.
        let namespace = match (&p.namespace, p.plural.as_str(), &p.name) {
            (Some(ns), _, _) => ns.clone(),
            (None, "namespaces", Some(n)) if p.group.is_empty() => n.clone(),
            _ => String::new(),
        };
        Self {
            verb: verb.into(),
            resource,
            group: p.group.clone(),
            version: p.version.clone(),
            plural: p.plural.clone(),
            subresource: p.subresource.clone().unwrap_or_default(),
            namespace,
            name: p.name.clone().unwrap_or_default(),
        }
    }

    /// The log record of this request.
    fn record(&self, user: String, name: String, code: u16) -> RequestRecord {
        RequestRecord {
            user,
            verb: self.verb.clone(),
            group: self.group.clone(),
            version: self.version.clone(),
            resource: self.plural.clone(),
            subresource: self.subresource.clone(),
            namespace: self.namespace.clone(),
            name,
            code,
        }
    }
}

/// The object name to log: the path's, or for a create on a collection the created
/// object's (which holds a drawn `generateName` name), falling back to the name the
/// client asked for when the create failed.
fn created_name(info: &RequestInfo, req: &Request, reply: &Reply) -> String {
    if info.verb != "create" || !info.name.is_empty() {
        return info.name.clone();
    }
    #[derive(serde::Deserialize)]
    struct Named {
        metadata: Option<Meta>,
    }
    #[derive(serde::Deserialize)]
    struct Meta {
        name: Option<String>,
    }
    let name_in = |body: &[u8]| {
        serde_json::from_slice::<Named>(body)
            .ok()
            .and_then(|n| n.metadata?.name)
    };
    let from_reply = match reply {
        Reply::Json { status, body, .. } if (200..300).contains(status) => name_in(body),
        _ => None,
    };
    from_reply
        .or_else(|| name_in(&req.body))
        .unwrap_or_default()
}
