//! The built-in resource table, as kube-apiserver 1.33 discovers it.

use super::{CRUD_VERBS, ResourceDef, Shape, Subresource, storage_version_hash};

/// A compact row of the table.
struct Row {
    group: &'static str,
    kind: &'static str,
    plural: &'static str,
    namespaced: bool,
    short: &'static [&'static str],
    categories: &'static [&'static str],
    verbs: &'static [&'static str],
    subresources: &'static [(&'static str, &'static [&'static str])],
    shape: Shape,
    /// `(group, version)` objects are stored as, when not their own.
    stored_as: Option<(&'static str, &'static str)>,
}

const STATUS: (&str, &[&str]) = ("status", &["get", "patch", "update"]);
const SCALE: (&str, &[&str]) = ("scale", &["get", "patch", "update"]);
const CREATE_ONLY: &[&str] = &["create"];
const ALL: &[&str] = &["all"];

const fn row(
    group: &'static str,
    kind: &'static str,
    plural: &'static str,
    namespaced: bool,
) -> Row {
    Row {
        group,
        kind,
        plural,
        namespaced,
        short: &[],
        categories: &[],
        verbs: CRUD_VERBS,
        subresources: &[],
        shape: Shape::Data,
        stored_as: None,
    }
}

const ROWS: &[Row] = &[
    Row {
        short: &["ns"],
        verbs: &[
            "create", "delete", "get", "list", "patch", "update", "watch",
        ],
        subresources: &[("finalize", &["update"]), STATUS],
        ..row("", "Namespace", "namespaces", false)
    },
    Row {
        short: &["cm"],
        ..row("", "ConfigMap", "configmaps", true)
    },
    row("", "Secret", "secrets", true),
    Row {
        short: &["sa"],
        subresources: &[("token", CREATE_ONLY)],
        ..row("", "ServiceAccount", "serviceaccounts", true)
    },
    Row {
        short: &["svc"],
        categories: ALL,
        subresources: &[STATUS],
        shape: Shape::SpecStatus,
        ..row("", "Service", "services", true)
    },
    Row {
        short: &["po"],
        categories: ALL,
        subresources: &[("log", &["get"]), STATUS],
        ..row("", "Pod", "pods", true)
    },
    Row {
        short: &["ep"],
        ..row("", "Endpoints", "endpoints", true)
    },
    Row {
        short: &["ev"],
        ..row("", "Event", "events", true)
    },
    Row {
        short: &["deploy"],
        categories: ALL,
        subresources: &[SCALE, STATUS],
        shape: Shape::SpecStatus,
        ..row("apps", "Deployment", "deployments", true)
    },
    Row {
        short: &["sts"],
        categories: ALL,
        subresources: &[SCALE, STATUS],
        shape: Shape::SpecStatus,
        ..row("apps", "StatefulSet", "statefulsets", true)
    },
    Row {
        short: &["ds"],
        categories: ALL,
        subresources: &[STATUS],
        shape: Shape::SpecStatus,
        ..row("apps", "DaemonSet", "daemonsets", true)
    },
    Row {
        short: &["rs"],
        categories: ALL,
        subresources: &[SCALE, STATUS],
        shape: Shape::SpecStatus,
        ..row("apps", "ReplicaSet", "replicasets", true)
    },
    row("apps", "ControllerRevision", "controllerrevisions", true),
    Row {
        categories: ALL,
        subresources: &[STATUS],
        shape: Shape::SpecStatus,
        ..row("batch", "Job", "jobs", true)
    },
    // What common charts (bitnami's, ingress-nginx) render besides workloads.
    Row {
        short: &["netpol"],
        shape: Shape::SpecStatus,
        ..row(
            "networking.k8s.io",
            "NetworkPolicy",
            "networkpolicies",
            true,
        )
    },
    Row {
        short: &["ing"],
        subresources: &[STATUS],
        shape: Shape::SpecStatus,
        ..row("networking.k8s.io", "Ingress", "ingresses", true)
    },
    Row {
        shape: Shape::SpecStatus,
        ..row("networking.k8s.io", "IngressClass", "ingressclasses", false)
    },
    Row {
        short: &["pdb"],
        subresources: &[STATUS],
        shape: Shape::SpecStatus,
        ..row(
            "policy",
            "PodDisruptionBudget",
            "poddisruptionbudgets",
            true,
        )
    },
    Row {
        short: &["ev"],
        stored_as: Some(("", "v1")),
        ..row("events.k8s.io", "Event", "events", true)
    },
    row("coordination.k8s.io", "Lease", "leases", true),
    row("rbac.authorization.k8s.io", "Role", "roles", true),
    row(
        "rbac.authorization.k8s.io",
        "RoleBinding",
        "rolebindings",
        true,
    ),
    row(
        "rbac.authorization.k8s.io",
        "ClusterRole",
        "clusterroles",
        false,
    ),
    row(
        "rbac.authorization.k8s.io",
        "ClusterRoleBinding",
        "clusterrolebindings",
        false,
    ),
    Row {
        short: &["crd", "crds"],
        categories: &["api-extensions"],
        subresources: &[STATUS],
        shape: Shape::SpecStatus,
        // CRDs are still stored as v1beta1, which their storageVersionHash shows.
        stored_as: Some(("apiextensions.k8s.io", "v1beta1")),
        ..row(
            "apiextensions.k8s.io",
            "CustomResourceDefinition",
            "customresourcedefinitions",
            false,
        )
    },
    Row {
        verbs: CREATE_ONLY,
        ..row(
            "authentication.k8s.io",
            "TokenReview",
            "tokenreviews",
            false,
        )
    },
    Row {
        verbs: CREATE_ONLY,
        ..row(
            "authentication.k8s.io",
            "SelfSubjectReview",
            "selfsubjectreviews",
            false,
        )
    },
    Row {
        verbs: CREATE_ONLY,
        ..row(
            "authorization.k8s.io",
            "LocalSubjectAccessReview",
            "localsubjectaccessreviews",
            true,
        )
    },
    Row {
        verbs: CREATE_ONLY,
        ..row(
            "authorization.k8s.io",
            "SelfSubjectAccessReview",
            "selfsubjectaccessreviews",
            false,
        )
    },
    Row {
        verbs: CREATE_ONLY,
        ..row(
            "authorization.k8s.io",
            "SelfSubjectRulesReview",
            "selfsubjectrulesreviews",
            false,
        )
    },
    Row {
        verbs: CREATE_ONLY,
        ..row(
            "authorization.k8s.io",
            "SubjectAccessReview",
            "subjectaccessreviews",
            false,
        )
    },
];

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

