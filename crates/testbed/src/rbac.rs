//! RBAC authorization as kube-apiserver's RBAC authorizer decides it, from Roles, ClusterRoles
//! and their bindings held as JSON objects.
//!
//! It also words the 403 answers, the access reviews `kubectl auth can-i` sends, the escalation
//! check on writes of roles and bindings, and the bootstrap policy every cluster starts with.

pub mod bootstrap;
mod escalation;
pub mod review;

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use crate::selector::LabelSelector;

/// The group whose members may do anything, before RBAC is asked.
pub const SUPERUSER_GROUP: &str = "system:masters";

/// The identity making a request.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UserInfo {
    /// The user name, e.g. `system:serviceaccount:ns:sa`.
    pub name: String,
    /// The groups, e.g. `system:authenticated`.
    pub groups: Vec<String>,
}

impl UserInfo {
    #[cfg(test)]
    /// A user with the given name and groups.
    pub fn new(name: impl Into<String>, groups: &[&str]) -> Self {
        Self {
            name: name.into(),
            groups: groups.iter().map(|g| g.to_string()).collect(),
        }
    }

    #[cfg(test)]
    /// The identity of a ServiceAccount token, with the groups kube-apiserver adds.
    pub fn service_account(namespace: &str, name: &str) -> Self {
        Self {
            name: format!("system:serviceaccount:{namespace}:{name}"),
            groups: vec![
                "system:serviceaccounts".to_string(),
                format!("system:serviceaccounts:{namespace}"),
                "system:authenticated".to_string(),
            ],
        }
    }

    fn is_superuser(&self) -> bool {
        self.groups.iter().any(|g| g == SUPERUSER_GROUP)
    }
}

/// What a resource request touches.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResourceRequest {
    /// The API group, "" for the core group.
    pub api_group: String,
    /// The API version (only used to word answers).
    pub api_version: String,
    /// The plural resource, e.g. `configmaps`.
    pub resource: String,
    /// The subresource, e.g. `status`, or "".
    pub subresource: String,
    /// The namespace, "" for cluster scope and all-namespaces requests.
    pub namespace: String,
    /// The object name, "" for collections.
    pub name: String,
}

/// The request attributes an authorizer decides on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attributes {
    /// Who asks.
    pub user: UserInfo,
    /// The verb: get, list, watch, create, update, patch, delete, deletecollection, or another.
    pub verb: String,
    /// A resource request, or `None` for a non-resource path.
    pub resource: Option<ResourceRequest>,
    /// The URL path of a non-resource request.
    pub path: String,
}

impl Attributes {
    /// Attributes of a resource request.
    pub fn resource(user: UserInfo, verb: &str, resource: ResourceRequest) -> Self {
        Self {
            user,
            verb: verb.to_string(),
            resource: Some(resource),
            path: String::new(),
        }
    }

    /// Attributes of a non-resource request such as `GET /healthz`.
    pub fn non_resource(user: UserInfo, verb: &str, path: &str) -> Self {
        Self {
            user,
            verb: verb.to_string(),
            resource: None,
            path: path.to_string(),
        }
    }

    fn namespace(&self) -> &str {
        self.resource.as_ref().map_or("", |r| r.namespace.as_str())
    }
}

/// The answer of the authorizer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Allowed; the reason names the binding, e.g. `RBAC: allowed by RoleBinding "rb/ns" ...`.
    Allow {
        /// Empty for superusers.
        reason: String,
    },
    /// Not allowed; the reason lists problems met on the way (e.g. missing roles), or is empty.
    Deny {
        /// Empty when nothing went wrong.
        reason: String,
    },
}

impl Decision {
    /// Whether the request may proceed.
    pub fn allowed(&self) -> bool {
        matches!(self, Self::Allow { .. })
    }

    /// The reason text.
    pub fn reason(&self) -> &str {
        match self {
            Self::Allow { reason } | Self::Deny { reason } => reason,
        }
    }
}

