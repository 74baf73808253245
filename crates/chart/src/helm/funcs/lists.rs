//! Sprig's list functions (`list`, `append`, `first`, `uniq`, `slice`, `chunk`, …) and its
//! integer sequences (`until`, `untilStep`, `seq`).
//!
//! Sprig inspects its `interface{}` list argument with reflection: any slice works, nil makes
//! Go dereference a nil type (a runtime error the template reports), and other kinds get a
//! "Cannot … on type KIND" error. The plain and `must` variants fail alike in a template: the
//! plain one panics with the error the `must` one returns, and Go's template turns both into
//! `error calling NAME: MESSAGE`.

use super::conversion::to_int64;
use super::defaults::is_empty;
use super::reflect::{deep_equal, kind_name};
use super::{FuncError, FuncMap, FuncResult, args};
use crate::engine::value::Value;

/// Longest list `until`, `untilStep` and `seq` build; Sprig has no limit and would exhaust
/// memory, so a longer request is an error here.
pub const MAX_SEQUENCE: i128 = 1_000_000;

/// Go's message when reflection dereferences the type of a nil interface.
const NIL_DEREFERENCE: &str = "runtime error: invalid memory address or nil pointer dereference";

/// Registers the list functions.
pub fn install(funcs: &mut FuncMap) {
    funcs.add("list", |a: &[Value]| Ok(Value::list(a.to_vec())));
    funcs.add("tuple", |a: &[Value]| Ok(Value::list(a.to_vec())));
    for name in ["append", "push", "mustAppend", "mustPush"] {
        funcs.add(name, push);
    }
    for name in ["prepend", "mustPrepend"] {
        funcs.add(name, prepend);
    }
    for name in ["first", "mustFirst"] {
        funcs.add(name, first);
    }
    for name in ["last", "mustLast"] {
        funcs.add(name, last);
    }
    for name in ["rest", "mustRest"] {
        funcs.add(name, rest);
    }
    for name in ["initial", "mustInitial"] {
        funcs.add(name, initial);
    }
    for name in ["reverse", "mustReverse"] {
        funcs.add(name, reverse);
    }
    for name in ["uniq", "mustUniq"] {
        funcs.add(name, uniq);
    }
    for name in ["compact", "mustCompact"] {
        funcs.add(name, compact);
    }
    for name in ["without", "mustWithout"] {
        funcs.add(name, without);
    }
    for name in ["has", "mustHas"] {
        funcs.add(name, has);
    }
    for name in ["slice", "mustSlice"] {
        funcs.add(name, slice);
    }
    for name in ["chunk", "mustChunk"] {
        funcs.add(name, chunk);
    }
    funcs.add("concat", concat);
    funcs.add("until", |a: &[Value]| {
        args::count(a, 1)?;
        let count = args::int(a, 0)?;
        let step = if count < 0 { -1 } else { 1 };
        until_step(0, count, step).map(int_list)
    });
    funcs.add("untilStep", |a: &[Value]| {
        args::count(a, 3)?;
        let (start, stop, step) = (args::int(a, 0)?, args::int(a, 1)?, args::int(a, 2)?);
        until_step(start, stop, step).map(int_list)
    });
    funcs.add("seq", seq);
}

/// The elements of a slice argument; `action` names the operation in Sprig's error for other
/// kinds (`Cannot find first on type map`).
fn elements(v: &Value, action: &str) -> Result<Vec<Value>, FuncError> {
    match v {
        Value::List(items) => Ok(items.to_vec()),
        Value::Bytes(bytes) => Ok(bytes.iter().map(|b| Value::Int(i64::from(*b))).collect()),
        Value::Nil => Err(FuncError::failed(NIL_DEREFERENCE)),
        other => Err(FuncError::failed(format!("{action} {}", kind_name(other)))),
    }
}

fn push(a: &[Value]) -> FuncResult {
    args::count(a, 2)?;
    let mut items = elements(&a[0], "Cannot push on type")?;
    items.push(a[1].clone());
    Ok(Value::list(items))
}

fn prepend(a: &[Value]) -> FuncResult {
    args::count(a, 2)?;
    let mut items = elements(&a[0], "Cannot prepend on type")?;
    items.insert(0, a[1].clone());
    Ok(Value::list(items))
}

fn first(a: &[Value]) -> FuncResult {
    args::count(a, 1)?;
    let items = elements(&a[0], "Cannot find first on type")?;
    Ok(items.into_iter().next().unwrap_or_default())
}

fn last(a: &[Value]) -> FuncResult {
    args::count(a, 1)?;
    let items = elements(&a[0], "Cannot find last on type")?;
    Ok(items.into_iter().next_back().unwrap_or_default())
}

