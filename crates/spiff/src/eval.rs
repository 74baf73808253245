//! Evaluation of dynaml expressions against the document of the current pass.

use std::cell::Cell;
use std::fmt;
use std::rc::Rc;

use indexmap::IndexMap;

use crate::ast::{Arg, BinOp, Expr, LambdaDef, LambdaOrExpr, MappingKind, Marker, Qualifier, Step};
use crate::flow;
use crate::functions;
use crate::node::{Flags, Node, Val, equals, truthy};
use crate::{FileSystem, Functions, Limits};

/// Why an expression has no value (yet).
#[derive(Debug, Clone)]
pub(crate) enum Stop {
    /// It depends on a node that is not evaluated yet; a later pass may succeed.
    Pending(String),
    /// It failed; a later pass may still succeed once more of the document is known.
    Fail(String),
    /// A limit was hit: evaluation stops at once.
    Limit(String),
}

pub(crate) type R = Result<Node, Stop>;

pub(crate) fn fail<T>(msg: impl Into<String>) -> Result<T, Stop> {
    Err(Stop::Fail(msg.into()))
}

/// What stays the same for a whole evaluation.
pub(crate) struct Engine<'a> {
    pub(crate) values: Option<Node>,
    pub(crate) functions: &'a Functions,
    pub(crate) fs: Option<&'a dyn FileSystem>,
    pub(crate) limits: &'a Limits,
    pub(crate) stubs: Vec<Node>,
    pub(crate) steps: Cell<u64>,
    /// Whether strings with embedded `(( ))` parts are expressions (spiff's feature).
    pub(crate) interpolation: bool,
}

impl Engine<'_> {
    /// Counts one evaluation step against the budget.
    pub(crate) fn step(&self) -> Result<(), Stop> {
        let n = self.steps.get() + 1;
        self.steps.set(n);
        if n > self.limits.max_steps {
            return Err(Stop::Limit(format!(
                "evaluation exceeded {} steps",
                self.limits.max_steps
            )));
        }
        Ok(())
    }

    pub(crate) fn check_len(&self, len: usize, what: &str) -> Result<(), Stop> {
        if len > self.limits.max_nodes {
            return Err(Stop::Limit(format!(
                "{what} of {len} entries exceeds the limit of {}",
                self.limits.max_nodes
            )));
        }
        Ok(())
    }

    pub(crate) fn check_str(&self, len: usize) -> Result<(), Stop> {
        if len > self.limits.max_string_bytes {
            return Err(Stop::Limit(format!(
                "string of {len} bytes exceeds the limit of {} bytes",
                self.limits.max_string_bytes
            )));
        }
        Ok(())
    }

    /// The first stub holding `path`.
    pub(crate) fn find_in_stubs(&self, path: &[PathElem]) -> Option<Node> {
        self.stubs.iter().find_map(|s| find_path(s, path))
    }
}

/// One element of a node's path in the document.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum PathElem {
    Key(String),
    Index(usize, Option<String>),
}

impl From<&Step> for PathElem {
    /// A step of a reference path written in a template (a literal index names no entry).
    fn from(step: &Step) -> PathElem {
        match step {
            Step::Key(k) => PathElem::Key(k.clone()),
            Step::Index(i) => PathElem::Index(*i as usize, None),
        }
    }
}

impl PathElem {
    /// The element in messages, as spiff's unresolved-node report names it: `[0]` for a list
    /// element.
    pub(crate) fn text(&self) -> String {
        match self {
            PathElem::Key(k) => k.clone(),
            PathElem::Index(i, _) => format!("[{i}]"),
        }
    }

    /// The element as a step of spiff's evaluation path (`__ctx.PATH`): a list element with
    /// a unique name is `name:<name>`.
    pub(crate) fn step(&self) -> String {
        match self {
            PathElem::Index(_, Some(name)) => format!("name:{name}"),
            other => other.text(),
        }
    }
}

/// The `name` of each element of a list, as spiff keys its steps: only when every element
/// has a string `name` and no two share one (else the elements go by index).
pub(crate) fn element_names(items: &[&Node]) -> Vec<Option<String>> {
    let names: Vec<Option<&str>> = items
        .iter()
        .map(|e| {
            e.as_map()
                .and_then(|m| m.get("name"))
                .and_then(Node::as_str)
        })
        .collect();
    let mut seen = std::collections::HashSet::with_capacity(names.len());
    let unique = names.iter().all(|n| n.is_some_and(|n| seen.insert(n)));
    names
        .into_iter()
        .map(|n| n.filter(|_| unique).map(str::to_string))
        .collect()
}

/// Renders a path as spiff does in messages: `a.b.[0].c`.
pub(crate) fn path_text(path: &[PathElem]) -> String {
    path.iter()
        .map(PathElem::text)
        .collect::<Vec<_>>()
        .join(".")
}

fn find_path(node: &Node, path: &[PathElem]) -> Option<Node> {
    let mut cur = node.clone();
    for p in path {
        let next = match (&cur.val, p) {
            (Val::Map(m), PathElem::Key(k)) => m.get(k).cloned(),
            (Val::List(l), PathElem::Index(i, name)) => name
                .as_ref()
                .and_then(|n| {
                    l.iter()
                        .find(|e| {
                            e.as_map()
                                .and_then(|m| m.get("name"))
                                .and_then(Node::as_str)
                                == Some(n.as_str())
                        })
                        .cloned()
                })
                .or_else(|| l.get(*i).cloned()),
            _ => None,
        };
        cur = next?;
    }
    Some(cur)
}

/// A map of the document used for relative references, with its enclosing maps.
pub(crate) struct Scope {
    pub(crate) map: Node,
    pub(crate) parent: Option<Rc<Scope>>,
}

/// Names bound inside expressions: lambda parameters and scope literals.
pub(crate) struct Locals {
    pub(crate) names: IndexMap<String, Node>,
    pub(crate) parent: Option<Rc<Locals>>,
}

