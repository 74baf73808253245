//! Go's builtin template functions, except `and`, `or` and `call`, which the executor runs
//! itself (they short-circuit or need the argument's source text).

use super::{FuncError, FuncMap, FuncResult, args};
use crate::engine::value::format::{quote_rune, sprint, sprintf, sprintln};
use crate::engine::value::{Value, equal, less, less_or_equal};

/// Registers the builtins.
fn install(funcs: &mut FuncMap) {
    funcs.add("not", |a: &[Value]| {
        args::count(a, 1)?;
        Ok(Value::Bool(!a[0].is_true()))
    });
    funcs.add("len", length);
    funcs.add("index", index);
    funcs.add("slice", slice);
    funcs.add("print", |a: &[Value]| Ok(Value::from(sprint(a))));
    funcs.add("println", |a: &[Value]| Ok(Value::from(sprintln(a))));
    funcs.add("printf", |a: &[Value]| {
        args::at_least(a, 1)?;
        let format = args::string(a, 0)?;
        Ok(Value::from(sprintf(format, &a[1..])))
    });
    funcs.add("html", |a: &[Value]| {
        Ok(Value::from(html_escape(&joined(a))))
    });
    funcs.add("js", |a: &[Value]| Ok(Value::from(js_escape(&joined(a)))));
    funcs.add("urlquery", |a: &[Value]| {
        Ok(Value::from(query_escape(&joined(a))))
    });
    funcs.add("eq", |a: &[Value]| {
        args::at_least(a, 1)?;
        compared(equal(&a[0], &a[1..]))
    });
    funcs.add("ne", |a: &[Value]| {
        args::count(a, 2)?;
        compared(equal(&a[0], &a[1..]).map(|b| !b))
    });
    funcs.add("lt", |a: &[Value]| {
        args::count(a, 2)?;
        compared(less(&a[0], &a[1]))
    });
    funcs.add("le", |a: &[Value]| {
        args::count(a, 2)?;
        compared(less_or_equal(&a[0], &a[1]))
    });
    funcs.add("gt", |a: &[Value]| {
        args::count(a, 2)?;
        compared(less_or_equal(&a[0], &a[1]).map(|b| !b))
    });
    funcs.add("ge", |a: &[Value]| {
        args::count(a, 2)?;
        compared(less(&a[0], &a[1]).map(|b| !b))
    });
}

fn compared(result: Result<bool, crate::engine::value::CompareError>) -> FuncResult {
    result
        .map(Value::Bool)
        .map_err(|e| FuncError::failed(e.to_string()))
}

/// The text `html`, `js` and `urlquery` escape: a lone string as is, anything else printed,
/// with nil arguments printed as Go's template printer shows them (`<no value>`).
fn joined(a: &[Value]) -> String {
    match a {
        [Value::String(s)] => s.to_string(),
        _ => {
            let printable: Vec<Value> = a
                .iter()
                .map(|v| match v {
                    Value::Nil => Value::from("<no value>"),
                    other => other.clone(),
                })
                .collect();
            sprint(&printable)
        }
    }
}

/// The list or map a collection-like object stands for; other values as they are.
fn collection(value: &Value) -> Value {
    match value {
        Value::Object(object) => object.as_collection().unwrap_or_else(|| value.clone()),
        other => other.clone(),
    }
}

fn length(a: &[Value]) -> FuncResult {
    args::count(a, 1)?;
    match &collection(&a[0]) {
        Value::Nil => Err(FuncError::failed("len of nil pointer")),
        v => match v.length() {
            Some(n) => Ok(Value::Int(n as i64)),
            None => Err(FuncError::failed(format!("len of type {}", v.type_name()))),
        },
    }
}

/// Go's `indexArg`: an integer index no larger than `cap`.
fn index_arg(index: &Value, cap: usize) -> Result<usize, FuncError> {
    let x = match index {
        Value::Int(i) | Value::Int64(i) => *i,
        Value::Nil => return Err(FuncError::failed("cannot index slice/array with nil")),
        other => {
            return Err(FuncError::failed(format!(
                "cannot index slice/array with type {}",
                other.type_name()
            )));
        }
    };
    match usize::try_from(x) {
        Ok(i) if i <= cap => Ok(i),
        _ => Err(FuncError::failed(format!("index out of range: {x}"))),
    }
}

