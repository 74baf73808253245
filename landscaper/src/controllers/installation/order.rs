//! The order between siblings (the installations its parent created, or the other roots of
//! its namespace): a sibling whose exports an installation imports is its predecessor; its job
//! waits until the predecessor finished and succeeded, and a cycle of such imports is an error.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use kube::ResourceExt;
use landscaper_api::core::{Installation, InstallationPhase};

use super::status;

/// The data and target keys an installation imports.
fn imported_keys(installation: &Installation) -> BTreeSet<String> {
    let mut keys = BTreeSet::new();
    if let Some(imports) = &installation.spec.imports {
        for data in imports.data.iter().flatten() {
            keys.extend(data.data_ref.clone().map(|r| format!("data:{r}")));
        }
        for target in imports.targets.iter().flatten() {
            keys.extend(target.target.clone().map(|t| format!("target:{t}")));
            for name in target.targets.iter().flatten() {
                keys.insert(format!("target:{name}"));
            }
        }
    }
    keys
}

/// The data and target keys an installation exports.
fn exported_keys(installation: &Installation) -> BTreeSet<String> {
    let mut keys = BTreeSet::new();
    if let Some(exports) = &installation.spec.exports {
        for data in exports.data.iter().flatten() {
            keys.insert(format!("data:{}", data.data_ref));
        }
        for target in exports.targets.iter().flatten() {
            keys.extend(target.target.clone().map(|t| format!("target:{t}")));
        }
    }
    keys
}

/// An installation and its siblings, indexed by what they export, so that finding
/// predecessors and cycles costs time linear in the number of siblings (a namespace may hold
/// thousands of root installations).
pub struct Siblings<'a> {
    installation: &'a Installation,
    siblings: &'a [Arc<Installation>],
    /// Export key → the siblings (indexes into `siblings`) that export it.
    exporters: HashMap<String, Vec<usize>>,
    /// What `installation` exports.
    exports: BTreeSet<String>,
}

impl<'a> Siblings<'a> {
    /// Indexes `siblings` (which must not contain `installation`).
    pub fn new(installation: &'a Installation, siblings: &'a [Arc<Installation>]) -> Self {
        let mut exporters: HashMap<String, Vec<usize>> = HashMap::new();
        for (index, sibling) in siblings.iter().enumerate() {
            for key in exported_keys(sibling) {
                exporters.entry(key).or_default().push(index);
            }
        }
        Self {
            installation,
            siblings,
            exporters,
            exports: exported_keys(installation),
        }
    }

    /// The siblings `installation` imports from, in a stable order.
    pub fn predecessors(&self) -> Vec<&'a Installation> {
        self.predecessor_indexes(self.installation)
            .into_iter()
            .map(|index| &*self.siblings[index])
            .collect()
    }

    fn predecessor_indexes(&self, consumer: &Installation) -> BTreeSet<usize> {
        imported_keys(consumer)
            .iter()
            .filter_map(|key| self.exporters.get(key))
            .flatten()
            .copied()
            .filter(|&index| self.siblings[index].name_any() != consumer.name_any())
            .collect()
    }

    /// The siblings that import something `installation` exports.
    pub fn successors(&self) -> Vec<&'a Installation> {
        self.siblings
            .iter()
            .filter(|sibling| !imported_keys(sibling).is_disjoint(&self.exports))
            .map(|sibling| &**sibling)
            .collect()
    }

    /// A dependency cycle through `installation`, as the names along it, if there is one.
    pub fn cycle(&self) -> Option<Vec<String>> {
        let mut path = vec![self.installation.name_any()];
        let mut visited = BTreeSet::new();
        let start = self.predecessor_indexes(self.installation);
        self.find_cycle(start, &mut path, &mut visited)
            .then_some(path)
    }

    /// Depth-first along predecessors until the walk returns to `installation`.
    fn find_cycle(
        &self,
        next: BTreeSet<usize>,
        path: &mut Vec<String>,
        visited: &mut BTreeSet<usize>,
    ) -> bool {
        for index in next {
            let sibling = &self.siblings[index];
            if !visited.insert(index) {
                continue;
            }
            path.push(sibling.name_any());
            if !imported_keys(sibling).is_disjoint(&self.exports) {
                path.push(self.installation.name_any());
                return true;
            }
            if self.find_cycle(self.predecessor_indexes(sibling), path, visited) {
                return true;
            }
            path.pop();
        }
        false
    }
}

