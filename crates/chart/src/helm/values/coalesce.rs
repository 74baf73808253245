//! Helm's values coalescing (`pkg/chart/common/util/coalesce.go` in v4.1.4): chart defaults
//! under user values, subchart defaults under the parent's table for the subchart, `global`
//! copied down, and `null` deleting a key when coalescing (but kept when merging).

use super::Warnings;
use crate::formats::tree::{Data, Map};
use crate::helm::chart::Chart;

/// The key whose table every subchart inherits.
pub const GLOBAL_KEY: &str = "global";

/// `CoalesceValues`: `vals` over the chart's defaults, recursively for subcharts; `null`
/// in `vals` deletes the key.
pub fn coalesce_values(chart: &Chart, vals: &Map, warnings: &mut Warnings) -> Result<Map, String> {
    over_defaults(chart, Defaults::copied(chart), vals, false, warnings)
}

/// [`coalesce_values`] for a chart done with its default values: they are moved into the
/// result rather than copied (a large chart's are megabytes of tables), and the chart and its
/// subcharts are left without them.
pub fn coalesce_values_taking(
    chart: &mut Chart,
    vals: &Map,
    warnings: &mut Warnings,
) -> Result<Map, String> {
    let defaults = Defaults::taken(chart);
    over_defaults(chart, defaults, vals, false, warnings)
}

/// `MergeValues`: like [`coalesce_values`], but `null` values are kept.
pub fn merge_values(chart: &Chart, vals: &Map, warnings: &mut Warnings) -> Result<Map, String> {
    over_defaults(chart, Defaults::copied(chart), vals, true, warnings)
}

/// A copy of `vals` over `defaults`, from the top chart down; `merge` keeps `null` values.
fn over_defaults(
    chart: &Chart,
    defaults: Defaults,
    vals: &Map,
    merge: bool,
    warnings: &mut Warnings,
) -> Result<Map, String> {
    let mut dest = vals.clone();
    coalesce(chart, defaults, &mut dest, "", merge, warnings)?;
    Ok(dest)
}

/// The default values of a chart and, in the same order, of its subcharts, as coalescing
/// consumes them.
struct Defaults {
    values: Map,
    dependencies: Vec<Defaults>,
}

impl Defaults {
    /// Copies of `chart`'s defaults.
    fn copied(chart: &Chart) -> Defaults {
        Defaults {
            values: chart.values.clone(),
            dependencies: chart.dependencies.iter().map(Defaults::copied).collect(),
        }
    }

    /// `chart`'s defaults, taken out of it.
    fn taken(chart: &mut Chart) -> Defaults {
        Defaults {
            values: std::mem::take(&mut chart.values),
            dependencies: chart.dependencies.iter_mut().map(Defaults::taken).collect(),
        }
    }
}

/// `CoalesceTables`: `src` under `dst` (`dst` wins), `null` in `dst` deletes the key.
pub fn coalesce_tables(dst: &mut Map, src: Map, warnings: &mut Warnings) {
    coalesce_tables_full_key(dst, src, "", false, warnings);
}

/// `MergeTables`: `src` under `dst` (`dst` wins), `null` kept.
pub fn merge_tables(dst: &mut Map, src: Map, warnings: &mut Warnings) {
    coalesce_tables_full_key(dst, src, "", true, warnings);
}

fn coalesce(
    chart: &Chart,
    defaults: Defaults,
    dest: &mut Map,
    prefix: &str,
    merge: bool,
    warnings: &mut Warnings,
) -> Result<(), String> {
    coalesce_chart_values(chart, defaults.values, dest, prefix, merge, warnings);
    coalesce_deps(chart, defaults.dependencies, dest, prefix, merge, warnings)
}

fn concat_prefix(a: &str, b: &str) -> String {
    if a.is_empty() {
        b.to_string()
    } else {
        format!("{a}.{b}")
    }
}

fn coalesce_deps(
    chart: &Chart,
    defaults: Vec<Defaults>,
    dest: &mut Map,
    prefix: &str,
    merge: bool,
    warnings: &mut Warnings,
) -> Result<(), String> {
    for (sub, sub_defaults) in chart.dependencies.iter().zip(defaults) {
        let name = sub.name();
        // The subchart's table is moved out and put back in the same place once coalesced,
        // rather than copied and the original dropped; a subchart named `global` is copied,
        // since the parent's globals are read from that same table meanwhile.
        let mut table = match dest.get_mut(name) {
            None => Map::default(),
            Some(Data::Map(m)) if name == GLOBAL_KEY => m.clone(),
            Some(Data::Map(m)) => std::mem::take(m),
            Some(other) => {
                return Err(format!(
                    "type mismatch on {name}: %!t({}={})",
                    other.go_type_name(),
                    crate::engine::value::Value::from_data(other).to_go_string()
                ));
            }
        };
        let sub_prefix = concat_prefix(prefix, chart.name());
        coalesce_globals(&mut table, dest, &sub_prefix, warnings);
        coalesce(sub, sub_defaults, &mut table, &sub_prefix, merge, warnings)?;
        dest.insert(name.to_string(), Data::Map(table));
    }
    Ok(())
}

