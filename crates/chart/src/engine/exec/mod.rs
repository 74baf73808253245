//! Executes parse trees with Go's semantics: variable scoping, `if`/`with`/`range`, template
//! calls, field and method lookup, function calls, and Go's error messages with the failing
//! action as context.
//!
//! This module holds the running render ([`Exec`]) and one template invocation's state; the
//! statement walk, expression evaluation and calls live in the submodules.

mod call;
mod eval;
mod walk;

use bytestring::ByteString;
use foldhash::HashMap;
use std::cell::RefCell;
use std::rc::Rc;

use super::ast::{Arg, Command, Pipe, Show, TemplateCall};
use super::error::{Error, Location};
use super::{Engine, MissingKey, Template, parser};
use crate::engine::value::Value;
use crate::engine::value::format::quote;

/// The limit on nested template invocations, counting `include` and `tpl` too.
///
/// Go allows 100000 nested `{{template}}` calls; real charts nest a few levels, and each level
/// costs stack here, so the bound is 10000 (the message names it as Go's does).
pub const MAX_TEMPLATE_DEPTH: usize = 10_000;

/// Stack left before a nested call moves to a fresh stack segment, and that segment's size.
/// Nesting is bounded by [`MAX_TEMPLATE_DEPTH`], so growth is bounded too.
const STACK_RED_ZONE: usize = 128 * 1024;
const STACK_SEGMENT: usize = 4 * 1024 * 1024;

