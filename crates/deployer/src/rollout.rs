//! What the deployers of Kubernetes objects (manifest, helm) do once they know their objects:
//! apply them, wait until they are ready, collect the exports, and report the provider status
//! — on failure too, so an item never forgets an object it wrote.

use crate::applier::{Applier, ApplySpec};
use crate::contract::interrupt::Interrupt;
use crate::deployer::{Failure, Outcome};
use crate::error::Error;
use crate::exports;
use crate::readiness;
use crate::target_access::TargetCluster;
use landscaper_api::deployer::{Exports, ManagedResourceStatus, ReadinessCheckConfiguration};
use serde_json::{Map, Value};

/// One rollout of a deployer's objects to its target cluster.
pub struct Rollout<'a> {
    /// The target cluster.
    pub cluster: &'a TargetCluster,
    /// The field manager of the writes.
    pub field_manager: &'a str,
    /// What to apply, and what the last apply managed.
    pub spec: ApplySpec<'a>,
    /// The item's `readinessChecks`; none: the default checks.
    pub readiness_checks: Option<&'a ReadinessCheckConfiguration>,
    /// The item's `exports`.
    pub exports: Option<&'a Exports>,
    /// The `apiVersion` of the provider status (the deployer's).
    pub status_api_version: &'a str,
}

impl Rollout<'_> {
    /// Applies, waits until ready and collects the exports; a failure carries the provider
    /// status of what was applied.
    pub async fn run(&self, interrupt: &Interrupt) -> Result<Outcome, Failure> {
        let applier = Applier::new(self.cluster.clone(), self.field_manager);
        let applied = applier.apply(&self.spec, interrupt).await;
        let status = provider_status(self.status_api_version, applied.managed.clone());
        let with_status = |error: Error| Failure {
            error,
            provider_status: Some(status.clone()),
        };
        if let Some(e) = applied.error {
            return Err(with_status(e));
        }
        let checks = self.readiness_checks.cloned().unwrap_or_default();
        readiness::wait_ready(self.cluster, &applied.managed, &checks, interrupt)
            .await
            .map_err(with_status)?;
        let exported = match self.exports {
            Some(e) if !e.exports.is_empty() => Some(
                exports::collect(self.cluster, e, None, interrupt)
                    .await
                    .map_err(with_status)?,
            ),
            _ => None,
        };
        Ok(Outcome {
            provider_status: Some(status),
            exports: exported,
        })
    }
}

/// The provider status of a deployer of objects (`apiVersion` its own, `kind:
/// ProviderStatus`, the managed objects), as upstream's manifest and helm deployers write it.
pub fn provider_status(api_version: &str, managed: Vec<ManagedResourceStatus>) -> Value {
    let mut status = Map::new();
    status.insert("apiVersion".into(), api_version.into());
    status.insert("kind".into(), "ProviderStatus".into());
    if !managed.is_empty() {
        status.insert(
            "managedResources".into(),
            serde_json::to_value(managed).unwrap_or(Value::Null),
        );
    }
    Value::Object(status)
}

#[cfg(test)]
mod tests {
    use super::*;
    use landscaper_api::constants::{HELM_API_VERSION, MANIFEST_API_VERSION};
    use landscaper_api::deployer::{HelmProviderStatus, ManifestProviderStatus};

    fn managed() -> Vec<ManagedResourceStatus> {
        serde_json::from_value(serde_json::json!([
            {"resource": {"apiVersion": "v1", "kind": "ConfigMap", "name": "a", "namespace": "x"}}
        ]))
        .unwrap()
    }

    #[test]
    fn the_provider_status_is_the_deployers_own_type() {
        for managed in [managed(), Vec::new()] {
            let manifest = ManifestProviderStatus {
                api_version: Some(MANIFEST_API_VERSION.into()),
                kind: Some("ProviderStatus".into()),
                managed_resources: managed.clone(),
            };
            let helm = HelmProviderStatus {
                api_version: Some(HELM_API_VERSION.into()),
                kind: Some("ProviderStatus".into()),
                managed_resources: managed.clone(),
            };
            assert_eq!(
                provider_status(MANIFEST_API_VERSION, managed.clone()),
                serde_json::to_value(manifest).unwrap()
            );
            assert_eq!(
                provider_status(HELM_API_VERSION, managed),
                serde_json::to_value(helm).unwrap()
            );
        }
    }
}
