//! Sprig's dictionary functions: `dict`, `get`, `set`, `unset`, `hasKey`, `pluck`, `dig`,
//! `keys`, `values`, `pick`, `omit`, `merge`/`mergeOverwrite` (with mergo's rules) and
//! `deepCopy`.
//!
//! Maps are shared by reference, so `set`, `unset` and the merges change the map the template
//! holds, as Go maps do. A nil map argument reads as empty; writing to it is Go's runtime error.

use super::conversion::strval;
use super::{FuncError, FuncMap, FuncResult, args};
use crate::engine::value::{Map, Value};

/// How deeply `merge` and `deepCopy` follow nested maps and lists. Go recurses without limit
/// (a map that contains itself overflows its stack); real values are never this deep.
pub const MAX_NESTING: usize = 1_000;

/// Registers the dictionary functions.
pub fn install(funcs: &mut FuncMap) {
    funcs.add("dict", dict);
    funcs.add("get", |a: &[Value]| {
        args::count(a, 2)?;
        let map = map_arg(a, 0)?;
        let key = args::string(a, 1)?;
        Ok(map
            .and_then(|m| m.get(key))
            .unwrap_or_else(|| Value::from("")))
    });
    funcs.add("set", |a: &[Value]| {
        args::count(a, 3)?;
        let key = args::string(a, 1)?;
        let map = map_arg(a, 0)?.ok_or_else(nil_map_write)?;
        map.insert(key, a[2].clone());
        Ok(Value::Map(map.clone()))
    });
    funcs.add("unset", |a: &[Value]| {
        args::count(a, 2)?;
        let key = args::string(a, 1)?;
        match map_arg(a, 0)? {
            Some(map) => {
                map.remove(key);
                Ok(Value::Map(map.clone()))
            }
            None => Ok(Value::empty_map()),
        }
    });
    funcs.add("hasKey", |a: &[Value]| {
        args::count(a, 2)?;
        let key = args::string(a, 1)?;
        Ok(Value::Bool(
            map_arg(a, 0)?.is_some_and(|m| m.contains_key(key)),
        ))
    });
    funcs.add("pluck", |a: &[Value]| {
        args::at_least(a, 1)?;
        let key = args::string(a, 0)?;
        let mut out = Vec::new();
        for i in 1..a.len() {
            if let Some(v) = map_arg(a, i)?.and_then(|m| m.get(key)) {
                out.push(v);
            }
        }
        Ok(Value::list(out))
    });
    funcs.add("keys", |a: &[Value]| {
        let mut out = Vec::new();
        for i in 0..a.len() {
            if let Some(map) = map_arg(a, i)? {
                out.extend(map.keys().into_iter().map(Value::from));
            }
        }
        Ok(Value::list(out))
    });
    funcs.add("values", |a: &[Value]| {
        args::count(a, 1)?;
        let values = map_arg(a, 0)?.map(|m| m.entries()).unwrap_or_default();
        Ok(Value::list(values.into_iter().map(|(_, v)| v).collect()))
    });
    funcs.add("pick", |a: &[Value]| pick_or_omit(a, true));
    funcs.add("omit", |a: &[Value]| pick_or_omit(a, false));
    funcs.add("dig", dig);
    funcs.add("merge", |a: &[Value]| {
        merge_all(a, false).or_else(|_| Ok(Value::from("")))
    });
    funcs.add("mustMerge", |a: &[Value]| merge_all(a, false));
    funcs.add("mergeOverwrite", |a: &[Value]| {
        merge_all(a, true).or_else(|_| Ok(Value::from("")))
    });
    funcs.add("mustMergeOverwrite", |a: &[Value]| merge_all(a, true));
    funcs.add("deepCopy", |a: &[Value]| {
        args::count(a, 1)?;
        copy_arg(&a[0])?;
        deep_copy(&a[0], 0).map_err(|e| FuncError::failed(format!("deepCopy error: {e}")))
    });
    funcs.add("mustDeepCopy", |a: &[Value]| {
        args::count(a, 1)?;
        copy_arg(&a[0])?;
        deep_copy(&a[0], 0).map_err(FuncError::failed)
    });
}

/// copystructure asks reflection for the type of a nil value, which Go answers with a panic.
fn copy_arg(v: &Value) -> Result<(), FuncError> {
    if v.is_nil() {
        return Err(FuncError::failed(
            "reflect: call of reflect.Value.Type on zero Value",
        ));
    }
    Ok(())
}