/// One rule of a Role or ClusterRole.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PolicyRule {
    /// Verbs, `*` for all.
    pub verbs: Vec<String>,
    /// API groups, `*` for all.
    pub api_groups: Vec<String>,
    /// Resources (`res`, `res/sub`, `*/sub`, `*`).
    pub resources: Vec<String>,
    /// Object names the rule is limited to; empty means all.
    pub resource_names: Vec<String>,
    /// Non-resource URL paths, with a trailing `*` as prefix match.
    #[serde(rename = "nonResourceURLs")]
    pub non_resource_urls: Vec<String>,
}

impl PolicyRule {
    /// Whether this rule allows the request.
    pub fn allows(&self, attrs: &Attributes) -> bool {
        let verb_ok = self.verbs.iter().any(|v| v == "*" || *v == attrs.verb);
        if !verb_ok {
            return false;
        }
        match &attrs.resource {
            Some(r) => {
                self.api_groups
                    .iter()
                    .any(|g| g == "*" || *g == r.api_group)
                    && self.resource_matches(r)
                    && (self.resource_names.is_empty() || self.resource_names.contains(&r.name))
            }
            None => self
                .non_resource_urls
                .iter()
                .any(|u| non_resource_url_covers(u, &attrs.path)),
        }
    }

    fn resource_matches(&self, r: &ResourceRequest) -> bool {
        let combined = if r.subresource.is_empty() {
            r.resource.clone()
        } else {
            format!("{}/{}", r.resource, r.subresource)
        };
        self.resources.iter().any(|rule| {
            rule == "*"
                || *rule == combined
                || (!r.subresource.is_empty()
                    && rule.strip_prefix("*/") == Some(r.subresource.as_str()))
        })
    }

    /// The rule as JSON, with the keys kube-apiserver writes (empty lists left out).
    pub fn to_json(&self) -> Value {
        let mut out = serde_json::Map::new();
        let mut put = |key: &str, list: &[String]| {
            if !list.is_empty() {
                out.insert(key.to_string(), list.into());
            }
        };
        put("verbs", &self.verbs);
        put("apiGroups", &self.api_groups);
        put("resources", &self.resources);
        put("resourceNames", &self.resource_names);
        put("nonResourceURLs", &self.non_resource_urls);
        Value::Object(out)
    }
}

