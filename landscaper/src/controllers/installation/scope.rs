//! An installation's siblings (the installations its parent created, or the other roots of
//! its namespace), which of them are its predecessors (siblings whose exports it imports),
//! whether they finished, and dependency cycles between siblings.

use std::collections::BTreeSet;

use kube::ResourceExt;
use kube::api::ListParams;
use landscaper_api::core::{Installation, InstallationPhase};

use super::{Context, ENCOMPASSED_BY, Error, status};

/// The siblings of `installation`: same parent (or both roots), itself excluded.
pub async fn siblings(
    installation: &Installation,
    context: &Context,
) -> Result<Vec<Installation>, Error> {
    let api = context.installations(&installation.namespace().unwrap_or_default());
    let parent = installation.labels().get(ENCOMPASSED_BY);
    let params = match parent {
        Some(parent) => ListParams::default().labels(&format!("{ENCOMPASSED_BY}={parent}")),
        None => ListParams::default().labels(&format!("!{ENCOMPASSED_BY}")),
    };
    let list = api
        .list(&params)
        .await
        .map_err(|source| Error::api(installation, "list its siblings", source))?;
    Ok(list
        .items
        .into_iter()
        .filter(|sibling| sibling.name_any() != installation.name_any())
        .collect())
}

/// The data and target keys an installation imports.
pub fn imported_keys(installation: &Installation) -> BTreeSet<String> {
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
pub fn exported_keys(installation: &Installation) -> BTreeSet<String> {
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

/// Whether `consumer` imports something `producer` exports.
pub fn imports_from(consumer: &Installation, producer: &Installation) -> bool {
    !imported_keys(consumer).is_disjoint(&exported_keys(producer))
}

/// The siblings `installation` imports from.
pub fn predecessors<'a>(
    installation: &Installation,
    siblings: &'a [Installation],
) -> Vec<&'a Installation> {
    siblings
        .iter()
        .filter(|sibling| imports_from(installation, sibling))
        .collect()
}

/// A dependency cycle through `installation`, as the names along it, if there is one.
pub fn cycle(installation: &Installation, siblings: &[Installation]) -> Option<Vec<String>> {
    let mut all: Vec<&Installation> = siblings.iter().collect();
    all.push(installation);
    let start = installation.name_any();
    let mut path = vec![start.clone()];
    let mut visited = BTreeSet::new();
    find_cycle(installation, &all, &start, &mut path, &mut visited).then_some(path)
}

fn find_cycle(
    current: &Installation,
    all: &[&Installation],
    start: &str,
    path: &mut Vec<String>,
    visited: &mut BTreeSet<String>,
) -> bool {
    for next in all
        .iter()
        .filter(|other| other.name_any() != current.name_any() && imports_from(current, other))
    {
        let name = next.name_any();
        if name == start {
            path.push(name);
            return true;
        }
        if !visited.insert(name.clone()) {
            continue;
        }
        path.push(name);
        if find_cycle(next, all, start, path, visited) {
            return true;
        }
        path.pop();
    }
    false
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
