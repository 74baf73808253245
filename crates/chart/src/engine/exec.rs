//! Executes parse trees with Go's semantics: variable scoping, `if`/`with`/`range`, template
//! calls, field and method lookup, function calls, and Go's error messages with the failing
//! action as context.

use std::collections::HashMap;
use std::rc::Rc;

use super::ast::{Arg, Branch, BranchKind, Command, List, Node, Pipe, TemplateCall};
use super::error::{Error, Location};
use super::{Engine, MissingKey, Template, parser};
use crate::funcs::{FuncError, Function};
use crate::value::format::{quote, sprint};
use crate::value::{MethodError, Object, Value};

/// The limit on nested template invocations, counting `include` and `tpl` too.
///
/// Go allows 100000 nested `{{template}}` calls; real charts nest a few levels, and each level
/// costs stack here, so the bound is 10000 (the message names it as Go's does).
pub const MAX_TEMPLATE_DEPTH: usize = 10_000;

/// Stack left before a nested call moves to a fresh stack segment, and that segment's size.
/// Nesting is bounded by [`MAX_TEMPLATE_DEPTH`], so growth is bounded too.
const STACK_RED_ZONE: usize = 128 * 1024;
const STACK_SEGMENT: usize = 4 * 1024 * 1024;

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
            At::Arg(arg) => arg.pos(),
            At::Command(cmd) => cmd.pos,
            At::Pipe(pipe) => pipe.pos,
            At::Template(call) => call.pos,
        }
    }

    fn context(&self) -> String {
        match self {
            At::Start => String::new(),
            At::Arg(arg) => arg.to_string(),
            At::Command(cmd) => cmd.to_string(),
            At::Pipe(pipe) => pipe.to_string(),
            At::Template(call) => call.to_string(),
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
            include_depths: HashMap::new(),
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
        self.run(&template, Ev::from_result(dot).concrete())
    }

    /// Parses `text` as a template named like the root template and renders it with `dot`.
    /// Templates it defines are visible only while it runs (Helm's `tpl` works on a clone).
    pub fn execute_text(&mut self, text: &str, dot: Value) -> Result<String, Error> {
        let name = self.engine.root_name.clone();
        let trees = parser::parse(&name, text, &|f| self.engine.has_function(f))?;
        let text: Rc<str> = text.into();
        let parse_name: Rc<str> = name.as_str().into();
        let mut layer: HashMap<String, Rc<Template>> = HashMap::new();
        for tree in trees {
            let template = Template {
                name: tree.name,
                parse_name: parse_name.clone(),
                text: text.clone(),
                root: tree.root,
            };
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
        let result = self.run(&top, Ev::from_result(dot).concrete());
        self.overlays.pop();
        result
    }

    /// Runs a template in a fresh variable scope, on a fresh stack segment when needed.
    fn run(&mut self, template: &Rc<Template>, dot: Ev) -> Exe<String> {
        if self.depth >= MAX_TEMPLATE_DEPTH {
            return Err(Error::other(format!(
                "template: {}: exceeded maximum template depth ({MAX_TEMPLATE_DEPTH})",
                template.name
            )));
        }
        self.depth += 1;
        let mut out = String::new();
        let result = stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, || {
            let mut state = State::new(self, template, dot.clone());
            state.walk_list(&dot, &template.root, &mut out)
        });
        self.depth -= 1;
        result.map(|_| out)
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
            self.at.context(),
            detail,
            cause,
        )
    }

    fn walk_list(&mut self, dot: &Ev, list: &'t List, out: &mut String) -> Exe<Flow> {
        for node in &list.nodes {
            match self.walk(dot, node, out)? {
                Flow::Normal => {}
                flow => return Ok(flow),
            }
        }
        Ok(Flow::Normal)
    }

    fn walk(&mut self, dot: &Ev, node: &'t Node, out: &mut String) -> Exe<Flow> {
        match node {
            Node::Text(text) => out.push_str(text),
            Node::Action(pipe) => {
                let value = self.eval_pipeline(dot, pipe)?;
                if pipe.decl.is_empty() {
                    match value {
                        Ev::Missing => out.push_str("<no value>"),
                        other => out.push_str(&sprint(&[other.value()])),
                    }
                }
            }
            Node::Branch(branch) => {
                let mark = self.vars.len();
                let flow =
                    stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, || match branch.kind {
                        BranchKind::Range => self.walk_range(dot, branch, out),
                        _ => self.walk_if_or_with(dot, branch, out),
                    });
                self.vars.truncate(mark);
                return flow;
            }
            Node::Template(call) => self.walk_template(dot, call, out)?,
            Node::Break => return Ok(Flow::Break),
            Node::Continue => return Ok(Flow::Continue),
        }
        Ok(Flow::Normal)
    }

    fn walk_if_or_with(&mut self, dot: &Ev, branch: &'t Branch, out: &mut String) -> Exe<Flow> {
        let value = self.eval_pipeline(dot, &branch.pipe)?;
        if value.is_true() {
            let new_dot = if branch.kind == BranchKind::With {
                &value
            } else {
                dot
            };
            return self.walk_list(new_dot, &branch.list, out);
        }
        match &branch.else_list {
            Some(list) => self.walk_list(dot, list, out),
            None => Ok(Flow::Normal),
        }
    }

    fn walk_range(&mut self, dot: &Ev, branch: &'t Branch, out: &mut String) -> Exe<Flow> {
        let value = self.eval_pipeline(dot, &branch.pipe)?;
        let mark = self.vars.len();
        let mut ran = false;
        let collection = match value.value() {
            Value::Object(object) => object.as_collection().unwrap_or(Value::Object(object)),
            other => other,
        };
        match collection {
            Value::List(items) => {
                for (i, item) in items.iter().enumerate() {
                    ran = true;
                    let index = Ev::Val(Value::Int(i as i64));
                    if self.iterate(branch, mark, index, Ev::Iface(item.clone()), out)? {
                        break;
                    }
                }
            }
            Value::Bytes(bytes) => {
                for (i, byte) in bytes.iter().enumerate() {
                    ran = true;
                    let index = Ev::Val(Value::Int(i as i64));
                    let elem = Ev::Val(Value::Int(i64::from(*byte)));
                    if self.iterate(branch, mark, index, elem, out)? {
                        break;
                    }
                }
            }
            Value::Map(map) => {
                for (key, item) in map.entries() {
                    ran = true;
                    let key = Ev::Val(Value::str(key));
                    if self.iterate(branch, mark, key, Ev::Iface(item), out)? {
                        break;
                    }
                }
            }
            Value::Int(n) | Value::Int64(n) => {
                if branch.pipe.decl.len() > 1 {
                    return Err(self.error(format!(
                        "can't use {} to iterate over more than one variable",
                        sprint(&[value.value()])
                    )));
                }
                let int64 = matches!(value.value(), Value::Int64(_));
                for i in 0..n {
                    ran = true;
                    let v = if int64 {
                        Value::Int64(i)
                    } else {
                        Value::Int(i)
                    };
                    if self.iterate(branch, mark, Ev::Val(v.clone()), Ev::Val(v), out)? {
                        break;
                    }
                }
            }
            Value::Nil => {}
            other => {
                return Err(self.error(format!("range can't iterate over {}", sprint(&[other]))));
            }
        }
        if !ran && let Some(list) = &branch.else_list {
            return self.walk_list(dot, list, out).map(|_| Flow::Normal);
        }
        Ok(Flow::Normal)
    }

    /// One pass of a range body; returns whether `{{break}}` ended the loop.
    fn iterate(
        &mut self,
        branch: &'t Branch,
        mark: usize,
        index: Ev,
        elem: Ev,
        out: &mut String,
    ) -> Exe<bool> {
        let decl = &branch.pipe.decl;
        if let Some((first, _)) = decl.first() {
            if branch.pipe.is_assign {
                let value = if decl.len() > 1 {
                    index.clone()
                } else {
                    elem.clone()
                };
                self.set_var(first, value)?;
            } else {
                self.set_top_var(1, elem.clone());
            }
        }
        if let Some((second, _)) = decl.get(1) {
            if branch.pipe.is_assign {
                self.set_var(second, elem.clone())?;
            } else {
                self.set_top_var(2, index);
            }
        }
        let flow = self.walk_list(&elem, &branch.list, out);
        self.vars.truncate(mark);
        Ok(matches!(flow?, Flow::Break))
    }

    fn walk_template(&mut self, dot: &Ev, call: &'t TemplateCall, out: &mut String) -> Exe<()> {
        self.at = At::Template(call);
        let Some(template) = self.exec.lookup(&call.name) else {
            return Err(self.error(format!("template {} not defined", quote(&call.name))));
        };
        if self.exec.depth >= MAX_TEMPLATE_DEPTH {
            return Err(self.error(format!(
                "exceeded maximum template depth ({MAX_TEMPLATE_DEPTH})"
            )));
        }
        let new_dot = match &call.pipe {
            Some(pipe) => self.eval_pipeline(dot, pipe)?,
            None => Ev::Missing,
        };
        let rendered = self.exec.run(&template, new_dot)?;
        out.push_str(&rendered);
        Ok(())
    }

    fn set_top_var(&mut self, n: usize, value: Ev) {
        let len = self.vars.len();
        if let Some(slot) = len.checked_sub(n).and_then(|i| self.vars.get_mut(i)) {
            slot.1 = value;
        }
    }

    fn set_var(&mut self, name: &str, value: Ev) -> Exe<()> {
        match self.vars.iter_mut().rev().find(|(n, _)| *n == name) {
            Some(slot) => {
                slot.1 = value;
                Ok(())
            }
            None => Err(self.error(format!("undefined variable: {name}"))),
        }
    }

    fn var_value(&self, name: &str) -> Exe<Ev> {
        match self.vars.iter().rev().find(|(n, _)| *n == name) {
            Some((_, value)) => Ok(value.clone()),
            None => Err(self.error(format!("undefined variable: {name}"))),
        }
    }

    fn eval_pipeline(&mut self, dot: &Ev, pipe: &'t Pipe) -> Exe<Ev> {
        stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, || {
            self.eval_pipeline_here(dot, pipe)
        })
    }

    fn eval_pipeline_here(&mut self, dot: &Ev, pipe: &'t Pipe) -> Exe<Ev> {
        self.at = At::Pipe(pipe);
        let mut value: Option<Ev> = None;
        for cmd in &pipe.cmds {
            let result = self.eval_command(dot, cmd, value.take())?;
            value = Some(result.concrete());
        }
        let value = value.unwrap_or(Ev::Missing);
        for (name, _) in &pipe.decl {
            if pipe.is_assign {
                self.set_var(name, value.clone())?;
            } else {
                self.vars.push((name.as_str(), value.clone()));
            }
        }
        Ok(value)
    }

    fn not_a_function(&self, args: &'t [Arg], last: &Option<Ev>) -> Exe<()> {
        if args.len() > 1 || last.is_some() {
            let first = args.first().map(ToString::to_string).unwrap_or_default();
            return Err(self.error(format!("can't give argument to non-function {first}")));
        }
        Ok(())
    }

    fn eval_command(&mut self, dot: &Ev, cmd: &'t Command, last: Option<Ev>) -> Exe<Ev> {
        let first = &cmd.args[0];
        match first {
            Arg::Field { names, .. } => {
                self.at = At::Arg(first);
                self.eval_field_chain(dot, dot.clone(), names, &cmd.args, last)
            }
            Arg::Chain { .. } => self.eval_chain(dot, first, &cmd.args, last),
            Arg::Identifier { name, .. } => {
                self.eval_function(dot, first, name, At::Command(cmd), &cmd.args, last)
            }
            Arg::Pipe(pipe) => {
                self.not_a_function(&cmd.args, &last)?;
                self.eval_pipeline(dot, pipe)
            }
            Arg::Variable { names, .. } => self.eval_variable(dot, first, names, &cmd.args, last),
            Arg::Constant { value, .. } => {
                self.at = At::Arg(first);
                self.not_a_function(&cmd.args, &last)?;
                Ok(Ev::Val(value.clone()))
            }
            Arg::Dot(_) => {
                self.at = At::Arg(first);
                self.not_a_function(&cmd.args, &last)?;
                Ok(dot.clone())
            }
            Arg::Nil(_) => {
                self.at = At::Arg(first);
                self.not_a_function(&cmd.args, &last)?;
                Err(self.error("nil is not a command".into()))
            }
        }
    }

    /// An operand used as an argument (Go's `evalArg` for an `interface{}` parameter).
    fn eval_arg(&mut self, dot: &Ev, arg: &'t Arg) -> Exe<Ev> {
        self.at = At::Arg(arg);
        match arg {
            Arg::Dot(_) => Ok(dot.clone()),
            Arg::Nil(_) => Ok(Ev::Iface(Value::Nil)),
            Arg::Field { names, .. } => self.eval_field_chain(dot, dot.clone(), names, &[], None),
            Arg::Variable { names, .. } => self.eval_variable(dot, arg, names, &[], None),
            Arg::Pipe(pipe) => self.eval_pipeline(dot, pipe),
            Arg::Identifier { name, .. } => {
                self.eval_function(dot, arg, name, At::Arg(arg), &[], None)
            }
            Arg::Chain { .. } => self.eval_chain(dot, arg, &[], None),
            Arg::Constant { value, .. } => Ok(Ev::Val(value.clone())),
        }
    }

    fn eval_variable(
        &mut self,
        dot: &Ev,
        node: &'t Arg,
        names: &'t [String],
        args: &'t [Arg],
        last: Option<Ev>,
    ) -> Exe<Ev> {
        self.at = At::Arg(node);
        let value = self.var_value(&names[0])?;
        if names.len() == 1 {
            self.not_a_function(args, &last)?;
            return Ok(value);
        }
        self.eval_field_chain(dot, value, &names[1..], args, last)
    }

    fn eval_chain(
        &mut self,
        dot: &Ev,
        node: &'t Arg,
        args: &'t [Arg],
        last: Option<Ev>,
    ) -> Exe<Ev> {
        self.at = At::Arg(node);
        let Arg::Chain {
            node: inner,
            fields,
            ..
        } = node
        else {
            return self.eval_arg(dot, node);
        };
        if matches!(inner.as_ref(), Arg::Nil(_)) {
            return Err(self.error(format!("indirection through explicit nil in {node}")));
        }
        let receiver = self.eval_arg(dot, inner)?;
        self.at = At::Arg(node);
        self.eval_field_chain(dot, receiver, fields, args, last)
    }

    fn eval_field_chain(
        &mut self,
        dot: &Ev,
        receiver: Ev,
        names: &'t [String],
        args: &'t [Arg],
        last: Option<Ev>,
    ) -> Exe<Ev> {
        let Some((final_name, leading)) = names.split_last() else {
            return Ok(receiver);
        };
        let mut receiver = receiver;
        for name in leading {
            receiver = self.eval_field(dot, name, &[], None, receiver)?;
        }
        self.eval_field(dot, final_name, args, last, receiver)
    }

    fn eval_field(
        &mut self,
        dot: &Ev,
        name: &str,
        args: &'t [Arg],
        last: Option<Ev>,
        receiver: Ev,
    ) -> Exe<Ev> {
        let has_args = args.len() > 1 || last.is_some();
        let (value, static_type) = match receiver {
            Ev::Missing | Ev::Val(Value::Nil) => {
                if self.missing_key() == MissingKey::Error {
                    return Err(self.error(format!("nil data; no entry for key {}", quote(name))));
                }
                return Ok(Ev::Missing);
            }
            Ev::Iface(Value::Nil) => {
                return Err(self.error(format!("nil pointer evaluating interface {{}}.{name}")));
            }
            Ev::Iface(v) => (v, "interface {}".to_string()),
            Ev::Val(v) => {
                let t = v.type_name();
                (v, t)
            }
        };
        let map = match &value {
            Value::Object(object) => {
                if object.has_method(name) {
                    return self.call_method(dot, object.as_ref(), name, args, last);
                }
                if let Some(field) = object.field(name) {
                    if has_args {
                        return Err(self.error(format!(
                            "{name} has arguments but cannot be invoked as function"
                        )));
                    }
                    return Ok(Ev::from_result(field));
                }
                object.as_collection().and_then(|c| c.as_map().cloned())
            }
            Value::Map(map) => Some(map.clone()),
            _ => None,
        };
        if let Some(map) = map {
            if has_args {
                return Err(self.error(format!("{name} is not a method but has arguments")));
            }
            return match map.get(name) {
                Some(item) => Ok(Ev::Iface(item)),
                None => match self.missing_key() {
                    MissingKey::Default => Ok(Ev::Missing),
                    MissingKey::Zero => Ok(Ev::Iface(Value::Nil)),
                    MissingKey::Error => {
                        Err(self.error(format!("map has no entry for key {}", quote(name))))
                    }
                },
            };
        }
        Err(self.error(format!("can't evaluate field {name} in type {static_type}")))
    }

    fn call_method(
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
            Err(MethodError::Failed(message)) => {
                Err(self.error(format!("error calling {name}: {message}")))
            }
        }
    }

    fn eval_function(
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
        let values: Vec<Value> = evaluated.iter().map(Ev::value).collect();
        let result = match &function {
            Function::Pure(f) => f(&values),
            Function::Engine(f) => f(self.exec, &values),
        };
        match result {
            Ok(value) => Ok(Ev::from_result(value)),
            Err(error) => Err(self.call_error(name, node, call_node, explicit, &evaluated, error)),
        }
    }

    /// Phrases a function's failure as Go does, naming the node Go names.
    fn call_error(
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
            }
            FuncError::Template(cause) => {
                self.at = call_node;
                let detail = format!("error calling {name}: ");
                self.error_with_cause(detail, Some(*cause))
            }
        }
    }

    /// Go's `validateType` messages for an argument of the wrong type.
    fn arg_type_error(
        &self,
        explicit: &'t [Arg],
        evaluated: &[Ev],
        index: usize,
        expected: &str,
    ) -> Error {
        let literal_nil = matches!(explicit.get(index), Some(Arg::Nil(_)));
        let detail = match evaluated.get(index) {
            _ if literal_nil => format!("cannot assign nil to {expected}"),
            Some(Ev::Missing) | None => format!("invalid value; expected {expected}"),
            Some(Ev::Iface(Value::Nil)) => {
                format!("wrong type for value; expected {expected}; got interface {{}}")
            }
            Some(Ev::Val(v) | Ev::Iface(v)) => format!(
                "wrong type for value; expected {expected}; got {}",
                v.type_name()
            ),
        };
        self.error(detail)
    }

    /// `and`/`or`: evaluate left to right, stop at the deciding operand and return it.
    fn eval_and_or(
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
    fn eval_call(
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
                "error calling call: non-function {callee} of type {}",
                v.type_name()
            ),
        };
        Err(self.error(detail))
    }
}
