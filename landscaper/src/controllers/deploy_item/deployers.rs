//! Our improvement over upstream: an item whose type a registered deployer will serve in the
//! item's environment, but which is not installed there yet, is not failed by the pickup
//! timeout; its timer starts when that deployer's Installation has Succeeded. The order in
//! which deployers come up emerges from this (see `deployer_registration::order`).
//!
//! The item's environments are those whose `spec.targetSelectors` match the item's Target:
//! the selectors the environment's agent and every deployer installed there serve items by.
//! A helm item in a namespace the environment's agent serves is the agent's, whatever helm
//! deployer is registered there (`deployer_registration::agent_namespaces`): it waits for none.

use std::sync::Arc;

use k8s_openapi::jiff::Timestamp;
use kube::runtime::reflector::ObjectRef;
use kube::{Resource, ResourceExt};
use landscaper_api::core::{
    DeployerRegistration, Environment, Installation, InstallationPhase, Target,
};
use landscaper_deployer::responsibility::matches_any;

use crate::controllers::deployer_caches::DeployerCaches;
use crate::controllers::deployer_registration::{agent_namespaces, pair_name, served_by_agent};

/// A registered deployer of the item's type in one of the item's environments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pair {
    /// The DeployerRegistration.
    pub registration: String,
    /// The Environment.
    pub environment: String,
    /// The pair's Installation, `<registration>-<environment>` in the deployer management
    /// namespace.
    pub installation: String,
}

/// Whether the item waits for a registered deployer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Deployers {
    /// No DeployerRegistration serves the item's type in its environments: the pickup timer
    /// runs from the job's start, as upstream's does.
    NoneRegistered,
    /// Deployers are registered for it and none is installed yet: the timer does not run.
    NotInstalled(Vec<Pair>),
    /// One is installed: the timer runs from when it was (`since`; unknown for an Installation
    /// without a phase transition time).
    Installed {
        /// The first of the item's pairs to succeed.
        pair: Pair,
        /// When its Installation turned Succeeded.
        since: Option<Timestamp>,
    },
}

/// The item a decision is about.
#[derive(Clone, Copy, Debug)]
pub struct Item<'a> {
    /// Its `spec.type`.
    pub type_: &'a str,
    /// Its namespace.
    pub namespace: &'a str,
    /// Its Target.
    pub target: &'a Target,
}

/// What the registered deployers of the item's type in the environments of its Target are up
/// to; `management_namespace` is the deployer management namespace, `installation` finds a
/// pair's Installation by name.
pub fn deployers_of(
    item: Item<'_>,
    registrations: &[Arc<DeployerRegistration>],
    environments: &[Arc<Environment>],
    management_namespace: &str,
    installation: impl Fn(&str) -> Option<Arc<Installation>>,
) -> Deployers {
    let Item {
        type_: item_type,
        namespace,
        target,
    } = item;
    let serving: Vec<&DeployerRegistration> = registrations
        .iter()
        .map(Arc::as_ref)
        .filter(|r| r.meta().deletion_timestamp.is_none())
        .filter(|r| r.spec.types.iter().any(|t| t == item_type))
        .collect();
    if serving.is_empty() {
        return Deployers::NoneRegistered;
    }
    let mut pairs = Vec::new();
    for environment in environments {
        if environment.meta().deletion_timestamp.is_some()
            || !matches_any(&environment.spec.target_selectors, target).unwrap_or(false)
        {
            continue;
        }
        if served_by_agent(item_type)
            && agent_namespaces(environment, management_namespace)
                .iter()
                .any(|ns| ns == namespace)
        {
            continue;
        }
        for registration in &serving {
            let (registration, environment) = (registration.name_any(), environment.name_any());
            // A pair whose name cannot be made is never installed; it holds nothing.
            if let Ok(installation) = pair_name(&registration, &environment) {
                pairs.push(Pair {
                    registration,
                    environment,
                    installation,
                });
            }
        }
    }
    if pairs.is_empty() {
        return Deployers::NoneRegistered;
    }
    let installed = pairs
        .iter()
        .filter_map(|pair| {
            let found = installation(&pair.installation)?;
            let status = found.status.as_ref()?;
            (status.phase == Some(InstallationPhase::Succeeded)).then(|| {
                let since = status.phase_transition_time.as_ref().map(|t| t.0);
                (pair.clone(), since)
            })
        })
        .min_by_key(|(_, since)| *since);
    match installed {
        Some((pair, since)) => Deployers::Installed { pair, since },
        None => Deployers::NotInstalled(pairs),
    }
}

/// The registrations, environments and pair Installations, from the caches deployer
/// management shares, so that deciding on an item costs no reads.
pub struct Caches {
    shared: DeployerCaches,
    namespace: String,
}

impl Caches {
    /// The shared caches; `namespace` is the deployer management namespace.
    pub fn new(shared: DeployerCaches, namespace: &str) -> Self {
        Self {
            shared,
            namespace: namespace.to_owned(),
        }
    }

    /// Waits until every cache has listed its objects once.
    pub async fn ready(&self) {
        self.shared.ready().await;
    }

    /// Whether a DeployerRegistration (not being deleted) serves `item_type`.
    pub fn serves(&self, item_type: &str) -> bool {
        self.shared
            .registrations
            .state()
            .iter()
            .any(|registration| {
                registration.meta().deletion_timestamp.is_none()
                    && registration.spec.types.iter().any(|t| t == item_type)
            })
    }

