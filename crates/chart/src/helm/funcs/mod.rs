//! Helm's template functions: Sprig's library and Helm's own, registered by [`helm_funcs`]
//! into the engine's function table ([`FuncMap`]) beside Go's builtins.
//!
//! # How to add a function
//!
//! A function is a Rust closure over already evaluated arguments, registered by name in a
//! [`FuncMap`]:
//!
//! ```
//! use landscaper_chart::helm::funcs::{FuncMap, args};
//! use landscaper_chart::engine::value::Value;
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
//!   [`FuncMap::add_with_engine`] and receives the running [`Exec`](crate::engine::Exec).
//! * Group related functions in one module with an `install(&mut FuncMap)` function, and call it
//!   from [`helm_funcs`], which builds the function set Helm gives every chart.

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

pub use crate::engine::{
    EngineFn, FuncError, FuncMap, FuncResult, Function, PureFn, args, go_builtins,
};

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
