//! The served resources of one cluster, looked up by path or by kind.

use super::ResourceDef;
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

/// One API group as discovery lists it.
#[derive(Debug, Clone)]
pub struct GroupInfo {
    /// Group name.
    pub name: String,
    /// Served versions, preferred first.
    pub versions: Vec<String>,
}

#[derive(Default)]
struct Inner {
    /// Built-ins then CRD-served resources, in registration order.
    all: Vec<Arc<ResourceDef>>,
}

/// All resources a cluster serves. Cheap to read; CRD changes replace entries.
#[derive(Default)]
pub struct Registry {
    inner: RwLock<Inner>,
}

impl Registry {
    /// A registry with the given built-ins.
    pub fn new(builtins: Vec<ResourceDef>) -> Self {
        Self {
            inner: RwLock::new(Inner {
                all: builtins.into_iter().map(Arc::new).collect(),
            }),
        }
    }

    fn read<T>(&self, f: impl FnOnce(&Inner) -> T) -> T {
        let guard = self.inner.read().unwrap_or_else(|e| e.into_inner());
        f(&guard)
    }

    /// The resource served at `group/version/plural`.
    pub fn find(&self, group: &str, version: &str, plural: &str) -> Option<Arc<ResourceDef>> {
        self.read(|i| {
            i.all
                .iter()
                .find(|r| r.group == group && r.version == version && r.plural == plural)
                .cloned()
        })
    }

    /// The resource of an `apiVersion` and kind.
    pub fn find_kind(&self, api_version: &str, kind: &str) -> Option<Arc<ResourceDef>> {
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        self.read(|i| {
            i.all
                .iter()
                .find(|r| r.group == group && r.version == version && r.kind == kind)
                .cloned()
        })
    }

    /// Every resource stored under a storage key (all versions of one resource).
    pub fn by_storage_key(&self, key: &str) -> Vec<Arc<ResourceDef>> {
        self.read(|i| {
            i.all
                .iter()
                .filter(|r| r.storage_key == key)
                .cloned()
                .collect()
        })
    }

    /// Whether any resource of a group version is served.
    pub fn serves(&self, group: &str, version: &str) -> bool {
        self.read(|i| {
            i.all
                .iter()
                .any(|r| r.group == group && r.version == version)
        })
    }

    /// The resources of one group version, in registration order.
    pub fn resources_of(&self, group: &str, version: &str) -> Vec<Arc<ResourceDef>> {
        self.read(|i| {
            i.all
                .iter()
                .filter(|r| r.group == group && r.version == version)
                .cloned()
                .collect()
        })
    }

    /// The served groups (core excluded), in first-registration order.
    pub fn groups(&self) -> Vec<GroupInfo> {
        self.read(|i| {
            let mut order: Vec<String> = Vec::new();
            let mut versions: BTreeMap<String, Vec<String>> = BTreeMap::new();
            for r in i.all.iter().filter(|r| !r.group.is_empty()) {
                let vs = versions.entry(r.group.clone()).or_insert_with(|| {
                    order.push(r.group.clone());
                    Vec::new()
                });
                if !vs.contains(&r.version) {
                    vs.push(r.version.clone());
                }
            }
            order
                .into_iter()
                .map(|name| {
                    let mut vs = versions.remove(&name).unwrap_or_default();
                    vs.sort_by_key(|v| std::cmp::Reverse(version_priority(v)));
                    GroupInfo { name, versions: vs }
                })
                .collect()
        })
    }

    /// Serves one more built-in resource (an opt-in kind such as Gardener's Shoot).
    pub fn add_builtin(&self, def: ResourceDef) {
        let mut guard = self.inner.write().unwrap_or_else(|e| e.into_inner());
        guard.all.push(Arc::new(def));
    }

    /// Replaces the resources served by the named CRD.
    pub fn set_crd(&self, crd_name: &str, defs: Vec<ResourceDef>) {
        let mut guard = self.inner.write().unwrap_or_else(|e| e.into_inner());
        guard
            .all
            .retain(|r| r.crd.as_ref().is_none_or(|c| c.name != crd_name));
        guard.all.extend(defs.into_iter().map(Arc::new));
    }

    /// Stops serving the named CRD's resources.
    pub fn remove_crd(&self, crd_name: &str) {
        self.set_crd(crd_name, Vec::new());
    }
}

/// Kubernetes version priority: GA > beta > alpha, higher numbers first.
fn version_priority(v: &str) -> (u8, u32, u32) {
    let Some(rest) = v.strip_prefix('v') else {
        return (0, 0, 0);
    };
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let major = digits.parse().unwrap_or(0);
    let tail = &rest[digits.len()..];
    let minor = |p: &str| tail.strip_prefix(p).and_then(|n| n.parse().ok());
    if tail.is_empty() {
        (3, major, 0)
    } else if let Some(n) = minor("beta") {
        (2, major, n)
    } else if let Some(n) = minor("alpha") {
        (1, major, n)
    } else {
        (0, 0, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ga_versions_are_preferred() {
        let mut v = vec!["v1beta1", "v2", "v1", "v1alpha1"];
        v.sort_by_key(|v| std::cmp::Reverse(version_priority(v)));
        assert_eq!(v, vec!["v2", "v1", "v1beta1", "v1alpha1"]);
    }
}