fn subresource(plural: &str, (name, verbs): (&str, &[&str])) -> Subresource {
    let gvk = match (plural, name) {
        (_, "scale") => Some(("autoscaling", "v1", "Scale")),
        ("serviceaccounts", "token") => Some(("authentication.k8s.io", "v1", "TokenRequest")),
        _ => None,
    };
    Subresource {
        name: name.into(),
        verbs: strings(verbs),
        gvk: gvk.map(|(g, v, k)| (g.into(), v.into(), k.into())),
    }
}

/// Every built-in resource.
pub fn builtin_resources() -> Vec<ResourceDef> {
    ROWS.iter()
        .map(|r| {
            let stored = r.verbs != CREATE_ONLY;
            let (sg, sv) = r.stored_as.unwrap_or((r.group, "v1"));
            ResourceDef {
                group: r.group.into(),
                version: "v1".into(),
                kind: r.kind.into(),
                plural: r.plural.into(),
                singular: r.kind.to_ascii_lowercase(),
                namespaced: r.namespaced,
                short_names: strings(r.short),
                categories: strings(r.categories),
                verbs: strings(r.verbs),
                subresources: r
                    .subresources
                    .iter()
                    .map(|s| subresource(r.plural, *s))
                    .collect(),
                shape: r.shape,
                storage_key: format!("{sg}/{}", r.plural),
                storage_hash: stored.then(|| storage_version_hash(sg, sv, r.kind)),
                crd: None,
            }
        })
        .collect()
}
