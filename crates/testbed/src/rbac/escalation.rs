//! Escalation prevention: nobody may create a role or binding granting more than they hold,
//! unless they may `escalate` (roles) or `bind` (bindings).

use std::collections::BTreeSet;

use serde_json::Value;

use super::{Attributes, Policy, PolicyRule, ResourceRequest, RoleRef, UserInfo, forbidden_body};

const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

/// A refused write of a role or binding, with the 403 Status kube-apiserver answers.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct EscalationError {
    /// The detail after "is forbidden: ".
    pub message: String,
    /// The complete `metav1.Status` body.
    pub status: Value,
}

/// A rule as the escalation message prints it: `{APIGroups:[""], Resources:["x"], Verbs:["get"]}`.
pub fn compact_string(rule: &PolicyRule) -> String {
    let quote = |items: &[String]| {
        let inner: Vec<String> = items
            .iter()
            .map(|s| serde_json::to_string(s).unwrap_or_default())
            .collect();
        format!("[{}]", inner.join(" "))
    };
    let mut parts = Vec::new();
    for (label, list) in [
        ("APIGroups", &rule.api_groups),
        ("Resources", &rule.resources),
        ("NonResourceURLs", &rule.non_resource_urls),
        ("ResourceNames", &rule.resource_names),
        ("Verbs", &rule.verbs),
    ] {
        if !list.is_empty() {
            parts.push(format!("{label}:{}", quote(list)));
        }
    }
    format!("{{{}}}", parts.join(", "))
}

/// Splits a rule into rules of one verb, group, resource and name (or one URL and verb).
fn breakdown(rule: &PolicyRule) -> Vec<PolicyRule> {
    let one = |s: &String| vec![s.clone()];
    let mut out = Vec::new();
    for group in &rule.api_groups {
        for resource in &rule.resources {
            for verb in &rule.verbs {
                let base = PolicyRule {
                    verbs: one(verb),
                    api_groups: one(group),
                    resources: one(resource),
                    ..PolicyRule::default()
                };
                if rule.resource_names.is_empty() {
                    out.push(base);
                } else {
                    out.extend(rule.resource_names.iter().map(|n| PolicyRule {
                        resource_names: one(n),
                        ..base.clone()
                    }));
                }
            }
        }
    }
    for url in &rule.non_resource_urls {
        for verb in &rule.verbs {
            out.push(PolicyRule {
                verbs: one(verb),
                non_resource_urls: one(url),
                ..PolicyRule::default()
            });
        }
    }
    out
}

fn has(set: &[String], item: &str) -> bool {
    set.iter().any(|s| s == item)
}

fn has_all(set: &[String], items: &[String]) -> bool {
    items.iter().all(|i| has(set, i))
}

fn resources_cover(owner: &[String], wanted: &[String]) -> bool {
    if has(owner, "*") || has_all(owner, wanted) {
        return true;
    }
    wanted.iter().all(|path| {
        has(owner, path)
            || path
                .split_once('/')
                .is_some_and(|(_, sub)| has(owner, &format!("*/{sub}")))
    })
}

fn urls_cover(owner: &[String], wanted: &[String]) -> bool {
    wanted.iter().all(|path| {
        owner
            .iter()
            .any(|o| super::non_resource_url_covers(o, path))
    })
}

fn rule_covers(owner: &PolicyRule, sub: &PolicyRule) -> bool {
    let verbs = has(&owner.verbs, "*") || has_all(&owner.verbs, &sub.verbs);
    let groups = has(&owner.api_groups, "*") || has_all(&owner.api_groups, &sub.api_groups);
    let names = if sub.resource_names.is_empty() {
        owner.resource_names.is_empty()
    } else {
        owner.resource_names.is_empty() || has_all(&owner.resource_names, &sub.resource_names)
    };
    verbs
        && groups
        && resources_cover(&owner.resources, &sub.resources)
        && names
        && urls_cover(&owner.non_resource_urls, &sub.non_resource_urls)
}

/// The atomic rules of `wanted` that no rule of `owner` covers.
fn missing_rights(owner: &[PolicyRule], wanted: &[PolicyRule]) -> Vec<PolicyRule> {
    wanted
        .iter()
        .flat_map(breakdown)
        .filter(|sub| !owner.iter().any(|o| rule_covers(o, sub)))
        .collect()
}

