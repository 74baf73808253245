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
//! use landscaper_chart::engine::value::{Map, Value};
//!
//! let mut engine = Engine::new(landscaper_chart::helm::funcs::helm_funcs());
//! engine.add_template("greet", "{{ define \"name\" }}{{ .who }}{{ end }}hi {{ template \"name\" . }}").unwrap();
//! let dot = Map::new();
//! dot.insert("who", Value::from("world"));
//! assert_eq!(engine.render("greet", &Value::Map(dot)).unwrap(), "hi world");
//! ```

pub mod args;
mod ast;
mod builtins;
mod error;
mod exec;
mod functions;
mod lexer;
mod literal;
mod parser;
pub mod value;

pub use builtins::go_builtins;
pub use error::{Error, ErrorKind, Location, MESSAGE_END, MESSAGE_START};
pub(crate) use exec::report_deferred_failure;
pub use exec::{Exec, MAX_TEMPLATE_DEPTH};
pub use functions::{EngineFn, FuncError, FuncMap, FuncResult, Function, PureFn};

use std::collections::BTreeMap;
use std::rc::Rc;

use bytestring::ByteString;
use foldhash::HashMap;
use indexmap::IndexSet;

use crate::engine::value::Value;

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
    /// The file's text, shared with the chart that holds it (a chart's templates are a
    /// megabyte or more).
    text: ByteString,
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
        text: ByteString,
    ) -> impl Iterator<Item = Template> {
        let parse_name: Rc<str> = parse_name.into();
        let constants: Rc<[Value]> = parsed
            .literals
            .iter()
            .map(|literal| literal.to_value(&text))
            .collect();
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
        self.root.nodes.iter().all(
            |node| matches!(node, ast::Node::Text(span) if span.of(&self.text).trim().is_empty()),
        )
    }
}

/// A template file parsed apart from the engine that will hold it ([`Engine::parse_apart`]),
/// with the names of the functions it calls, which that engine must know.
#[derive(Debug)]
pub(crate) struct ParsedTemplate {
    file: parser::ParsedFile,
    functions: Vec<String>,
    text: ByteString,
}

impl ParsedTemplate {
    /// The text that was parsed.
    pub(crate) fn text(&self) -> &ByteString {
        &self.text
    }

    /// The parsed file, its own tree named `name`, and its text.
    fn named(mut self, name: &str) -> (parser::ParsedFile, ByteString) {
        if let Some(own) = self.file.trees.first_mut() {
            own.name = name.to_string();
        }
        (self.file, self.text)
    }
}

/// A set of templates sharing one namespace, with the functions they may call.
pub struct Engine {
    funcs: FuncMap,
    templates: HashMap<String, Rc<Template>>,
    /// The names of the files added, in the order they were first added.
    files: IndexSet<String, foldhash::fast::RandomState>,
    options: Options,
    root_name: String,
}

