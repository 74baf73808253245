//! Function and method calls, the short-circuit builtins, and Go's messages for failed calls.

use super::{At, Ev, Exe, State};
use crate::engine::ast::{Arg, Show};
use crate::engine::error::Error;
use crate::engine::value::format::quote;
use crate::engine::value::{MethodError, Object, Value};
use crate::engine::{FuncError, Function};

impl<'t> State<'t, '_, '_> {
    pub(super) fn call_method(
        &mut self,
        dot: &Ev,
        object: &dyn Object,
        name: &str,
        args: &'t [Arg],
        last: Option<Ev>,
    ) -> Exe<Ev> {
        let at = self.at;
        let explicit = args.get(1..).unwrap_or(&[]);
        let mut evaluated = Vec::with_capacity(explicit.len() + 1);
        for arg in explicit {
            evaluated.push(self.eval_arg(dot, arg)?);
        }
        evaluated.extend(last);
        let values: Vec<Value> = evaluated.iter().map(Ev::value).collect();
        self.at = at;
        match object.call_method(name, &values) {
            Ok(value) => Ok(Ev::from_result(value)),
            Err(MethodError::NoSuchMethod) => Err(self.error(format!(
                "can't evaluate field {name} in type {}",
                object.type_name()
            ))),
            Err(MethodError::ArgCount { want, got }) => Err(self.error(format!(
                "wrong number of args for {name}: want {want} got {got}"
            ))),
            Err(MethodError::ArgType { index, expected }) => {
                if let Some(arg) = explicit.get(index).or(explicit.last()) {
                    self.at = At::Arg(arg);
                }
                Err(self.arg_type_error(explicit, &evaluated, index, &expected))
            }
            Err(MethodError::Failed(message)) => Err(self
                .error(format!("error calling {name}: {message}"))
                .wrapping_function_error()),
        }
    }

    pub(super) fn eval_function(
        &mut self,
        dot: &Ev,
        node: &'t Arg,
        name: &str,
        call_node: At<'t>,
        args: &'t [Arg],
        last: Option<Ev>,
    ) -> Exe<Ev> {
        self.at = At::Arg(node);
        let explicit = args.get(1..).unwrap_or(&[]);
        match name {
            "and" | "or" => return self.eval_and_or(dot, name, explicit, last),
            "call" => return self.eval_call(dot, explicit, last, call_node),
            _ => {}
        }
        let Some(function) = self.exec.engine.funcs.get(name).cloned() else {
            return Err(self.error(format!("function {} not defined", quote(name))));
        };
        let mut evaluated = Vec::with_capacity(explicit.len() + 1);
        for arg in explicit {
            evaluated.push(self.eval_arg(dot, arg)?);
        }
        evaluated.extend(last);
        let mut values: Vec<Value> = evaluated.iter().map(Ev::value).collect();
        loop {
            let result = match &function {
                Function::Pure(f) => f(&values),
                Function::Engine(f) => f(self.exec, &values),
            };
            let error = match result {
                Ok(value) => return Ok(Ev::from_result(value)),
                Err(error) => error,
            };
            let converted = match &error {
                FuncError::ArgType { index, expected } => convert_constant(
                    self.constant_arg(explicit.get(*index)),
                    values.get(*index),
                    expected,
                )
                .or_else(|| text_of_raw_string(values.get(*index), expected))
                .map(|value| (*index, value)),
                _ => None,
            };
            let Some((index, value)) = converted else {
                return Err(self.call_error(name, node, call_node, explicit, &evaluated, error));
            };
            // Go converts a number constant to the parameter's numeric type; a function that
            // reads a string as text gets a non-UTF-8 one as text; call again.
            evaluated[index] = Ev::Val(value.clone());
            values[index] = value;
        }
    }

    /// Phrases a function's failure as Go does, naming the node Go names.
    pub(super) fn call_error(
        &mut self,
        name: &str,
        node: &'t Arg,
        call_node: At<'t>,
        explicit: &'t [Arg],
        evaluated: &[Ev],
        error: FuncError,
    ) -> Error {
        match error {
            FuncError::ArgCount {
                want,
                got,
                variadic,
            } => {
                self.at = At::Arg(node);
                let at_least = if variadic { "at least " } else { "" };
                self.error(format!(
                    "wrong number of args for {name}: want {at_least}{want} got {got}"
                ))
            }
            FuncError::ArgType { index, expected } => {
                self.at = match explicit.get(index).or(explicit.last()) {
                    Some(arg) => At::Arg(arg),
                    None => At::Arg(node),
                };
                self.arg_type_error(explicit, evaluated, index, &expected)
            }
            FuncError::Failed(message) => {
                self.at = call_node;
                self.error(format!("error calling {name}: {message}"))
                    .wrapping_function_error()
            }
            FuncError::Template(cause) => {
                self.at = call_node;
                let detail = format!("error calling {name}: ");
                self.error_with_cause(detail, Some(*cause))
            }
        }
    }

    /// The value of `arg` when it is a constant.
    fn constant_arg(&self, arg: Option<&Arg>) -> Option<Value> {
        match arg {
            Some(Arg::Constant { index, .. }) => Some(self.constant(*index)),
            _ => None,
        }
    }

