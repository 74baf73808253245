//! Sprig's reflection functions: `typeOf`, `typeIs`, `typeIsLike`, `kindOf`, `kindIs`,
//! `deepEqual`, and the Go rules they rest on (`reflect.Kind` names, `reflect.DeepEqual`).

use super::{FuncMap, args};
use std::rc::Rc;

use crate::engine::value::{Map, Value};

/// Registers the reflection functions.
pub fn install(funcs: &mut FuncMap) {
    funcs.add("typeOf", |a: &[Value]| {
        args::count(a, 1)?;
        Ok(Value::from(a[0].type_name()))
    });
    funcs.add("typeIs", |a: &[Value]| {
        args::count(a, 2)?;
        Ok(Value::Bool(args::string(a, 0)? == a[1].type_name()))
    });
    funcs.add("typeIsLike", |a: &[Value]| {
        args::count(a, 2)?;
        let target = args::string(a, 0)?;
        let actual = a[1].type_name();
        Ok(Value::Bool(
            target == actual || actual.strip_prefix('*') == Some(target),
        ))
    });
    funcs.add("kindOf", |a: &[Value]| {
        args::count(a, 1)?;
        Ok(Value::from(kind_name(&a[0])))
    });
    funcs.add("kindIs", |a: &[Value]| {
        args::count(a, 2)?;
        Ok(Value::Bool(args::string(a, 0)? == kind_name(&a[1])))
    });
    funcs.add("deepEqual", |a: &[Value]| {
        args::count(a, 2)?;
        Ok(Value::Bool(deep_equal(&a[0], &a[1])))
    });
}

/// Go's `reflect.Kind` name of a value (`invalid` for nil).
pub fn kind_name(v: &Value) -> &'static str {
    match v {
        Value::Object(o) => o.kind_name(),
        other => other.kind().name(),
    }
}

/// Deeper than this, `deepEqual` answers "not equal" instead of exhausting the stack.
const MAX_EQUAL_DEPTH: usize = 2_000;

/// Go's `reflect.DeepEqual` on template values: same type and deeply equal contents; `int`
/// and `int64` differ, NaN is never equal, objects are equal only to themselves. A pair of
/// maps met again while still comparing them counts as equal, as Go's cycle check does.
pub fn deep_equal(a: &Value, b: &Value) -> bool {
    DeepEqual::default().eq(a, b, 0)
}

#[derive(Default)]
struct DeepEqual {
    in_progress: Vec<(Map, Map)>,
}

impl DeepEqual {
    fn eq(&mut self, a: &Value, b: &Value, depth: usize) -> bool {
        if depth > MAX_EQUAL_DEPTH {
            return false;
        }
        match (a, b) {
            (Value::Nil, Value::Nil) => true,
            (Value::Bool(x), Value::Bool(y)) => x == y,
            (Value::Int(x), Value::Int(y)) | (Value::Int64(x), Value::Int64(y)) => x == y,
            (Value::Float(x), Value::Float(y)) => x == y,
            (Value::String(x), Value::String(y)) => x == y,
            (Value::RawString(x), Value::RawString(y)) => x == y,
            (Value::Bytes(x), Value::Bytes(y)) => x == y,
            (Value::List(x), Value::List(y)) => {
                x.len() == y.len()
                    && x.iter()
                        .zip(y.iter())
                        .all(|(p, q)| self.eq(p, q, depth + 1))
            }
            (Value::Map(x), Value::Map(y)) => self.maps_eq(x, y, depth),
            (Value::Object(x), Value::Object(y)) => Rc::ptr_eq(x, y),
            _ => false,
        }
    }

    fn maps_eq(&mut self, x: &Map, y: &Map, depth: usize) -> bool {
        if x.ptr_eq(y)
            || self
                .in_progress
                .iter()
                .any(|(p, q)| p.ptr_eq(x) && q.ptr_eq(y))
        {
            return true;
        }
        let (xs, ys) = (x.entries(), y.entries());
        if xs.len() != ys.len() {
            return false;
        }
        self.in_progress.push((x.clone(), y.clone()));
        let equal = xs
            .iter()
            .zip(ys.iter())
            .all(|((kx, vx), (ky, vy))| kx == ky && self.eq(vx, vy, depth + 1));
        self.in_progress.pop();
        equal
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deep_equal_tells_go_types_apart() {
        assert!(deep_equal(&Value::Int(1), &Value::Int(1)));
        assert!(!deep_equal(&Value::Int(1), &Value::Int64(1)));
        assert!(!deep_equal(&Value::Int(1), &Value::Float(1.0)));
        assert!(!deep_equal(
            &Value::Float(f64::NAN),
            &Value::Float(f64::NAN)
        ));
        let a = Value::list(vec![Value::from("x"), Value::Nil]);
        let b = Value::list(vec![Value::from("x"), Value::Nil]);
        assert!(deep_equal(&a, &b));
    }

    #[test]
    fn deep_equal_survives_a_map_that_contains_itself() {
        let m = Map::new();
        m.insert("self", Value::Map(m.clone()));
        let n = Map::new();
        n.insert("self", Value::Map(n.clone()));
        assert!(deep_equal(&Value::Map(m.clone()), &Value::Map(m.clone())));
        assert!(deep_equal(&Value::Map(m), &Value::Map(n.clone())));
        assert!(!deep_equal(&Value::Map(Map::new()), &Value::Map(n)));
    }

    #[test]
    fn kind_names_match_reflect() {
        assert_eq!(kind_name(&Value::Nil), "invalid");
        assert_eq!(kind_name(&Value::list(vec![])), "slice");
        assert_eq!(kind_name(&Value::Bytes(vec![1].into())), "slice");
        assert_eq!(kind_name(&Value::empty_map()), "map");
        assert_eq!(kind_name(&Value::Int64(1)), "int64");
    }
}