/// Merges rules that differ only in their verbs, as the escalation message shows them.
fn compact(rules: Vec<PolicyRule>) -> Vec<PolicyRule> {
    let mut out: Vec<PolicyRule> = Vec::new();
    for rule in rules {
        let simple = rule.api_groups.len() == 1
            && rule.resources.len() == 1
            && rule.resource_names.len() <= 1
            && rule.non_resource_urls.is_empty();
        let existing = out.iter_mut().find(|r| {
            simple
                && r.non_resource_urls.is_empty()
                && r.api_groups == rule.api_groups
                && r.resources == rule.resources
                && r.resource_names == rule.resource_names
        });
        match existing {
            Some(r) => {
                for verb in rule.verbs {
                    if !r.verbs.contains(&verb) {
                        r.verbs.push(verb);
                    }
                }
            }
            None => out.push(rule),
        }
    }
    out
}

impl Policy {
    /// Checks that `user` holds every right in `rules` within `namespace` ("" for cluster
    /// scope), returning the message kube-apiserver uses when not.
    pub fn confirm_no_escalation(
        &self,
        user: &UserInfo,
        namespace: &str,
        rules: &[PolicyRule],
    ) -> Result<(), String> {
        if user.is_superuser() {
            return Ok(());
        }
        let (owned, errors) = self.rules_for(user, namespace);
        let missing = missing_rights(&owned, rules);
        if missing.is_empty() {
            return Ok(());
        }
        let descriptions: BTreeSet<String> = compact(missing).iter().map(compact_string).collect();
        let groups: Vec<String> = user
            .groups
            .iter()
            .map(|g| serde_json::to_string(g).unwrap_or_default())
            .collect();
        let mut msg = format!(
            "user \"{}\" (groups=[{}]) is attempting to grant RBAC permissions not currently held:\n{}",
            user.name,
            groups.join(" "),
            descriptions.into_iter().collect::<Vec<_>>().join("\n")
        );
        // Go prints a one-element slice of one aggregate error.
        match errors.len() {
            0 => {}
            1 => msg.push_str(&format!("; resolution errors: [{}]", errors[0])),
            _ => msg.push_str(&format!("; resolution errors: [[{}]]", errors.join(", "))),
        }
        Err(msg)
    }

    fn may(
        &self,
        user: &UserInfo,
        verb: &str,
        resource: &str,
        namespace: &str,
        name: &str,
    ) -> bool {
        let attrs = Attributes::resource(
            user.clone(),
            verb,
            ResourceRequest {
                api_group: RBAC_GROUP.to_string(),
                resource: resource.to_string(),
                namespace: namespace.to_string(),
                name: name.to_string(),
                ..ResourceRequest::default()
            },
        );
        self.authorize(&attrs).allowed()
    }

    /// Admits the create or update of a Role (namespace set) or ClusterRole (namespace "").
    pub fn check_role_write(&self, user: &UserInfo, role: &Value) -> Result<(), EscalationError> {
        let namespace = meta_str(role, "namespace");
        let name = meta_str(role, "name");
        let resource = if namespace.is_empty() {
            "clusterroles"
        } else {
            "roles"
        };
        if self.may(user, "escalate", resource, namespace, name) {
            return Ok(());
        }
        let rules: Vec<PolicyRule> = role
            .get("rules")
            .and_then(|r| serde::Deserialize::deserialize(r).ok())
            .unwrap_or_default();
        self.confirm_no_escalation(user, namespace, &rules)
            .map_err(|m| escalation_error(resource, name, m))
    }

    /// Admits the create or update of a RoleBinding (namespace set) or ClusterRoleBinding.
    pub fn check_binding_write(
        &self,
        user: &UserInfo,
        binding: &Value,
    ) -> Result<(), EscalationError> {
        let namespace = meta_str(binding, "namespace");
        let name = meta_str(binding, "name");
        let resource = if namespace.is_empty() {
            "clusterrolebindings"
        } else {
            "rolebindings"
        };
        let role_ref: RoleRef = binding
            .get("roleRef")
            .and_then(|r| serde::Deserialize::deserialize(r).ok())
            .unwrap_or_default();
        let role_resource = if role_ref.kind == "Role" {
            "roles"
        } else {
            "clusterroles"
        };
        if user.is_superuser() || self.may(user, "bind", role_resource, namespace, &role_ref.name) {
            return Ok(());
        }
        let rules = self
            .role_ref_rules(&role_ref, namespace)
            .map_err(|m| escalation_error(resource, name, m))?;
        self.confirm_no_escalation(user, namespace, &rules)
            .map_err(|m| escalation_error(resource, name, m))
    }
}

fn meta_str<'a>(object: &'a Value, key: &str) -> &'a str {
    object
        .get("metadata")
        .and_then(|m| m.get(key))
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn escalation_error(resource: &str, name: &str, message: String) -> EscalationError {
    EscalationError {
        status: forbidden_body(RBAC_GROUP, resource, name, &message),
        message,
    }
}
