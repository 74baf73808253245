//! Spiff (spiff++) templates: YAML documents with `(( ))` dynaml expressions, evaluated
//! the way mandelsoft/spiff does for Landscaper's Spiff executions. As in spiff, the keys of
//! output maps are sorted, and string interpolation (`"text (( expr )) text"`) is off unless
//! the caller enables it ([`Spiff::with_interpolation`], [`Spiff::with_features`]).
//! `merge on <key>` and the `&inject`, `&default` and `&dynamic` markers are parsed but not
//! implemented: evaluating them is an error naming the construct, the path and the expression.
//!
//! ```
//! use landscaper_spiff::{Spiff, Template};
//! let t = Template::from_yaml("image: (( \"nginx:\" imports.version ))").unwrap();
//! let out = Spiff::new()
//!     .with_values(serde_json::json!({"imports": {"version": "1.0"}}))
//!     .cascade(&t, &[], None)
//!     .unwrap();
//! assert_eq!(out.document["image"], "nginx:1.0");
//! ```

mod ast;
mod convert;
mod eval;
mod flow;
mod functions;
mod interpolation;
mod node;
mod oci;
mod parser;
mod semver;

use std::cell::Cell;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde_json::Value;

pub use flow::Issue;

use crate::eval::Engine;
use crate::flow::FlowError;
use crate::node::{Flags, Node, Val};

/// The environment variable spiff reads its default features from (`spiffing.New()`);
/// Landscaper's Spiff evaluations honour it, so `interpolation` is on only where it is set.
pub const FEATURES_ENV: &str = "SPIFF_FEATURES";

/// A function the caller adds (Landscaper's `getResource`, `getComponent`, …): JSON
/// arguments in, a JSON value or an error message out.
pub type Function = Arc<dyn Fn(&[Value]) -> Result<Value, String> + Send + Sync>;

/// Functions registered by the caller; they win over builtins of the same name.
#[derive(Clone, Default)]
pub struct Functions {
    map: HashMap<String, Function>,
}

impl Functions {
    /// No functions.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers `f` under `name`.
    pub fn register(
        &mut self,
        name: impl Into<String>,
        f: impl Fn(&[Value]) -> Result<Value, String> + Send + Sync + 'static,
    ) -> &mut Self {
        self.map.insert(name.into(), Arc::new(f));
        self
    }

    pub(crate) fn get(&self, name: &str) -> Option<&Function> {
        self.map.get(name)
    }
}

/// The files `read(path, mode)` sees (a blueprint's filesystem).
pub trait FileSystem: Send + Sync {
    /// The content of `path` (relative paths such as `./VERSION` start at the root).
    fn read(&self, path: &str) -> Result<Vec<u8>, String>;
}

/// An in-memory file system: path → content.
impl FileSystem for BTreeMap<String, Vec<u8>> {
    fn read(&self, path: &str) -> Result<Vec<u8>, String> {
        let clean = path.trim_start_matches("./").trim_start_matches('/');
        self.get(clean)
            .cloned()
            .ok_or_else(|| format!("file {path:?} not found"))
    }
}

/// Bounds that turn runaway templates into errors instead of hangs or crashes.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Nesting of lambda calls, template instantiations and parsed documents.
    pub max_depth: usize,
    /// Evaluation steps over the whole evaluation.
    pub max_steps: u64,
    /// Passes over the document.
    pub max_passes: usize,
    /// Entries of a list built by an expression, and nodes of the output.
    pub max_nodes: usize,
    /// Bytes of a string built by an expression.
    pub max_string_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_depth: 500,
            max_steps: 20_000_000,
            max_passes: 2_000,
            max_nodes: 1_000_000,
            max_string_bytes: 16 << 20,
        }
    }
}

/// Why a template could not be evaluated.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The template (or a stub) is not valid YAML.
    #[error("invalid YAML: {0}")]
    Yaml(String),
    /// Expressions that could not be evaluated, each with its path and text.
    #[error("unresolved nodes:{}", issues_text(.0))]
    Unresolved(Vec<Issue>),
    /// A limit of [`Limits`] was reached.
    #[error("evaluation stopped: {0}")]
    Limit(String),
    /// The result cannot be written as JSON.
    #[error("invalid result: {0}")]
    Output(String),
}

fn issues_text(issues: &[Issue]) -> String {
    issues
        .iter()
        .map(|i| {
            format!(
                "\n\t(( {} ))\tin template\t{}\t()\t*{}",
                i.expression, i.path, i.message
            )
        })
        .collect()
}

/// A parsed template, stub or state document.
#[derive(Clone, Debug)]
pub struct Template(Node);

impl Template {
    /// Parses YAML text; a document that is a single string is parsed again as YAML
    /// (Landscaper's text form of a Spiff template).
    pub fn from_yaml(text: &str) -> Result<Template, Error> {
        let y: serde_yaml_ng::Value =
            serde_yaml_ng::from_str(text).map_err(|e| Error::Yaml(e.to_string()))?;
        if let serde_yaml_ng::Value::String(inner) = &y {
            let again: serde_yaml_ng::Value =
                serde_yaml_ng::from_str(inner).map_err(|e| Error::Yaml(e.to_string()))?;
            return Ok(Template(convert::from_yaml(&again)));
        }
        Ok(Template(convert::from_yaml(&y)))
    }

