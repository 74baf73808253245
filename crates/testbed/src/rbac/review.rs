//! The authorization reviews: SelfSubjectAccessReview, SubjectAccessReview,
//! LocalSubjectAccessReview (`kubectl auth can-i`) and SelfSubjectRulesReview (`--list`).

use serde_json::{Value, json};

use super::{Attributes, Policy, PolicyRule, ResourceRequest, UserInfo};
use crate::field_error::{FieldError, invalid_status};

const GROUP: &str = "authorization.k8s.io";

/// Which access review is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccessReviewKind {
    /// About the requester.
    SelfSubject,
    /// About `spec.user` / `spec.groups`, cluster-wide.
    Subject,
    /// About `spec.user` / `spec.groups` within the namespace of the URL.
    LocalSubject,
}

/// Answers an access review body. Returns the `status` object to put in the 201 response, or
/// the 422 Status body when the spec is invalid. `namespace` is the URL's (for LocalSubject).
pub fn access_review(
    policy: &Policy,
    kind: AccessReviewKind,
    requester: &UserInfo,
    namespace: &str,
    review: &Value,
) -> Result<Value, Value> {
    let spec = review.get("spec").cloned().unwrap_or(Value::Null);
    let resource = spec.get("resourceAttributes").filter(|v| !v.is_null());
    let non_resource = spec.get("nonResourceAttributes").filter(|v| !v.is_null());
    let mut errors = Vec::new();
    if resource.is_some() && non_resource.is_some() {
        errors.push(FieldError::invalid_raw(
            "spec.nonResourceAttributes",
            &go_struct(non_resource),
            "cannot be specified in combination with resourceAttributes",
        ));
    }
    if resource.is_none() && non_resource.is_none() {
        errors.push(FieldError::invalid_raw(
            "spec.resourceAttributes",
            "\"null\"",
            "exactly one of nonResourceAttributes or resourceAttributes must be specified",
        ));
    }
    let user = match kind {
        AccessReviewKind::SelfSubject => requester.clone(),
        AccessReviewKind::Subject | AccessReviewKind::LocalSubject => {
            let user = UserInfo {
                name: str_at(&spec, "user").to_string(),
                groups: spec
                    .get("groups")
                    .and_then(Value::as_array)
                    .map(|g| {
                        g.iter()
                            .filter_map(|x| x.as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default(),
            };
            if user.name.is_empty() && user.groups.is_empty() {
                errors.push(FieldError::invalid_str(
                    "spec.user",
                    "",
                    "at least one of user or group must be specified",
                ));
            }
            user
        }
    };
    if kind == AccessReviewKind::LocalSubject {
        if let Some(r) = resource {
            let ns = str_at(r, "namespace");
            if ns != namespace {
                errors.push(FieldError::invalid_str(
                    "spec.resourceAttributes.namespace",
                    ns,
                    "must match metadata.namespace",
                ));
            }
        }
        if non_resource.is_some() {
            errors.push(FieldError::invalid_raw(
                "spec.nonResourceAttributes",
                &go_struct(non_resource),
                "disallowed on this kind of request",
            ));
        }
    }
    if !errors.is_empty() {
        return Err(invalid_status(GROUP, "", "", &errors));
    }
    let attrs = match (resource, non_resource) {
        (Some(r), _) => Attributes::resource(
            user,
            str_at(r, "verb"),
            ResourceRequest {
                api_group: str_at(r, "group").to_string(),
                api_version: str_at(r, "version").to_string(),
                resource: str_at(r, "resource").to_string(),
                subresource: str_at(r, "subresource").to_string(),
                namespace: str_at(r, "namespace").to_string(),
                name: str_at(r, "name").to_string(),
            },
        ),
        (None, Some(n)) => Attributes::non_resource(user, str_at(n, "verb"), str_at(n, "path")),
        (None, None) => return Err(invalid_status(GROUP, "", "", &errors)),
    };
    let decision = policy.authorize(&attrs);
    let mut status = json!({"allowed": decision.allowed()});
    if !decision.reason().is_empty() {
        status["reason"] = decision.reason().into();
    }
    Ok(status)
}

/// The `status` of a SelfSubjectRulesReview for `user` in `namespace`.
pub fn rules_review(policy: &Policy, user: &UserInfo, namespace: &str) -> Value {
    let (rules, errors) = if user.is_superuser() {
        let all = vec!["*".to_string()];
        (
            vec![
                PolicyRule {
                    verbs: all.clone(),
                    api_groups: all.clone(),
                    resources: all.clone(),
                    ..PolicyRule::default()
                },
                PolicyRule {
                    verbs: all.clone(),
                    non_resource_urls: all,
                    ..PolicyRule::default()
                },
            ],
            Vec::new(),
        )
    } else {
        policy.rules_for(user, namespace)
    };
    let resource_rules: Vec<Value> = rules
        .iter()
        .filter(|r| !r.resources.is_empty())
        .map(|r| {
            PolicyRule {
                non_resource_urls: Vec::new(),
                ..r.clone()
            }
            .to_json()
        })
        .collect();
    let non_resource_rules: Vec<Value> = rules
        .iter()
        .filter(|r| !r.non_resource_urls.is_empty())
        .map(|r| json!({"verbs": r.verbs, "nonResourceURLs": r.non_resource_urls}))
        .collect();
    let mut status = json!({
        "resourceRules": resource_rules,
        "nonResourceRules": non_resource_rules,
        "incomplete": !errors.is_empty(),
    });
    if !errors.is_empty() {
        let text = if errors.len() == 1 {
            errors[0].clone()
        } else {
            format!("[{}]", errors.join(", "))
        };
        status["evaluationError"] = text.into();
    }
    status
}

fn str_at<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Go's `%#v` of a dereferenced attributes struct is long and internal; a compact form that
/// names the fields given is what we show.
fn go_struct(v: Option<&Value>) -> String {
    v.map_or_else(|| "\"null\"".to_string(), Value::to_string)
}
