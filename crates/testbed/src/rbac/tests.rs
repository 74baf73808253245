//! Authorization decisions and messages pinned to the rbac and access-review recordings.

use serde_json::{Value, json};

use super::escalation::compact_string;
use super::review::{AccessReviewKind, access_review, rules_review};
use super::*;

const NS: &str = "c-rbac-abc123";

fn sa() -> UserInfo {
    UserInfo::service_account(NS, "sa1")
}

fn res(group: &str, resource: &str, namespace: &str, name: &str) -> ResourceRequest {
    ResourceRequest {
        api_group: group.into(),
        resource: resource.into(),
        namespace: namespace.into(),
        name: name.into(),
        ..ResourceRequest::default()
    }
}

fn role(name: &str, rules: Value) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
           "metadata": {"name": name, "namespace": NS}, "rules": rules})
}

fn role_binding(name: &str, kind: &str, role: &str) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
           "metadata": {"name": name, "namespace": NS},
           "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": role},
           "subjects": [{"kind": "ServiceAccount", "name": "sa1", "namespace": NS}]})
}

fn policy_with(extra: Vec<Value>) -> Policy {
    let mut objects = bootstrap::objects();
    objects.extend(extra);
    Policy::from_objects(&objects)
}

fn allowed(policy: &Policy, verb: &str, r: ResourceRequest) -> bool {
    policy
        .authorize(&Attributes::resource(sa(), verb, r))
        .allowed()
}

#[test]
fn forbidden_messages_match_the_recordings() {
    let cases = [
        (
            "list",
            res("", "configmaps", NS, ""),
            format!(
                "configmaps is forbidden: User \"system:serviceaccount:{NS}:sa1\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"{NS}\""
            ),
        ),
        (
            "get",
            res("", "configmaps", NS, "cm1"),
            format!(
                "configmaps \"cm1\" is forbidden: User \"system:serviceaccount:{NS}:sa1\" cannot get resource \"configmaps\" in API group \"\" in the namespace \"{NS}\""
            ),
        ),
        (
            "list",
            res("", "namespaces", "", ""),
            format!(
                "namespaces is forbidden: User \"system:serviceaccount:{NS}:sa1\" cannot list resource \"namespaces\" in API group \"\" at the cluster scope"
            ),
        ),
        (
            "list",
            res("apps", "deployments", NS, ""),
            format!(
                "deployments.apps is forbidden: User \"system:serviceaccount:{NS}:sa1\" cannot list resource \"deployments\" in API group \"apps\" in the namespace \"{NS}\""
            ),
        ),
    ];
    let policy = policy_with(vec![]);
    for (verb, r, message) in cases {
        let attrs = Attributes::resource(sa(), verb, r);
        let decision = policy.authorize(&attrs);
        assert!(!decision.allowed());
        let status = forbidden_status(&attrs, decision.reason());
        assert_eq!(status["message"], message);
        assert_eq!(status["reason"], "Forbidden");
        assert_eq!(status["code"], 403);
    }
    let mut log = res("", "pods", NS, "p1");
    log.subresource = "log".into();
    let attrs = Attributes::resource(sa(), "get", log);
    assert_eq!(
        forbidden_status(&attrs, ""),
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": format!("pods \"p1\" is forbidden: User \"system:serviceaccount:{NS}:sa1\" cannot get resource \"pods/log\" in API group \"\" in the namespace \"{NS}\""),
               "reason": "Forbidden", "details": {"name": "p1", "kind": "pods"}, "code": 403})
    );
    let apps = forbidden_status(
        &Attributes::resource(sa(), "list", res("apps", "deployments", NS, "")),
        "",
    );
    assert_eq!(
        apps["details"],
        json!({"group": "apps", "kind": "deployments"})
    );
}

#[test]
fn anonymous_non_resource_request_is_worded_as_a_path() {
    let anon = UserInfo::new("system:anonymous", &["system:unauthenticated"]);
    let attrs = Attributes::non_resource(anon, "get", "/api");
    let policy = policy_with(vec![]);
    assert!(!policy.authorize(&attrs).allowed());
    assert_eq!(
        forbidden_status(&attrs, ""),
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": "forbidden: User \"system:anonymous\" cannot get path \"/api\"",
               "reason": "Forbidden", "details": {}, "code": 403})
    );
    let version = Attributes::non_resource(
        UserInfo::new("system:anonymous", &["system:unauthenticated"]),
        "get",
        "/version",
    );
    assert!(policy.authorize(&version).allowed());
}

