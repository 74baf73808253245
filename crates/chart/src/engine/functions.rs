//! The function table an engine calls into: what a template function is, what it returns
//! and how a failure is phrased. The functions themselves come from the caller (Helm's set is
//! `funcs::helm_funcs`).

use std::fmt;
use std::sync::Arc;

use foldhash::HashMap;

use super::{Error, Exec};
use crate::engine::value::Value;

/// What a template function returns.
pub type FuncResult = Result<Value, FuncError>;

/// Why a function call failed; the engine phrases Go's message from it.
#[derive(Debug)]
pub enum FuncError {
    /// Wrong number of arguments: `wrong number of args for NAME: want W got G`
    /// (`want at least W` when `variadic`).
    ArgCount {
        /// How many the function takes (at least, when variadic).
        want: usize,
        /// How many it got.
        got: usize,
        /// Whether the function takes a variable number.
        variadic: bool,
    },
    /// Argument `index` is not of Go type `expected`: `wrong type for value; expected X; got Y`.
    ArgType {
        /// Which argument (0-based, the piped value last).
        index: usize,
        /// The Go type the parameter has, e.g. `string`, `int`, `[]interface {}`.
        expected: String,
    },
    /// The function returned an error: `error calling NAME: MESSAGE`.
    Failed(String),
    /// Rendering a nested template failed (`include`, `tpl`): `error calling NAME: ERROR`.
    Template(Box<Error>),
}

impl FuncError {
    /// A failure with this message (`error calling NAME: MESSAGE`).
    pub fn failed(message: impl Into<String>) -> FuncError {
        FuncError::Failed(message.into())
    }
}

impl fmt::Display for FuncError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FuncError::ArgCount {
                want,
                got,
                variadic,
            } => {
                let at_least = if *variadic { "at least " } else { "" };
                write!(f, "want {at_least}{want} got {got}")
            }
            FuncError::ArgType { index, expected } => {
                write!(f, "argument {index}: expected {expected}")
            }
            FuncError::Failed(message) => f.write_str(message),
            FuncError::Template(error) => error.fmt(f),
        }
    }
}

/// A function that only looks at its arguments.
pub type PureFn = dyn Fn(&[Value]) -> FuncResult + Send + Sync;

/// A function that also drives the engine (renders templates).
pub type EngineFn = dyn Fn(&mut Exec<'_>, &[Value]) -> FuncResult + Send + Sync;

/// A registered template function.
#[derive(Clone)]
pub enum Function {
    /// Needs only its arguments.
    Pure(Arc<PureFn>),
    /// Needs the running engine.
    Engine(Arc<EngineFn>),
}

/// Functions by name, as Go's `template.FuncMap`.
#[derive(Clone, Default)]
pub struct FuncMap {
    funcs: HashMap<String, Function>,
}

impl FuncMap {
    /// An empty map.
    pub fn new() -> FuncMap {
        FuncMap::default()
    }

    /// Registers (or replaces) a function that only needs its arguments.
    pub fn add<F>(&mut self, name: &str, f: F)
    where
        F: Fn(&[Value]) -> FuncResult + Send + Sync + 'static,
    {
        self.funcs
            .insert(name.to_string(), Function::Pure(Arc::new(f)));
    }

    /// Registers (or replaces) a function that drives the engine.
    pub fn add_with_engine<F>(&mut self, name: &str, f: F)
    where
        F: Fn(&mut Exec<'_>, &[Value]) -> FuncResult + Send + Sync + 'static,
    {
        self.funcs
            .insert(name.to_string(), Function::Engine(Arc::new(f)));
    }

    /// Removes a function (Helm removes Sprig's `env` and `expandenv`).
    pub fn remove(&mut self, name: &str) {
        self.funcs.remove(name);
    }

    /// The function registered under `name`.
    pub fn get(&self, name: &str) -> Option<&Function> {
        self.funcs.get(name)
    }

    /// Whether `name` is registered.
    pub fn contains(&self, name: &str) -> bool {
        self.funcs.contains_key(name)
    }

    /// The registered names, sorted.
    pub fn names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.funcs.keys().map(String::as_str).collect();
        names.sort_unstable();
        names
    }
}