/// The lambda or template that `_` stands for, with its definition scope.
pub(crate) struct SelfRef {
    pub(crate) value: Node,
    pub(crate) scopes: Option<Rc<Scope>>,
}

/// Where an expression is evaluated.
#[derive(Clone)]
pub(crate) struct Env {
    pub(crate) root: Node,
    pub(crate) scopes: Option<Rc<Scope>>,
    pub(crate) locals: Option<Rc<Locals>>,
    pub(crate) path: Rc<Vec<PathElem>>,
    pub(crate) self_ref: Option<Rc<SelfRef>>,
    pub(crate) depth: usize,
}

/// A lambda value: its definition, captured names and bound arguments.
#[derive(Debug)]
pub(crate) struct LambdaValue {
    pub(crate) def: LambdaBody,
    pub(crate) locals: Option<Rc<Locals>>,
    pub(crate) scopes: Option<Rc<Scope>>,
    pub(crate) defaults: Vec<Option<Node>>,
    pub(crate) bound: Vec<Option<Node>>,
    /// A vararg list fixed by currying.
    pub(crate) bound_varargs: Option<Vec<Node>>,
}

/// What a lambda runs: a dynaml body or a builtin function with leading arguments.
#[derive(Debug)]
pub(crate) enum LambdaBody {
    Dynaml(Rc<LambdaDef>),
    Builtin(String, Vec<Node>),
}

impl fmt::Display for LambdaValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.def {
            LambdaBody::Dynaml(d) => write!(f, "lambda{}", d.source),
            LambdaBody::Builtin(name, _) => write!(f, "lambda {name}*()"),
        }
    }
}

impl fmt::Debug for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Scope")
    }
}

impl fmt::Debug for Locals {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.names.keys()).finish()
    }
}

/// A template value: an unevaluated document part, instantiated by `*ref`.
#[derive(Debug)]
pub(crate) struct TemplateValue {
    pub(crate) node: Node,
    pub(crate) scopes: Option<Rc<Scope>>,
}

fn locals_get(mut l: Option<&Rc<Locals>>, name: &str) -> Option<Node> {
    while let Some(cur) = l {
        if let Some(n) = cur.names.get(name) {
            return Some(n.clone());
        }
        l = cur.parent.as_ref();
    }
    None
}