    /// A template from JSON data; a string value is parsed as YAML text.
    pub fn from_value(v: &Value) -> Result<Template, Error> {
        match v {
            Value::String(s) => Template::from_yaml(s),
            other => Ok(Template(convert::template_from_json(other))),
        }
    }
}

/// The result of an evaluation.
#[derive(Clone, Debug, PartialEq)]
pub struct Output {
    /// The evaluated document without temporary and local nodes.
    pub document: Value,
    /// The document's `&state` entries (spiff's `DetermineState`), to be passed as the state
    /// stub of the next evaluation.
    pub state: Value,
}

/// A configured Spiff processor.
#[derive(Clone, Default)]
pub struct Spiff {
    values: Option<Value>,
    functions: Functions,
    fs: Option<Arc<dyn FileSystem>>,
    limits: Limits,
    interpolation: bool,
}

impl Spiff {
    /// A processor with the builtin functions, no values and no file system.
    pub fn new() -> Self {
        Self::default()
    }

    /// The values (bindings) expressions see after the document's own names; `___` and
    /// `__ctx.OUTER[0]` refer to them.
    pub fn with_values(mut self, values: Value) -> Self {
        self.values = Some(values);
        self
    }

    /// Adds the caller's functions.
    pub fn with_functions(mut self, functions: Functions) -> Self {
        self.functions = functions;
        self
    }

    /// The file system of `read()`.
    pub fn with_file_system(mut self, fs: Arc<dyn FileSystem>) -> Self {
        self.fs = Some(fs);
        self
    }

    /// Enables string interpolation (`"text (( expr )) text"`), spiff's `interpolation`
    /// feature; off by default, as in spiff.
    pub fn with_interpolation(mut self, enabled: bool) -> Self {
        self.interpolation = enabled;
        self
    }

    /// Applies spiff's feature list (as in `SPIFF_FEATURES`: comma-separated names, `no`
    /// before a name turns it off, the last mention wins); only `interpolation` has an
    /// effect here, other names are ignored.
    pub fn with_features(mut self, list: &str) -> Self {
        for feature in list.split(',').map(str::trim) {
            match feature {
                "interpolation" => self.interpolation = true,
                "nointerpolation" => self.interpolation = false,
                _ => {}
            }
        }
        self
    }

    /// Other limits than the defaults.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Evaluates `template` merged with `stubs` (earlier stubs win) and the optional state
    /// stub (last), as spiff's `Cascade` does.
    pub fn cascade(
        &self,
        template: &Template,
        stubs: &[Template],
        state: Option<&Template>,
    ) -> Result<Output, Error> {
        let mut eng = Engine {
            values: self.values.as_ref().map(convert::from_json),
            functions: &self.functions,
            fs: self.fs.as_deref(),
            limits: &self.limits,
            stubs: Vec::new(),
            steps: Cell::new(0),
            interpolation: self.interpolation,
        };
        let prepare = |t: &Template| match self.interpolation {
            true => convert::interpolated(&t.0),
            false => t.0.clone(),
        };
        let all: Vec<&Template> = stubs.iter().chain(state).collect();
        let mut prepared: Vec<Node> = Vec::with_capacity(all.len());
        for stub in all.iter().rev() {
            eng.stubs = prepared.clone();
            let flowed = flow::run(&eng, None, prepare(stub), true).map_err(error)?;
            prepared.insert(0, drop_local(&flowed));
        }
        eng.stubs = prepared;
        let result = flow::run(&eng, None, prepare(template), true).map_err(error)?;
        let mut budget = convert::OutputBudget {
            left: self.limits.max_nodes,
            interpolation: self.interpolation,
        };
        let document = convert::output(&result, &mut budget).map_err(Error::Output)?;
        let state = convert::state(&result, &mut budget).map_err(Error::Output)?;
        Ok(Output { document, state })
    }

    /// Evaluates YAML text without stubs.
    pub fn evaluate_text(&self, text: &str) -> Result<Output, Error> {
        self.cascade(&Template::from_yaml(text)?, &[], None)
    }

    /// Evaluates a template given as JSON data (a string is YAML text) without stubs.
    pub fn evaluate_value(&self, template: &Value) -> Result<Output, Error> {
        self.cascade(&Template::from_value(template)?, &[], None)
    }
}

fn error(e: FlowError) -> Error {
    match e {
        FlowError::Unresolved(issues) => Error::Unresolved(issues),
        FlowError::Limit(m) => Error::Limit(m),
    }
}

/// A stub without its `&local` nodes.
fn drop_local(n: &Node) -> Node {
    match &n.val {
        Val::Map(m) => Node {
            val: Val::Map(std::rc::Rc::new(
                m.iter()
                    .filter(|(_, v)| !v.flags.has(Flags::LOCAL))
                    .map(|(k, v)| (k.clone(), drop_local(v)))
                    .collect(),
            )),
            flags: n.flags,
        },
        Val::List(l) => Node {
            val: Val::List(std::rc::Rc::new(
                l.iter()
                    .filter(|v| !v.flags.has(Flags::LOCAL))
                    .map(drop_local)
                    .collect(),
            )),
            flags: n.flags,
        },
        _ => n.clone(),
    }
}
