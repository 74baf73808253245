//! Go's comparison functions `eq`, `lt`, `le` (and through them `ne`, `gt`, `ge`) with Go's kind
//! rules: numbers compare only within their kind (`int` with `int64`, never with `float64`),
//! strings with strings, and anything else only by `eq` against nil.

use std::fmt;
use std::rc::Rc;

use super::Value;
use super::format::sprintf;

/// Why two values cannot be compared; `Display` gives Go's exact message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CompareError {
    /// Go: `invalid type for comparison` (e.g. `lt` on lists or bools).
    BadType,
    /// Go: `incompatible types for comparison: int and float64` (e.g. `eq 1 1.0`).
    Incompatible(String, String),
    /// Go: `missing argument for comparison` (`eq` with one argument).
    MissingArgument,
    /// Go's message for lists, maps and other values `==` cannot compare.
    NonComparable(String),
}

impl fmt::Display for CompareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CompareError::BadType => f.write_str("invalid type for comparison"),
            CompareError::Incompatible(a, b) => {
                write!(f, "incompatible types for comparison: {a} and {b}")
            }
            CompareError::MissingArgument => f.write_str("missing argument for comparison"),
            CompareError::NonComparable(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for CompareError {}

/// Go's basic kinds for comparison; `Other` covers nil, lists, maps and objects.
#[derive(Clone, Copy, PartialEq, Eq)]
enum BasicKind {
    Bool,
    Int,
    Float,
    String,
    Other,
}

fn basic_kind(v: &Value) -> BasicKind {
    match v {
        Value::Bool(_) => BasicKind::Bool,
        Value::Int(_) | Value::Int64(_) => BasicKind::Int,
        Value::Float(_) => BasicKind::Float,
        Value::String(_) | Value::RawString(_) => BasicKind::String,
        _ => BasicKind::Other,
    }
}

/// Go's `eq arg1 arg2...`: true when `arg1` equals any of `others`.
pub fn equal(arg1: &Value, others: &[Value]) -> Result<bool, CompareError> {
    if others.is_empty() {
        return Err(CompareError::MissingArgument);
    }
    let k1 = basic_kind(arg1);
    for arg in others {
        let k2 = basic_kind(arg);
        let truth = if k1 != k2 {
            if !arg1.is_nil() && !arg.is_nil() {
                return Err(incompatible(arg1, arg));
            }
            false
        } else {
            match (arg1, arg) {
                (Value::Bool(a), Value::Bool(b)) => a == b,
                (Value::Float(a), Value::Float(b)) => a == b,
                _ if k1 == BasicKind::String => arg1.as_string_bytes() == arg.as_string_bytes(),
                _ if k1 == BasicKind::Int => arg1.as_int() == arg.as_int(),
                _ => equal_other(arg1, arg)?,
            }
        };
        if truth {
            return Ok(true);
        }
    }
    Ok(false)
}

fn incompatible(a: &Value, b: &Value) -> CompareError {
    CompareError::Incompatible(a.type_name(), b.type_name())
}

/// Equality of values that are not basic kinds: nil equals only nil, objects are equal when
/// they are the same object, lists and maps cannot be compared.
fn equal_other(arg1: &Value, arg: &Value) -> Result<bool, CompareError> {
    let same_shape = std::mem::discriminant(arg1) == std::mem::discriminant(arg);
    if !same_shape && !arg1.is_nil() && !arg.is_nil() {
        return Err(CompareError::NonComparable(sprintf(
            "non-comparable types %s: %v, %s: %v",
            &[
                arg1.clone(),
                Value::str(arg1.type_name()),
                Value::str(arg.type_name()),
                arg.clone(),
            ],
        )));
    }
    if arg1.is_nil() || arg.is_nil() {
        return Ok(arg1.is_nil() == arg.is_nil());
    }
    match (arg1, arg) {
        (Value::Object(a), Value::Object(b)) => Ok(Rc::ptr_eq(a, b)),
        _ => Err(CompareError::NonComparable(sprintf(
            "non-comparable type %s: %v",
            &[arg.clone(), Value::str(arg.type_name())],
        ))),
    }
}

/// Go's `lt arg1 arg2`.
pub fn less(arg1: &Value, arg2: &Value) -> Result<bool, CompareError> {
    let k1 = basic_kind(arg1);
    let k2 = basic_kind(arg2);
    if k1 == BasicKind::Other || k2 == BasicKind::Other {
        return Err(CompareError::BadType);
    }
    if k1 != k2 {
        return Err(incompatible(arg1, arg2));
    }
    match (arg1, arg2) {
        (Value::Float(a), Value::Float(b)) => Ok(a < b),
        (Value::Bool(_), _) => Err(CompareError::BadType),
        _ if k1 == BasicKind::String => Ok(arg1.as_string_bytes() < arg2.as_string_bytes()),
        _ => Ok(arg1.as_int() < arg2.as_int()),
    }
}

/// Go's `le arg1 arg2`.
pub fn less_or_equal(arg1: &Value, arg2: &Value) -> Result<bool, CompareError> {
    if less(arg1, arg2)? {
        return Ok(true);
    }
    equal(arg1, std::slice::from_ref(arg2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_compare_within_their_kind_only() {
        assert_eq!(equal(&Value::Int(1), &[Value::Int64(1)]), Ok(true));
        assert_eq!(
            equal(&Value::Int(1), &[Value::Float(1.0)])
                .unwrap_err()
                .to_string(),
            "incompatible types for comparison: int and float64"
        );
        assert_eq!(less(&Value::Float(1.0), &Value::Float(2.0)), Ok(true));
        assert_eq!(
            less(&Value::Int(1), &Value::Float(2.0)),
            Err(CompareError::Incompatible("int".into(), "float64".into()))
        );
    }

    #[test]
    fn eq_matches_any_of_several_arguments() {
        let one = Value::str("b");
        assert_eq!(equal(&one, &[Value::str("a"), Value::str("b")]), Ok(true));
        assert_eq!(equal(&one, &[]), Err(CompareError::MissingArgument));
    }

    #[test]
    fn nil_equals_only_nil_and_never_errors() {
        assert_eq!(equal(&Value::Nil, &[Value::Nil]), Ok(true));
        assert_eq!(equal(&Value::str("x"), &[Value::Nil]), Ok(false));
        assert_eq!(equal(&Value::Nil, &[Value::list(vec![])]), Ok(false));
    }

    #[test]
    fn ordering_needs_basic_kinds() {
        assert_eq!(
            less(&Value::Bool(true), &Value::Bool(false)),
            Err(CompareError::BadType)
        );
        assert_eq!(
            less(&Value::Nil, &Value::Int(1)),
            Err(CompareError::BadType)
        );
        assert_eq!(less_or_equal(&Value::Int(2), &Value::Int64(2)), Ok(true));
    }

    #[test]
    fn lists_are_not_comparable() {
        let list = Value::list(vec![Value::str("a")]);
        assert_eq!(
            equal(&list, std::slice::from_ref(&list))
                .unwrap_err()
                .to_string(),
            "non-comparable type [a]: []interface {}"
        );
    }
}