/// What a predecessor's state means for the installation's job.
#[derive(Debug, PartialEq, Eq)]
pub enum PredecessorState {
    /// Finished and succeeded.
    Done,
    /// Not finished yet.
    Waiting,
    /// Finished, not succeeded.
    Failed,
}

/// The state of `predecessor` for the job `job` of an installation that is `root` or not.
pub fn predecessor_state(
    predecessor: &Installation,
    job: Option<&str>,
    root: bool,
) -> PredecessorState {
    let status = predecessor.status.clone().unwrap_or_default();
    let finished = if root {
        !status::job_running(predecessor) && status.job_id_finished.is_some()
    } else {
        status.job_id_finished.as_deref() == job && job.is_some()
    };
    match (finished, status.phase) {
        (false, _) => PredecessorState::Waiting,
        (true, Some(InstallationPhase::Succeeded)) => PredecessorState::Done,
        (true, _) => PredecessorState::Failed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn installation(name: &str, imports: &[&str], exports: &[&str]) -> Arc<Installation> {
        let imports: Vec<_> = imports
            .iter()
            .map(|key| json!({"name": key, "dataRef": key}))
            .collect();
        let exports: Vec<_> = exports
            .iter()
            .map(|key| json!({"name": key, "dataRef": key}))
            .collect();
        Arc::new(
            serde_json::from_value(json!({
                "metadata": {"name": name, "namespace": "ns"},
                "spec": {"blueprint": {}, "imports": {"data": imports}, "exports": {"data": exports}},
            }))
            .unwrap(),
        )
    }

    fn names(list: Vec<&Installation>) -> Vec<String> {
        list.into_iter().map(|i| i.name_any()).collect()
    }

    #[test]
    fn predecessors_and_successors_follow_data_keys() {
        let a = installation("a", &[], &["x"]);
        let b = installation("b", &["x"], &["y"]);
        let c = installation("c", &["y"], &[]);
        let siblings = [a.clone(), c.clone()];
        let index = Siblings::new(&b, &siblings);
        assert_eq!(names(index.predecessors()), ["a"]);
        assert_eq!(names(index.successors()), ["c"]);
        assert_eq!(index.cycle(), None);
    }

    #[test]
    fn a_cycle_is_named_along_its_path() {
        let a = installation("a", &["z"], &["x"]);
        let b = installation("b", &["x"], &["y"]);
        let c = installation("c", &["y"], &["z"]);
        let d = installation("d", &["x"], &[]);
        let siblings = [b.clone(), c.clone(), d.clone()];
        let cycle = Siblings::new(&a, &siblings).cycle().expect("a cycle");
        assert_eq!(cycle, ["a", "c", "b", "a"]);
    }

    #[test]
    fn a_thousand_independent_roots_have_no_predecessors() {
        let all: Vec<_> = (0..1000)
            .map(|i| {
                installation(
                    &format!("r{i}"),
                    &[&format!("in{i}")],
                    &[&format!("out{i}")],
                )
            })
            .collect();
        let index = Siblings::new(&all[0], &all[1..]);
        assert!(index.predecessors().is_empty());
        assert_eq!(index.cycle(), None);
    }

    /// Upstream's `InstallationsDependingOnReady` cases on `installations/imports` test1: the
    /// predecessors of `d` (job 2) are ready when all finished job 2 Succeeded; a Failed one
    /// fails `d`'s job, one still running (job 2, finished 1) or one that finished an older job
    /// (1) keeps it waiting.
    #[test]
    fn predecessors_are_ready_only_when_they_finished_this_job_succeeded() {
        let with_status = |status: serde_json::Value| -> Installation {
            serde_json::from_value(json!({
                "metadata": {"name": "a", "namespace": "test1"},
                "spec": {"blueprint": {}},
                "status": status,
            }))
            .unwrap()
        };
        let state = |status| predecessor_state(&with_status(status), Some("2"), false);
        assert_eq!(
            state(json!({"phase": "Succeeded", "jobID": "2", "jobIDFinished": "2"})),
            PredecessorState::Done
        );
        assert_eq!(
            state(json!({"phase": "Failed", "jobID": "2", "jobIDFinished": "2"})),
            PredecessorState::Failed
        );
        assert_eq!(
            state(json!({"phase": "Progressing", "jobID": "2", "jobIDFinished": "1"})),
            PredecessorState::Waiting
        );
        assert_eq!(
            state(json!({"phase": "Succeeded", "jobID": "1", "jobIDFinished": "1"})),
            PredecessorState::Waiting
        );
    }
}