fn rest(a: &[Value]) -> FuncResult {
    args::count(a, 1)?;
    let items = elements(&a[0], "Cannot find rest on type")?;
    Ok(Value::list(items.into_iter().skip(1).collect()))
}

fn initial(a: &[Value]) -> FuncResult {
    args::count(a, 1)?;
    let mut items = elements(&a[0], "Cannot find initial on type")?;
    items.pop();
    Ok(Value::list(items))
}

fn reverse(a: &[Value]) -> FuncResult {
    args::count(a, 1)?;
    let mut items = elements(&a[0], "Cannot find reverse on type")?;
    items.reverse();
    Ok(Value::list(items))
}

fn uniq(a: &[Value]) -> FuncResult {
    args::count(a, 1)?;
    let items = elements(&a[0], "Cannot find uniq on type")?;
    let mut out: Vec<Value> = Vec::with_capacity(items.len());
    for item in items {
        if !out.iter().any(|seen| deep_equal(seen, &item)) {
            out.push(item);
        }
    }
    Ok(Value::list(out))
}

fn compact(a: &[Value]) -> FuncResult {
    args::count(a, 1)?;
    let items = elements(&a[0], "Cannot compact on type")?;
    Ok(Value::list(
        items.into_iter().filter(|v| !is_empty(v)).collect(),
    ))
}

fn without(a: &[Value]) -> FuncResult {
    args::at_least(a, 1)?;
    let items = elements(&a[0], "Cannot find without on type")?;
    let omit = &a[1..];
    Ok(Value::list(
        items
            .into_iter()
            .filter(|item| !omit.iter().any(|o| deep_equal(o, item)))
            .collect(),
    ))
}

fn has(a: &[Value]) -> FuncResult {
    args::count(a, 2)?;
    if a[1].is_nil() {
        return Ok(Value::Bool(false));
    }
    let items = elements(&a[1], "Cannot find has on type")?;
    Ok(Value::Bool(
        items.iter().any(|item| deep_equal(&a[0], item)),
    ))
}

/// Sprig's `slice`, which replaces Go's builtin in Helm: lists only, indexes cast with
/// `cast.ToInt`, an empty list gives nil.
fn slice(a: &[Value]) -> FuncResult {
    args::at_least(a, 1)?;
    let list = &a[0];
    let items = elements(list, "list should be type of slice or array but")?;
    if items.is_empty() {
        return Ok(Value::Nil);
    }
    let len = items.len() as i64;
    let start = a.get(1).map_or(0, to_int64);
    let end = a.get(2).map_or(len, to_int64);
    if start < 0 || end < start || end > len {
        return Err(FuncError::failed(
            "reflect.Value.Slice: slice index out of bounds",
        ));
    }
    let (start, end) = (start as usize, end as usize);
    Ok(match list {
        Value::Bytes(bytes) => Value::Bytes(bytes[start..end].into()),
        _ => Value::list(items[start..end].to_vec()),
    })
}

fn concat(a: &[Value]) -> FuncResult {
    let mut out = Vec::new();
    for list in a {
        match list {
            Value::Nil => return Err(FuncError::failed(NIL_DEREFERENCE)),
            Value::List(_) | Value::Bytes(_) => out.extend(elements(list, "")?),
            other => {
                return Err(FuncError::failed(format!(
                    "Cannot concat type {} as list",
                    kind_name(other)
                )));
            }
        }
    }
    Ok(Value::list(out))
}

/// Sprig's `chunk`, with its float arithmetic: a size that makes Go build a slice of negative
/// length is Go's runtime error.
fn chunk(a: &[Value]) -> FuncResult {
    args::count(a, 2)?;
    let size = args::int(a, 0)?;
    let items = elements(&a[1], "Cannot chunk type")?;
    let len = items.len() as f64;
    let chunks = go_float_to_int(((len - 1.0) / size as f64).floor() + 1.0);
    let bad_len = || FuncError::failed("runtime error: makeslice: len out of range");
    if chunks < 0 {
        return Err(bad_len());
    }
    let mut out = Vec::new();
    for i in 0..chunks {
        let mut chunk_len = size;
        if i == chunks - 1 {
            chunk_len = go_float_to_int((len % size as f64).floor());
            if chunk_len == 0 {
                chunk_len = size;
            }
        }
        if chunk_len < 0 {
            return Err(bad_len());
        }
        let mut chunk = Vec::new();
        for j in 0..chunk_len {
            let index = i.wrapping_mul(size).wrapping_add(j);
            let item = usize::try_from(index)
                .ok()
                .and_then(|ix| items.get(ix))
                .ok_or_else(|| {
                    FuncError::failed(format!(
                        "runtime error: index out of range [{index}] with length {}",
                        items.len()
                    ))
                })?;
            chunk.push(item.clone());
        }
        out.push(Value::list(chunk));
    }
    Ok(Value::list(out))
}

