//! Go's `text/template`, natively: lexer, parser, executor and the engine that holds a set of
//! templates sharing one namespace of `define`d names, as Helm parses a chart.
//!
//! Values share maps by reference (`Rc`), so an engine and its values live on one thread:
//! build and render within one blocking task. Errors are `Send + Sync`.
//!
//! Where this engine knowingly differs from Go's (each case is rare in charts):
//! * nested `{{template}}`/`include`/`tpl` calls stop at [`MAX_TEMPLATE_DEPTH`] (10000), not
//!   Go's 100000, to bound memory on hostile input;
//! * text is Rust strings: slicing a string inside a UTF-8 sequence (`trunc`, `substr`) yields
//!   U+FFFD where Go would emit the raw bytes;
//! * values have no unsigned or complex kinds (complex literals are a parse error), and no
//!   function values (`call` always fails as for a non-function);
//!
//! ```
//! use landscaper_chart::engine::Engine;
//! use landscaper_chart::value::{Map, Value};
//!
//! let mut engine = Engine::new();
//! engine.add_template("greet", "{{ define \"name\" }}{{ .who }}{{ end }}hi {{ template \"name\" . }}").unwrap();
//! let dot = Map::new();
//! dot.insert("who", Value::from("world"));
//! assert_eq!(engine.render("greet", &Value::Map(dot)).unwrap(), "hi world");
//! ```

mod ast;
mod error;
mod exec;
mod lexer;
mod literal;
mod parser;

pub use error::{Error, ErrorKind, Location};
pub use exec::{Exec, MAX_TEMPLATE_DEPTH};

use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

use crate::funcs::{FuncMap, helm_funcs};
use crate::value::Value;

/// Helm's cleanup of Go's `<no value>` placeholders from rendered text.
pub fn remove_no_value(text: String) -> String {
    if text.contains("<no value>") {
        text.replace("<no value>", "")
    } else {
        text
    }
}

/// What a field lookup on a map does when the key is absent (Go's `missingkey` option).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MissingKey {
    /// Go's default: "no value", printed as `<no value>`.
    Default,
    /// The zero value, a nil interface: what Helm uses (further field access is an error).
    Zero,
    /// An error: what Helm's `--strict` rendering uses.
    Error,
}

/// Engine settings.
#[derive(Clone, Debug)]
pub struct Options {
    /// Behaviour on missing map keys.
    pub missing_key: MissingKey,
    /// Helm's lint mode: `required` and `fail` do not stop rendering.
    pub lint_mode: bool,
}

impl Default for Options {
    /// Helm's settings: `missingkey=zero`, no lint mode.
    fn default() -> Self {
        Options {
            missing_key: MissingKey::Zero,
            lint_mode: false,
        }
    }
}

/// One parsed template: a file or a `define`d name.
#[derive(Debug)]
pub(crate) struct Template {
    name: String,
    parse_name: Rc<str>,
    text: Rc<str>,
    root: ast::List,
    /// The values of the constants of the file it was parsed from.
    constants: Rc<[Value]>,
}

impl Template {
    /// The templates of a parsed file (its own tree first, then its definitions), sharing the
    /// file's name, text and constants.
    fn from_file(
        parsed: parser::ParsedFile,
        parse_name: &str,
        text: &str,
    ) -> impl Iterator<Item = Template> {
        let text: Rc<str> = text.into();
        let parse_name: Rc<str> = parse_name.into();
        let constants: Rc<[Value]> = parsed.literals.iter().map(ast::Literal::to_value).collect();
        parsed.trees.into_iter().map(move |tree| Template {
            name: tree.name,
            parse_name: parse_name.clone(),
            text: text.clone(),
            root: tree.root,
            constants: constants.clone(),
        })
    }

    /// Go's `IsEmptyTree`: only whitespace text. Such a definition never replaces another.
    fn is_empty(&self) -> bool {
        self.root
            .nodes
            .iter()
            .all(|node| matches!(node, ast::Node::Text(range) if self.text[range.clone()].trim().is_empty()))
    }
}