/// A `map[string]interface{}` parameter: `None` for a nil map (Go passes a nil map there).
fn map_arg(a: &[Value], index: usize) -> Result<Option<&Map>, FuncError> {
    match a.get(index) {
        Some(Value::Nil) => Ok(None),
        _ => args::map(a, index).map(Some),
    }
}

fn nil_map_write() -> FuncError {
    FuncError::failed("assignment to entry in nil map")
}

/// Sprig's `dict`: keys through `strval`, a missing last value is `""`.
fn dict(a: &[Value]) -> FuncResult {
    let map = Map::new();
    for pair in a.chunks(2) {
        let value = pair.get(1).cloned().unwrap_or_else(|| Value::from(""));
        map.insert(strval(&pair[0]), value);
    }
    Ok(Value::Map(map))
}

fn pick_or_omit(a: &[Value], keep_listed: bool) -> FuncResult {
    args::at_least(a, 1)?;
    let listed = (1..a.len())
        .map(|i| args::string(a, i))
        .collect::<Result<Vec<_>, _>>()?;
    let out = Map::new();
    if let Some(map) = map_arg(a, 0)? {
        for (key, value) in map.entries() {
            if listed.contains(&key.as_str()) == keep_listed {
                out.insert(key, value);
            }
        }
    }
    Ok(Value::Map(out))
}

/// Go's panic message when a type assertion to a map fails.
fn not_a_map(v: &Value) -> FuncError {
    let ty = if v.is_nil() {
        "nil".to_string()
    } else {
        v.type_name()
    };
    FuncError::failed(format!(
        "interface conversion: interface {{}} is {ty}, not map[string]interface {{}}"
    ))
}

/// Sprig's `dig KEY... DEFAULT MAP`: follows keys through nested maps, the default when a key
/// is missing.
fn dig(a: &[Value]) -> FuncResult {
    if a.len() < 3 {
        return Err(FuncError::failed("dig needs at least three arguments"));
    }
    let (keys, rest) = a.split_at(a.len() - 2);
    let default = &rest[0];
    let Value::Map(mut map) = rest[1].clone() else {
        return Err(not_a_map(&rest[1]));
    };
    let keys = keys
        .iter()
        .map(|k| match k {
            Value::String(s) => Ok(s.clone()),
            other => Err(FuncError::failed(format!(
                "interface conversion: interface {{}} is {}, not string",
                if other.is_nil() {
                    "nil".to_string()
                } else {
                    other.type_name()
                }
            ))),
        })
        .collect::<Result<Vec<_>, _>>()?;
    for (i, key) in keys.iter().enumerate() {
        let Some(step) = map.get(key) else {
            return Ok(default.clone());
        };
        if i == keys.len() - 1 {
            return Ok(step);
        }
        map = match step {
            Value::Map(next) => next,
            other => return Err(not_a_map(&other)),
        };
    }
    Ok(default.clone())
}

/// `merge`/`mergeOverwrite`: every source merged into the first map in order, which is
/// changed in place and returned (a nil first map gets a new one).
fn merge_all(a: &[Value], overwrite: bool) -> FuncResult {
    args::at_least(a, 1)?;
    let dst = map_arg(a, 0)?.cloned().unwrap_or_default();
    for i in 1..a.len() {
        if let Some(src) = map_arg(a, i)? {
            merge_maps(&dst, src, overwrite, 0)?;
        }
    }
    Ok(Value::Map(dst))
}

/// mergo's emptiness (with pointers dereferenced): what a merge may fill in.
fn mergo_empty(v: &Value) -> bool {
    !v.is_true()
}