thread_local! {
    /// The first failure of work a value put off until it was looked at, reported by a reader
    /// that cannot return an error (a certificate's `.Cert`): the outermost template run on
    /// this thread fails with it when it ends.
    static DEFERRED_FAILURE: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Reports that work a value put off failed where its reader cannot return an error: the
/// template run in progress on this thread fails with `message` (the first one reported) when
/// its outermost template ends. Reported outside any run (a value a function kept and read
/// after the render), it is dropped when the next run starts.
pub fn report_deferred_failure(message: String) {
    DEFERRED_FAILURE.with(|failure| {
        failure.borrow_mut().get_or_insert(message);
    });
}

fn take_deferred_failure() -> Option<String> {
    DEFERRED_FAILURE.with(|failure| failure.borrow_mut().take())
}

/// A value during execution, with what Go's reflection knows about it: whether it is missing
/// altogether (an invalid `reflect.Value`), held in an `interface{}` (a map or list element),
/// or concrete. Go names `interface {}` in some errors and turns a nil interface into "no value"
/// between pipeline commands, so the distinction shows in output.
#[derive(Clone, Debug)]
enum Ev {
    Missing,
    Val(Value),
    Iface(Value),
}

impl Ev {
    fn from_result(value: Value) -> Ev {
        if value.is_nil() {
            Ev::Iface(Value::Nil)
        } else {
            Ev::Val(value)
        }
    }

    /// What Go does after each pipeline command: unwrap an `interface{}`.
    fn concrete(self) -> Ev {
        match self {
            Ev::Iface(Value::Nil) | Ev::Val(Value::Nil) => Ev::Missing,
            Ev::Iface(v) => Ev::Val(v),
            other => other,
        }
    }

    fn value(&self) -> Value {
        match self {
            Ev::Missing => Value::Nil,
            Ev::Val(v) | Ev::Iface(v) => v.clone(),
        }
    }

    fn is_true(&self) -> bool {
        match self {
            Ev::Missing => false,
            Ev::Val(v) | Ev::Iface(v) => v.is_true(),
        }
    }
}

/// How a walk over a list ended.
enum Flow {
    Normal,
    Break,
    Continue,
}

/// The node Go names in an error (`at <…>`).
#[derive(Clone, Copy)]
enum At<'t> {
    Start,
    Arg(&'t Arg),
    Command(&'t Command),
    Pipe(&'t Pipe),
    Template(&'t TemplateCall),
}

impl At<'_> {
    fn pos(&self) -> usize {
        match self {
            At::Start => 0,
            At::Arg(arg) => arg.pos() as usize,
            At::Command(cmd) => cmd.pos as usize,
            At::Pipe(pipe) => pipe.pos as usize,
            At::Template(call) => call.pos as usize,
        }
    }

    /// The node as Go prints it; `text` is the source of the template being run.
    fn context(&self, text: &str) -> String {
        match self {
            At::Start => String::new(),
            At::Arg(arg) => arg.show(text).to_string(),
            At::Command(cmd) => cmd.show(text).to_string(),
            At::Pipe(pipe) => pipe.show(text).to_string(),
            At::Template(call) => call.show(text).to_string(),
        }
    }
}

/// A running render: what functions that drive the engine (`include`, `tpl`) work with.
pub struct Exec<'e> {
    engine: &'e Engine,
    /// Templates defined by `tpl` text, innermost last; they shadow the engine's.
    overlays: Vec<HashMap<String, Rc<Template>>>,
    /// How deeply each name is being `include`d right now (Helm's recursion guard).
    pub(crate) include_depths: HashMap<String, usize>,
    depth: usize,
}

type Exe<T> = Result<T, Error>;

impl<'e> Exec<'e> {
    pub(crate) fn new(engine: &'e Engine) -> Exec<'e> {
        Exec {
            engine,
            overlays: Vec::new(),
            include_depths: HashMap::default(),
            depth: 0,
        }
    }

    /// Whether the engine runs in Helm's lint mode (`required` and `fail` do not stop it).
    pub fn lint_mode(&self) -> bool {
        self.engine.options.lint_mode
    }

    /// The name of the engine's root template (Helm: `gotpl`), used for `tpl` text.
    pub fn root_name(&self) -> &str {
        &self.engine.root_name
    }

    fn lookup(&self, name: &str) -> Option<Rc<Template>> {
        self.overlays
            .iter()
            .rev()
            .find_map(|layer| layer.get(name))
            .or_else(|| self.engine.templates.get(name))
            .cloned()
    }

    /// Renders the template `name` with `dot`, as Go's `ExecuteTemplate` does.
    pub fn execute_template(&mut self, name: &str, dot: Value) -> Result<String, Error> {
        let Some(template) = self.lookup(name) else {
            return Err(Error::other(format!(
                "template: no template {} associated with template {}",
                quote(name),
                quote(&self.engine.root_name)
            )));
        };
        let mut out = String::with_capacity(output_estimate(&template, self.depth));
        self.outermost(name, |exec| {
            exec.run(&template, Ev::from_result(dot).concrete(), &mut out)
        })?;
        Ok(out)
    }

    /// Parses `text` as a template named like the root template and renders it with `dot`.
    /// Templates it defines are visible only while it runs (Helm's `tpl` works on a clone).
    pub fn execute_text(&mut self, text: &str, dot: Value) -> Result<String, Error> {
        let name = self.engine.root_name.clone();
        let parsed = parser::parse(&name, text, &|f| self.engine.has_function(f))?;
        let mut layer: HashMap<String, Rc<Template>> = HashMap::default();
        for template in Template::from_file(parsed, &name, ByteString::from(text)) {
            let keep_existing = template.is_empty()
                && self
                    .lookup(&template.name)
                    .is_some_and(|old| !old.is_empty());
            if !keep_existing {
                layer.insert(template.name.clone(), Rc::new(template));
            }
        }
        let Some(top) = layer.get(&name).cloned() else {
            return Ok(String::new());
        };
        self.overlays.push(layer);
        let mut out = String::new();
        let result = self.outermost(&name, |exec| {
            exec.run(&top, Ev::from_result(dot).concrete(), &mut out)
        });
        self.overlays.pop();
        result.map(|()| out)
    }

    /// Runs `body`; when it is the outermost template run, a failure reported by
    /// [`report_deferred_failure`] meanwhile is its error, whatever `body` returned.
    fn outermost(&mut self, name: &str, body: impl FnOnce(&mut Self) -> Exe<()>) -> Exe<()> {
        if self.depth > 0 {
            return body(self);
        }
        take_deferred_failure();
        let result = body(self);
        // The failure happened before any error the run returned, which may follow from it
        // (a `required` that saw the empty text a failed certificate reads as).
        match take_deferred_failure() {
            Some(message) => Err(Error::other(format!("template: {name}: {message}"))),
            None => result,
        }
    }

    /// Runs a template in a fresh variable scope, on a fresh stack segment when needed,
    /// appending what it prints to `out` (the caller's buffer: no copy per nested call).
    fn run(&mut self, template: &Rc<Template>, dot: Ev, out: &mut String) -> Exe<()> {
        if self.depth >= MAX_TEMPLATE_DEPTH {
            return Err(Error::other(format!(
                "template: {}: exceeded maximum template depth ({MAX_TEMPLATE_DEPTH})",
                template.name
            )));
        }
        self.depth += 1;
        let result = stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, || {
            let mut state = State::new(self, template, dot.clone());
            state.walk_list(&dot, &template.root, out)
        });
        self.depth -= 1;
        result.map(|_| ())
    }
}

/// How much room to give the output of a run of `template` at template depth `depth`. A
/// file rendered as a whole prints about as much as its text holds, often hundreds of
/// kilobytes that, grown by doubling, were copied and faulted in again at every step. Other
/// runs (an `include`, or a `define` rendered by name, whose file may be large) start small.
fn output_estimate(template: &Template, depth: usize) -> usize {
    const SMALL: usize = 64;
    if depth == 0 && template.name == *template.parse_name {
        template.text.len()
    } else {
        SMALL
    }
}

/// One template invocation: its variables and the node being evaluated.
struct State<'t, 'x, 'e> {
    exec: &'x mut Exec<'e>,
    template: &'t Template,
    vars: Vec<(&'t str, Ev)>,
    at: At<'t>,
}

impl<'t, 'x, 'e> State<'t, 'x, 'e> {
    fn new(exec: &'x mut Exec<'e>, template: &'t Template, dot: Ev) -> Self {
        State {
            exec,
            template,
            vars: vec![("$", dot)],
            at: At::Start,
        }
    }

    fn missing_key(&self) -> MissingKey {
        self.exec.engine.options.missing_key
    }

    fn error(&self, detail: String) -> Error {
        self.error_with_cause(detail, None)
    }

    fn error_with_cause(&self, detail: String, cause: Option<Error>) -> Error {
        let location = Location::at(
            &self.template.parse_name,
            &self.template.text,
            self.at.pos(),
        );
        if matches!(self.at, At::Start) {
            let message = format!("template: {}: {detail}", self.template.name);
            return match cause {
                Some(cause) => Error::wrap(message, cause),
                None => Error::other(message),
            };
        }
        Error::exec(
            location,
            &self.template.name,
            self.at.context(&self.template.text),
            detail,
            cause,
        )
    }
}
