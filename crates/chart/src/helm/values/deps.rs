//! Dependency processing before a render (Helm's `ProcessDependenciesWithMerge`): aliases
//! turn a subchart into a named copy, `tags` and `condition` disable subcharts, and
//! `import-values` lift subchart values into the parent's defaults.

use super::Warnings;
use super::coalesce::{coalesce_values, merge_tables, merge_values};
use crate::engine::value::format::quote;
use crate::formats::tree::{Data, Map};
use crate::helm::chart::Chart;
use crate::helm::chart::metadata::{Dependency, is_compatible_range};

/// Applies aliases, conditions, tags and import-values to `chart` (and its subcharts) for
/// the user values `vals`.
pub fn process_dependencies(
    chart: &mut Chart,
    vals: &Map,
    warnings: &mut Warnings,
) -> Result<(), String> {
    process_enabled(chart, vals, "", warnings)?;
    process_import_values(chart, warnings)
}

/// Helm's `CheckDependencies`: every dependency of `Chart.yaml` must be in `charts/`.
pub fn check_dependencies(chart: &Chart) -> Result<(), String> {
    let missing = missing_dependencies(chart);
    if missing.is_empty() {
        return Ok(());
    }
    let names: Vec<&str> = missing.iter().map(|(_, name)| *name).collect();
    Err(format!(
        "found in Chart.yaml, but missing in charts/ directory: {}",
        names.join(", ")
    ))
}

/// The dependencies of `Chart.yaml` that are not in `charts/`, with their index in
/// `dependencies`.
pub fn missing_dependencies(chart: &Chart) -> Vec<(usize, &str)> {
    chart
        .metadata
        .dependencies
        .iter()
        .enumerate()
        .filter(|(_, r)| !chart.dependencies.iter().any(|d| d.name() == r.name))
        .map(|(i, r)| (i, r.name.as_str()))
        .collect()
}

fn process_enabled(
    chart: &mut Chart,
    vals: &Map,
    path: &str,
    warnings: &mut Warnings,
) -> Result<(), String> {
    if chart.metadata.dependencies.is_empty() {
        return Ok(());
    }
    // Each dependency entry takes the first subchart it matches, under its alias; subcharts
    // that no entry claims stay as they are. A subchart is moved to the entry that takes it
    // last and copied only for the others: copying would copy all its values.
    let matches = |existing: &Chart, req: &Dependency| {
        existing.name() == req.name && is_compatible_range(&req.version, &existing.metadata.version)
    };
    let taken: Vec<Option<usize>> = chart
        .metadata
        .dependencies
        .iter()
        .map(|req| chart.dependencies.iter().position(|c| matches(c, req)))
        .collect();
    let mut takers = vec![0_usize; chart.dependencies.len()];
    for &i in taken.iter().flatten() {
        takers[i] += 1;
    }
    let mut existing: Vec<Option<Chart>> = std::mem::take(&mut chart.dependencies)
        .into_iter()
        .map(Some)
        .collect();
    let mut deps: Vec<Chart> = existing
        .iter_mut()
        .filter(|c| {
            c.as_ref().is_some_and(|c| {
                !chart
                    .metadata
                    .dependencies
                    .iter()
                    .any(|req| matches(c, req))
            })
        })
        .filter_map(Option::take)
        .collect();
    for (req, taken) in chart.metadata.dependencies.iter_mut().zip(taken) {
        if let Some(i) = taken {
            takers[i] -= 1;
            let dep = if takers[i] == 0 {
                existing[i].take()
            } else {
                existing[i].clone()
            };
            if let Some(mut dep) = dep {
                if !req.alias.is_empty() {
                    dep.metadata.name = req.alias.clone();
                }
                deps.push(dep);
            }
        }
        if !req.alias.is_empty() {
            req.name = req.alias.clone();
        }
    }
    chart.dependencies = deps;
    for req in &mut chart.metadata.dependencies {
        req.enabled = true;
    }
    let cvals = coalesce_values(chart, vals, warnings)?;
    process_tags(&mut chart.metadata.dependencies, &cvals, warnings);
    process_conditions(&mut chart.metadata.dependencies, &cvals, path, warnings);
    let disabled: Vec<String> = chart
        .metadata
        .dependencies
        .iter()
        .filter(|r| !r.enabled)
        .map(|r| r.name.clone())
        .collect();
    chart
        .dependencies
        .retain(|d| !disabled.iter().any(|n| n == d.name()));
    chart
        .metadata
        .dependencies
        .retain(|r| !disabled.contains(&r.name));
    for sub in &mut chart.dependencies {
        let sub_path = format!("{path}{}.", sub.name());
        process_enabled(sub, &cvals, &sub_path, warnings)?;
    }
    Ok(())
}

fn process_tags(reqs: &mut [Dependency], cvals: &Map, warnings: &mut Warnings) {
    let Some(Data::Map(tags)) = cvals.get("tags") else {
        return;
    };
    for r in reqs {
        let (mut has_true, mut has_false) = (false, false);
        for k in &r.tags {
            match tags.get(k) {
                Some(Data::Bool(true)) => has_true = true,
                Some(Data::Bool(false)) => has_false = true,
                Some(_) => warnings.warn(
                    "returned non-bool value",
                    &[("tag", k.as_str()), ("chart", r.name.as_str())],
                ),
                None => {}
            }
        }
        if !has_true && has_false {
            r.enabled = false;
        } else if has_true || !has_false {
            r.enabled = true;
        }
    }
}