fn index(a: &[Value]) -> FuncResult {
    args::at_least(a, 1)?;
    let mut item = a[0].clone();
    if item.is_nil() {
        return Err(FuncError::failed("index of untyped nil"));
    }
    for key in &a[1..] {
        item = match &collection(&item) {
            Value::Nil => return Err(FuncError::failed("index of nil pointer")),
            Value::List(items) => {
                let i = index_arg(key, items.len())?;
                items
                    .get(i)
                    .cloned()
                    .ok_or_else(|| FuncError::failed("reflect: slice index out of range"))?
            }
            Value::Bytes(bytes) => {
                let i = index_arg(key, bytes.len())?;
                let byte = bytes
                    .get(i)
                    .ok_or_else(|| FuncError::failed("reflect: slice index out of range"))?;
                Value::Int(i64::from(*byte))
            }
            Value::String(_) | Value::RawString(_) => {
                let bytes = item.as_string_bytes().unwrap_or_default();
                let i = index_arg(key, bytes.len())?;
                let byte = bytes
                    .get(i)
                    .ok_or_else(|| FuncError::failed("reflect: string index out of range"))?;
                Value::Int(i64::from(*byte))
            }
            Value::Map(map) => match key {
                Value::String(k) => map.get(k).unwrap_or(Value::Nil),
                Value::Nil => {
                    return Err(FuncError::failed("value is nil; should be of type string"));
                }
                other => {
                    return Err(FuncError::failed(format!(
                        "value has type {}; should be string",
                        other.type_name()
                    )));
                }
            },
            other => {
                return Err(FuncError::failed(format!(
                    "can't index item of type {}",
                    other.type_name()
                )));
            }
        };
    }
    Ok(item)
}

fn slice(a: &[Value]) -> FuncResult {
    args::at_least(a, 1)?;
    let item = &a[0];
    let indexes = &a[1..];
    if item.is_nil() {
        return Err(FuncError::failed("slice of untyped nil"));
    }
    if indexes.len() > 3 {
        return Err(FuncError::failed(format!(
            "too many slice indexes: {}",
            indexes.len()
        )));
    }
    let len = match item.as_string_bytes() {
        Some(bytes) => {
            if indexes.len() == 3 {
                return Err(FuncError::failed("cannot 3-index slice a string"));
            }
            bytes.len()
        }
        None => match item {
            Value::List(items) => items.len(),
            Value::Bytes(bytes) => bytes.len(),
            other => {
                return Err(FuncError::failed(format!(
                    "can't slice item of type {}",
                    other.type_name()
                )));
            }
        },
    };
    let mut idx = [0, len, len];
    for (i, index) in indexes.iter().enumerate() {
        idx[i] = index_arg(index, len)?;
    }
    if idx[0] > idx[1] {
        return Err(FuncError::failed(format!(
            "invalid slice index: {} > {}",
            idx[0], idx[1]
        )));
    }
    if indexes.len() == 3 && idx[1] > idx[2] {
        return Err(FuncError::failed(format!(
            "invalid slice index: {} > {}",
            idx[1], idx[2]
        )));
    }
    let (from, to) = (idx[0], idx[1]);
    Ok(match item {
        // Cutting a string inside a rune gives Go's byte string, which later slices can join.
        Value::String(_) | Value::RawString(_) => {
            Value::string_from_bytes(item.as_string_bytes().unwrap_or_default()[from..to].to_vec())
        }
        Value::List(items) => Value::list(items[from..to].to_vec()),
        Value::Bytes(bytes) => Value::Bytes(bytes[from..to].into()),
        _ => Value::Nil,
    })
}

/// Go's `template.HTMLEscapeString`.
fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\0' => out.push('\u{FFFD}'),
            '"' => out.push_str("&#34;"),
            '\'' => out.push_str("&#39;"),
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

/// Go's `template.JSEscapeString`.
fn js_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '"' => out.push_str("\\\""),
            '<' => out.push_str("\\u003C"),
            '>' => out.push_str("\\u003E"),
            '&' => out.push_str("\\u0026"),
            '=' => out.push_str("\\u003D"),
            c if c < ' ' => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c if c.is_ascii() => out.push(c),
            c => {
                // quote_rune tells printable characters (kept) from others (escaped).
                if quote_rune(c, false).chars().count() == 3 {
                    out.push(c);
                } else {
                    out.push_str(&format!("\\u{:04X}", u32::from(c)));
                }
            }
        }
    }
    out
}

/// Go's `url.QueryEscape`.
fn query_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for byte in s.bytes() {
        match byte {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(char::from(byte));
            }
            b' ' => out.push('+'),
            b => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// Go's builtin template functions (`len`, `index`, `printf`, `eq`, …).
pub fn go_builtins() -> FuncMap {
    let mut funcs = FuncMap::new();
    install(&mut funcs);
    funcs
}