fn step_text(path: &[Step]) -> String {
    path.iter()
        .map(|s| match s {
            Step::Key(k) => k.clone(),
            Step::Index(i) => format!("[{i}]"),
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// A map key that is still the target of an unevaluated `<<` insert.
fn has_pending_insert(m: &IndexMap<String, Node>) -> bool {
    ["<<", "<<<"]
        .iter()
        .any(|k| m.get(*k).is_some_and(Node::unresolved))
}

/// The value of the reference as it is visible in the document: without the node's own markers.
fn as_reference_value(n: &Node) -> Node {
    Node {
        val: n.val.clone(),
        flags: n
            .flags
            .without(Flags::TEMPORARY.with(Flags::LOCAL).with(Flags::STATE)),
    }
}

/// Follows `steps` from `node`.
fn walk(node: &Node, steps: &[Step], shown: &[Step]) -> R {
    let mut cur = node.clone();
    for (i, s) in steps.iter().enumerate() {
        if matches!(cur.val, Val::Expr(_)) {
            return Err(Stop::Pending(format!(
                "'{}' is not resolved yet",
                step_text(&shown[..shown.len() - steps.len() + i])
            )));
        }
        let next = select(&cur, s);
        match next {
            Some(n) if !n.undefined() => cur = n,
            _ => {
                if let Val::Map(m) = &cur.val
                    && has_pending_insert(m)
                {
                    return Err(Stop::Pending(format!(
                        "'{}' is not resolved yet",
                        step_text(shown)
                    )));
                }
                // Spiff names the path up to the step that failed.
                let failed = shown.len() - steps.len() + i + 1;
                return fail(format!("'{}' not found", step_text(&shown[..failed])));
            }
        }
    }
    if cur.unresolved() {
        return Err(Stop::Pending(format!(
            "'{}' is not resolved yet",
            step_text(shown)
        )));
    }
    Ok(as_reference_value(&cur))
}

/// One path step on a value: a map key, a list index, or a list entry by its name.
fn select(n: &Node, s: &Step) -> Option<Node> {
    match (&n.val, s) {
        (Val::Map(m), Step::Key(k)) => m.get(k).cloned(),
        (Val::List(l), Step::Index(i)) => {
            let i = if *i < 0 { l.len() as i64 + i } else { *i };
            usize::try_from(i).ok().and_then(|i| l.get(i).cloned())
        }
        (Val::List(l), Step::Key(k)) => l
            .iter()
            .find(|e| {
                e.as_map()
                    .and_then(|m| m.get("name"))
                    .is_some_and(|v| v.as_str() == Some(k))
            })
            .cloned(),
        (Val::Map(m), Step::Index(i)) => m.get(&i.to_string()).cloned(),
        _ => None,
    }
}

/// Evaluates one expression.
pub(crate) fn eval(eng: &Engine, env: &Env, e: &Expr) -> R {
    eng.step()?;
    stacker::maybe_grow(64 * 1024, 2 * 1024 * 1024, || eval_inner(eng, env, e))
}

fn eval_inner(eng: &Engine, env: &Env, e: &Expr) -> R {
    match e {
        Expr::Nil => Ok(Node::null()),
        Expr::Undefined => Ok(Node::null().flagged(Flags::UNDEFINED)),
        Expr::Bool(b) => Ok(Node::bool(*b)),
        Expr::Int(i) => Ok(Node::int(*i)),
        Expr::Float(f) => Ok(Node::new(Val::Float(*f))),
        Expr::Str(s) => Ok(Node::str(s.as_str())),
        Expr::Ref { absolute, path } => resolve(eng, env, *absolute, path),
        Expr::TopIndex(args) => {
            let idx = eval_args(eng, env, args)?;
            index_value(&env.root, &idx)
        }
        Expr::List(items) => Ok(Node::list(eval_args(eng, env, items)?)),
        Expr::Map(assignments) => {
            let mut m = IndexMap::new();
            for (k, v) in assignments {
                let key = eval(eng, env, k)?;
                let key = match &key.val {
                    Val::Str(s) => s.to_string(),
                    Val::Int(i) => i.to_string(),
                    _ => {
                        return fail(format!(
                            "map key must be a string, found {}",
                            key.type_name()
                        ));
                    }
                };
                let val = eval(eng, env, v)?;
                if !val.undefined() {
                    m.insert(key, val);
                }
            }
            Ok(Node::map(m))
        }
        Expr::Range(a, b) => range(eng, env, a.as_deref(), b.as_deref()),
        Expr::Grouped(e) => eval(eng, env, e),
        Expr::Qualified(head, quals) => qualified(eng, env, head, quals),
        Expr::Scoped(assignments, body) => {
            let mut names = IndexMap::new();
            for (k, v) in assignments {
                let key = eval(eng, env, k)?;
                let Some(key) = key.as_str().map(str::to_string) else {
                    return fail("scope names must be strings");
                };
                names.insert(key, eval(eng, env, v)?);
            }
            let mut inner = env.clone();
            inner.locals = Some(Rc::new(Locals {
                names,
                parent: env.locals.clone(),
            }));
            eval(eng, &inner, body)
        }
        Expr::Lambda(def) => make_lambda(eng, env, def),
        Expr::LambdaRef(e) => {
            let v = eval(eng, env, e)?;
            match &v.val {
                Val::Lambda(_) => Ok(v),
                Val::Str(s) => {
                    let parsed = crate::parser::parse(s).map_err(Stop::Fail)?;
                    match parsed {
                        Expr::Lambda(def) => make_lambda(eng, env, &def),
                        _ => fail(format!("'{s}' is no lambda expression")),
                    }
                }
                _ => fail(format!(
                    "lambda requires a lambda or a string, found {}",
                    v.type_name()
                )),
            }
        }
        Expr::Merge(spec) => {
            if let Some(message) = unsupported(e) {
                return fail(message);
            }
            let target: Vec<PathElem> = match &spec.redirect {
                Some(p) if p.is_empty() => return Ok(Node::null()),
                Some(p) => p.iter().map(PathElem::from).collect(),
                None => env.path.to_vec(),
            };
            match eng.find_in_stubs(&target) {
                Some(n) => Ok(as_reference_value(&n).flagged(Flags::MERGED)),
                None => fail(format!("'{}' not found in any stub", path_text(&target))),
            }
        }
        Expr::Auto => fail("'auto' is only defined for BOSH manifests"),
        Expr::Not(e) => {
            let v = eval(eng, env, e)?;
            Ok(Node::bool(!truthy(&v)))
        }
        Expr::Substitution(e) => {
            let v = eval(eng, env, e)?;
            match &v.val {
                Val::Template(t) => instantiate(eng, env, &v, t),
                _ => fail(format!(
                    "template value required for '*', found {}",
                    v.type_name()
                )),
            }
        }
        Expr::Binary(op, a, b) => {
            let a = eval(eng, env, a)?;
            let b = eval(eng, env, b)?;
            binary(eng, *op, &a, &b)
        }
        Expr::Or { a, b, valid } => match eval(eng, env, a) {
            Ok(v) if !(v.undefined() || *valid && v.is_null()) => Ok(v),
            Ok(_) | Err(Stop::Fail(_)) => eval(eng, env, b),
            Err(other) => Err(other),
        },
        Expr::Cond(c, a, b) => {
            let c = eval(eng, env, c)?;
            if truthy(&c) {
                eval(eng, env, a)
            } else {
                eval(eng, env, b)
            }
        }
        Expr::Concat(a, b) => {
            let a = eval(eng, env, a)?;
            let b = eval(eng, env, b)?;
            concat(eng, &a, &b)
        }
        Expr::Mapping {
            kind,
            to_map,
            source,
            func,
        } => mapping(eng, env, *kind, *to_map, source, func),
        Expr::Sum {
            source,
            initial,
            func,
        } => sum(eng, env, source, initial, func),
        Expr::Catch { expr, func } => {
            let (value, error) = match eval(eng, env, expr) {
                Ok(v) => (v, Node::str("")),
                Err(Stop::Fail(m)) => (Node::null().flagged(Flags::UNDEFINED), Node::str(m)),
                Err(other) => return Err(other),
            };
            let f = lambda_of(eng, env, func)?;
            call_lambda(eng, env, &f, positional(vec![value, error]))
        }
        Expr::Marked { markers, expr } => {
            if let Some(message) = unsupported(e) {
                return fail(message);
            }
            let mut flags = Flags::default();
            for m in markers {
                flags = flags.with(marker_flags(*m));
            }
            if markers.contains(&Marker::Template) {
                let node = match expr {
                    Some(e) => template_expr_node(e),
                    None => Node::null(),
                };
                return Ok(Node::new(Val::Template(Rc::new(TemplateValue {
                    node,
                    scopes: env.scopes.clone(),
                })))
                .flagged(flags));
            }
            match expr {
                Some(e) => Ok(eval(eng, env, e)?.flagged(flags)),
                None => Ok(Node::null().flagged(flags)),
            }
        }
        Expr::Prefer(e) => eval(eng, env, e),
    }
}

/// A document node holding an expression that a template keeps unevaluated.
pub(crate) fn template_expr_node(e: &Expr) -> Node {
    Node::new(Val::Expr(Rc::new(crate::node::Dynaml {
        source: String::new(),
        parsed: Ok(e.clone()),
    })))
}

/// Why `e` cannot be evaluated here: the constructs this engine parses but does not implement
/// (`merge on <key>`, and the `&inject`, `&default` and `&dynamic` markers, which only act
/// when documents are merged with stubs) are an error, never silently without effect.
pub(crate) fn unsupported(e: &Expr) -> Option<String> {
    match e {
        Expr::Merge(spec) => spec
            .on
            .as_ref()
            .map(|key| format!("'merge on {key}' is not supported")),
        Expr::Marked { markers, expr } => markers
            .iter()
            .find_map(|m| {
                let name = match m {
                    Marker::Inject => "inject",
                    Marker::Default => "default",
                    Marker::Dynamic => "dynamic",
                    _ => return None,
                };
                Some(format!("marker '&{name}' is not supported"))
            })
            .or_else(|| expr.as_deref().and_then(unsupported)),
        Expr::Grouped(inner) => unsupported(inner),
        _ => None,
    }
}

pub(crate) fn marker_flags(m: Marker) -> Flags {
    match m {
        Marker::Temporary => Flags::TEMPORARY,
        Marker::Local => Flags::LOCAL,
        Marker::State => Flags::STATE,
        _ => Flags::default(),
    }
}

fn make_lambda(eng: &Engine, env: &Env, def: &Rc<LambdaDef>) -> R {
    let mut defaults = Vec::with_capacity(def.params.len());
    for p in &def.params {
        defaults.push(match &p.default {
            Some(e) => Some(eval(eng, env, e)?),
            None => None,
        });
    }
    Ok(Node::new(Val::Lambda(Rc::new(LambdaValue {
        def: LambdaBody::Dynaml(def.clone()),
        locals: env.locals.clone(),
        scopes: env.scopes.clone(),
        bound: vec![None; def.params.len()],
        defaults,
        bound_varargs: None,
    }))))
}

/// Relative and absolute references.
fn resolve(eng: &Engine, env: &Env, absolute: bool, path: &[Step]) -> R {
    if absolute {
        return walk(&env.root, path, path);
    }
    let Some(Step::Key(first)) = path.first() else {
        return walk(&env.root, path, path);
    };
    let rest = &path[1..];
    match first.as_str() {
        "_" => {
            let Some(s) = &env.self_ref else {
                return fail("'_' is only defined in lambdas and templates");
            };
            if rest.is_empty() {
                return Ok(s.value.clone());
            }
            return resolve_in_scopes(eng, s.scopes.as_ref(), rest, path, false);
        }
        "__" => {
            if rest.is_empty() {
                return match &env.scopes {
                    Some(s) => Ok(as_reference_value(&s.map)),
                    None => Ok(env.root.clone()),
                };
            }
            return resolve_in_scopes(eng, env.scopes.as_ref(), rest, path, false);
        }
        "___" => {
            let base = eng.values.clone().unwrap_or_else(|| env.root.clone());
            return walk(&base, rest, path);
        }
        "__ctx" => return walk(&context(eng, env), rest, path),
        _ => {}
    }
    if let Some(n) = locals_get(env.locals.as_ref(), first) {
        return walk(&n, rest, path);
    }
    resolve_in_scopes(eng, env.scopes.as_ref(), path, path, true)
}

fn resolve_in_scopes(
    eng: &Engine,
    scopes: Option<&Rc<Scope>>,
    path: &[Step],
    shown: &[Step],
    with_values: bool,
) -> R {
    let Some(Step::Key(first)) = path.first() else {
        return fail(format!("'{}' not found", step_text(shown)));
    };
    let mut pending = false;
    let mut cur = scopes;
    while let Some(s) = cur {
        if let Val::Map(m) = &s.map.val {
            if let Some(n) = m.get(first)
                && !n.undefined()
            {
                return walk(n, &path[1..], shown);
            }
            pending |= has_pending_insert(m);
        }
        cur = s.parent.as_ref();
    }
    if with_values
        && let Some(v) = &eng.values
        && let Some(n) = v.as_map().and_then(|m| m.get(first))
    {
        return walk(n, &path[1..], shown);
    }
    if pending {
        return Err(Stop::Pending(format!(
            "'{}' is not resolved yet",
            step_text(shown)
        )));
    }
    let failed = shown.len() - path.len() + 1;
    fail(format!("'{}' not found", step_text(&shown[..failed])))
}

/// The virtual `__ctx` map.
fn context(eng: &Engine, env: &Env) -> Node {
    let mut m = IndexMap::new();
    m.insert("VERSION".into(), Node::str("1.7.0-beta-7"));
    m.insert("FILE".into(), Node::str("template"));
    m.insert("DIR".into(), Node::str("."));
    let steps: Vec<String> = env.path.iter().map(PathElem::step).collect();
    m.insert("PATHNAME".into(), Node::str(steps.join(".")));
    m.insert(
        "PATH".into(),
        Node::list(steps.into_iter().map(Node::str).collect()),
    );
    let outer: Vec<Node> = eng.values.iter().cloned().collect();
    m.insert("OUTER".into(), Node::list(outer));
    m.insert(
        "BINDINGS".into(),
        eng.values
            .clone()
            .unwrap_or_else(|| Node::map(IndexMap::new())),
    );
    Node::map(m)
}

/// Evaluates list items or positional arguments, expanding `x...`.
fn eval_args(eng: &Engine, env: &Env, args: &[Arg]) -> Result<Vec<Node>, Stop> {
    let mut out = Vec::with_capacity(args.len());
    for a in args {
        let v = eval(eng, env, &a.expr)?;
        if a.expand {
            match &v.val {
                Val::List(l) => out.extend(l.iter().cloned()),
                _ => {
                    return fail(format!(
                        "list expansion requires a list, found {}",
                        v.type_name()
                    ));
                }
            }
        } else if !v.undefined() {
            out.push(v);
        }
        eng.check_len(out.len(), "list")?;
    }
    Ok(out)
}

/// A call's arguments: named ones keep their name.
pub(crate) struct CallArgs {
    pub(crate) named: Vec<(String, Node)>,
    pub(crate) positional: Vec<Node>,
}

pub(crate) fn positional(positional: Vec<Node>) -> CallArgs {
    CallArgs {
        named: Vec::new(),
        positional,
    }
}

fn eval_call_args(eng: &Engine, env: &Env, args: &[Arg]) -> Result<CallArgs, Stop> {
    let mut named = Vec::new();
    let mut plain = Vec::new();
    for a in args {
        match &a.name {
            Some(n) => named.push((n.clone(), eval(eng, env, &a.expr)?)),
            None => plain.push(a.clone()),
        }
    }
    Ok(CallArgs {
        named,
        positional: eval_args(eng, env, &plain)?,
    })
}

fn range(eng: &Engine, env: &Env, a: Option<&Expr>, b: Option<&Expr>) -> R {
    let int = |e: Option<&Expr>| -> Result<i64, Stop> {
        match e {
            None => fail("range bounds are required"),
            Some(e) => match eval(eng, env, e)?.val {
                Val::Int(i) => Ok(i),
                _ => fail("range bounds must be integers"),
            },
        }
    };
    let (from, to) = (int(a)?, int(b)?);
    let len = from.abs_diff(to).saturating_add(1);
    eng.check_len(usize::try_from(len).unwrap_or(usize::MAX), "range")?;
    let items: Vec<Node> = if from <= to {
        (from..=to).map(Node::int).collect()
    } else {
        (to..=from).rev().map(Node::int).collect()
    };
    Ok(Node::list(items))
}

fn qualified(eng: &Engine, env: &Env, head: &Expr, quals: &[Qualifier]) -> R {
    let (mut cur, rest) = match (head, quals.first()) {
        (
            Expr::Ref {
                absolute: false,
                path,
            },
            Some(Qualifier::Call(args)),
        ) if path.len() == 1 => {
            let Step::Key(name) = &path[0] else {
                unreachable!("a reference starts with a key")
            };
            (call_named(eng, env, name, args)?, &quals[1..])
        }
        (
            Expr::Ref {
                absolute: false,
                path,
            },
            Some(Qualifier::Curry(args)),
        ) if path.len() == 1
            && locals_get(
                env.locals.as_ref(),
                match &path[0] {
                    Step::Key(k) => k,
                    Step::Index(_) => "",
                },
            )
            .is_none()
            && matches!(&path[0], Step::Key(k) if functions::is_builtin(k) || eng.functions.get(k).is_some()) =>
        {
            let Step::Key(name) = &path[0] else {
                unreachable!("checked above")
            };
            let bound = eval_args(eng, env, args)?;
            (
                Node::new(Val::Lambda(Rc::new(LambdaValue {
                    def: LambdaBody::Builtin(name.clone(), bound),
                    locals: None,
                    scopes: None,
                    defaults: Vec::new(),
                    bound: Vec::new(),
                    bound_varargs: None,
                }))),
                &quals[1..],
            )
        }
        _ => (eval(eng, env, head)?, quals),
    };
    for (i, q) in rest.iter().enumerate() {
        cur = apply_qualifier(eng, env, cur, q)?;
        if matches!(q, Qualifier::Projection(..)) {
            debug_assert_eq!(i + 1, rest.len());
        }
    }
    Ok(cur)
}

fn apply_qualifier(eng: &Engine, env: &Env, cur: Node, q: &Qualifier) -> R {
    match q {
        Qualifier::Field(s) => match select(&cur, s) {
            Some(n) if !n.undefined() => {
                if n.unresolved() {
                    Err(Stop::Pending("referenced value is not resolved yet".into()))
                } else {
                    Ok(as_reference_value(&n))
                }
            }
            _ => fail(format!(
                "'{}' not found in {}",
                step_text(std::slice::from_ref(s)),
                cur.type_name()
            )),
        },
        Qualifier::Index(args) => {
            let idx = eval_args(eng, env, args)?;
            index_value(&cur, &idx)
        }
        Qualifier::Slice(a, b) => slice(eng, env, &cur, a.as_ref(), b.as_ref()),
        Qualifier::Call(args) => {
            let args = eval_call_args(eng, env, args)?;
            call_value(eng, env, &cur, args)
        }
        Qualifier::Curry(args) => {
            let args = eval_call_args(eng, env, args)?;
            match &cur.val {
                Val::Lambda(l) => curry(l, args),
                _ => fail(format!(
                    "currying requires a lambda, found {}",
                    cur.type_name()
                )),
            }
        }
        Qualifier::Projection(sl, rest) => {
            let items: Vec<Node> = match &cur.val {
                Val::List(l) => l.to_vec(),
                Val::Map(m) => m.values().cloned().collect(),
                _ => {
                    return fail(format!(
                        "projection requires a list or map, found {}",
                        cur.type_name()
                    ));
                }
            };
            let base = Node::list(items);
            let base = match sl {
                Some((a, b)) => slice(eng, env, &base, a.as_ref(), b.as_ref())?,
                None => base,
            };
            let Val::List(items) = &base.val else {
                return fail("projection requires a list");
            };
            let mut out = Vec::with_capacity(items.len());
            for item in items.iter() {
                let mut v = item.clone();
                for q in rest {
                    v = apply_qualifier(eng, env, v, q)?;
                }
                out.push(v);
            }
            Ok(Node::list(out))
        }
    }
}

fn index_value(cur: &Node, idx: &[Node]) -> R {
    let mut v = cur.clone();
    for i in idx {
        let steps: Vec<Step> = match &i.val {
            Val::Int(n) => vec![Step::Index(*n)],
            Val::Str(s) => vec![Step::Key(s.to_string())],
            Val::List(l) => l
                .iter()
                .map(|e| match &e.val {
                    Val::Int(n) => Ok(Step::Index(*n)),
                    Val::Str(s) => Ok(Step::Key(s.to_string())),
                    _ => Err(Stop::Fail(
                        "index path entries must be strings or integers".into(),
                    )),
                })
                .collect::<Result<_, _>>()?,
            _ => {
                return fail(format!(
                    "index must be a string or integer, found {}",
                    i.type_name()
                ));
            }
        };
        v = walk(&v, &steps, &steps)?;
    }
    Ok(v)
}

fn slice(eng: &Engine, env: &Env, cur: &Node, a: Option<&Expr>, b: Option<&Expr>) -> R {
    let Val::List(l) = &cur.val else {
        return fail(format!("slice requires a list, found {}", cur.type_name()));
    };
    let len = l.len() as i64;
    let bound = |e: Option<&Expr>, default: i64| -> Result<i64, Stop> {
        match e {
            None => Ok(default),
            Some(e) => match eval(eng, env, e)?.val {
                Val::Int(i) => Ok(i),
                _ => fail("slice bounds must be integers"),
            },
        }
    };
    let mut from = bound(a, 0)?;
    let mut to = bound(b, len - 1)?;
    if from < 0 {
        from += len;
        if b.is_some() {
            to += len;
        }
    }
    if from < 0 || to >= len {
        return fail(format!(
            "slice [{from}..{to}] out of range for a list of {len}"
        ));
    }
    if to < from {
        return Ok(Node::list(Vec::new()));
    }
    Ok(Node::list(l[from as usize..=to as usize].to_vec()))
}

/// `name(args)`: local lambdas, the special forms, registered and builtin functions, then
/// a lambda found by reference.
fn call_named(eng: &Engine, env: &Env, name: &str, args: &[Arg]) -> R {
    if let Some(l) = locals_get(env.locals.as_ref(), name) {
        let args = eval_call_args(eng, env, args)?;
        return call_value(eng, env, &l, args);
    }
    if let Some(r) = functions::special(eng, env, name, args) {
        return r;
    }
    if eng.functions.get(name).is_some() || functions::is_builtin(name) {
        let args = eval_call_args(eng, env, args)?;
        if !args.named.is_empty() {
            return fail(format!("function '{name}' takes no named arguments"));
        }
        return call_function(eng, env, name, args.positional);
    }
    let f = resolve(eng, env, false, &[Step::Key(name.to_string())]).map_err(|e| match e {
        Stop::Fail(_) => Stop::Fail(format!("unknown function '{name}'")),
        other => other,
    })?;
    let args = eval_call_args(eng, env, args)?;
    call_value(eng, env, &f, args)
}

/// A registered function (these win over builtins of the same name) or a builtin.
pub(crate) fn call_function(eng: &Engine, env: &Env, name: &str, args: Vec<Node>) -> R {
    if let Some(f) = eng.functions.get(name) {
        let mut json = Vec::with_capacity(args.len());
        for a in &args {
            json.push(crate::convert::to_json(a).map_err(Stop::Fail)?);
        }
        return match f(&json) {
            Ok(v) => Ok(crate::convert::from_json(&v)),
            Err(e) => fail(format!("{name}: {e}")),
        };
    }
    functions::builtin(eng, env, name, args)
}

pub(crate) fn call_value(eng: &Engine, env: &Env, f: &Node, args: CallArgs) -> R {
    match &f.val {
        Val::Lambda(l) => call_lambda(eng, env, l, args),
        _ => fail(format!(
            "function call requires a lambda, found {}",
            f.type_name()
        )),
    }
}

fn param_index(def: &LambdaDef, name: &str) -> Option<usize> {
    def.params.iter().position(|p| p.name == name).or_else(|| {
        name.parse::<usize>()
            .ok()
            .filter(|i| *i >= 1 && *i <= def.params.len())
            .map(|i| i - 1)
    })
}

/// Parameter values and the vararg list of a call.
type Bound = (Vec<Option<Node>>, Option<Vec<Node>>);

/// Binds arguments to parameters: the bound values and the varargs.
fn bind(l: &LambdaValue, def: &LambdaDef, args: CallArgs) -> Result<Bound, Stop> {
    let mut bound = l.bound.clone();
    let mut varargs = l.bound_varargs.clone();
    let nparams = def.params.len();
    let fixed = if def.varargs { nparams - 1 } else { nparams };
    for (name, v) in args.named {
        let Some(i) = param_index(def, &name) else {
            return fail(format!("unknown parameter '{name}'"));
        };
        if def.varargs && i == nparams - 1 {
            match &v.val {
                Val::List(items) => varargs = Some(items.to_vec()),
                _ => return fail(format!("vararg parameter '{name}' requires a list")),
            }
        } else if bound[i].is_some() {
            return fail(format!("parameter '{name}' given twice"));
        } else {
            bound[i] = Some(v);
        }
    }
    let mut extra = Vec::new();
    let mut next = 0;
    for v in args.positional {
        while next < fixed && bound[next].is_some() {
            next += 1;
        }
        if next < fixed {
            bound[next] = Some(v);
            next += 1;
        } else {
            extra.push(v);
        }
    }
    if !extra.is_empty() {
        if !def.varargs || varargs.is_some() {
            return fail(format!(
                "too many arguments for lambda: expected {fixed}, found {}",
                fixed + extra.len()
            ));
        }
        varargs = Some(extra);
    }
    Ok((bound, varargs))
}

fn curry(l: &Rc<LambdaValue>, args: CallArgs) -> R {
    match &l.def {
        LambdaBody::Builtin(name, leading) => {
            let mut all = leading.clone();
            all.extend(args.positional);
            Ok(Node::new(Val::Lambda(Rc::new(LambdaValue {
                def: LambdaBody::Builtin(name.clone(), all),
                locals: None,
                scopes: None,
                defaults: Vec::new(),
                bound: Vec::new(),
                bound_varargs: None,
            }))))
        }
        LambdaBody::Dynaml(def) => {
            let (bound, varargs) = bind(l, def, args)?;
            Ok(rebound(l, bound, varargs))
        }
    }
}

fn rebound(l: &LambdaValue, bound: Vec<Option<Node>>, varargs: Option<Vec<Node>>) -> Node {
    let def = match &l.def {
        LambdaBody::Dynaml(d) => LambdaBody::Dynaml(d.clone()),
        LambdaBody::Builtin(n, a) => LambdaBody::Builtin(n.clone(), a.clone()),
    };
    Node::new(Val::Lambda(Rc::new(LambdaValue {
        def,
        locals: l.locals.clone(),
        scopes: l.scopes.clone(),
        defaults: l.defaults.clone(),
        bound,
        bound_varargs: varargs,
    })))
}

pub(crate) fn call_lambda(eng: &Engine, env: &Env, l: &Rc<LambdaValue>, args: CallArgs) -> R {
    let def = match &l.def {
        LambdaBody::Builtin(name, leading) => {
            let mut all = leading.clone();
            all.extend(args.positional);
            return call_function(eng, env, name, all);
        }
        LambdaBody::Dynaml(d) => d.clone(),
    };
    let (given, varargs) = bind(l, &def, args)?;
    let fixed = if def.varargs {
        def.params.len() - 1
    } else {
        def.params.len()
    };
    let mut bound = given.clone();
    let mut open = false;
    for (i, slot) in bound.iter_mut().enumerate().take(fixed) {
        if slot.is_none() {
            match &l.defaults[i] {
                Some(d) => *slot = Some(d.clone()),
                None => open = true,
            }
        }
    }
    if open {
        // Fewer arguments than required parameters: the (deprecated) implicit currying.
        return Ok(rebound(l, given, varargs));
    }
    if env.depth >= eng.limits.max_depth {
        return Err(Stop::Limit(format!(
            "lambda calls nest deeper than {} levels",
            eng.limits.max_depth
        )));
    }
    let mut names = IndexMap::new();
    for (p, v) in def.params.iter().zip(bound) {
        if let Some(v) = v {
            names.insert(p.name.clone(), v);
        }
    }
    if def.varargs {
        let last = &def.params[def.params.len() - 1].name;
        names.insert(last.clone(), Node::list(varargs.unwrap_or_default()));
    }
    let inner = Env {
        root: env.root.clone(),
        scopes: env.scopes.clone(),
        locals: Some(Rc::new(Locals {
            names,
            parent: l.locals.clone(),
        })),
        path: env.path.clone(),
        self_ref: Some(Rc::new(SelfRef {
            value: Node::new(Val::Lambda(l.clone())),
            scopes: l.scopes.clone(),
        })),
        depth: env.depth + 1,
    };
    eval(eng, &inner, &def.body)
}

/// The lambda of a comprehension; an inline one does not rebind `_`.
fn lambda_of(eng: &Engine, env: &Env, f: &LambdaOrExpr) -> Result<Rc<LambdaValue>, Stop> {
    let v = match f {
        LambdaOrExpr::Lambda(def) => make_lambda(eng, env, def)?,
        LambdaOrExpr::Expr(e) => eval(eng, env, e)?,
    };
    match v.val {
        Val::Lambda(l) => Ok(l),
        _ => fail(format!("lambda expected, found {}", v.type_name())),
    }
}

fn lambda_arity(l: &LambdaValue) -> usize {
    match &l.def {
        LambdaBody::Dynaml(d) => d.params.len() - l.bound.iter().filter(|b| b.is_some()).count(),
        LambdaBody::Builtin(..) => 1,
    }
}

fn mapping(
    eng: &Engine,
    env: &Env,
    kind: MappingKind,
    to_map: bool,
    source: &Expr,
    func: &LambdaOrExpr,
) -> R {
    let src = eval(eng, env, source)?;
    let f = lambda_of(eng, env, func)?;
    let two = lambda_arity(&f) >= 2;
    let entries: Vec<(Node, Node, Option<String>)> = match &src.val {
        Val::List(l) => l
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let key = if to_map {
                    v.as_str().map(str::to_string)
                } else {
                    None
                };
                (Node::int(i as i64), v.clone(), key)
            })
            .collect(),
        Val::Map(m) => m
            .iter()
            .map(|(k, v)| (Node::str(k.as_str()), v.clone(), Some(k.clone())))
            .collect(),
        Val::Null => Vec::new(),
        _ => {
            return fail(format!(
                "mapping requires a list or map, found {}",
                src.type_name()
            ));
        }
    };
    let mut list = Vec::new();
    let mut map = IndexMap::new();
    for (k, v, key) in entries {
        let args = if two {
            vec![k, v.clone()]
        } else {
            vec![v.clone()]
        };
        let r = call_lambda(eng, env, &f, positional(args))?;
        let keep = match kind {
            MappingKind::Map => !r.undefined(),
            MappingKind::Select => truthy(&r),
        };
        if !keep {
            continue;
        }
        let out = if kind == MappingKind::Map { r } else { v };
        if to_map {
            let Some(key) = key else {
                return fail("map comprehension over a list requires string entries");
            };
            map.insert(key, out);
        } else {
            list.push(out);
        }
    }
    Ok(if to_map {
        Node::map(map)
    } else {
        Node::list(list)
    })
}

fn sum(eng: &Engine, env: &Env, source: &Expr, initial: &Expr, func: &LambdaOrExpr) -> R {
    let src = eval(eng, env, source)?;
    let mut acc = eval(eng, env, initial)?;
    let f = lambda_of(eng, env, func)?;
    let three = lambda_arity(&f) >= 3;
    let entries: Vec<(Node, Node)> = match &src.val {
        Val::List(l) => l
            .iter()
            .enumerate()
            .map(|(i, v)| (Node::int(i as i64), v.clone()))
            .collect(),
        Val::Map(m) => m
            .iter()
            .map(|(k, v)| (Node::str(k.as_str()), v.clone()))
            .collect(),
        Val::Null => Vec::new(),
        _ => {
            return fail(format!(
                "sum requires a list or map, found {}",
                src.type_name()
            ));
        }
    };
    for (k, v) in entries {
        let args = if three { vec![acc, k, v] } else { vec![acc, v] };
        acc = call_lambda(eng, env, &f, positional(args))?;
    }
    Ok(acc)
}

fn instantiate(eng: &Engine, env: &Env, tv: &Node, t: &TemplateValue) -> R {
    let self_ref = Rc::new(SelfRef {
        value: tv.clone(),
        scopes: t.scopes.clone(),
    });
    if env.depth >= eng.limits.max_depth {
        return Err(Stop::Limit(format!(
            "template instantiations nest deeper than {} levels",
            eng.limits.max_depth
        )));
    }
    let mut inner = env.clone();
    inner.self_ref = Some(self_ref);
    inner.depth += 1;
    flow::nested(eng, &inner, t.node.clone())
}

fn number_pair(a: &Node, b: &Node) -> Option<Result<(i64, i64), (f64, f64)>> {
    match (&a.val, &b.val) {
        (Val::Int(x), Val::Int(y)) => Some(Ok((*x, *y))),
        (Val::Int(x), Val::Float(y)) => Some(Err((*x as f64, *y))),
        (Val::Float(x), Val::Int(y)) => Some(Err((*x, *y as f64))),
        (Val::Float(x), Val::Float(y)) => Some(Err((*x, *y))),
        _ => None,
    }
}

fn binary(eng: &Engine, op: BinOp, a: &Node, b: &Node) -> R {
    match op {
        BinOp::Eq => return Ok(Node::bool(equals(a, b))),
        BinOp::Ne => return Ok(Node::bool(!equals(a, b))),
        BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
            let ord = match (&a.val, &b.val) {
                (Val::Str(x), Val::Str(y)) => x.cmp(y),
                _ => match number_pair(a, b) {
                    Some(Ok((x, y))) => x.cmp(&y),
                    Some(Err((x, y))) => x.partial_cmp(&y).unwrap_or(std::cmp::Ordering::Equal),
                    None => {
                        return fail(format!(
                            "comparison {} only for integers or strings",
                            op.symbol()
                        ));
                    }
                },
            };
            let r = match op {
                BinOp::Lt => ord.is_lt(),
                BinOp::Le => ord.is_le(),
                BinOp::Gt => ord.is_gt(),
                _ => ord.is_ge(),
            };
            return Ok(Node::bool(r));
        }
        BinOp::LogOr | BinOp::LogAnd => {
            if let (Val::Int(x), Val::Int(y)) = (&a.val, &b.val) {
                return Ok(Node::int(if op == BinOp::LogOr { x | y } else { x & y }));
            }
            let r = if op == BinOp::LogOr {
                truthy(a) || truthy(b)
            } else {
                truthy(a) && truthy(b)
            };
            return Ok(Node::bool(r));
        }
        _ => {}
    }
    let Some(pair) = number_pair(a, b) else {
        return fail(format!(
            "operator {} requires number arguments, found {} and {}",
            op.symbol(),
            a.type_name(),
            b.type_name()
        ));
    };
    eng.step()?;
    match pair {
        Ok((x, y)) => {
            let r = match op {
                BinOp::Add => x.checked_add(y),
                BinOp::Sub => x.checked_sub(y),
                BinOp::Mul => x.checked_mul(y),
                BinOp::Div => {
                    if y == 0 {
                        return fail("division by zero");
                    }
                    x.checked_div(y)
                }
                _ => {
                    if y == 0 {
                        return fail("division by zero");
                    }
                    x.checked_rem(y)
                }
            };
            match r {
                Some(r) => Ok(Node::int(r)),
                None => fail(format!("integer overflow in {x} {} {y}", op.symbol())),
            }
        }
        Err((x, y)) => {
            let r = match op {
                BinOp::Add => x + y,
                BinOp::Sub => x - y,
                BinOp::Mul => x * y,
                BinOp::Div => {
                    if y == 0.0 {
                        return fail("division by zero");
                    }
                    x / y
                }
                _ => return fail("modulo requires integer arguments"),
            };
            Ok(Node::new(Val::Float(r)))
        }
    }
}

