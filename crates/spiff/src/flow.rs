//! Document processing: repeated passes over the document, each evaluating the expressions
//! whose references are resolved, until nothing is left or a pass makes no progress.
//! References always read the document of the previous pass, so the result does not depend
//! on the order of the keys.

use std::rc::Rc;

use indexmap::IndexMap;

use crate::ast::{Expr, Marker, MergeSpec};
use crate::convert::{embedded_dynaml, interpolated_string, is_insert_key, template_string};
use crate::eval::{
    Engine, Env, PathElem, R, Scope, Stop, TemplateValue, element_names, eval, marker_flags,
    path_text, template_expr_node, unsupported,
};
use crate::node::{Dynaml, Flags, Node, Val};

/// An expression that could not be evaluated, with where it stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Issue {
    /// The node's path in the document, e.g. `deployItems.[0].config.image`.
    pub path: String,
    /// The expression text between `((` and `))`.
    pub expression: String,
    /// Why it has no value.
    pub message: String,
    pending: bool,
}

/// Why a document could not be evaluated.
pub(crate) enum FlowError {
    Unresolved(Vec<Issue>),
    Limit(String),
}

#[derive(Default)]
struct Pass {
    issues: Vec<Issue>,
    progress: bool,
}

impl Pass {
    fn issue(&mut self, env: &Env, d: &Dynaml, stop: &Stop) {
        let (message, pending) = match stop {
            Stop::Pending(m) => (m.clone(), true),
            Stop::Fail(m) | Stop::Limit(m) => (m.clone(), false),
        };
        self.issues.push(Issue {
            path: path_text(&env.path),
            expression: d.source.clone(),
            message,
            pending,
        });
    }
}

/// Evaluates a whole document: `env` gives the outer scopes (none for a top-level document,
/// the caller's for a template instantiation).
pub(crate) fn run(
    eng: &Engine,
    outer: Option<&Env>,
    node: Node,
    stubs: bool,
) -> Result<Node, FlowError> {
    let mut cur = if stubs && !eng.stubs.is_empty() {
        overridden(eng, &node, &mut Vec::new())
    } else {
        node
    };
    let mut still_open: Vec<Issue> = Vec::new();
    for _ in 0..eng.limits.max_passes {
        let env = match outer {
            Some(o) => o.clone(),
            None => Env {
                root: cur.clone(),
                scopes: None,
                locals: None,
                path: Rc::new(Vec::new()),
                self_ref: None,
                depth: 0,
            },
        };
        let mut pass = Pass::default();
        let next = flow_node(eng, &env, &cur, &mut pass, stubs).map_err(FlowError::Limit)?;
        if !next.unresolved() {
            return Ok(next);
        }
        if !pass.progress {
            return Err(FlowError::Unresolved(pass.issues));
        }
        cur = next;
        still_open = pass.issues;
    }
    // Name where the evaluation was still going on, so that the author finds the loop.
    let open = still_open
        .iter()
        .take(3)
        .map(|i| format!("{}: (( {} ))", i.path, i.expression))
        .collect::<Vec<_>>()
        .join(", ");
    let open = if open.is_empty() {
        String::new()
    } else {
        format!(" (still open: {open})")
    };
    Err(FlowError::Limit(format!(
        "evaluation did not settle within {} passes{open}",
        eng.limits.max_passes
    )))
}

/// A template instantiation or parsed document inside an expression.
pub(crate) fn nested(eng: &Engine, env: &Env, node: Node) -> R {
    match run(eng, Some(env), node, false) {
        Ok(n) => Ok(n),
        Err(FlowError::Limit(m)) => Err(Stop::Limit(m)),
        Err(FlowError::Unresolved(issues)) => {
            let text = issues
                .iter()
                .map(|i| format!("{}: (( {} )): {}", i.path, i.expression, i.message))
                .collect::<Vec<_>>()
                .join("; ");
            if issues.iter().any(|i| i.pending) {
                Err(Stop::Pending(text))
            } else {
                Err(Stop::Fail(text))
            }
        }
    }
}