impl Engine {
    /// An engine with exactly these functions (plus `and`, `or` and `call`, which the executor
    /// provides) and Helm's settings; Helm's function set is `funcs::helm_funcs()`.
    pub fn new(funcs: FuncMap) -> Engine {
        Engine {
            funcs,
            templates: HashMap::default(),
            files: IndexSet::default(),
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
        self.insert_parsed(name, ByteString::from(text), parsed);
        Ok(())
    }

    /// [`Engine::add_template`] for each `(name, text)` in order, stopping at the first error,
    /// with the files parsed on all cores (parsing does not depend on the namespace; the trees
    /// are added in order afterwards, so later definitions still win).
    pub fn add_templates(&mut self, files: &[(&str, &str)]) -> Result<(), Error> {
        let files: Vec<(&str, ByteString)> = files
            .iter()
            .map(|&(name, text)| (name, ByteString::from(text)))
            .collect();
        self.add_templates_parsed(&files, Vec::new())
    }

    /// [`Engine::add_templates`] with some files parsed already: `parsed[i]`, where given, is
    /// `files[i]`'s text parsed by [`Engine::parse_apart`] (on another thread, say), and the
    /// template keeps the text that parse holds. A file that calls a function this engine
    /// lacks is parsed again, so that the error is this engine's.
    pub(crate) fn add_templates_parsed(
        &mut self,
        files: &[(&str, ByteString)],
        mut parsed: Vec<Option<ParsedTemplate>>,
    ) -> Result<(), Error> {
        parsed.resize_with(files.len(), || None);
        for slot in &mut parsed {
            let usable = slot
                .as_ref()
                .is_some_and(|p| p.functions.iter().all(|f| self.has_function(f)));
            if !usable {
                *slot = None;
            }
        }
        let missing: Vec<usize> = (0..files.len()).filter(|&i| parsed[i].is_none()).collect();
        let funcs = &self.funcs;
        let known = |f: &str| matches!(f, "and" | "or" | "call") || funcs.contains(f);
        let fresh = crate::parallel::map_ordered(
            &missing,
            |&i| files[i].1.len(),
            |&i| parser::parse(files[i].0, &files[i].1, &known),
        );
        let mut slots: Vec<Option<Result<(parser::ParsedFile, ByteString), Error>>> = parsed
            .into_iter()
            .zip(files)
            .map(|(ahead, (name, _))| ahead.map(|ahead| Ok(ahead.named(name))))
            .collect();
        for (i, result) in missing.into_iter().zip(fresh) {
            slots[i] = Some(result.map(|file| (file, files[i].1.clone())));
        }
        for ((name, _), slot) in files.iter().zip(slots) {
            if let Some(file) = slot {
                let (file, text) = file?;
                self.insert_parsed(name, text, file);
            }
        }
        Ok(())
    }

    /// Parses `text` as a template file for [`Engine::add_templates_parsed`] of this or
    /// another engine, with this engine's functions; `None` if it does not parse (the engine
    /// it is added to then parses it again, for an error that names the file as it names it).
    pub(crate) fn parse_apart(&self, text: ByteString) -> Option<ParsedTemplate> {
        // Each name with whether this engine knows it: a file calls a few functions many
        // times, and one lookup here spares the second in the function table.
        let called = std::cell::RefCell::new(HashMap::<String, bool>::default());
        let known = |f: &str| {
            let mut called = called.borrow_mut();
            if let Some(&known) = called.get(f) {
                return known;
            }
            let known = self.has_function(f);
            called.insert(f.to_string(), known);
            known
        };
        let file = parser::parse("", &text, &known).ok()?;
        Some(ParsedTemplate {
            file,
            functions: called.into_inner().into_keys().collect(),
            text,
        })
    }

    /// Adds the templates of a parsed file to the namespace.
    fn insert_parsed(&mut self, name: &str, text: ByteString, parsed: parser::ParsedFile) {
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
        if !self.files.contains(name) {
            self.files.insert(name.to_string());
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::value::Map;

    /// Go's builtins and an `upper` function: the engine's tests need one function of the
    /// caller's.
    fn with_upper() -> crate::engine::FuncMap {
        let mut funcs = go_builtins();
        funcs.add("upper", |a: &[Value]| {
            args::count(a, 1)?;
            Ok(Value::from(args::string(a, 0)?.to_uppercase()))
        });
        funcs
    }

    /// An engine holding `text` as `c/templates/a.yaml`, parsed apart by another engine.
    fn with_file_parsed_apart(text: ByteString) -> Engine {
        let parsed = Engine::new(with_upper())
            .parse_apart(text.clone())
            .expect("parses");
        let mut engine = Engine::new(with_upper());
        engine
            .add_templates_parsed(&[("c/templates/a.yaml", text)], vec![Some(parsed)])
            .unwrap();
        engine
    }

    fn who(name: &str) -> Value {
        let dot = Map::new();
        dot.insert("who", Value::from(name));
        Value::Map(dot)
    }

    #[test]
    fn a_file_parsed_apart_renders_under_the_name_it_is_added_with() {
        let text = ByteString::from_static(
            "{{ define \"greet\" }}hi {{ .who | upper }}{{ end }}{{ template \"greet\" . }}!",
        );
        let engine = with_file_parsed_apart(text);
        assert_eq!(
            engine.render("c/templates/a.yaml", &who("you")).unwrap(),
            "hi YOU!"
        );
        assert_eq!(engine.render("greet", &who("you")).unwrap(), "hi YOU");
    }

    #[test]
    fn a_template_keeps_its_file_s_bytes_rather_than_a_copy() {
        let data = bytes::Bytes::from("{{ define \"d\" }}x{{ end }}{{ .who }}".to_string());
        let text = ByteString::try_from(data.clone()).expect("UTF-8");
        let engine = with_file_parsed_apart(text);
        for name in ["c/templates/a.yaml", "d"] {
            assert_eq!(
                engine.templates[name].text.as_ptr(),
                data.as_ptr(),
                "{name}"
            );
        }
    }

    #[test]
    fn a_file_parsed_apart_with_a_function_the_engine_lacks_fails_as_if_parsed_in_place() {
        let text = ByteString::from_static("{{ .who | upper }}");
        let parsed = Engine::new(with_upper())
            .parse_apart(text.clone())
            .expect("parses");
        let mut engine = Engine::new(go_builtins());
        let error = engine
            .add_templates_parsed(&[("c/templates/a.yaml", text)], vec![Some(parsed)])
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "template: c/templates/a.yaml:1: function \"upper\" not defined"
        );
        assert!(
            Engine::new(with_upper())
                .parse_apart(ByteString::from_static("{{ if }}"))
                .is_none()
        );
    }

    #[test]
    fn files_without_a_parse_apart_are_parsed_in_their_place() {
        let first = ByteString::from_static("{{ define \"x\" }}first{{ end }}");
        let second =
            ByteString::from_static("{{ define \"x\" }}second{{ end }}{{ template \"x\" }}");
        // The later file's definition wins, whichever file was parsed apart.
        for parsed in [
            vec![Engine::new(with_upper()).parse_apart(first.clone())],
            vec![None, Engine::new(with_upper()).parse_apart(second.clone())],
        ] {
            let mut engine = Engine::new(with_upper());
            engine
                .add_templates_parsed(&[("a", first.clone()), ("b", second.clone())], parsed)
                .unwrap();
            assert_eq!(engine.render("b", &who("")).unwrap(), "second");
        }
    }
}
