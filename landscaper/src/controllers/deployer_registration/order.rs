//! The dependency order of deployers: which deployer waits for which, dependency cycles, and
//! which pair may be removed. Pure functions over what the controller read.
//!
//! A registration *serves* the deploy item types of its `spec.types`; the agent serves
//! `landscaper.gardener.cloud/helm` in every environment. A pair *needs* the types of the deploy
//! items its Installation's Execution holds in that environment. The order is not computed
//! ahead: items wait (the deploy-item controller runs no pickup timeout while a registered
//! deployer for their type is not installed yet), so deployers come up in order by themselves;
//! this module says what each waits for and finds cycles, which would wait forever.

use std::collections::{BTreeMap, BTreeSet};

use super::pair::served_by_agent;

/// What the controller knows of one pair.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PairState {
    /// Whether its Installation finished Succeeded: the deployer is installed.
    pub ready: bool,
    /// The deploy item types its Installation's items have.
    pub needs: BTreeSet<String>,
}

/// Every registration's types and every pair's state.
#[derive(Debug, Default)]
pub struct Graph {
    /// Registration → the types it serves.
    pub serves: BTreeMap<String, BTreeSet<String>>,
    /// (registration, environment) → its state, for pairs that exist.
    pub pairs: BTreeMap<(String, String), PairState>,
}

impl Graph {
    /// The registrations serving `deploy_item_type`.
    fn servers(&self, deploy_item_type: &str) -> Vec<&str> {
        self.serves
            .iter()
            .filter(|(_, types)| types.contains(deploy_item_type))
            .map(|(registration, _)| registration.as_str())
            .collect()
    }

    /// What the pair waits for, in words; empty when nothing.
    pub fn waits(&self, registration: &str, environment: &str) -> Vec<String> {
        let key = (registration.to_owned(), environment.to_owned());
        let Some(state) = self.pairs.get(&key) else {
            return Vec::new();
        };
        let mut waits = Vec::new();
        for needed in state.needs.iter().filter(|t| !served_by_agent(t)) {
            let servers = self.servers(needed);
            if servers.is_empty() {
                waits.push(format!(
                    "its items have type {needed}, which no DeployerRegistration serves"
                ));
                continue;
            }
            let ready = servers.iter().any(|server| {
                self.pairs
                    .get(&((*server).to_owned(), environment.to_owned()))
                    .is_some_and(|pair| pair.ready)
            });
            if !ready {
                waits.push(format!(
                    "waiting for the deployer of {needed} ({}) to be installed in environment {environment}",
                    servers.join(", ")
                ));
            }
        }
        waits
    }

    /// Registration → the registrations whose deployers its items need, in any environment.
    fn edges(&self) -> BTreeMap<&str, BTreeSet<&str>> {
        let mut edges: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for ((registration, _), state) in &self.pairs {
            for needed in state.needs.iter().filter(|t| !served_by_agent(t)) {
                for server in self.servers(needed) {
                    edges
                        .entry(registration.as_str())
                        .or_default()
                        .insert(server);
                }
            }
        }
        edges
    }

    /// Every dependency cycle, each as a path that starts and ends at its first registration
    /// in name order (`["manifest", "mock", "manifest"]`).
    pub fn cycles(&self) -> Vec<Vec<String>> {
        let edges = self.edges();
        let mut cycles = Vec::new();
        let mut in_cycle: BTreeSet<&str> = BTreeSet::new();
        for &start in edges.keys() {
            if in_cycle.contains(start) {
                continue;
            }
            if let Some(path) = path_back(&edges, start) {
                in_cycle.extend(path.iter().copied());
                cycles.push(path.iter().map(|r| (*r).to_owned()).collect());
            }
        }
        cycles
    }

    /// Why the pair cannot be removed yet: the other pairs in its environment whose items need
    /// a type it serves. A pair that in turn needs this one does not block it (a cycle would
    /// otherwise never be removed).
    pub fn removal_blockers(&self, registration: &str, environment: &str) -> Vec<String> {
        let Some(served) = self.serves.get(registration) else {
            return Vec::new();
        };
        let needs_of = |other: &str| {
            self.pairs
                .get(&(other.to_owned(), environment.to_owned()))
                .map(|state| &state.needs)
        };
        let mine = needs_of(registration);
        self.pairs
            .iter()
            .filter(|((other, env), _)| env == environment && other != registration)
            // The pairs' helm items are the agent's (they are in its namespace), never a
            // registered helm deployer's: helm never holds a removal back.
            .filter(|(_, state)| {
                state
                    .needs
                    .iter()
                    .any(|t| !served_by_agent(t) && served.contains(t))
            })
            .filter(|((other, _), _)| {
                let theirs = self.serves.get(other);
                !mine.is_some_and(|mine| {
                    theirs.is_some_and(|theirs| mine.iter().any(|t| theirs.contains(t)))
                })
            })
            .map(|((other, _), _)| format!("{other}-{environment}"))
            .collect()
    }
}