/// Whether a map's insert is `merge none`, which keeps stubs away from the map.
fn merges_none(m: &IndexMap<String, Node>) -> bool {
    insert_entry(m).is_some_and(|(_, v)| match &v.val {
        Val::Expr(d) => matches!(&d.parsed, Ok(Expr::Merge(MergeSpec { redirect: Some(p), .. })) if p.is_empty()),
        _ => false,
    })
}

/// The template with the plain values that stubs provide already in place, so that
/// references see the stubs' values from the first pass on.
fn overridden(eng: &Engine, node: &Node, path: &mut Vec<PathElem>) -> Node {
    match &node.val {
        Val::Map(m) if !merges_none(m) => {
            let mut out = IndexMap::with_capacity(m.len());
            for (k, v) in m.iter() {
                path.push(PathElem::Key(k.clone()));
                out.insert(k.clone(), overridden(eng, v, path));
                path.pop();
            }
            Node::map(out).flagged(node.flags)
        }
        Val::List(l) => {
            let mut out = Vec::with_capacity(l.len());
            for ((i, v), name) in l.iter().enumerate().zip(list_names(l)) {
                path.push(PathElem::Index(i, name));
                out.push(overridden(eng, v, path));
                path.pop();
            }
            Node::list(out).flagged(node.flags)
        }
        Val::Map(_) | Val::Expr(_) => node.clone(),
        _ => match eng.find_in_stubs(path) {
            Some(s) if !node.flags.has(Flags::MERGED) => Node {
                val: s.val,
                flags: s.flags.markers().with(node.flags.markers()),
            },
            _ => node.clone(),
        },
    }
}

fn child(env: &Env, scopes: &Option<Rc<Scope>>, elem: PathElem) -> Env {
    let mut path = (*env.path).clone();
    path.push(elem);
    Env {
        root: env.root.clone(),
        scopes: scopes.clone(),
        locals: env.locals.clone(),
        path: Rc::new(path),
        self_ref: env.self_ref.clone(),
        depth: env.depth,
    }
}

/// A limit hit while evaluating `d` stops the evaluation; its message names the node's path
/// and the expression, so that the author finds the runaway part of the template.
fn limit(env: &Env, d: &Dynaml, stop: Stop) -> Result<(), String> {
    match stop {
        Stop::Limit(m) => Err(format!("{}: (( {} )): {m}", path_text(&env.path), d.source)),
        _ => Ok(()),
    }
}

fn flow_node(
    eng: &Engine,
    env: &Env,
    node: &Node,
    pass: &mut Pass,
    stubs: bool,
) -> Result<Node, String> {
    eng.step().map_err(|s| match s {
        Stop::Limit(m) | Stop::Fail(m) | Stop::Pending(m) if env.path.is_empty() => m,
        Stop::Limit(m) | Stop::Fail(m) | Stop::Pending(m) => {
            format!("{}: {m}", path_text(&env.path))
        }
    })?;
    let use_stubs = stubs && !eng.stubs.is_empty() && !node.flags.has(Flags::MERGED);
    if !node.unresolved() && (!use_stubs || eng.find_in_stubs(&env.path).is_none()) {
        return Ok(node.clone());
    }
    match &node.val {
        Val::Map(m) => flow_map(eng, env, node, m, pass, use_stubs),
        Val::List(l) => flow_list(eng, env, node, l, pass, use_stubs),
        Val::Expr(d) => flow_expr(eng, env, node, d, pass, use_stubs),
        _ => Ok(override_from_stub(eng, env, node.clone(), use_stubs)),
    }
}

/// A value that a stub provides for the same path replaces the template's value.
fn override_from_stub(eng: &Engine, env: &Env, node: Node, use_stubs: bool) -> Node {
    if !use_stubs || node.flags.has(Flags::MERGED) {
        return node;
    }
    match eng.find_in_stubs(&env.path) {
        Some(s) => Node {
            val: s.val,
            flags: s.flags.markers().with(node.flags.markers()),
        },
        None => node,
    }
}

