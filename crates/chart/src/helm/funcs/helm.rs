//! Helm's own template functions: `include`, `tpl`, `required` and `fail`.

use super::{FuncError, FuncMap, FuncResult, args};
// Helm marks the messages of `required` and `fail` so that its error cleanup can find them
// inside nested template errors.
use crate::engine::value::Value;
use crate::engine::value::format::quote;
use crate::engine::{Error, Exec, MESSAGE_END, MESSAGE_START, remove_no_value};

/// How deeply one name may be included inside itself before Helm gives up.
const MAX_INCLUDE_NESTING: usize = 1000;

/// Registers Helm's functions.
pub fn install(funcs: &mut FuncMap) {
    funcs.add_with_engine("include", include);
    funcs.add_with_engine("tpl", tpl);
    funcs.add_with_engine("required", required);
    funcs.add_with_engine("fail", fail);
}

fn marked(message: &str) -> FuncError {
    FuncError::failed(format!("{MESSAGE_START}{message}{MESSAGE_END}"))
}

fn include(exec: &mut Exec<'_>, a: &[Value]) -> FuncResult {
    args::count(a, 2)?;
    let name = args::string(a, 0)?;
    // Most includes name a template included before: its counter is found without a copy of
    // the name.
    match exec.include_depths.get_mut(name) {
        Some(depth) if *depth > MAX_INCLUDE_NESTING => {
            return Err(FuncError::failed(format!(
                "rendering template has a nested reference name: {name}: unable to execute template"
            )));
        }
        Some(depth) => *depth += 1,
        None => {
            exec.include_depths.insert(name.to_string(), 1);
        }
    }
    let result = exec.execute_template(name, a[1].clone());
    if let Some(depth) = exec.include_depths.get_mut(name) {
        *depth -= 1;
    }
    result
        .map(Value::from)
        .map_err(|e| FuncError::Template(Box::new(e)))
}

fn tpl(exec: &mut Exec<'_>, a: &[Value]) -> FuncResult {
    args::count(a, 2)?;
    let text = args::string(a, 0)?;
    if !text.contains("{{") {
        // Text without actions renders as itself; skip parsing it.
        return Ok(Value::from(remove_no_value(text.to_string())));
    }
    match exec.execute_text(text, a[1].clone()) {
        Ok(out) => Ok(Value::from(remove_no_value(out))),
        Err(error) => {
            let action = match error.kind() {
                crate::engine::ErrorKind::Parse => "cannot parse template",
                _ => "error during tpl function execution for",
            };
            let prefix = format!("{action} {}: ", quote(text));
            Err(FuncError::Template(Box::new(Error::wrap(prefix, error))))
        }
    }
}

fn required(exec: &mut Exec<'_>, a: &[Value]) -> FuncResult {
    args::count(a, 2)?;
    let warning = args::string(a, 0)?;
    let missing = match &a[1] {
        Value::Nil => true,
        Value::String(s) => s.is_empty(),
        _ => false,
    };
    if !missing {
        return Ok(a[1].clone());
    }
    if exec.lint_mode() {
        return Ok(Value::from(""));
    }
    Err(marked(warning))
}

fn fail(exec: &mut Exec<'_>, a: &[Value]) -> FuncResult {
    args::count(a, 1)?;
    let message = args::string(a, 0)?;
    if exec.lint_mode() {
        return Ok(Value::from(""));
    }
    Err(marked(message))
}
