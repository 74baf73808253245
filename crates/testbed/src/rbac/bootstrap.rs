//! The default ClusterRoles and ClusterRoleBindings kube-apiserver creates at start-up, as far
//! as clients and our tests rely on them: superusers, discovery, self-reviews, public info,
//! issuer discovery, and the user-facing `view`, `edit` and `admin` roles (aggregated).

use serde_json::{Value, json};

use crate::resources::CRUD_VERBS;

const RBAC_API: &str = "rbac.authorization.k8s.io/v1";
const READ: &[&str] = &["get", "list", "watch"];
const WRITE: &[&str] = &["create", "delete", "deletecollection", "patch", "update"];

fn rule(groups: &[&str], resources: &[&str], verbs: &[&str]) -> Value {
    json!({"verbs": verbs, "apiGroups": groups, "resources": resources})
}

fn url_rule(urls: &[&str], verbs: &[&str]) -> Value {
    json!({"verbs": verbs, "nonResourceURLs": urls})
}

fn cluster_role(name: &str, extra_labels: &[(&str, &str)], rules: Vec<Value>) -> Value {
    let mut labels = serde_json::Map::new();
    labels.insert("kubernetes.io/bootstrapping".into(), "rbac-defaults".into());
    for (k, v) in extra_labels {
        labels.insert((*k).into(), (*v).into());
    }
    json!({
        "apiVersion": RBAC_API,
        "kind": "ClusterRole",
        "metadata": {
            "name": name,
            "labels": labels,
            "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}
        },
        "rules": rules
    })
}

fn aggregated_role(name: &str, extra_labels: &[(&str, &str)], selector_label: &str) -> Value {
    let mut role = cluster_role(name, extra_labels, Vec::new());
    role["aggregationRule"] =
        json!({"clusterRoleSelectors": [{"matchLabels": {selector_label: "true"}}]});
    role
}

fn binding(name: &str, role: &str, groups: &[&str]) -> Value {
    let subjects: Vec<Value> = groups
        .iter()
        .map(|g| json!({"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": g}))
        .collect();
    json!({
        "apiVersion": RBAC_API,
        "kind": "ClusterRoleBinding",
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
            "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}
        },
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": subjects
    })
}

const TO_VIEW: &str = "rbac.authorization.k8s.io/aggregate-to-view";
const TO_EDIT: &str = "rbac.authorization.k8s.io/aggregate-to-edit";
const TO_ADMIN: &str = "rbac.authorization.k8s.io/aggregate-to-admin";

fn view_rules() -> Vec<Value> {
    vec![
        rule(
            &[""],
            &[
                "configmaps",
                "endpoints",
                "persistentvolumeclaims",
                "persistentvolumeclaims/status",
                "pods",
                "replicationcontrollers",
                "replicationcontrollers/scale",
                "serviceaccounts",
                "services",
                "services/status",
            ],
            READ,
        ),
        rule(
            &[""],
            &[
                "bindings",
                "events",
                "limitranges",
                "namespaces/status",
                "pods/log",
                "pods/status",
                "replicationcontrollers/status",
                "resourcequotas",
                "resourcequotas/status",
            ],
            READ,
        ),
        rule(&[""], &["namespaces"], READ),
        rule(&["discovery.k8s.io"], &["endpointslices"], READ),
        rule(
            &["apps"],
            &[
                "controllerrevisions",
                "daemonsets",
                "daemonsets/status",
                "deployments",
                "deployments/scale",
                "deployments/status",
                "replicasets",
                "replicasets/scale",
                "replicasets/status",
                "statefulsets",
                "statefulsets/scale",
                "statefulsets/status",
            ],
            READ,
        ),
        rule(
            &["autoscaling"],
            &[
                "horizontalpodautoscalers",
                "horizontalpodautoscalers/status",
            ],
            READ,
        ),
        rule(
            &["batch"],
            &["cronjobs", "cronjobs/status", "jobs", "jobs/status"],
            READ,
        ),
        rule(
            &["policy"],
            &["poddisruptionbudgets", "poddisruptionbudgets/status"],
            READ,
        ),
        rule(
            &["networking.k8s.io"],
            &["ingresses", "ingresses/status", "networkpolicies"],
            READ,
        ),
    ]
}

