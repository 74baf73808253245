//! Template functions: the registry the engine calls into, Go's builtins and Helm's own functions.
//!
//! # How to add a function
//!
//! A function is a Rust closure over already evaluated arguments, registered by name in a
//! [`FuncMap`]:
//!
//! ```
//! use landscaper_chart::funcs::{FuncMap, args};
//! use landscaper_chart::value::Value;
//!
//! let mut funcs = FuncMap::new();
//! funcs.add("shout", |a: &[Value]| {
//!     args::count(a, 1)?;
//!     Ok(Value::from(args::string(a, 0)?.to_uppercase()))
//! });
//! ```
//!
//! * Arguments arrive in template order; a piped value is the last argument.
//! * Check arity and types with the helpers in [`args`]; they return the [`FuncError`] that makes
//!   the engine print Go's message (`wrong number of args for shout: want 1 got 2`,
//!   `wrong type for value; expected string; got int`). Return [`FuncError::Failed`] for an error
//!   the Go function would return; the engine prints it as `error calling shout: MESSAGE`.
//! * Return Go's result type: `Value::Int` for Go `int`, `Value::Int64` for `int64`,
//!   `Value::Float` for `float64`. Mutate maps in place (they are shared) where Sprig does.
//! * A function that needs the engine (rendering another template, like `include`) is added with
//!   [`FuncMap::add_with_engine`] and receives the running [`Exec`].
//! * Group related functions in one module with an `install(&mut FuncMap)` function, and call it
//!   from [`helm_funcs`], which builds the function set Helm gives every chart.

pub mod args;
mod builtins;
mod cluster;
mod conversion;
mod crypto;
pub mod dates;
mod defaults;
mod dicts;
mod encoding;
mod helm;
mod lists;
mod math;
mod paths;
mod primes;
mod reflect;
mod regex;
mod semver;
mod serialization;
pub mod strings;
mod url;

pub use cluster::{Lookup, LookupFn, install_lookup};
pub use helm::{MESSAGE_END, MESSAGE_START};

use foldhash::HashMap;
use std::fmt;
use std::sync::Arc;

use crate::engine::{Error, Exec};
use crate::value::Value;

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

/// Go's builtin template functions (`len`, `index`, `printf`, `eq`, …).
pub fn go_builtins() -> FuncMap {
    let mut funcs = FuncMap::new();
    builtins::install(&mut funcs);
    funcs
}

/// The functions Helm gives every chart: Go's builtins, Sprig's library (without `env` and
/// `expandenv`) and Helm's own (`include`, `tpl`, `required`, `fail`, the serialization
/// functions).
pub fn helm_funcs() -> FuncMap {
    let mut funcs = go_builtins();
    cluster::install(&mut funcs);
    conversion::install(&mut funcs);
    defaults::install(&mut funcs);
    dicts::install(&mut funcs);
    lists::install(&mut funcs);
    math::install(&mut funcs);
    paths::install(&mut funcs);
    reflect::install(&mut funcs);
    semver::install(&mut funcs);
    serialization::install(&mut funcs);
    url::install(&mut funcs);
    strings::install(&mut funcs);
    regex::install(&mut funcs);
    encoding::install(&mut funcs);
    dates::install(&mut funcs);
    crypto::install(&mut funcs);
    helm::install(&mut funcs);
    funcs
}