/// The text of a simple value as concatenation uses it.
pub(crate) fn simple_text(n: &Node) -> Option<String> {
    match &n.val {
        Val::Str(s) => Some(s.to_string()),
        Val::Int(i) => Some(i.to_string()),
        Val::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn concat(eng: &Engine, a: &Node, b: &Node) -> R {
    if let Some(x) = simple_text(a) {
        let y = match &b.val {
            Val::Lambda(l) => Some(l.to_string()),
            _ => simple_text(b),
        };
        if let Some(y) = y {
            eng.check_str(x.len() + y.len())?;
            return Ok(Node::str(x + &y));
        }
    }
    match (&a.val, &b.val) {
        (Val::List(x), Val::List(y)) => {
            eng.check_len(x.len() + y.len(), "list")?;
            let mut l = x.to_vec();
            l.extend(y.iter().cloned());
            Ok(Node::list(l))
        }
        (Val::List(_) | Val::Map(_), Val::Null) => Ok(a.clone()),
        (Val::List(x), _) => {
            eng.check_len(x.len() + 1, "list")?;
            let mut l = x.to_vec();
            l.push(b.clone());
            Ok(Node::list(l))
        }
        (Val::Map(x), Val::Map(y)) => {
            let mut m = (**x).clone();
            for (k, v) in y.iter() {
                m.insert(k.clone(), v.clone());
            }
            Ok(Node::map(m))
        }
        _ => fail(format!(
            "type '{}' cannot be concatenated with type '{}'",
            b.type_name(),
            a.type_name()
        )),
    }
}
