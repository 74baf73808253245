//! Sprig's defaults and flow helpers: `default`, `empty`, `coalesce`, `all`, `any`, `ternary`.

use super::{FuncMap, args};
use crate::engine::value::Value;

/// Registers the defaults functions.
pub fn install(funcs: &mut FuncMap) {
    funcs.add("default", |a: &[Value]| {
        args::at_least(a, 1)?;
        Ok(match a.get(1) {
            Some(given) if !is_empty(given) => given.clone(),
            _ => a[0].clone(),
        })
    });
    funcs.add("empty", |a: &[Value]| {
        args::count(a, 1)?;
        Ok(Value::Bool(is_empty(&a[0])))
    });
    funcs.add("coalesce", |a: &[Value]| {
        Ok(a.iter().find(|v| !is_empty(v)).cloned().unwrap_or_default())
    });
    funcs.add("all", |a: &[Value]| {
        Ok(Value::Bool(a.iter().all(|v| !is_empty(v))))
    });
    funcs.add("any", |a: &[Value]| {
        Ok(Value::Bool(a.iter().any(|v| !is_empty(v))))
    });
    funcs.add("ternary", |a: &[Value]| {
        args::count(a, 3)?;
        let choice = if args::boolean(a, 2)? { &a[0] } else { &a[1] };
        Ok(choice.clone())
    });
}

/// Sprig's `empty`: nil, `false`, zero numbers, and empty strings, lists and maps; structs
/// are never empty. This is exactly the opposite of Go's truth test.
pub fn is_empty(v: &Value) -> bool {
    !v.is_true()
}