/// A set of templates sharing one namespace, with the functions they may call.
pub struct Engine {
    funcs: FuncMap,
    templates: HashMap<String, Rc<Template>>,
    files: Vec<String>,
    options: Options,
    root_name: String,
}

impl Default for Engine {
    fn default() -> Self {
        Engine::new()
    }
}

impl Engine {
    /// An engine with Helm's functions and settings.
    pub fn new() -> Engine {
        Engine::with_funcs(helm_funcs())
    }

    /// An engine with exactly these functions (plus `and`, `or` and `call`, which the executor
    /// provides) and Helm's settings.
    pub fn with_funcs(funcs: FuncMap) -> Engine {
        Engine {
            funcs,
            templates: HashMap::new(),
            files: Vec::new(),
            options: Options::default(),
            root_name: "gotpl".to_string(),
        }
    }

    /// The functions templates may call; add functions before adding templates that use them.
    pub fn funcs_mut(&mut self) -> &mut FuncMap {
        &mut self.funcs
    }

    /// The settings.
    pub fn options_mut(&mut self) -> &mut Options {
        &mut self.options
    }

    /// Whether templates may call `name`.
    pub fn has_function(&self, name: &str) -> bool {
        matches!(name, "and" | "or" | "call") || self.funcs.contains(name)
    }

    /// Parses `text` as the template `name` and adds it and every template it defines to the
    /// namespace. A later definition of a name replaces an earlier one, unless it is empty.
    pub fn add_template(&mut self, name: &str, text: &str) -> Result<(), Error> {
        let parsed = parser::parse(name, text, &|f| self.has_function(f))?;
        self.insert_parsed(name, text, parsed);
        Ok(())
    }

    /// [`Engine::add_template`] for each `(name, text)` in order, stopping at the first error,
    /// with the files parsed on all cores (parsing does not depend on the namespace; the trees
    /// are added in order afterwards, so later definitions still win).
    pub fn add_templates(&mut self, files: &[(&str, &str)]) -> Result<(), Error> {
        let funcs = &self.funcs;
        let known = |f: &str| matches!(f, "and" | "or" | "call") || funcs.contains(f);
        let parsed = crate::parallel::map_ordered(
            files,
            |(_, text)| text.len(),
            |(name, text)| parser::parse(name, text, &known),
        );
        for ((name, text), parsed) in files.iter().zip(parsed) {
            self.insert_parsed(name, text, parsed?);
        }
        Ok(())
    }

    /// Adds the templates of a parsed file to the namespace.
    fn insert_parsed(&mut self, name: &str, text: &str, parsed: parser::ParsedFile) {
        for template in Template::from_file(parsed, name, text) {
            let keep_existing = template.is_empty()
                && self
                    .templates
                    .get(&template.name)
                    .is_some_and(|old| !old.is_empty());
            if !keep_existing {
                self.templates
                    .insert(template.name.clone(), Rc::new(template));
            }
        }
        if !self.files.iter().any(|f| f == name) {
            self.files.push(name.to_string());
        }
    }

    /// Whether a template (file or definition) of this name exists.
    pub fn has_template(&self, name: &str) -> bool {
        self.templates.contains_key(name)
    }

    /// Renders template `name` with `dot` exactly as Go does (missing values print as
    /// `<no value>`).
    pub fn render(&self, name: &str, dot: &Value) -> Result<String, Error> {
        exec::Exec::new(self).execute_template(name, dot.clone())
    }

    /// Renders template `name` as Helm does: Go's output with every `<no value>` removed.
    pub fn render_helm(&self, name: &str, dot: &Value) -> Result<String, Error> {
        self.render(name, dot).map(remove_no_value)
    }

    /// Renders, the Helm way, every template added by [`Engine::add_template`] whose base name
    /// does not start with `_` (Helm's partials), each with `dot`, keyed by template name.
    pub fn render_all(&self, dot: &Value) -> Result<BTreeMap<String, String>, Error> {
        let mut out = BTreeMap::new();
        for name in &self.files {
            let base = name.rsplit('/').next().unwrap_or(name);
            if base.starts_with('_') {
                continue;
            }
            out.insert(name.clone(), self.render_helm(name, dot)?);
        }
        Ok(out)
    }
}
