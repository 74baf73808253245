//! Checks of a function's arguments that yield Go's error messages.

use super::FuncError;
use crate::engine::value::Value;

/// Requires exactly `want` arguments.
pub fn count(args: &[Value], want: usize) -> Result<(), FuncError> {
    if args.len() == want {
        return Ok(());
    }
    Err(FuncError::ArgCount {
        want,
        got: args.len(),
        variadic: false,
    })
}

/// Requires at least `want` arguments (a variadic Go function).
pub fn at_least(args: &[Value], want: usize) -> Result<(), FuncError> {
    if args.len() >= want {
        return Ok(());
    }
    Err(FuncError::ArgCount {
        want,
        got: args.len(),
        variadic: true,
    })
}

fn wrong_type(index: usize, expected: &str) -> FuncError {
    FuncError::ArgType {
        index,
        expected: expected.to_string(),
    }
}

/// Argument `index` as a Go `string` parameter.
pub fn string(args: &[Value], index: usize) -> Result<&str, FuncError> {
    match args.get(index) {
        Some(Value::String(s)) => Ok(s),
        _ => Err(wrong_type(index, "string")),
    }
}

/// Argument `index` as a Go `string` parameter read as bytes, so a string that is not valid
/// UTF-8 keeps its bytes (functions that hash or encode the raw bytes, as Go does).
pub fn string_bytes(args: &[Value], index: usize) -> Result<&[u8], FuncError> {
    args.get(index)
        .and_then(Value::as_string_bytes)
        .ok_or_else(|| wrong_type(index, "string"))
}

/// Argument `index` as a Go `int` parameter (Go accepts no `int64` or `float64` there).
pub fn int(args: &[Value], index: usize) -> Result<i64, FuncError> {
    match args.get(index) {
        Some(Value::Int(i)) => Ok(*i),
        _ => Err(wrong_type(index, "int")),
    }
}

/// Argument `index` as a Go `int64` parameter.
pub fn int64(args: &[Value], index: usize) -> Result<i64, FuncError> {
    match args.get(index) {
        Some(Value::Int64(i)) => Ok(*i),
        _ => Err(wrong_type(index, "int64")),
    }
}

/// Argument `index` as a Go `float64` parameter.
pub fn float64(args: &[Value], index: usize) -> Result<f64, FuncError> {
    match args.get(index) {
        Some(Value::Float(f)) => Ok(*f),
        _ => Err(wrong_type(index, "float64")),
    }
}

/// Argument `index` as a Go `bool` parameter.
pub fn boolean(args: &[Value], index: usize) -> Result<bool, FuncError> {
    match args.get(index) {
        Some(Value::Bool(b)) => Ok(*b),
        _ => Err(wrong_type(index, "bool")),
    }
}

/// Argument `index` as a Go `[]interface{}` parameter (nil is an empty list, as in Go).
pub fn list(args: &[Value], index: usize) -> Result<&[Value], FuncError> {
    match args.get(index) {
        Some(Value::List(items)) => Ok(items),
        Some(Value::Nil) => Ok(&[]),
        _ => Err(wrong_type(index, "[]interface {}")),
    }
}

/// Argument `index` as a Go `map[string]interface{}` parameter.
pub fn map(args: &[Value], index: usize) -> Result<&crate::engine::value::Map, FuncError> {
    match args.get(index) {
        Some(Value::Map(m)) => Ok(m),
        _ => Err(wrong_type(index, "map[string]interface {}")),
    }
}