#[test]
fn a_role_binding_grants_only_its_verbs_in_its_namespace() {
    let policy = policy_with(vec![
        role(
            "read-cm",
            json!([{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch"]}]),
        ),
        role_binding("read-cm", "Role", "read-cm"),
    ]);
    assert!(allowed(&policy, "get", res("", "configmaps", NS, "cm1")));
    assert!(allowed(&policy, "list", res("", "configmaps", NS, "")));
    assert!(!allowed(
        &policy,
        "delete",
        res("", "configmaps", NS, "cm1")
    ));
    assert!(!allowed(&policy, "patch", res("", "configmaps", NS, "cm1")));
    assert!(!allowed(&policy, "list", res("", "secrets", NS, "")));
    assert!(!allowed(
        &policy,
        "list",
        res("", "configmaps", "other", "")
    ));
    assert!(!allowed(&policy, "list", res("", "configmaps", "", "")));
}

#[test]
fn resource_names_limit_named_verbs_and_never_allow_list() {
    let policy = policy_with(vec![
        role(
            "named",
            json!([{"apiGroups": [""], "resources": ["secrets"], "resourceNames": ["s1"], "verbs": ["get", "update", "patch"]}]),
        ),
        role_binding("named", "Role", "named"),
    ]);
    assert!(allowed(&policy, "get", res("", "secrets", NS, "s1")));
    assert!(allowed(&policy, "patch", res("", "secrets", NS, "s1")));
    assert!(!allowed(&policy, "get", res("", "secrets", NS, "s2")));
    assert!(!allowed(&policy, "list", res("", "secrets", NS, "")));
    assert!(!allowed(&policy, "delete", res("", "secrets", NS, "s1")));
}

#[test]
fn cluster_roles_via_cluster_bindings_and_role_bindings() {
    let policy = policy_with(vec![
        json!({"kind": "ClusterRole", "metadata": {"name": "ns-reader"},
               "rules": [{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get", "list"]},
                         {"nonResourceURLs": ["/healthz"], "verbs": ["get"]}]}),
        json!({"kind": "ClusterRoleBinding", "metadata": {"name": "ns-reader"},
               "roleRef": {"kind": "ClusterRole", "name": "ns-reader"},
               "subjects": [{"kind": "ServiceAccount", "name": "sa1", "namespace": NS}]}),
        role_binding("view", "ClusterRole", "view"),
    ]);
    assert!(allowed(&policy, "list", res("", "namespaces", "", "")));
    assert!(allowed(&policy, "get", res("", "namespaces", NS, NS)));
    assert!(!allowed(&policy, "delete", res("", "namespaces", NS, NS)));
    // The aggregated view role, bound in one namespace.
    assert!(allowed(&policy, "list", res("", "pods", NS, "")));
    assert!(allowed(&policy, "list", res("apps", "deployments", NS, "")));
    assert!(!allowed(&policy, "list", res("", "secrets", NS, "")));
    assert!(!allowed(&policy, "list", res("", "pods", "default", "")));
}

#[test]
fn wildcards_and_subresources() {
    let policy = policy_with(vec![
        role(
            "wild",
            json!([
                {"apiGroups": ["*"], "resources": ["*/status"], "verbs": ["update"]},
                {"apiGroups": ["apps"], "resources": ["deployments/scale"], "verbs": ["*"]}
            ]),
        ),
        role_binding("wild", "Role", "wild"),
    ]);
    let mut status = res("batch", "jobs", NS, "j");
    status.subresource = "status".into();
    assert!(allowed(&policy, "update", status));
    let mut scale = res("apps", "deployments", NS, "d");
    scale.subresource = "scale".into();
    assert!(allowed(&policy, "patch", scale));
    assert!(!allowed(
        &policy,
        "patch",
        res("apps", "deployments", NS, "d")
    ));
}

#[test]
fn group_and_user_subjects() {
    let policy = Policy::from_objects(&[
        json!({"kind": "ClusterRole", "metadata": {"name": "r"}, "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]}),
        json!({"kind": "ClusterRoleBinding", "metadata": {"name": "b"}, "roleRef": {"kind": "ClusterRole", "name": "r"},
               "subjects": [{"kind": "Group", "name": format!("system:serviceaccounts:{NS}")}, {"kind": "User", "name": "alice"}]}),
    ]);
    assert!(allowed(&policy, "get", res("", "pods", "x", "p")));
    let alice = Attributes::resource(
        UserInfo::new("alice", &[]),
        "get",
        res("", "pods", "x", "p"),
    );
    let decision = policy.authorize(&alice);
    assert_eq!(
        decision.reason(),
        "RBAC: allowed by ClusterRoleBinding \"b\" of ClusterRole \"r\" to User \"alice\""
    );
    let bob = Attributes::resource(UserInfo::new("bob", &[]), "get", res("", "pods", "x", "p"));
    assert!(!policy.authorize(&bob).allowed());
}

#[test]
fn superusers_may_do_anything() {
    let admin = UserInfo::new("admin", &["system:masters", "system:authenticated"]);
    let attrs = Attributes::resource(admin, "delete", res("", "namespaces", "", "kube-system"));
    assert!(Policy::default().authorize(&attrs).allowed());
}

#[test]
fn missing_roles_are_reported_in_the_deny_reason() {
    let policy = Policy::from_objects(&[role_binding("dangling", "Role", "gone")]);
    let attrs = Attributes::resource(sa(), "get", res("", "pods", NS, "p"));
    let decision = policy.authorize(&attrs);
    assert_eq!(
        decision.reason(),
        "RBAC: role.rbac.authorization.k8s.io \"gone\" not found"
    );
    assert!(
        forbidden_message(&attrs, decision.reason())
            .ends_with(": RBAC: role.rbac.authorization.k8s.io \"gone\" not found")
    );
}

#[test]
fn upsert_and_remove_keep_the_policy_current() {
    let mut policy = Policy::default();
    policy.upsert(&role(
        "r",
        json!([{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]),
    ));
    policy.upsert(&role_binding("b", "Role", "r"));
    assert!(allowed(&policy, "get", res("", "pods", NS, "p")));
    policy.remove("RoleBinding", NS, "b");
    assert!(!allowed(&policy, "get", res("", "pods", NS, "p")));
    policy.upsert(&json!({"kind": "ConfigMap", "metadata": {"name": "x"}}));
    policy.upsert(&json!({"kind": "Role", "rules": "not a list"}));
}

fn review_policy() -> Policy {
    policy_with(vec![
        role(
            "r1",
            json!([
                {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]},
                {"apiGroups": ["apps"], "resources": ["deployments/scale"], "verbs": ["update"]}
            ]),
        ),
        role_binding("rb1", "Role", "r1"),
    ])
}

fn ssar(spec: Value) -> Result<Value, Value> {
    access_review(
        &review_policy(),
        AccessReviewKind::SelfSubject,
        &sa(),
        "",
        &json!({"spec": spec}),
    )
}

#[test]
fn self_subject_access_reviews_match_the_recordings() {
    let reason = format!(
        "RBAC: allowed by RoleBinding \"rb1/{NS}\" of Role \"r1\" to ServiceAccount \"sa1/{NS}\""
    );
    assert_eq!(
        ssar(json!({"resourceAttributes": {"namespace": NS, "verb": "get", "group": "", "resource": "configmaps"}})).unwrap(),
        json!({"allowed": true, "reason": reason})
    );
    assert_eq!(
        ssar(json!({"resourceAttributes": {"namespace": NS, "verb": "delete", "resource": "configmaps"}})).unwrap(),
        json!({"allowed": false})
    );
    assert_eq!(
        ssar(json!({"resourceAttributes": {"namespace": NS, "verb": "update", "group": "apps", "resource": "deployments", "name": "x", "subresource": "scale"}})).unwrap()["allowed"],
        true
    );
    assert_eq!(
        ssar(json!({"resourceAttributes": {"namespace": "", "verb": "get", "resource": "configmaps"}})).unwrap(),
        json!({"allowed": false})
    );
    assert_eq!(
        ssar(json!({"nonResourceAttributes": {"path": "/api", "verb": "get"}})).unwrap(),
        json!({"allowed": true, "reason": "RBAC: allowed by ClusterRoleBinding \"system:discovery\" of ClusterRole \"system:discovery\" to Group \"system:authenticated\""})
    );
    assert_eq!(
        ssar(json!({"nonResourceAttributes": {"path": "/metrics", "verb": "get"}})).unwrap(),
        json!({"allowed": false})
    );
    assert_eq!(
        ssar(json!({"resourceAttributes": {"verb": "create", "group": "authorization.k8s.io", "resource": "selfsubjectaccessreviews"}})).unwrap(),
        json!({"allowed": true, "reason": "RBAC: allowed by ClusterRoleBinding \"system:basic-user\" of ClusterRole \"system:basic-user\" to Group \"system:authenticated\""})
    );
}

#[test]
fn invalid_review_specs_match_the_recordings() {
    assert_eq!(
        ssar(json!({})).unwrap_err(),
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": ".authorization.k8s.io \"\" is invalid: spec.resourceAttributes: Invalid value: \"null\": exactly one of nonResourceAttributes or resourceAttributes must be specified",
               "reason": "Invalid",
               "details": {"group": "authorization.k8s.io", "causes": [{"reason": "FieldValueInvalid", "message": "Invalid value: \"null\": exactly one of nonResourceAttributes or resourceAttributes must be specified", "field": "spec.resourceAttributes"}]},
               "code": 422})
    );
    let policy = review_policy();
    let err = access_review(
        &policy,
        AccessReviewKind::Subject,
        &sa(),
        "",
        &json!({"spec": {"resourceAttributes": {"verb": "list", "resource": "configmaps"}}}),
    )
    .unwrap_err();
    assert_eq!(
        err["message"],
        ".authorization.k8s.io \"\" is invalid: spec.user: Invalid value: \"\": at least one of user or group must be specified"
    );
    let err = access_review(&policy, AccessReviewKind::LocalSubject, &sa(), NS,
        &json!({"spec": {"user": "x", "resourceAttributes": {"namespace": "default", "verb": "get", "resource": "configmaps"}}})).unwrap_err();
    assert_eq!(
        err["message"],
        ".authorization.k8s.io \"\" is invalid: spec.resourceAttributes.namespace: Invalid value: \"default\": must match metadata.namespace"
    );
    assert_eq!(
        err["details"]["causes"][0]["field"],
        "spec.resourceAttributes.namespace"
    );
}

#[test]
fn subject_access_reviews_evaluate_the_named_user() {
    let policy = review_policy();
    let admin = UserInfo::new("admin", &["system:masters"]);
    let sar = access_review(&policy, AccessReviewKind::Subject, &admin, "", &json!({"spec": {
        "user": format!("system:serviceaccount:{NS}:sa1"),
        "groups": ["system:serviceaccounts", format!("system:serviceaccounts:{NS}"), "system:authenticated"],
        "resourceAttributes": {"namespace": NS, "verb": "list", "resource": "configmaps"}}})).unwrap();
    assert_eq!(sar["allowed"], true);
    let denied = access_review(&policy, AccessReviewKind::Subject, &admin, "", &json!({"spec": {
        "user": "nobody", "resourceAttributes": {"namespace": NS, "verb": "list", "resource": "configmaps"}}})).unwrap();
    assert_eq!(denied, json!({"allowed": false}));
    let local = access_review(
        &policy,
        AccessReviewKind::LocalSubject,
        &admin,
        NS,
        &json!({"spec": {
        "user": format!("system:serviceaccount:{NS}:sa1"), "groups": ["system:authenticated"],
        "resourceAttributes": {"namespace": NS, "verb": "get", "resource": "configmaps"}}}),
    )
    .unwrap();
    assert_eq!(
        local["reason"],
        format!(
            "RBAC: allowed by RoleBinding \"rb1/{NS}\" of Role \"r1\" to ServiceAccount \"sa1/{NS}\""
        )
    );
    let admin_self = access_review(
        &policy,
        AccessReviewKind::SelfSubject,
        &admin,
        "",
        &json!({"spec": {
        "resourceAttributes": {"namespace": NS, "verb": "delete", "resource": "configmaps"}}}),
    )
    .unwrap();
    assert_eq!(admin_self["allowed"], true);
}

#[test]
fn rules_review_lists_bound_and_built_in_rules() {
    let status = rules_review(&review_policy(), &sa(), NS);
    assert_eq!(status["incomplete"], false);
    let rules = status["resourceRules"].as_array().unwrap();
    for expected in [
        json!({"verbs": ["get", "list"], "apiGroups": [""], "resources": ["configmaps"]}),
        json!({"verbs": ["update"], "apiGroups": ["apps"], "resources": ["deployments/scale"]}),
        json!({"verbs": ["create"], "apiGroups": ["authorization.k8s.io"], "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]}),
        json!({"verbs": ["create"], "apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"]}),
    ] {
        assert!(rules.contains(&expected), "{expected}");
    }
    let urls = status["nonResourceRules"].as_array().unwrap();
    assert_eq!(urls.len(), 3);
    assert!(urls.iter().all(|r| r["verbs"] == json!(["get"])));
    let admin = rules_review(
        &Policy::default(),
        &UserInfo::new("a", &["system:masters"]),
        NS,
    );
    assert_eq!(
        admin["resourceRules"],
        json!([{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}])
    );
    let broken = rules_review(
        &Policy::from_objects(&[role_binding("x", "Role", "gone")]),
        &sa(),
        NS,
    );
    assert_eq!(broken["incomplete"], true);
    assert_eq!(
        broken["evaluationError"],
        "role.rbac.authorization.k8s.io \"gone\" not found"
    );
}

#[test]
fn escalation_is_refused_with_the_recorded_message() {
    let policy = policy_with(vec![
        role(
            "rbac-writer",
            json!([{"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles"], "verbs": ["create"]}]),
        ),
        role_binding("rbac-writer", "Role", "rbac-writer"),
        role(
            "read-cm",
            json!([{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch"]}]),
        ),
        role_binding("read-cm", "Role", "read-cm"),
    ]);
    let within = role(
        "sub-read",
        json!([{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]),
    );
    assert!(policy.check_role_write(&sa(), &within).is_ok());
    let escalate = role(
        "escalate",
        json!([{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["delete"]}]),
    );
    let err = policy.check_role_write(&sa(), &escalate).unwrap_err();
    assert_eq!(
        err.status,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": format!("roles.rbac.authorization.k8s.io \"escalate\" is forbidden: user \"system:serviceaccount:{NS}:sa1\" (groups=[\"system:serviceaccounts\" \"system:serviceaccounts:{NS}\" \"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n{{APIGroups:[\"\"], Resources:[\"configmaps\"], Verbs:[\"delete\"]}}"),
               "reason": "Forbidden",
               "details": {"name": "escalate", "group": "rbac.authorization.k8s.io", "kind": "roles"},
               "code": 403})
    );
    let admin = UserInfo::new("admin", &["system:masters"]);
    assert!(policy.check_role_write(&admin, &escalate).is_ok());
}

#[test]
fn missing_rights_are_compacted_per_resource() {
    let policy = Policy::default();
    let rules: Vec<PolicyRule> = serde_json::from_value(json!([
        {"apiGroups": ["", "apps"], "resources": ["pods"], "verbs": ["get", "list"]},
        {"nonResourceURLs": ["/x"], "verbs": ["get"]}
    ]))
    .unwrap();
    let msg = policy
        .confirm_no_escalation(&UserInfo::new("u", &["g"]), "ns", &rules)
        .unwrap_err();
    assert_eq!(
        msg,
        "user \"u\" (groups=[\"g\"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"get\" \"list\"]}\n{APIGroups:[\"apps\"], Resources:[\"pods\"], Verbs:[\"get\" \"list\"]}\n{NonResourceURLs:[\"/x\"], Verbs:[\"get\"]}"
    );
}

#[test]
fn bindings_need_bind_or_the_rights_of_the_role() {
    let policy = policy_with(vec![
        role(
            "small",
            json!([{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]),
        ),
        role_binding("small", "Role", "small"),
        json!({"kind": "Role", "metadata": {"name": "binder", "namespace": NS},
               "rules": [{"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles"], "verbs": ["bind"], "resourceNames": ["big"]}]}),
        role_binding("binder", "Role", "binder"),
        role(
            "big",
            json!([{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]),
        ),
        role(
            "other-big",
            json!([{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]),
        ),
    ]);
    assert!(
        policy
            .check_binding_write(&sa(), &role_binding("b1", "Role", "small"))
            .is_ok()
    );
    assert!(
        policy
            .check_binding_write(&sa(), &role_binding("b2", "Role", "big"))
            .is_ok()
    );
    let err = policy
        .check_binding_write(&sa(), &role_binding("b3", "Role", "other-big"))
        .unwrap_err();
    assert_eq!(err.status["details"]["kind"], "rolebindings");
    let err = policy
        .check_binding_write(&sa(), &role_binding("b4", "Role", "nope"))
        .unwrap_err();
    assert_eq!(
        err.message,
        "role.rbac.authorization.k8s.io \"nope\" not found"
    );
}

#[test]
fn nested_aggregation_reaches_admin() {
    let policy = policy_with(vec![role_binding("admin", "ClusterRole", "admin")]);
    assert!(allowed(
        &policy,
        "create",
        res("rbac.authorization.k8s.io", "roles", NS, "")
    ));
    assert!(allowed(&policy, "delete", res("", "secrets", NS, "s")));
    assert!(allowed(&policy, "watch", res("", "pods", NS, "")));
    let view = policy.aggregated_rules("view").unwrap();
    assert!(
        view.iter()
            .any(|r| r.resources.contains(&"pods".to_string()))
    );
    assert!(policy.aggregated_rules("cluster-admin").is_none());
}

#[test]
fn compact_string_quotes_like_go() {
    let rule: PolicyRule = serde_json::from_value(
        json!({"apiGroups": [""], "resources": ["a"], "resourceNames": ["n"], "verbs": ["get"]}),
    )
    .unwrap();
    assert_eq!(
        compact_string(&rule),
        "{APIGroups:[\"\"], Resources:[\"a\"], ResourceNames:[\"n\"], Verbs:[\"get\"]}"
    );
}