    /// [`deployers_of`] on the cached objects.
    pub fn deployers_of(&self, item: Item<'_>) -> Deployers {
        deployers_of(
            item,
            &self.shared.registrations.state(),
            &self.shared.environments.state(),
            &self.namespace,
            |name| {
                self.shared
                    .installations
                    .get(&ObjectRef::new(name).within(&self.namespace))
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const MOCK: &str = "landscaper.gardener.cloud/mock";

    fn registration(name: &str, types: &[&str]) -> Arc<DeployerRegistration> {
        Arc::new(
            serde_json::from_value(json!({
                "apiVersion": "landscaper.gardener.cloud/v1alpha1",
                "kind": "DeployerRegistration",
                "metadata": { "name": name },
                "spec": { "types": types, "installationTemplate": { "blueprint": {} } },
            }))
            .unwrap(),
        )
    }

    fn environment(name: &str) -> Arc<Environment> {
        Arc::new(
            serde_json::from_value(json!({
                "apiVersion": "landscaper.gardener.cloud/v1alpha1",
                "kind": "Environment",
                "metadata": { "name": name },
                "spec": {
                    "namespace": "ls-system",
                    "hostTarget": { "type": "landscaper.gardener.cloud/kubernetes-cluster" },
                    "landscaperClusterConfig": { "host": "https://ls", "apiPath": "" },
                    "targetSelectors": [{ "annotations": [{
                        "key": "landscaper.gardener.cloud/environment",
                        "operator": "=",
                        "values": [name],
                    }]}],
                },
            }))
            .unwrap(),
        )
    }

    fn target(environment: &str) -> Target {
        serde_json::from_value(json!({
            "apiVersion": "landscaper.gardener.cloud/v1alpha1",
            "kind": "Target",
            "metadata": {
                "name": "t",
                "namespace": "apps",
                "annotations": { "landscaper.gardener.cloud/environment": environment },
            },
            "spec": { "type": "landscaper.gardener.cloud/kubernetes-cluster", "config": {} },
        }))
        .unwrap()
    }

    fn item<'a>(type_: &'a str, target: &'a Target) -> Item<'a> {
        Item {
            type_,
            namespace: "apps",
            target,
        }
    }

    fn installation(phase: &str, since: &str) -> Arc<Installation> {
        Arc::new(
            serde_json::from_value(json!({
                "apiVersion": "landscaper.gardener.cloud/v1alpha1",
                "kind": "Installation",
                "metadata": { "name": "mock-edge", "namespace": "ls-system" },
                "spec": { "blueprint": {} },
                "status": { "phase": phase, "phaseTransitionTime": since },
            }))
            .unwrap(),
        )
    }

    #[test]
    fn an_item_waits_for_the_registered_deployer_of_its_type_in_its_environment() {
        let registrations = [registration("mock", &[MOCK])];
        let environments = [environment("edge"), environment("other")];
        let target = target("edge");
        // The pair's Installation in `phase` since 10:00, or none.
        let with_installation = |phase: Option<&str>| {
            deployers_of(
                item(MOCK, &target),
                &registrations,
                &environments,
                "ls-system",
                |_| phase.map(|phase| installation(phase, "2026-01-01T10:00:00Z")),
            )
        };
        let pair = Pair {
            registration: "mock".to_owned(),
            environment: "edge".to_owned(),
            installation: "mock-edge".to_owned(),
        };
        assert_eq!(
            with_installation(None),
            Deployers::NotInstalled(vec![pair.clone()])
        );
        assert_eq!(
            with_installation(Some("Progressing")),
            Deployers::NotInstalled(vec![pair.clone()])
        );
        assert_eq!(
            with_installation(Some("Succeeded")),
            Deployers::Installed {
                pair,
                since: Some("2026-01-01T10:00:00Z".parse().unwrap()),
            }
        );
    }

    #[test]
    fn other_types_and_targets_outside_every_environment_are_not_held() {
        let registrations = [registration("mock", &[MOCK])];
        let environments = [environment("edge")];
        let deployers =
            |item| deployers_of(item, &registrations, &environments, "ls-system", |_| None);
        let (edge, elsewhere) = (target("edge"), target("elsewhere"));
        assert_eq!(
            deployers(item("landscaper.gardener.cloud/helm", &edge)),
            Deployers::NoneRegistered
        );
        assert_eq!(deployers(item(MOCK, &elsewhere)), Deployers::NoneRegistered);
    }

    #[test]
    fn a_helm_item_in_a_namespace_the_agent_serves_waits_for_no_registered_helm_deployer() {
        const HELM: &str = "landscaper.gardener.cloud/helm";
        let registrations = [registration("helm", &[HELM])];
        let mut edge = environment("edge");
        Arc::make_mut(&mut edge).annotations_mut().insert(
            "agent.landscaper.gardener.cloud/deploy-item-namespaces".to_owned(),
            "ls-system,apps".to_owned(),
        );
        let none = |_: &str| None;
        let target = target("edge");
        let in_apps = item(HELM, &target);
        assert_eq!(
            deployers_of(in_apps, &registrations, &[edge.clone()], "ls-system", none),
            Deployers::NoneRegistered
        );
        let elsewhere = Item {
            namespace: "team-x",
            ..in_apps
        };
        assert!(matches!(
            deployers_of(elsewhere, &registrations, &[edge], "ls-system", none),
            Deployers::NotInstalled(_)
        ));
    }
}