fn flow_expr(
    eng: &Engine,
    env: &Env,
    node: &Node,
    d: &Rc<Dynaml>,
    pass: &mut Pass,
    use_stubs: bool,
) -> Result<Node, String> {
    let expr = match &d.parsed {
        Ok(e) => e,
        Err(msg) => {
            pass.issue(env, d, &Stop::Fail(msg.clone()));
            return Ok(node.clone());
        }
    };
    if let Some(message) = unsupported(expr) {
        pass.issue(env, d, &Stop::Fail(message));
        return Ok(node.clone());
    }
    if let Expr::Marked { markers, expr } = expr
        && markers.contains(&Marker::Template)
    {
        pass.progress = true;
        let flags = markers
            .iter()
            .fold(node.flags.markers(), |f, m| f.with(marker_flags(*m)));
        let body = match expr {
            Some(e) => template_expr_node(e),
            None => Node::null(),
        };
        return Ok(template(body, env).flagged(flags));
    }
    match eval(eng, env, expr) {
        Ok(v) => {
            pass.progress = true;
            if v.undefined() {
                return Ok(Node::null().flagged(Flags::UNDEFINED));
            }
            let flags = node.flags.markers().with(v.flags.markers());
            let merged = v.flags.has(Flags::MERGED);
            // A string result that is an expression again is evaluated again, as in spiff.
            let mut result = match &v.val {
                Val::Str(s) if embedded_dynaml(s).is_some() => template_string(s),
                Val::Str(s) if eng.interpolation => interpolated_string(s).unwrap_or(v),
                _ => v,
            };
            result.flags = result.flags.with(flags);
            if merged || matches!(expr, Expr::Prefer(_)) {
                return Ok(result.flagged(Flags::MERGED));
            }
            Ok(override_from_stub(eng, env, result, use_stubs))
        }
        Err(stop) => {
            pass.issue(env, d, &stop);
            limit(env, d, stop)?;
            Ok(node.clone())
        }
    }
}

fn template(body: Node, env: &Env) -> Node {
    Node::new(Val::Template(Rc::new(TemplateValue {
        node: body,
        scopes: env.scopes.clone(),
    })))
}

/// What an insert (`<<:`) entry contributes.
enum Insert {
    /// Nothing more to do: the entry disappears.
    Done,
    /// Entries to add where the map has none of its own.
    Entries(Node),
    /// The node is replaced as a whole (`merge replace`).
    Replace(Node),
    /// The whole node is undefined.
    Undefined,
    /// Not evaluated yet: the entry stays.
    Keep,
}

fn insert_value(
    eng: &Engine,
    env: &Env,
    node_path: &Env,
    d: &Dynaml,
    e: &Expr,
    pass: &mut Pass,
) -> Result<Insert, String> {
    if let Expr::Merge(spec) = e {
        return Ok(merge_insert(eng, node_path, d, spec, pass));
    }
    match eval(eng, env, e) {
        Ok(v) => {
            pass.progress = true;
            if v.undefined() {
                return Ok(Insert::Undefined);
            }
            Ok(match &v.val {
                Val::Null => Insert::Done,
                _ => Insert::Entries(v),
            })
        }
        Err(stop) => {
            pass.issue(env, d, &stop);
            limit(env, d, stop)?;
            Ok(Insert::Keep)
        }
    }
}

/// `<<: (( merge ))` and its forms: the stub's value at this path (or the redirected one).
fn merge_insert(eng: &Engine, env: &Env, d: &Dynaml, spec: &MergeSpec, pass: &mut Pass) -> Insert {
    let target: Vec<PathElem> = match &spec.redirect {
        Some(p) if p.is_empty() => {
            pass.progress = true;
            return Insert::Done;
        }
        Some(p) => p.iter().map(PathElem::from).collect(),
        None => env.path.to_vec(),
    };
    match eng.find_in_stubs(&target) {
        Some(s) => {
            pass.progress = true;
            let s = Node {
                val: s.val,
                flags: s.flags.markers().with(Flags::MERGED),
            };
            if spec.replace {
                Insert::Replace(s)
            } else {
                Insert::Entries(s)
            }
        }
        None if spec.required => {
            pass.issue(
                env,
                d,
                &Stop::Fail(format!("'{}' not found in any stub", path_text(&target))),
            );
            Insert::Keep
        }
        None => {
            pass.progress = true;
            Insert::Done
        }
    }
}