/// mergo's `deepMerge` of two `map[string]interface{}`: nested maps merge into the map `dst`
/// already holds (in place, so a map shared with another value changes there too); missing,
/// nil and empty values are filled from `src`; with `overwrite`, every source value wins,
/// nil and empty ones included, except that two maps still merge key by key.
pub fn merge_maps(dst: &Map, src: &Map, overwrite: bool, depth: usize) -> Result<(), FuncError> {
    if depth > MAX_NESTING {
        return Err(FuncError::failed(format!(
            "merge goes deeper than {MAX_NESTING} nested maps"
        )));
    }
    for (key, src_value) in src.entries() {
        let dst_value = dst.get(&key);
        if src_value.is_nil() {
            if overwrite {
                dst.insert(key, Value::Nil);
            }
            continue;
        }
        if let (Value::Map(src_map), Some(Value::Map(dst_map))) = (&src_value, &dst_value) {
            merge_maps(dst_map, src_map, overwrite, depth + 1)?;
        }
        let dst_is_set = dst_value.as_ref().is_some_and(|v| !mergo_empty(v));
        if dst_is_set {
            let src_is_list = matches!(src_value, Value::List(_) | Value::Bytes(_));
            let both_maps = matches!(
                (&src_value, &dst_value),
                (Value::Map(_), Some(Value::Map(_)))
            );
            if src_is_list || both_maps {
                if src_is_list && overwrite {
                    dst.insert(key, src_value);
                }
                continue;
            }
        }
        if overwrite || !dst_is_set {
            dst.insert(key, src_value);
        }
    }
    Ok(())
}

/// copystructure's deep copy: maps and lists copied all the way down, scalars and objects as
/// they are.
pub fn deep_copy(v: &Value, depth: usize) -> Result<Value, String> {
    if depth > MAX_NESTING {
        return Err(format!("value nests deeper than {MAX_NESTING} levels"));
    }
    Ok(match v {
        Value::Map(map) => {
            let copy = Map::new();
            for (key, value) in map.entries() {
                copy.insert(key, deep_copy(&value, depth + 1)?);
            }
            Value::Map(copy)
        }
        Value::List(items) => Value::list(
            items
                .iter()
                .map(|item| deep_copy(item, depth + 1))
                .collect::<Result<_, _>>()?,
        ),
        other => other.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(entries: &[(&str, Value)]) -> Map {
        Map::from_entries(entries.iter().map(|(k, v)| (k.to_string(), v.clone())))
    }

    #[test]
    fn merge_fills_only_missing_or_empty_values() {
        let dst = map(&[
            ("a", Value::from("one")),
            ("c", Value::Int(3)),
            ("d", Value::Map(map(&[("f", Value::Int(5))]))),
            ("empty", Value::from("")),
            ("k", Value::Map(map(&[("l", Value::Bool(true))]))),
        ]);
        let src = map(&[
            ("a", Value::Int(1)),
            ("b", Value::Int(2)),
            ("d", Value::Map(map(&[("e", Value::from("four"))]))),
            ("empty", Value::from("filled")),
            ("k", Value::Map(map(&[("l", Value::Bool(false))]))),
            ("n", Value::Nil),
        ]);
        merge_maps(&dst, &src, false, 0).unwrap();
        assert_eq!(
            Value::Map(dst).to_go_string(),
            "map[a:one b:2 c:3 d:map[e:four f:5] empty:filled k:map[l:true]]"
        );
    }

    #[test]
    fn merge_overwrite_lets_every_source_value_win() {
        let dst = map(&[
            ("a", Value::from("one")),
            ("g", Value::list(vec![Value::Int(8)])),
            ("k", Value::Map(map(&[("l", Value::Bool(true))]))),
            ("x", Value::from("kept?")),
        ]);
        let src = map(&[
            ("a", Value::Int(1)),
            ("g", Value::list(vec![Value::Int(6)])),
            ("k", Value::Map(map(&[("l", Value::Bool(false))]))),
            ("x", Value::Nil),
        ]);
        merge_maps(&dst, &src, true, 0).unwrap();
        assert_eq!(
            Value::Map(dst).to_go_string(),
            "map[a:1 g:[6] k:map[l:false] x:<nil>]"
        );
    }

    #[test]
    fn a_map_that_contains_itself_cannot_be_merged_or_copied() {
        let m = Map::new();
        m.insert("self", Value::Map(m.clone()));
        let dst = Map::new();
        dst.insert("self", Value::Map(dst.clone()));
        assert!(merge_maps(&dst, &m, false, 0).is_err());
        assert!(deep_copy(&Value::Map(m), 0).is_err());
    }

    #[test]
    fn dig_reports_go_type_assertion_failures() {
        let d = Value::Map(map(&[("a", Value::from("x"))]));
        let err = dig(&[Value::from("a"), Value::from("b"), Value::from(""), d]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "interface conversion: interface {} is string, not map[string]interface {}"
        );
    }
}
