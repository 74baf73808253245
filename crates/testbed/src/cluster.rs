//! One cluster's state and the request pipeline: authenticate, count, inject faults,
//! authorize, dispatch.

use crate::auth::{StaticTokens, UserInfo};
use crate::counters::Counters;
use crate::faults::{Faults, Injected, RequestFacts};
use crate::handlers;
use crate::resources::{Registry, builtin_resources};
use crate::server::path::{self, Route};
use crate::server::reply::Reply;
use crate::server::{Control, Request};
use crate::status::{ApiError, Target};
use crate::store::{DEFAULT_HISTORY, Store};
use std::net::SocketAddr;
use std::sync::Arc;
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
    /// Connection control of the listener.
    pub control: Control,
    /// The CA certificate clients trust (PEM).
    pub ca_pem: String,
    /// Where the cluster listens.
    pub addr: SocketAddr,
    /// Whether the workload simulator runs.
    pub simulate_workloads: AtomicBool,
}

/// The admin user of every cluster.
pub const ADMIN_USER: &str = "testbed-admin";

impl ClusterState {
    /// A new empty cluster state listening at `addr`.
    pub fn new(name: &str, addr: SocketAddr, ca_pem: String) -> Self {
        let tokens = StaticTokens::default();
        let admin_token = tokens.issue(UserInfo::new(ADMIN_USER, &[crate::auth::MASTERS]));
        Self {
            name: name.into(),
            store: Store::new(DEFAULT_HISTORY),
            registry: Registry::new(builtin_resources()),
            tokens,
            admin_token,
            faults: Faults::default(),
            counters: Counters::default(),
            control: Control::default(),
            ca_pem,
            addr,
            simulate_workloads: AtomicBool::new(false),
        }
    }

    /// Whether the workload simulator is on.
    pub fn simulating(&self) -> bool {
        self.simulate_workloads.load(Ordering::Relaxed)
    }

    /// Serves one request.
    pub async fn handle(self: &Arc<Self>, req: Request) -> Reply {
        let route = path::parse(&req.path);
        let user = match self.authenticate(&req) {
            Ok(u) => u,
            Err(e) => return e.into(),
        };
        let info = RequestInfo::of(&route, &req);
        self.counters.record(&info.verb, &info.resource, &user.name);
        let facts = RequestFacts {
            verb: &info.verb,
            resource: &info.resource,
            namespace: &info.namespace,
            name: &info.name,
        };
        match self.faults.check(facts) {
            Some(Injected::Fail(e)) => return e.into(),
            Some(Injected::Hang) => std::future::pending::<()>().await,
            None => {}
        }
        if let Err(e) = self.authorize(&user, &route, &info) {
            return e.into();
        }
        let reply = handlers::dispatch(self, &req, &user, route).await;
        tracing::debug!(cluster = %self.name, method = %req.method, path = %req.path, user = %user.name, status = reply.status(), "request");
        reply
    }

    fn authenticate(&self, req: &Request) -> Result<UserInfo, ApiError> {
        let Some(auth) = req.header("authorization") else {
            return Ok(UserInfo::anonymous());
        };
        let token = auth
            .strip_prefix("Bearer ")
            .map(str::trim)
            .unwrap_or_default();
        self.tokens.lookup(token).ok_or_else(ApiError::unauthorized)
    }

    fn authorize(
        &self,
        user: &UserInfo,
        route: &Route,
        info: &RequestInfo,
    ) -> Result<(), ApiError> {
        if user.is_superuser() {
            return Ok(());
        }
        let public = matches!(route, Route::Version | Route::Health);
        let discovery = matches!(
            route,
            Route::Api
                | Route::Apis
                | Route::Group(_)
                | Route::GroupVersion(..)
                | Route::OpenApi(_)
        );
        if public || (discovery && !user.is_anonymous()) {
            return Ok(());
        }
        Err(forbidden(user, route, info))
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
            namespace,
            name: p.name.clone().unwrap_or_default(),
        }
    }
}

/// kube-apiserver's 403 for a request.
pub fn forbidden(user: &UserInfo, route: &Route, info: &RequestInfo) -> ApiError {
    let Route::Resource(_) = route else {
        return ApiError::forbidden(
            format!(
                "forbidden: User \"{}\" cannot {} path \"{}\"",
                user.name, info.verb, info.resource
            ),
            Target {
                name: "",
                group: "",
                kind: "",
            },
        );
    };
    let (plural, sub) = info
        .resource
        .split_once('/')
        .unwrap_or((&info.resource, ""));
    let qualified = if info.group.is_empty() {
        plural.to_string()
    } else {
        format!("{plural}.{}", info.group)
    };
    let subject = if info.name.is_empty() {
        qualified
    } else {
        format!("{qualified} \"{}\"", info.name)
    };
    let resource = if sub.is_empty() {
        plural.to_string()
    } else {
        format!("{plural}/{sub}")
    };
    let scope = if info.namespace.is_empty() {
        "at the cluster scope".to_string()
    } else {
        format!("in the namespace \"{}\"", info.namespace)
    };
    ApiError::forbidden(
        format!(
            "{subject} is forbidden: User \"{}\" cannot {} resource \"{resource}\" in API group \"{}\" {scope}",
            user.name, info.verb, info.group
        ),
        Target {
            name: &info.name,
            group: &info.group,
            kind: plural,
        },
    )
}