fn non_resource_url_covers(owner: &str, path: &str) -> bool {
    owner == "*"
        || owner == path
        || owner
            .strip_suffix('*')
            .is_some_and(|prefix| path.starts_with(prefix.trim_end_matches('*')))
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
struct Metadata {
    name: String,
    namespace: String,
    labels: Option<serde_json::Map<String, Value>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct AggregationRule {
    cluster_role_selectors: Vec<Value>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Role {
    metadata: Metadata,
    rules: Option<Vec<PolicyRule>>,
    aggregation_rule: Option<AggregationRule>,
}

/// A binding's reference to the role it grants.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(default)]
pub struct RoleRef {
    /// `Role` or `ClusterRole`.
    pub kind: String,
    /// The role's name.
    pub name: String,
}

/// One subject of a binding.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(default)]
pub struct Subject {
    /// `User`, `Group` or `ServiceAccount`.
    pub kind: String,
    /// The name.
    pub name: String,
    /// The ServiceAccount's namespace; defaults to the binding's.
    pub namespace: String,
}

impl Subject {
    fn applies_to(&self, user: &UserInfo, binding_namespace: &str) -> bool {
        match self.kind.as_str() {
            "User" => user.name == self.name,
            "Group" => user.groups.contains(&self.name),
            "ServiceAccount" => {
                let ns = if self.namespace.is_empty() {
                    binding_namespace
                } else {
                    &self.namespace
                };
                !ns.is_empty() && user.name == format!("system:serviceaccount:{ns}:{}", self.name)
            }
            _ => false,
        }
    }

    fn describe(&self, binding_namespace: &str) -> String {
        if self.kind == "ServiceAccount" {
            let ns = if self.namespace.is_empty() {
                binding_namespace
            } else {
                &self.namespace
            };
            format!("{} \"{}/{}\"", self.kind, self.name, ns)
        } else {
            format!("{} \"{}\"", self.kind, self.name)
        }
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Binding {
    metadata: Metadata,
    role_ref: RoleRef,
    subjects: Option<Vec<Subject>>,
}

/// The RBAC objects of one cluster, ready to answer authorization questions.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    roles: BTreeMap<(String, String), Role>,
    cluster_roles: BTreeMap<String, Role>,
    role_bindings: BTreeMap<(String, String), Binding>,
    cluster_role_bindings: BTreeMap<String, Binding>,
}

/// Where a rule came from, worded like the RBAC authorizer's reason.
struct RuleSource<'a> {
    binding: &'a Binding,
    subject: &'a Subject,
    cluster: bool,
}

impl RuleSource<'_> {
    fn describe(&self) -> String {
        let b = self.binding;
        if self.cluster {
            format!(
                "ClusterRoleBinding \"{}\" of {} \"{}\" to {}",
                b.metadata.name,
                b.role_ref.kind,
                b.role_ref.name,
                self.subject.describe("")
            )
        } else {
            format!(
                "RoleBinding \"{}/{}\" of {} \"{}\" to {}",
                b.metadata.name,
                b.metadata.namespace,
                b.role_ref.kind,
                b.role_ref.name,
                self.subject.describe(&b.metadata.namespace)
            )
        }
    }
}

/// A rule with its source, or the error met resolving a binding's role.
type Granted<'a> = Result<(&'a PolicyRule, &'a RuleSource<'a>), String>;

impl Policy {
    #[cfg(test)]
    /// A policy from any mix of Role, ClusterRole, RoleBinding and ClusterRoleBinding objects;
    /// other kinds are ignored.
    pub fn from_objects<'a>(objects: impl IntoIterator<Item = &'a Value>) -> Self {
        let mut policy = Self::default();
        for object in objects {
            policy.upsert(object);
        }
        policy
    }

    /// Adds or replaces one RBAC object (dispatching on its `kind`); other kinds are ignored.
    pub fn upsert(&mut self, object: &Value) {
        let kind = object.get("kind").and_then(Value::as_str).unwrap_or("");
        match kind {
            "Role" | "ClusterRole" => {
                let Ok(role) = Role::deserialize(object) else {
                    return;
                };
                if kind == "Role" {
                    let key = (role.metadata.namespace.clone(), role.metadata.name.clone());
                    self.roles.insert(key, role);
                } else {
                    self.cluster_roles.insert(role.metadata.name.clone(), role);
                }
            }
            "RoleBinding" | "ClusterRoleBinding" => {
                let Ok(binding) = Binding::deserialize(object) else {
                    return;
                };
                if kind == "RoleBinding" {
                    let key = (
                        binding.metadata.namespace.clone(),
                        binding.metadata.name.clone(),
                    );
                    self.role_bindings.insert(key, binding);
                } else {
                    self.cluster_role_bindings
                        .insert(binding.metadata.name.clone(), binding);
                }
            }
            _ => {}
        }
    }

    /// Forgets one RBAC object.
    pub fn remove(&mut self, kind: &str, namespace: &str, name: &str) {
        let key = (namespace.to_string(), name.to_string());
        match kind {
            "Role" => {
                self.roles.remove(&key);
            }
            "ClusterRole" => {
                self.cluster_roles.remove(name);
            }
            "RoleBinding" => {
                self.role_bindings.remove(&key);
            }
            "ClusterRoleBinding" => {
                self.cluster_role_bindings.remove(name);
            }
            _ => {}
        }
    }

    /// The rules of a ClusterRole with an `aggregationRule`: the union of the rules of every
    /// other ClusterRole its selectors match, as the aggregation controller writes them.
    pub fn aggregated_rules(&self, cluster_role: &str) -> Option<Vec<PolicyRule>> {
        let mut visiting = vec![cluster_role.to_string()];
        self.aggregate(cluster_role, &mut visiting)
    }

    fn aggregate(&self, cluster_role: &str, visiting: &mut Vec<String>) -> Option<Vec<PolicyRule>> {
        let role = self.cluster_roles.get(cluster_role)?;
        let selectors: Vec<LabelSelector> = role
            .aggregation_rule
            .as_ref()?
            .cluster_role_selectors
            .iter()
            .filter_map(|s| LabelSelector::from_object(s).ok())
            .collect();
        let empty = serde_json::Map::new();
        let mut rules: Vec<PolicyRule> = Vec::new();
        for (name, other) in &self.cluster_roles {
            // Cycles between aggregated roles contribute nothing more.
            if visiting.contains(name) {
                continue;
            }
            let labels = other.metadata.labels.as_ref().unwrap_or(&empty);
            if !selectors.iter().any(|s| s.matches(labels)) {
                continue;
            }
            visiting.push(name.clone());
            let contributed = match other.aggregation_rule {
                Some(_) => self.aggregate(name, visiting).unwrap_or_default(),
                None => other.rules.clone().unwrap_or_default(),
            };
            visiting.pop();
            for rule in contributed {
                if !rules.contains(&rule) {
                    rules.push(rule);
                }
            }
        }
        Some(rules)
    }

    /// The rules a role reference grants inside a binding's namespace.
    fn role_ref_rules(
        &self,
        role_ref: &RoleRef,
        binding_namespace: &str,
    ) -> Result<Vec<PolicyRule>, String> {
        match role_ref.kind.as_str() {
            "Role" => self
                .roles
                .get(&(binding_namespace.to_string(), role_ref.name.clone()))
                .map(|r| r.rules.clone().unwrap_or_default())
                .ok_or_else(|| {
                    format!(
                        "role.rbac.authorization.k8s.io \"{}\" not found",
                        role_ref.name
                    )
                }),
            "ClusterRole" => {
                let role = self.cluster_roles.get(&role_ref.name).ok_or_else(|| {
                    format!(
                        "clusterrole.rbac.authorization.k8s.io \"{}\" not found",
                        role_ref.name
                    )
                })?;
                // An aggregated role's stored rules may lag behind; compute them here.
                Ok(match role.aggregation_rule {
                    Some(_) => self.aggregated_rules(&role_ref.name).unwrap_or_default(),
                    None => role.rules.clone().unwrap_or_default(),
                })
            }
            other => Err(format!("unsupported role reference kind: \"{other}\"")),
        }
    }

    /// Calls `visit` with every rule granted to `user` in `namespace` (cluster bindings first);
    /// `visit` returns false to stop. Errors (missing roles) are reported with `None` rules.
    fn visit_rules(
        &self,
        user: &UserInfo,
        namespace: &str,
        visit: &mut dyn FnMut(Granted<'_>) -> bool,
    ) {
        let cluster = self.cluster_role_bindings.values().map(|b| (b, true));
        let local = self
            .role_bindings
            .range((namespace.to_string(), String::new())..)
            .take_while(|((ns, _), _)| !namespace.is_empty() && ns == namespace)
            .map(|(_, b)| (b, false));
        for (binding, is_cluster) in cluster.chain(local) {
            let ns = if is_cluster { "" } else { namespace };
            let Some(subject) = binding
                .subjects
                .iter()
                .flatten()
                .find(|s| s.applies_to(user, ns))
            else {
                continue;
            };
            let source = RuleSource {
                binding,
                subject,
                cluster: is_cluster,
            };
            match self.role_ref_rules(&binding.role_ref, ns) {
                Err(e) => {
                    if !visit(Err(e)) {
                        return;
                    }
                }
                Ok(rules) => {
                    for rule in &rules {
                        if !visit(Ok((rule, &source))) {
                            return;
                        }
                    }
                }
            }
        }
    }

    /// Decides a request like kube-apiserver with `--authorization-mode=RBAC`: members of
    /// `system:masters` may do anything, everyone else needs a matching rule.
    pub fn authorize(&self, attrs: &Attributes) -> Decision {
        if attrs.user.is_superuser() {
            return Decision::Allow {
                reason: String::new(),
            };
        }
        let mut allowed_by = None;
        let mut errors = Vec::new();
        self.visit_rules(&attrs.user, attrs.namespace(), &mut |item| match item {
            Ok((rule, source)) if rule.allows(attrs) => {
                allowed_by = Some(format!("RBAC: allowed by {}", source.describe()));
                false
            }
            Ok(_) => true,
            Err(e) => {
                errors.push(e);
                true
            }
        });
        match allowed_by {
            Some(reason) => Decision::Allow { reason },
            None if errors.is_empty() => Decision::Deny {
                reason: String::new(),
            },
            None if errors.len() == 1 => Decision::Deny {
                reason: format!("RBAC: {}", errors[0]),
            },
            None => Decision::Deny {
                reason: format!("RBAC: [{}]", errors.join(", ")),
            },
        }
    }

    /// Every rule granted to `user` in `namespace`, and the errors met (missing roles).
    pub fn rules_for(&self, user: &UserInfo, namespace: &str) -> (Vec<PolicyRule>, Vec<String>) {
        let mut rules = Vec::new();
        let mut errors = Vec::new();
        self.visit_rules(user, namespace, &mut |item| {
            match item {
                Ok((rule, _)) => rules.push(rule.clone()),
                Err(e) => errors.push(e),
            }
            true
        });
        (rules, errors)
    }
}

/// The 403 message kube-apiserver writes when a request is not authorized.
pub fn forbidden_message(attrs: &Attributes, reason: &str) -> String {
    let user = &attrs.user.name;
    let verb = &attrs.verb;
    let base = match &attrs.resource {
        None => format!("User \"{user}\" cannot {verb} path \"{}\"", attrs.path),
        Some(r) => {
            let resource = if r.subresource.is_empty() {
                r.resource.clone()
            } else {
                format!("{}/{}", r.resource, r.subresource)
            };
            let scope = if r.namespace.is_empty() {
                "at the cluster scope".to_string()
            } else {
                format!("in the namespace \"{}\"", r.namespace)
            };
            format!(
                "User \"{user}\" cannot {verb} resource \"{resource}\" in API group \"{}\" {scope}",
                r.api_group
            )
        }
    };
    if reason.is_empty() {
        base
    } else {
        format!("{base}: {reason}")
    }
}

/// The complete 403 `metav1.Status` body for a request that was not authorized.
pub fn forbidden_status(attrs: &Attributes, reason: &str) -> Value {
    let detail = forbidden_message(attrs, reason);
    match &attrs.resource {
        None => forbidden_body("", "", "", &detail),
        Some(r) => forbidden_body(&r.api_group, &r.resource, &r.name, &detail),
    }
}

/// A 403 Status as `NewForbidden(group/resource, name, err)` builds it.
pub(crate) fn forbidden_body(group: &str, resource: &str, name: &str, detail: &str) -> Value {
    let qualified = if group.is_empty() {
        resource.to_string()
    } else {
        format!("{resource}.{group}")
    };
    let message = if qualified.is_empty() {
        format!("forbidden: {detail}")
    } else if name.is_empty() {
        format!("{qualified} is forbidden: {detail}")
    } else {
        format!("{qualified} \"{name}\" is forbidden: {detail}")
    };
    let mut details = serde_json::Map::new();
    if !name.is_empty() {
        details.insert("name".into(), name.into());
    }
    if !group.is_empty() {
        details.insert("group".into(), group.into());
    }
    if !resource.is_empty() {
        details.insert("kind".into(), resource.into());
    }
    serde_json::json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": "Forbidden",
        "details": details,
        "code": 403
    })
}

#[cfg(test)]
mod tests;