    /// Go's `validateType` messages for an argument of the wrong type.
    pub(super) fn arg_type_error(
        &self,
        explicit: &'t [Arg],
        evaluated: &[Ev],
        index: usize,
        expected: &str,
    ) -> Error {
        let detail = match (explicit.get(index), evaluated.get(index)) {
            (Some(Arg::Nil(_)), _) => format!("cannot assign nil to {expected}"),
            (Some(Arg::Constant { source, .. }), _) => {
                literal_mismatch(self.text(*source), expected)
            }
            (_, evaluated) => value_mismatch(evaluated, expected),
        };
        self.error(detail)
    }

    /// `and`/`or`: evaluate left to right, stop at the deciding operand and return it.
    pub(super) fn eval_and_or(
        &mut self,
        dot: &Ev,
        name: &str,
        explicit: &'t [Arg],
        last: Option<Ev>,
    ) -> Exe<Ev> {
        if explicit.is_empty() && last.is_none() {
            return Err(self.error(format!(
                "wrong number of args for {name}: want at least 1 got 0"
            )));
        }
        let stop_on = name == "or";
        let mut value = Ev::Missing;
        for arg in explicit {
            value = self.eval_arg(dot, arg)?;
            if value.is_true() == stop_on {
                return Ok(value);
            }
        }
        Ok(last.unwrap_or(value))
    }

    /// `call`: templates hold no function values, so there is never anything to call.
    pub(super) fn eval_call(
        &mut self,
        dot: &Ev,
        explicit: &'t [Arg],
        last: Option<Ev>,
        call_node: At<'t>,
    ) -> Exe<Ev> {
        let Some(callee) = explicit.first() else {
            let got = usize::from(last.is_some());
            return Err(self.error(format!(
                "wrong number of args for call: want at least 1 got {got}"
            )));
        };
        let value = self.eval_arg(dot, callee)?;
        for arg in &explicit[1..] {
            self.eval_arg(dot, arg)?;
        }
        self.at = call_node;
        let detail = match value {
            Ev::Missing | Ev::Iface(Value::Nil) | Ev::Val(Value::Nil) => {
                "error calling call: call of nil".to_string()
            }
            Ev::Val(v) | Ev::Iface(v) => format!(
                "error calling call: non-function {} of type {}",
                callee.show(&self.template.text),
                v.type_name()
            ),
        };
        Err(self.error(detail).wrapping_function_error())
    }
}

/// Go's message for a constant of the wrong kind written as an argument (`printf 1`).
fn literal_mismatch(source: &str, expected: &str) -> String {
    let kind = match expected {
        "string" => "string",
        "bool" => "bool",
        "float64" | "float32" => "float",
        "int" | "int64" | "int32" | "int16" | "int8" | "uint" | "uint64" | "uint32" | "uint8" => {
            "integer"
        }
        other => return format!("can't handle {source} for arg of type {other}"),
    };
    format!("expected {kind}; found {source}")
}

/// Go's `validateType` message for an evaluated argument of the wrong type.
fn value_mismatch(evaluated: Option<&Ev>, expected: &str) -> String {
    match evaluated {
        Some(Ev::Missing) | None => format!("invalid value; expected {expected}"),
        Some(Ev::Iface(Value::Nil)) => {
            format!("wrong type for value; expected {expected}; got interface {{}}")
        }
        Some(Ev::Val(v) | Ev::Iface(v)) => format!(
            "wrong type for value; expected {expected}; got {}",
            v.type_name()
        ),
    }
}

/// The value Go gives a number constant written for a numeric parameter of type `expected`:
/// `3.0` for an `int` is 3, `1` for a `float64` is 1.0. `None` when Go would refuse it too, or
/// when the value is already of that type (so a retry cannot loop).
fn convert_constant(
    constant: Option<Value>,
    current: Option<&Value>,
    expected: &str,
) -> Option<Value> {
    let value = &constant?;
    let integral = match value {
        Value::Int(i) => Some(*i),
        Value::Float(f) if f.fract() == 0.0 && f.abs() < 9.2e18 => Some(*f as i64),
        _ => None,
    };
    let converted = match (expected, value) {
        ("int", _) => Value::Int(integral?),
        ("int64", _) => Value::Int64(integral?),
        ("float64", Value::Int(i)) => Value::Float(*i as f64),
        _ => return None,
    };
    let unchanged = match (current, &converted) {
        (Some(Value::Int(a)), Value::Int(b)) | (Some(Value::Int64(a)), Value::Int64(b)) => a == b,
        (Some(Value::Float(_)), Value::Float(_)) => true,
        _ => false,
    };
    (!unchanged).then_some(converted)
}

/// A string that is not valid UTF-8, for a function that reads its `string` parameter as text
/// (most do; the few that need the bytes read them and never fail here): the text with U+FFFD
/// for each bad byte, which is what Go's string functions make of such bytes when they decode
/// runes. `None` for anything else, so a retry cannot loop.
fn text_of_raw_string(current: Option<&Value>, expected: &str) -> Option<Value> {
    match current {
        Some(Value::RawString(bytes)) if expected == "string" => {
            Some(Value::from(String::from_utf8_lossy(bytes).into_owned()))
        }
        _ => None,
    }
}