/// A path from `start` back to itself along `edges`, if there is one (depth first, in name
/// order, so the same graph always reports the same path).
fn path_back<'a>(
    edges: &BTreeMap<&'a str, BTreeSet<&'a str>>,
    start: &'a str,
) -> Option<Vec<&'a str>> {
    let mut stack: Vec<(&str, Vec<&str>)> = vec![(start, vec![start])];
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    while let Some((node, path)) = stack.pop() {
        for &next in edges.get(node).into_iter().flatten().rev() {
            if next == start {
                let mut cycle = path.clone();
                cycle.push(start);
                return Some(cycle);
            }
            if seen.insert(next) {
                let mut longer = path.clone();
                longer.push(next);
                stack.push((next, longer));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOCK: &str = "landscaper.gardener.cloud/mock";
    const MANIFEST: &str = "landscaper.gardener.cloud/kubernetes-manifest";
    const HELM: &str = "landscaper.gardener.cloud/helm";

    fn graph(serves: &[(&str, &[&str])], pairs: &[(&str, &str, bool, &[&str])]) -> Graph {
        Graph {
            serves: serves
                .iter()
                .map(|(r, types)| {
                    (
                        (*r).to_owned(),
                        types.iter().map(|t| (*t).to_owned()).collect(),
                    )
                })
                .collect(),
            pairs: pairs
                .iter()
                .map(|(r, e, ready, needs)| {
                    (
                        ((*r).to_owned(), (*e).to_owned()),
                        PairState {
                            ready: *ready,
                            needs: needs.iter().map(|t| (*t).to_owned()).collect(),
                        },
                    )
                })
                .collect(),
        }
    }

    #[test]
    fn a_deployer_waits_for_the_deployer_of_the_types_its_items_need() {
        let g = graph(
            &[("manifest", &[MANIFEST]), ("app", &["app-type"])],
            &[
                ("manifest", "edge", false, &[HELM]),
                ("app", "edge", false, &[MANIFEST]),
            ],
        );
        assert!(
            g.waits("manifest", "edge").is_empty(),
            "helm is the agent's"
        );
        let waits = g.waits("app", "edge");
        assert_eq!(waits.len(), 1);
        assert!(
            waits[0].contains("manifest") && waits[0].contains("edge"),
            "{waits:?}"
        );
        let ready = graph(
            &[("manifest", &[MANIFEST]), ("app", &["app-type"])],
            &[
                ("manifest", "edge", true, &[HELM]),
                ("app", "edge", false, &[MANIFEST]),
            ],
        );
        assert!(ready.waits("app", "edge").is_empty());
    }

    #[test]
    fn a_type_nobody_serves_is_named() {
        let g = graph(
            &[("app", &["a"])],
            &[("app", "edge", false, &["unknown-type"])],
        );
        assert!(g.waits("app", "edge")[0].contains("no DeployerRegistration serves"));
    }

    #[test]
    fn cycles_are_found_with_their_path() {
        let g = graph(
            &[
                ("manifest", &[MANIFEST]),
                ("mock", &[MOCK]),
                ("plain", &["p"]),
            ],
            &[
                ("mock", "edge", false, &[MANIFEST]),
                ("manifest", "edge", false, &[MOCK]),
                ("plain", "edge", false, &[HELM]),
            ],
        );
        assert_eq!(g.cycles(), vec![vec!["manifest", "mock", "manifest"]]);
        let acyclic = graph(
            &[("manifest", &[MANIFEST]), ("mock", &[MOCK])],
            &[
                ("mock", "edge", false, &[MANIFEST]),
                ("manifest", "edge", false, &[HELM]),
            ],
        );
        assert!(acyclic.cycles().is_empty());
    }

    #[test]
    fn a_deployer_is_removed_after_those_that_need_it() {
        let g = graph(
            &[("manifest", &[MANIFEST]), ("app", &["a"])],
            &[
                ("manifest", "edge", true, &[HELM]),
                ("app", "edge", true, &[MANIFEST]),
                ("app", "other", true, &[MANIFEST]),
            ],
        );
        assert_eq!(g.removal_blockers("manifest", "edge"), vec!["app-edge"]);
        assert!(g.removal_blockers("app", "edge").is_empty());
        assert!(g.removal_blockers("manifest", "nowhere").is_empty());
        let cycle = graph(
            &[("manifest", &[MANIFEST]), ("mock", &[MOCK])],
            &[
                ("mock", "edge", true, &[MANIFEST]),
                ("manifest", "edge", true, &[MOCK]),
            ],
        );
        assert!(cycle.removal_blockers("mock", "edge").is_empty());
    }

    #[test]
    fn a_registered_helm_deployer_holds_no_pair_back_the_agent_installs_them() {
        let g = graph(
            &[("helm", &[HELM]), ("manifest", &[MANIFEST])],
            &[
                ("helm", "edge", true, &[HELM]),
                ("manifest", "edge", true, &[HELM]),
            ],
        );
        assert!(g.removal_blockers("helm", "edge").is_empty());
        assert!(g.cycles().is_empty());
        assert!(g.waits("helm", "edge").is_empty());
    }
}