/// The insert entry of a map, if any: `<<` or `<<<`.
fn insert_entry(m: &IndexMap<String, Node>) -> Option<(&String, &Node)> {
    m.iter().find(|(k, _)| is_insert_key(k))
}

fn flow_map(
    eng: &Engine,
    env: &Env,
    node: &Node,
    map: &IndexMap<String, Node>,
    pass: &mut Pass,
    use_stubs: bool,
) -> Result<Node, String> {
    let scopes = Some(Rc::new(Scope {
        map: node.clone(),
        parent: env.scopes.clone(),
    }));
    // A map kept away from stubs (`merge none`) stays so in later passes.
    let mut flags = node.flags.markers().with(if node.flags.has(Flags::MERGED) {
        Flags::MERGED
    } else {
        Flags::default()
    });
    let mut inserted: Option<Node> = None;
    let mut keep_insert = false;
    let insert = insert_entry(map);
    if map.keys().filter(|k| is_insert_key(k)).count() > 1 {
        let d = Dynaml {
            source: "<<".into(),
            parsed: Err(String::new()),
        };
        pass.issue(
            env,
            &d,
            &Stop::Fail("multiple merge keys not allowed".into()),
        );
        return Ok(node.clone());
    }
    if let Some((key, value)) = insert
        && let Val::Expr(d) = &value.val
    {
        let insert_env = child(env, &scopes, PathElem::Key(key.clone()));
        let outcome = match &d.parsed {
            Err(msg) => {
                pass.issue(&insert_env, d, &Stop::Fail(msg.clone()));
                Insert::Keep
            }
            Ok(e) if unsupported(e).is_some() => {
                let message = unsupported(e).unwrap_or_default();
                pass.issue(&insert_env, d, &Stop::Fail(message));
                Insert::Keep
            }
            Ok(Expr::Marked { markers, expr }) => {
                flags = markers.iter().fold(flags, |f, m| f.with(marker_flags(*m)));
                if markers.contains(&Marker::Template) {
                    pass.progress = true;
                    let mut body: IndexMap<String, Node> = map
                        .iter()
                        .filter(|(k, _)| *k != key)
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect();
                    if let Some(e) = expr {
                        body.shift_insert(0, "<<".into(), template_expr_node(e));
                    }
                    return Ok(template(Node::map(body), env).flagged(flags));
                }
                match expr {
                    Some(e) => insert_value(eng, &insert_env, env, d, e, pass)?,
                    None => {
                        pass.progress = true;
                        Insert::Done
                    }
                }
            }
            Ok(e) => insert_value(eng, &insert_env, env, d, e, pass)?,
        };
        match outcome {
            Insert::Done => {}
            Insert::Entries(v) => match &v.val {
                Val::Map(_) => inserted = Some(v),
                _ => {
                    pass.issue(
                        &insert_env,
                        d,
                        &Stop::Fail(format!(
                            "require map value for '<<' insert, found '{}'",
                            v.type_name()
                        )),
                    );
                    keep_insert = true;
                }
            },
            Insert::Replace(v) => return Ok(v.flagged(flags)),
            Insert::Undefined => return Ok(Node::null().flagged(Flags::UNDEFINED)),
            Insert::Keep => keep_insert = true,
        }
    }
    let no_merge = merges_none(map);
    if no_merge {
        flags = flags.with(Flags::MERGED);
    }
    let use_stubs = use_stubs && !no_merge;
    let mut out = IndexMap::with_capacity(map.len());
    if let Some(Val::Map(ins)) = inserted.as_ref().map(|n| &n.val) {
        for (k, v) in ins.iter() {
            if !map.contains_key(k) && !v.undefined() {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    for (k, v) in map {
        if is_insert_key(k) {
            if keep_insert {
                out.insert(k.clone(), v.clone());
            }
            continue;
        }
        let c = flow_node(
            eng,
            &child(env, &scopes, PathElem::Key(k.clone())),
            v,
            pass,
            use_stubs,
        )?;
        if c.undefined() {
            continue;
        }
        out.insert(k.clone(), c);
    }
    Ok(Node::map(out).flagged(flags))
}

/// A list entry that is only an insert: `- <<: (( … ))`.
fn list_insert(e: &Node) -> Option<&Rc<Dynaml>> {
    let m = e.as_map()?;
    if m.len() != 1 {
        return None;
    }
    let (k, v) = m.iter().next()?;
    match (&v.val, is_insert_key(k)) {
        (Val::Expr(d), true) => Some(d),
        _ => None,
    }
}

/// The step names of a list's elements (see [`element_names`]); inserts go by index.
fn list_names(items: &[Node]) -> Vec<Option<String>> {
    let plain: Vec<&Node> = items.iter().filter(|e| list_insert(e).is_none()).collect();
    let mut names = element_names(&plain).into_iter();
    items
        .iter()
        .map(|e| match list_insert(e) {
            Some(_) => None,
            None => names.next().flatten(),
        })
        .collect()
}

fn flow_list(
    eng: &Engine,
    env: &Env,
    node: &Node,
    items: &[Node],
    pass: &mut Pass,
    use_stubs: bool,
) -> Result<Node, String> {
    let mut flags = node.flags.markers();
    let mut out = Vec::with_capacity(items.len());
    let mut names = list_names(items).into_iter();
    for (i, e) in items.iter().enumerate() {
        let name = names.next().flatten();
        if let Some(d) = list_insert(e) {
            let elem_env = child(env, &env.scopes, PathElem::Index(i, None));
            let expr = match &d.parsed {
                Ok(x) => x,
                Err(msg) => {
                    pass.issue(&elem_env, d, &Stop::Fail(msg.clone()));
                    out.push(e.clone());
                    continue;
                }
            };
            if let Some(message) = unsupported(expr) {
                pass.issue(&elem_env, d, &Stop::Fail(message));
                out.push(e.clone());
                continue;
            }
            let outcome = match expr {
                Expr::Marked { markers, expr } => {
                    flags = markers.iter().fold(flags, |f, m| f.with(marker_flags(*m)));
                    if markers.contains(&Marker::Template) {
                        pass.progress = true;
                        let body: Vec<Node> = items
                            .iter()
                            .enumerate()
                            .filter(|(j, _)| *j != i)
                            .map(|(_, n)| n.clone())
                            .collect();
                        return Ok(template(Node::list(body), env).flagged(flags));
                    }
                    match expr {
                        Some(x) => insert_value(eng, &elem_env, env, d, x, pass)?,
                        None => {
                            pass.progress = true;
                            Insert::Done
                        }
                    }
                }
                x => insert_value(eng, &elem_env, env, d, x, pass)?,
            };
            match outcome {
                Insert::Done => {}
                Insert::Entries(v) | Insert::Replace(v) => match &v.val {
                    Val::List(l) => {
                        out.extend(l.iter().filter(|n| !n.undefined()).cloned());
                        if let Err(stop) = eng.check_len(out.len(), "list") {
                            limit(&elem_env, d, stop)?;
                        }
                    }
                    _ => {
                        pass.issue(
                            &elem_env,
                            d,
                            &Stop::Fail(format!(
                                "require list value for '<<' insert in a list, found '{}'",
                                v.type_name()
                            )),
                        );
                        out.push(e.clone());
                    }
                },
                Insert::Undefined => return Ok(Node::null().flagged(Flags::UNDEFINED)),
                Insert::Keep => out.push(e.clone()),
            }
            continue;
        }
        let c = flow_node(
            eng,
            &child(env, &env.scopes, PathElem::Index(i, name)),
            e,
            pass,
            use_stubs,
        )?;
        if !c.undefined() {
            out.push(c);
        }
    }
    Ok(Node::list(out).flagged(flags))
}