fn process_conditions(reqs: &mut [Dependency], cvals: &Map, path: &str, warnings: &mut Warnings) {
    for r in reqs {
        let condition = r.condition.trim().to_string();
        // Helm splits on commas without trimming the parts.
        for c in condition.split(',') {
            if c.is_empty() {
                continue;
            }
            match path_value(cvals, &format!("{path}{c}")) {
                Some(Data::Bool(b)) => {
                    r.enabled = *b;
                    break;
                }
                Some(_) => warnings.warn(
                    "returned non-bool value",
                    &[("path", c), ("chart", r.name.as_str())],
                ),
                None => {}
            }
        }
    }
}

/// Helm's `Values.Table`: the table at a dotted path.
pub fn table<'m>(vals: &'m Map, path: &str) -> Option<&'m Map> {
    let mut current = vals;
    for key in path.split('.') {
        match current.get(key) {
            Some(Data::Map(m)) => current = m,
            _ => return None,
        }
    }
    Some(current)
}

/// The first element of a dotted `path` that is not a table in `vals` (Helm's `ErrNoTable`
/// names it).
fn missing_table<'p>(vals: &Map, path: &'p str) -> &'p str {
    let mut current = vals;
    for key in path.split('.') {
        match current.get(key) {
            Some(Data::Map(m)) => current = m,
            _ => return key,
        }
    }
    path
}

/// Helm's `Values.PathValue`: a non-table value at a dotted path.
pub fn path_value<'m>(vals: &'m Map, path: &str) -> Option<&'m Data> {
    let (parent, key) = match path.rsplit_once('.') {
        Some((parent, key)) => (table(vals, parent)?, key),
        None => (vals, path),
    };
    match parent.get(key) {
        Some(Data::Map(_)) | None => None,
        Some(v) => Some(v),
    }
}

fn process_import_values_deps(chart: &mut Chart, warnings: &mut Warnings) -> Result<(), String> {
    for sub in &mut chart.dependencies {
        process_import_values_deps(sub, warnings)?;
    }
    import_values(chart, warnings)
}

fn process_import_values(chart: &mut Chart, warnings: &mut Warnings) -> Result<(), String> {
    process_import_values_deps(chart, warnings)
}

fn import_values(chart: &mut Chart, warnings: &mut Warnings) -> Result<(), String> {
    if chart.metadata.dependencies.is_empty() {
        return Ok(());
    }
    let cvals = merge_values(chart, &Map::default(), warnings)?;
    let mut imported = Map::default();
    for r in &mut chart.metadata.dependencies {
        let mut normalized = Vec::new();
        for riv in &r.import_values {
            let (child, parent) = match riv {
                Data::Map(m) => (
                    m.get("child")
                        .and_then(Data::as_str)
                        .unwrap_or("")
                        .to_string(),
                    m.get("parent")
                        .and_then(Data::as_str)
                        .unwrap_or("")
                        .to_string(),
                ),
                Data::String(s) => (format!("exports.{s}"), ".".to_string()),
                _ => continue,
            };
            let mut entry = Map::default();
            entry.insert("child".into(), Data::String(child.clone()));
            entry.insert("parent".into(), Data::String(parent.clone()));
            normalized.push(Data::Map(entry));
            let path = format!("{}.{child}", r.name);
            let Some(values) = table(&cvals, &path) else {
                let error = format!("{} is not a table", quote(missing_table(&cvals, &path)));
                warnings.warn(
                    "ImportValues missing table from chart",
                    &[("chart", r.name.as_str()), ("error", error.as_str())],
                );
                continue;
            };
            merge_tables(
                &mut imported,
                path_to_map(&parent, values.clone()),
                warnings,
            );
        }
        r.import_values = normalized;
    }
    let mut values = cvals;
    merge_tables(&mut values, imported, warnings);
    chart.values = values;
    Ok(())
}

/// Helm's `pathToMap`: nests `data` under the dotted `path` (`.` is the top).
fn path_to_map(path: &str, data: Map) -> Map {
    if path == "." {
        return data;
    }
    let mut current = data;
    for key in path.split('.').rev() {
        let mut m = Map::default();
        m.insert(key.to_string(), Data::Map(current));
        current = m;
    }
    current
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_helpers_follow_helm() {
        let vals = crate::formats::yaml::parse_values("a:\n  b:\n    c: true\n  t: {}\n").unwrap();
        assert_eq!(path_value(&vals, "a.b.c"), Some(&Data::Bool(true)));
        assert_eq!(path_value(&vals, "a.t"), None);
        assert_eq!(path_value(&vals, "a.x.c"), None);
        assert!(table(&vals, "a.b").is_some());
        let nested = path_to_map("x.y", vals.clone());
        assert!(table(&nested, "x.y.a.b").is_some());
    }
}