fn edit_rules() -> Vec<Value> {
    vec![
        rule(
            &[""],
            &[
                "pods/attach",
                "pods/exec",
                "pods/portforward",
                "pods/proxy",
                "secrets",
                "services/proxy",
            ],
            READ,
        ),
        rule(&[""], &["serviceaccounts"], &["impersonate"]),
        rule(
            &[""],
            &[
                "pods",
                "pods/attach",
                "pods/exec",
                "pods/portforward",
                "pods/proxy",
            ],
            WRITE,
        ),
        rule(&[""], &["pods/eviction"], &["create"]),
        rule(
            &[""],
            &[
                "configmaps",
                "events",
                "persistentvolumeclaims",
                "replicationcontrollers",
                "replicationcontrollers/scale",
                "secrets",
                "serviceaccounts",
                "services",
                "services/proxy",
            ],
            WRITE,
        ),
        rule(&[""], &["serviceaccounts/token"], &["create"]),
        rule(
            &["apps"],
            &[
                "daemonsets",
                "deployments",
                "deployments/rollback",
                "deployments/scale",
                "replicasets",
                "replicasets/scale",
                "statefulsets",
                "statefulsets/scale",
            ],
            WRITE,
        ),
        rule(&["autoscaling"], &["horizontalpodautoscalers"], WRITE),
        rule(&["batch"], &["cronjobs", "jobs"], WRITE),
        rule(&["policy"], &["poddisruptionbudgets"], WRITE),
        rule(
            &["networking.k8s.io"],
            &["ingresses", "networkpolicies"],
            WRITE,
        ),
        rule(&["coordination.k8s.io"], &["leases"], CRUD_VERBS),
    ]
}

fn admin_rules() -> Vec<Value> {
    vec![
        rule(
            &["authorization.k8s.io"],
            &["localsubjectaccessreviews"],
            &["create"],
        ),
        rule(
            &["rbac.authorization.k8s.io"],
            &["rolebindings", "roles"],
            CRUD_VERBS,
        ),
    ]
}

/// The bootstrap ClusterRoles and ClusterRoleBindings, ready to store in a new cluster.
pub fn objects() -> Vec<Value> {
    let discovery_urls = [
        "/api",
        "/api/*",
        "/apis",
        "/apis/*",
        "/healthz",
        "/livez",
        "/openapi",
        "/openapi/*",
        "/readyz",
        "/version",
        "/version/",
    ];
    let public_urls = ["/healthz", "/livez", "/readyz", "/version", "/version/"];
    let issuer_urls = [
        "/.well-known/openid-configuration",
        "/.well-known/openid-configuration/",
        "/openid/v1/jwks",
        "/openid/v1/jwks/",
    ];
    vec![
        cluster_role(
            "cluster-admin",
            &[],
            vec![rule(&["*"], &["*"], &["*"]), url_rule(&["*"], &["*"])],
        ),
        cluster_role(
            "system:discovery",
            &[],
            vec![url_rule(&discovery_urls, &["get"])],
        ),
        cluster_role(
            "system:basic-user",
            &[],
            vec![
                rule(
                    &["authorization.k8s.io"],
                    &["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                    &["create"],
                ),
                rule(
                    &["authentication.k8s.io"],
                    &["selfsubjectreviews"],
                    &["create"],
                ),
            ],
        ),
        cluster_role(
            "system:public-info-viewer",
            &[],
            vec![url_rule(&public_urls, &["get"])],
        ),
        cluster_role(
            "system:service-account-issuer-discovery",
            &[],
            vec![url_rule(&issuer_urls, &["get"])],
        ),
        aggregated_role("admin", &[], TO_ADMIN),
        aggregated_role("edit", &[(TO_ADMIN, "true")], TO_EDIT),
        aggregated_role("view", &[(TO_EDIT, "true")], TO_VIEW),
        cluster_role(
            "system:aggregate-to-admin",
            &[(TO_ADMIN, "true")],
            admin_rules(),
        ),
        cluster_role(
            "system:aggregate-to-edit",
            &[(TO_EDIT, "true")],
            edit_rules(),
        ),
        cluster_role(
            "system:aggregate-to-view",
            &[(TO_VIEW, "true")],
            view_rules(),
        ),
        binding("cluster-admin", "cluster-admin", &["system:masters"]),
        binding(
            "system:discovery",
            "system:discovery",
            &["system:authenticated"],
        ),
        binding(
            "system:basic-user",
            "system:basic-user",
            &["system:authenticated"],
        ),
        binding(
            "system:public-info-viewer",
            "system:public-info-viewer",
            &["system:authenticated", "system:unauthenticated"],
        ),
        binding(
            "system:service-account-issuer-discovery",
            "system:service-account-issuer-discovery",
            &["system:serviceaccounts"],
        ),
    ]
}
