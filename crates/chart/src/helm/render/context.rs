//! Helm v4.1.4's default `.Capabilities` without a cluster: Kubernetes v1.35.0, the API
//! versions of its client-go scheme, and its own build information, on top of the
//! [`objects`](crate::helm::objects) that templates see.

use std::rc::Rc;

use crate::helm::objects::{ApiVersions, Capabilities, HelmVersion, KubeVersion};

/// The Kubernetes version helm v4.1.4's release binary assumes without `--kube-version`.
pub const DEFAULT_KUBE_VERSION: &str = "v1.35.0";

/// The API versions helm v4.1.4 reports without a cluster (its client-go scheme), in its order.
pub const DEFAULT_API_VERSIONS: &[&str] = &[
    "v1",
    "admissionregistration.k8s.io/v1",
    "admissionregistration.k8s.io/v1alpha1",
    "admissionregistration.k8s.io/v1beta1",
    "internal.apiserver.k8s.io/v1alpha1",
    "apps/v1",
    "apps/v1beta1",
    "apps/v1beta2",
    "authentication.k8s.io/v1",
    "authentication.k8s.io/v1alpha1",
    "authentication.k8s.io/v1beta1",
    "authorization.k8s.io/v1",
    "authorization.k8s.io/v1beta1",
    "autoscaling/v1",
    "autoscaling/v2",
    "autoscaling/v2beta1",
    "autoscaling/v2beta2",
    "batch/v1",
    "batch/v1beta1",
    "certificates.k8s.io/v1",
    "certificates.k8s.io/v1beta1",
    "certificates.k8s.io/v1alpha1",
    "coordination.k8s.io/v1alpha2",
    "coordination.k8s.io/v1beta1",
    "coordination.k8s.io/v1",
    "discovery.k8s.io/v1",
    "discovery.k8s.io/v1beta1",
    "events.k8s.io/v1",
    "events.k8s.io/v1beta1",
    "extensions/v1beta1",
    "flowcontrol.apiserver.k8s.io/v1",
    "flowcontrol.apiserver.k8s.io/v1beta1",
    "flowcontrol.apiserver.k8s.io/v1beta2",
    "flowcontrol.apiserver.k8s.io/v1beta3",
    "networking.k8s.io/v1",
    "networking.k8s.io/v1beta1",
    "node.k8s.io/v1",
    "node.k8s.io/v1alpha1",
    "node.k8s.io/v1beta1",
    "policy/v1",
    "policy/v1beta1",
    "rbac.authorization.k8s.io/v1",
    "rbac.authorization.k8s.io/v1beta1",
    "rbac.authorization.k8s.io/v1alpha1",
    "resource.k8s.io/v1",
    "resource.k8s.io/v1beta2",
    "resource.k8s.io/v1beta1",
    "resource.k8s.io/v1alpha3",
    "scheduling.k8s.io/v1alpha1",
    "scheduling.k8s.io/v1beta1",
    "scheduling.k8s.io/v1",
    "storage.k8s.io/v1beta1",
    "storage.k8s.io/v1",
    "storage.k8s.io/v1alpha1",
    "storagemigration.k8s.io/v1beta1",
    "apiextensions.k8s.io/v1beta1",
    "apiextensions.k8s.io/v1",
];

/// The Kubernetes version for `--kube-version`, with Helm's error for text that is not one.
pub fn parse_kube_version(text: &str) -> Result<KubeVersion, String> {
    KubeVersion::parse_generic(text).map_err(|e| format!("invalid kube version '{text}': {e}"))
}

/// Helm's default capabilities, with `kube_version` instead of v1.35.0 when given and
/// `extra_api_versions` (`--api-versions`) after the default set.
pub fn default_capabilities(
    kube_version: Option<&KubeVersion>,
    extra_api_versions: &[String],
) -> Capabilities {
    let kube_version = match kube_version {
        Some(v) => v.clone(),
        None => KubeVersion {
            version: DEFAULT_KUBE_VERSION.to_string(),
            major: "1".to_string(),
            minor: "35".to_string(),
        },
    };
    let mut versions: Vec<String> = DEFAULT_API_VERSIONS.iter().map(|s| s.to_string()).collect();
    versions.extend(extra_api_versions.iter().cloned());
    Capabilities {
        kube_version: Rc::new(kube_version),
        api_versions: Rc::new(ApiVersions(versions)),
        helm_version: Rc::new(HelmVersion::helm_v4_1_4()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_helm_v4_1_4() {
        let caps = default_capabilities(None, &["x.io/v1".to_string()]);
        assert_eq!(caps.kube_version.version, "v1.35.0");
        assert_eq!(caps.api_versions.0.first().map(String::as_str), Some("v1"));
        assert_eq!(
            caps.api_versions.0.last().map(String::as_str),
            Some("x.io/v1")
        );
    }

    #[test]
    fn bad_kube_versions_are_reported_like_helm() {
        assert_eq!(
            parse_kube_version("banana").unwrap_err(),
            "invalid kube version 'banana': could not parse \"banana\" as version"
        );
        assert_eq!(
            parse_kube_version("1.16.0")
                .map(|v| v.minor)
                .ok()
                .as_deref(),
            Some("16")
        );
    }
}