/// Go's `int(f)` on amd64 (NaN and out-of-range give the minimum integer).
fn go_float_to_int(f: f64) -> i64 {
    super::conversion::float_to_int(f)
}

fn int_list(items: Vec<i64>) -> Value {
    Value::list(items.into_iter().map(Value::Int).collect())
}

/// Sprig's `untilStep`: from `start` towards `stop` (exclusive) by `step`; empty when the
/// step points away from `stop`.
pub fn until_step(start: i64, stop: i64, step: i64) -> Result<Vec<i64>, FuncError> {
    let (start, stop, step) = (i128::from(start), i128::from(stop), i128::from(step));
    let count = if stop < start {
        if step >= 0 {
            return Ok(Vec::new());
        }
        (start - stop + (-step) - 1) / -step
    } else {
        if step <= 0 {
            return Ok(Vec::new());
        }
        (stop - start + step - 1) / step
    };
    if count > MAX_SEQUENCE {
        return Err(FuncError::failed(format!(
            "sequence of {count} numbers is longer than the limit of {MAX_SEQUENCE}"
        )));
    }
    Ok((0..count).map(|i| (start + i * step) as i64).collect())
}

/// Sprig's `seq` (like the Unix command): `seq LAST`, `seq FIRST LAST`,
/// `seq FIRST INCREMENT LAST`, printed space-separated.
fn seq(a: &[Value]) -> FuncResult {
    let params = (0..a.len())
        .map(|i| args::int(a, i))
        .collect::<Result<Vec<_>, _>>()?;
    let numbers = match params.as_slice() {
        [end] => {
            let increment = if *end < 1 { -1 } else { 1 };
            until_step(1, end.wrapping_add(increment), increment)?
        }
        [start, end] => {
            let step = if end < start { -1 } else { 1 };
            until_step(*start, end.wrapping_add(step), step)?
        }
        [start, step, end] => {
            let mut increment = 1;
            if end < start {
                increment = -1;
                if *step > 0 {
                    return Ok(Value::from(""));
                }
            }
            until_step(*start, end.wrapping_add(increment), *step)?
        }
        _ => Vec::new(),
    };
    let text: Vec<String> = numbers.iter().map(i64::to_string).collect();
    Ok(Value::from(text.join(" ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn until_step_counts_like_sprig() {
        assert_eq!(until_step(0, 5, 1).unwrap(), [0, 1, 2, 3, 4]);
        assert_eq!(until_step(0, -10, -2).unwrap(), [0, -2, -4, -6, -8]);
        assert_eq!(until_step(3, 0, 1).unwrap(), Vec::<i64>::new());
        assert_eq!(until_step(3, 99, 0).unwrap(), Vec::<i64>::new());
        assert_eq!(until_step(0, 7, 3).unwrap(), [0, 3, 6]);
    }

    #[test]
    fn huge_sequences_are_refused_instead_of_exhausting_memory() {
        assert!(until_step(0, i64::MAX, 1).is_err());
        assert!(until_step(i64::MIN, i64::MAX, 1).is_err());
        assert_eq!(until_step(0, i64::MAX, i64::MAX).unwrap(), [0]);
    }

    #[test]
    fn chunk_of_a_negative_size_is_go_runtime_error() {
        let list = Value::list(vec![Value::Int(1), Value::Int(2)]);
        assert!(chunk(&[Value::Int(0), list.clone()]).is_err());
        assert_eq!(chunk(&[Value::Int(-3), list]).unwrap().to_go_string(), "[]");
        let five = Value::list((1..=5).map(Value::Int).collect());
        assert!(chunk(&[Value::Int(-3), five]).is_err());
        let one = Value::list(vec![Value::Int(1)]);
        let out = chunk(&[Value::Int(-3), one]).unwrap();
        assert_eq!(out.to_go_string(), "[[1]]");
    }

    #[test]
    fn list_functions_name_the_kind_they_reject() {
        let err = first(&[Value::empty_map()]).unwrap_err();
        assert_eq!(err.to_string(), "Cannot find first on type map");
        let err = first(&[Value::Nil]).unwrap_err();
        assert_eq!(err.to_string(), NIL_DEREFERENCE);
        assert_eq!(
            has(&[Value::Int(1), Value::Nil]).unwrap().to_go_string(),
            "false"
        );
    }
}