/// Copies the parent's `global` table into the subchart's, the parent's entries winning.
fn coalesce_globals(dest: &mut Map, src: &Map, prefix: &str, warnings: &mut Warnings) {
    let mut dg = match dest.get(GLOBAL_KEY) {
        None => Map::default(),
        Some(Data::Map(m)) => m.clone(),
        Some(_) => {
            warnings.info(&format!(
                "warning: skipping globals because destination {GLOBAL_KEY} is not a table."
            ));
            return;
        }
    };
    let sg = match src.get(GLOBAL_KEY) {
        None => Map::default(),
        Some(Data::Map(m)) => m.clone(),
        Some(_) => {
            warnings.info(&format!(
                "warning: skipping globals because source {GLOBAL_KEY} is not a table."
            ));
            return;
        }
    };
    for (key, val) in sg {
        match val {
            Data::Map(vv) => {
                let mut vv = vv.clone();
                match dg.get(&key) {
                    None => {
                        dg.insert(key, Data::Map(vv));
                    }
                    Some(Data::Map(destv)) => {
                        // The parent's globals win over the subchart's own; nulls survive here
                        // and are removed by the coalescing that follows.
                        let sub_prefix = concat_prefix(prefix, &key);
                        coalesce_tables_full_key(
                            &mut vv,
                            destv.clone(),
                            &sub_prefix,
                            true,
                            warnings,
                        );
                        dg.insert(key, Data::Map(vv));
                    }
                    Some(_) => warnings.info(&format!(
                        "Conflict: cannot merge map onto non-map for \"{key}\". Skipping."
                    )),
                }
            }
            other => {
                if matches!(dg.get(&key), Some(Data::Map(_))) {
                    warnings.info(&format!("key {key} is table. Skipping"));
                } else {
                    dg.insert(key, other);
                }
            }
        }
    }
    dest.insert(GLOBAL_KEY.to_string(), Data::Map(dg));
}

/// Puts the chart's default values `defaults` under `v` (`v` wins).
fn coalesce_chart_values(
    chart: &Chart,
    defaults: Map,
    v: &mut Map,
    prefix: &str,
    merge: bool,
    warnings: &mut Warnings,
) {
    let sub_prefix = concat_prefix(prefix, chart.name());
    for (key, val) in defaults {
        match v.get_mut(&key) {
            None => {
                v.insert(key, val);
            }
            Some(Data::Null) if !merge => {
                v.shift_remove(&key);
            }
            Some(Data::Map(dest)) => match val {
                Data::Map(src) => {
                    // Tables of subcharts are always merged: their nulls are dealt with when
                    // the subchart itself is coalesced.
                    let merge = merge || chart.dependencies.iter().any(|d| d.name() == key);
                    coalesce_tables_full_key(
                        dest,
                        src,
                        &concat_prefix(&sub_prefix, &key),
                        merge,
                        warnings,
                    );
                }
                Data::Null => {}
                _ => warnings.info(&format!(
                    "warning: skipped value for {sub_prefix}.{key}: Not a table."
                )),
            },
            Some(_) => {}
        }
    }
}

fn is_table(d: &Data) -> bool {
    matches!(d, Data::Map(_))
}

fn coalesce_tables_full_key(
    dst: &mut Map,
    src: Map,
    prefix: &str,
    merge: bool,
    warnings: &mut Warnings,
) {
    // The key's full path is only needed where a table recurses or a warning names it.
    let full_key = |key: &str| concat_prefix(prefix, key);
    // A null in `dst` deletes the key only where `src` has it too (Helm v4 keeps a user's
    // null under a key the chart does not default).
    for (key, val) in src {
        match dst.get_mut(&key) {
            Some(Data::Null) if !merge => {
                dst.shift_remove(&key);
            }
            None => {
                dst.insert(key, val);
            }
            Some(dv) => {
                if let Data::Map(src_table) = val {
                    if let Data::Map(dst_table) = dv {
                        coalesce_tables_full_key(
                            dst_table,
                            src_table,
                            &full_key(&key),
                            merge,
                            warnings,
                        );
                    } else {
                        warnings.info(&format!(
                            "warning: cannot overwrite table with non table for {} ({})",
                            full_key(&key),
                            crate::engine::value::Value::from_data(&Data::Map(src_table))
                                .to_go_string()
                        ));
                    }
                } else if is_table(dv) && val != Data::Null {
                    warnings.info(&format!(
                        "warning: destination for {} is a table. Ignoring non-table value ({})",
                        full_key(&key),
                        crate::engine::value::Value::from_data(&val).to_go_string()
                    ));
                }
            }
        }
    }
}

/// Helm's `mergeMaps` for user values: `b` over `a`, tables merged recursively, anything
/// else (including `null`) replacing.
pub fn merge_maps(a: &mut Map, b: Map) {
    for (key, val) in b {
        if let Data::Map(bv) = &val
            && let Some(Data::Map(av)) = a.get_mut(&key)
        {
            merge_maps(av, bv.clone());
            continue;
        }
        a.insert(key, val);
    }
}
