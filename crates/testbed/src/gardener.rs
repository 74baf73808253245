//! A test double of Gardener's API, not of kube-apiserver: the `Shoot` kind
//! (`core.gardener.cloud/v1beta1`) and its `adminkubeconfig` subresource, served when a test
//! asks for it ([`crate::Builder::with_gardener_shoots`]).
//!
//! Shoots are stored like any object. An `AdminKubeconfigRequest` on a Shoot is checked as
//! gardener-apiserver checks it (kind, `spec.expirationSeconds` of at least 10 minutes,
//! defaulted to an hour and capped at a day; the Shoot must exist and advertise a
//! kube-apiserver address in `status.advertisedAddresses`) and answered with
//! `status.kubeconfig` (the base64 bytes of a kubeconfig) and `status.expirationTimestamp`.
//! Where Gardener signs a client certificate for the shoot's own API server, the double
//! issues a bearer token for the testbed cluster the advertised address names, for the user
//! `gardener.cloud:admin:<requester>` in `system:masters`; that token does not expire.

use crate::resources::{ResourceDef, Shape, Subresource, storage_version_hash};

/// The group of Shoots.
pub const GROUP: &str = "core.gardener.cloud";
/// The served version of Shoots.
pub const VERSION: &str = "v1beta1";
/// The group of `AdminKubeconfigRequest`.
pub const AUTHENTICATION_GROUP: &str = "authentication.gardener.cloud";
/// The version of `AdminKubeconfigRequest`.
pub const AUTHENTICATION_VERSION: &str = "v1alpha1";
/// The subresource that issues admin kubeconfigs.
pub const ADMIN_KUBECONFIG: &str = "adminkubeconfig";
/// The advertised address names gardener-apiserver accepts as a kube-apiserver's.
pub const KUBE_APISERVER_ADDRESSES: &[&str] = &[
    "external",
    "internal",
    "wildcard-tls-seed-bound",
    "unmanaged",
];
/// The shortest lifetime gardener-apiserver issues (10 minutes).
pub const MIN_EXPIRATION_SECONDS: i64 = 600;
/// The lifetime of a request that asks for none (an hour).
pub const DEFAULT_EXPIRATION_SECONDS: i64 = 3600;
/// gardener-apiserver's default `--shoot-admin-kubeconfig-max-expiration` (a day).
pub const MAX_EXPIRATION_SECONDS: i64 = 86_400;

/// The Shoot resource with its `status` and `adminkubeconfig` subresources.
pub fn shoot_resource() -> ResourceDef {
    ResourceDef {
        group: GROUP.into(),
        version: VERSION.into(),
        kind: "Shoot".into(),
        plural: "shoots".into(),
        singular: "shoot".into(),
        namespaced: true,
        short_names: Vec::new(),
        categories: Vec::new(),
        verbs: crate::resources::CRUD_VERBS
            .iter()
            .map(|v| v.to_string())
            .collect(),
        subresources: vec![
            Subresource {
                name: "status".into(),
                verbs: vec!["get".into(), "patch".into(), "update".into()],
                gvk: None,
            },
            Subresource {
                name: ADMIN_KUBECONFIG.into(),
                verbs: vec!["create".into()],
                gvk: Some((
                    AUTHENTICATION_GROUP.into(),
                    AUTHENTICATION_VERSION.into(),
                    "AdminKubeconfigRequest".into(),
                )),
            },
        ],
        shape: Shape::SpecStatus,
        storage_key: format!("{GROUP}/shoots"),
        storage_hash: Some(storage_version_hash(GROUP, VERSION, "Shoot")),
        crd: None,
    }
}
