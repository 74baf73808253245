//! The builtin dynaml functions.

use std::rc::Rc;

use base64::Engine as _;

use crate::ast::{Arg, Expr};
use crate::convert;
use crate::eval::{Engine, Env, PathElem, R, Stop, eval, fail, simple_text};
use crate::flow;
use crate::node::{Node, Val, equals};

const BUILTINS: &[&str] = &[
    "format",
    "join",
    "split",
    "trim",
    "length",
    "keys",
    "contains",
    "base64",
    "base64_decode",
    "asjson",
    "asyaml",
    "parse",
    "element",
    "uniq",
    "error",
    "read",
    "lower",
    "upper",
    "type",
    "exec",
    "parseOCIRef",
    "ociRefRepo",
    "ociRefVersion",
    "compact",
    "reverse",
    "sort",
    "replace",
    "substr",
    "index",
    "lastindex",
    "makemap",
    "list_to_map",
    "integer",
    "string",
];

/// Whether `name` is a builtin function.
pub(crate) fn is_builtin(name: &str) -> bool {
    BUILTINS.contains(&name) || crate::semver::FUNCTIONS.contains(&name)
}

/// The functions that look at their arguments before (or instead of) evaluating them.
pub(crate) fn special(eng: &Engine, env: &Env, name: &str, args: &[Arg]) -> Option<R> {
    Some(match name {
        "defined" => {
            for a in args {
                match eval(eng, env, &a.expr) {
                    Ok(v) if v.undefined() => return Some(Ok(Node::bool(false))),
                    Ok(_) => {}
                    Err(Stop::Fail(_)) => return Some(Ok(Node::bool(false))),
                    Err(other) => return Some(Err(other)),
                }
            }
            Ok(Node::bool(true))
        }
        "valid" => {
            for a in args {
                match eval(eng, env, &a.expr) {
                    Ok(v) if v.undefined() || v.is_null() => return Some(Ok(Node::bool(false))),
                    Ok(_) => {}
                    Err(Stop::Fail(_)) => return Some(Ok(Node::bool(false))),
                    Err(other) => return Some(Err(other)),
                }
            }
            Ok(Node::bool(true))
        }
        "require" => {
            if args.len() != 1 {
                return Some(fail("one argument expected for 'require'"));
            }
            match eval(eng, env, &args[0].expr) {
                Ok(v) if !v.is_null() && !v.undefined() => Ok(v),
                Ok(_) | Err(Stop::Fail(_)) => fail("required expression undefined"),
                Err(other) => Err(other),
            }
        }
        "stub" => stub(eng, env, args),
        _ => return None,
    })
}

fn stub(eng: &Engine, env: &Env, args: &[Arg]) -> R {
    let path: Vec<PathElem> = match args {
        [] => env.path.to_vec(),
        [a] => match &a.expr {
            Expr::Ref { path, .. } => path.iter().map(PathElem::from).collect(),
            e => {
                let v = eval(eng, env, e)?;
                match v.as_str() {
                    Some(s) => s.split('.').map(|p| PathElem::Key(p.to_string())).collect(),
                    None => return fail("stub() requires a string or reference argument"),
                }
            }
        },
        _ => return fail("a maximum of one argument expected for 'stub'"),
    };
    match eng.find_in_stubs(&path) {
        Some(n) => Ok(n),
        None => fail(format!(
            "'{}' not found in any stub",
            crate::eval::path_text(&path)
        )),
    }
}

fn text_arg(args: &[Node], i: usize, name: &str) -> Result<String, Stop> {
    match args.get(i).and_then(simple_text) {
        Some(s) => Ok(s),
        None => fail(format!("argument {} of {name} must be a string", i + 1)),
    }
}

fn arity(args: &[Node], min: usize, max: usize, name: &str) -> Result<(), Stop> {
    if args.len() < min || args.len() > max {
        return fail(format!("wrong number of arguments for {name}"));
    }
    Ok(())
}

/// YAML text as spiff writes it (keys sorted).
fn yaml_text(n: &Node) -> Result<String, Stop> {
    let json = convert::to_json(n).map_err(Stop::Fail)?;
    serde_yaml_ng::to_string(&convert::sorted(&json)).map_err(|e| Stop::Fail(e.to_string()))
}

/// Calls a builtin with evaluated arguments.
pub(crate) fn builtin(eng: &Engine, env: &Env, name: &str, args: Vec<Node>) -> R {
    match name {
        "format" | "error" => {
            let text = format(&args)?;
            eng.check_str(text.len())?;
            if name == "error" {
                return fail(text);
            }
            Ok(Node::str(text))
        }
        "join" => {
            if args.is_empty() {
                return fail("join requires a separator");
            }
            let sep = text_arg(&args, 0, name)?;
            let mut parts = Vec::new();
            for a in &args[1..] {
                match &a.val {
                    Val::List(l) => {
                        for e in l.iter() {
                            match simple_text(e) {
                                Some(s) => parts.push(s),
                                None => {
                                    return fail(
                                        "elements of a list to join must be simple values",
                                    );
                                }
                            }
                        }
                    }
                    Val::Null => {}
                    _ => match simple_text(a) {
                        Some(s) => parts.push(s),
                        None => return fail("arguments to join must be simple values or lists"),
                    },
                }
            }
            let out = parts.join(&sep);
            eng.check_str(out.len())?;
            Ok(Node::str(out))
        }
        "split" => {
            arity(&args, 2, 3, name)?;
            let sep = text_arg(&args, 0, name)?;
            let s = text_arg(&args, 1, name)?;
            let n = match args.get(2).map(|n| &n.val) {
                Some(Val::Int(n)) => *n,
                Some(_) => return fail("third argument for split must be an integer"),
                None => -1,
            };
            let parts: Vec<Node> = if n < 0 {
                s.split(sep.as_str()).map(Node::str).collect()
            } else if n == 0 {
                Vec::new()
            } else {
                s.splitn(n as usize, sep.as_str()).map(Node::str).collect()
            };
            eng.check_len(parts.len(), "list")?;
            Ok(Node::list(parts))
        }
        "trim" => {
            arity(&args, 1, 2, name)?;
            let cut = match args.get(1) {
                Some(c) => text_arg(std::slice::from_ref(c), 0, name)?,
                None => " \t\n\r".to_string(),
            };
            let trim = |s: &str| s.trim_matches(|c| cut.contains(c)).to_string();
            match &args[0].val {
                Val::Str(s) => Ok(Node::str(trim(s))),
                Val::List(l) => Ok(Node::list(
                    l.iter()
                        .map(|e| simple_text(e).map(|s| Node::str(trim(&s))))
                        .collect::<Option<_>>()
                        .ok_or_else(|| Stop::Fail("trim requires string entries".into()))?,
                )),
                _ => fail("trim requires a string or list"),
            }
        }
        "length" => {
            arity(&args, 1, 1, name)?;
            match &args[0].val {
                Val::List(l) => Ok(Node::int(l.len() as i64)),
                Val::Map(m) => Ok(Node::int(m.len() as i64)),
                Val::Str(s) => Ok(Node::int(s.len() as i64)),
                _ => fail("invalid type for function length"),
            }
        }
        "keys" => {
            arity(&args, 1, 1, name)?;
            let Some(m) = args[0].as_map() else {
                return fail("map argument required for keys");
            };
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            Ok(Node::list(
                keys.into_iter().map(|k| Node::str(k.as_str())).collect(),
            ))
        }
        "contains" => {
            arity(&args, 2, 2, name)?;
            let found = match &args[0].val {
                Val::List(l) => l.iter().any(|e| equals(e, &args[1])),
                Val::Map(m) => args[1].as_str().is_some_and(|k| m.contains_key(k)),
                Val::Str(s) => match simple_text(&args[1]) {
                    Some(t) => s.contains(t.as_str()),
                    None => return fail("invalid type for check string"),
                },
                _ => return fail("list or string expected for argument one of function contains"),
            };
            Ok(Node::bool(found))
        }
        "base64" => {
            arity(&args, 1, 2, name)?;
            let s = text_arg(&args, 0, name)?;
            let enc = base64::engine::general_purpose::STANDARD.encode(s.as_bytes());
            match args.get(1).map(|n| &n.val) {
                Some(Val::Int(w)) if *w > 0 => {
                    let lines: Vec<String> = enc
                        .as_bytes()
                        .chunks(*w as usize)
                        .map(|c| String::from_utf8_lossy(c).into_owned())
                        .collect();
                    Ok(Node::str(lines.join("\n")))
                }
                _ => Ok(Node::str(enc)),
            }
        }
        "base64_decode" => {
            arity(&args, 1, 1, name)?;
            let s = text_arg(&args, 0, name)?;
            let clean: String = s.chars().filter(|c| !c.is_whitespace()).collect();
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(clean)
                .map_err(|e| Stop::Fail(format!("base64_decode: {e}")))?;
            match String::from_utf8(bytes) {
                Ok(t) => Ok(Node::str(t)),
                Err(_) => fail("base64_decode: the decoded data is no text"),
            }
        }
        "asjson" => {
            arity(&args, 1, 1, name)?;
            let json = convert::to_json(&args[0]).map_err(Stop::Fail)?;
            Ok(Node::str(convert::sorted(&json).to_string()))
        }
        "asyaml" => {
            arity(&args, 1, 1, name)?;
            Ok(Node::str(yaml_text(&args[0])?))
        }
        "parse" => {
            arity(&args, 1, 2, name)?;
            let s = text_arg(&args, 0, name)?;
            let mode = match args.get(1) {
                Some(m) => text_arg(std::slice::from_ref(m), 0, name)?,
                None => "import".into(),
            };
            parse_data(eng, env, "parse", s.as_bytes(), &mode)
        }
        "read" => {
            arity(&args, 1, 2, name)?;
            let file = text_arg(&args, 0, name)?;
            let mode = match args.get(1) {
                Some(m) => text_arg(std::slice::from_ref(m), 0, name)?,
                None if [".yml", ".yaml", ".json"].iter().any(|x| file.ends_with(x)) => {
                    "yaml".into()
                }
                None => "text".into(),
            };
            let Some(fs) = eng.fs else {
                return fail("read: no file system is available");
            };
            let data = fs
                .read(&file)
                .map_err(|e| Stop::Fail(format!("read: {e}")))?;
            parse_data(eng, env, &file, &data, &mode)
        }
        "element" => {
            arity(&args, 2, 2, name)?;
            let found = match (&args[0].val, &args[1].val) {
                (Val::List(l), Val::Int(i)) => usize::try_from(*i).ok().and_then(|i| l.get(i)),
                (Val::List(l), Val::Str(s)) => s.parse::<usize>().ok().and_then(|i| l.get(i)),
                (Val::Map(m), Val::Str(k)) => m.get(&**k),
                _ => return fail("invalid arguments for function element"),
            };
            match found {
                Some(n) => Ok(n.clone()),
                None => fail("element not found"),
            }
        }
        "uniq" => {
            arity(&args, 1, 1, name)?;
            let Val::List(l) = &args[0].val else {
                return fail("invalid type for function uniq");
            };
            let mut out: Vec<Node> = Vec::new();
            for e in l.iter() {
                if !out.iter().any(|o| equals(o, e)) {
                    out.push(e.clone());
                }
            }
            Ok(Node::list(out))
        }
        "lower" | "upper" => {
            arity(&args, 1, 1, name)?;
            let s = text_arg(&args, 0, name)?;
            Ok(Node::str(if name == "lower" {
                s.to_lowercase()
            } else {
                s.to_uppercase()
            }))
        }
        "type" => {
            arity(&args, 1, 1, name)?;
            Ok(Node::str(args[0].type_name()))
        }
        "exec" => fail("exec is not supported: templates cannot run commands"),
        "parseOCIRef" | "ociRefRepo" | "ociRefVersion" => {
            arity(&args, 1, 1, name)?;
            let r = text_arg(&args, 0, name)?;
            let (repo, version) = crate::oci::parse_oci_ref(&r).map_err(Stop::Fail)?;
            Ok(match name {
                "parseOCIRef" => Node::list(vec![Node::str(repo), Node::str(version)]),
                "ociRefRepo" => Node::str(repo),
                _ => Node::str(version),
            })
        }
        "compact" | "reverse" | "sort" => {
            arity(&args, 1, 1, name)?;
            let Val::List(l) = &args[0].val else {
                return fail(format!("{name} requires a list"));
            };
            let mut out: Vec<Node> = l.to_vec();
            match name {
                "compact" => out.retain(|n| {
                    !(n.is_null()
                        || n.as_str() == Some("")
                        || matches!(&n.val, Val::List(x) if x.is_empty()))
                }),
                "reverse" => out.reverse(),
                _ => {
                    if out.iter().all(|n| matches!(n.val, Val::Int(_))) {
                        out.sort_by_key(|n| match n.val {
                            Val::Int(i) => i,
                            _ => 0,
                        });
                    } else if out.iter().all(|n| n.as_str().is_some()) {
                        out.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
                    } else {
                        return fail("sort requires a list of integers or of strings");
                    }
                }
            }
            Ok(Node::list(out))
        }
        "replace" => {
            arity(&args, 3, 4, name)?;
            let (s, old, new) = (
                text_arg(&args, 0, name)?,
                text_arg(&args, 1, name)?,
                text_arg(&args, 2, name)?,
            );
            let out = match args.get(3).map(|n| &n.val) {
                Some(Val::Int(n)) if *n >= 0 => s.replacen(old.as_str(), &new, *n as usize),
                _ => s.replace(old.as_str(), &new),
            };
            eng.check_str(out.len())?;
            Ok(Node::str(out))
        }
        "substr" => {
            arity(&args, 2, 3, name)?;
            let s: Vec<char> = text_arg(&args, 0, name)?.chars().collect();
            let len = s.len() as i64;
            let pos = |n: Option<&Node>, dflt: i64| -> Result<i64, Stop> {
                match n.map(|n| &n.val) {
                    None => Ok(dflt),
                    Some(Val::Int(i)) if *i < 0 => Ok(len + i),
                    Some(Val::Int(i)) => Ok(*i),
                    Some(_) => fail("substr positions must be integers"),
                }
            };
            let (from, to) = (pos(args.get(1), 0)?, pos(args.get(2), len)?);
            if from < 0 || to > len || from > to {
                return fail(format!("substr positions {from}..{to} out of range"));
            }
            Ok(Node::str(
                s[from as usize..to as usize].iter().collect::<String>(),
            ))
        }
        "index" | "lastindex" => {
            arity(&args, 2, 2, name)?;
            let found = match &args[0].val {
                Val::List(l) => {
                    let mut it = l.iter().enumerate().filter(|(_, e)| equals(e, &args[1]));
                    if name == "index" {
                        it.next()
                    } else {
                        it.next_back()
                    }
                    .map(|(i, _)| i as i64)
                }
                Val::Str(s) => {
                    let t = text_arg(&args, 1, name)?;
                    let at = if name == "index" {
                        s.find(&t)
                    } else {
                        s.rfind(&t)
                    };
                    at.map(|b| s[..b].chars().count() as i64)
                }
                _ => return fail(format!("{name} requires a list or string")),
            };
            Ok(Node::int(found.unwrap_or(-1)))
        }
        "makemap" => {
            if !args.len().is_multiple_of(2) {
                return fail("makemap requires key/value pairs");
            }
            let mut m = indexmap::IndexMap::new();
            for kv in args.chunks(2) {
                m.insert(text_arg(kv, 0, name)?, kv[1].clone());
            }
            Ok(Node::map(m))
        }
        "list_to_map" => {
            arity(&args, 1, 2, name)?;
            let key = match args.get(1) {
                Some(k) => text_arg(std::slice::from_ref(k), 0, name)?,
                None => "name".into(),
            };
            let Val::List(l) = &args[0].val else {
                return fail("list_to_map requires a list");
            };
            let mut m = indexmap::IndexMap::new();
            for e in l.iter() {
                let Some(fields) = e.as_map() else {
                    return fail("list_to_map requires a list of maps");
                };
                let Some(k) = fields.get(&key).and_then(simple_text) else {
                    return fail(format!("list entry without key field '{key}'"));
                };
                let rest: indexmap::IndexMap<String, Node> = fields
                    .iter()
                    .filter(|(f, _)| **f != key)
                    .map(|(f, v)| (f.clone(), v.clone()))
                    .collect();
                m.insert(k, Node::map(rest));
            }
            Ok(Node::map(m))
        }
        "integer" => {
            arity(&args, 1, 1, name)?;
            match &args[0].val {
                Val::Int(i) => Ok(Node::int(*i)),
                Val::Float(f) => Ok(Node::int(*f as i64)),
                Val::Bool(b) => Ok(Node::int(i64::from(*b))),
                Val::Str(s) => s
                    .trim()
                    .parse()
                    .map(Node::int)
                    .map_err(|_| Stop::Fail(format!("'{s}' is no integer"))),
                _ => fail("integer requires a simple value"),
            }
        }
        "string" => {
            arity(&args, 1, 1, name)?;
            Ok(Node::str(value_text(&args[0])?))
        }
        _ if crate::semver::FUNCTIONS.contains(&name) => crate::semver::call(name, &args),
        _ => fail(format!("unknown function '{name}'")),
    }
}

/// Text, YAML (evaluated as its own document) or a template, by mode.
fn parse_data(eng: &Engine, env: &Env, what: &str, data: &[u8], mode: &str) -> R {
    let text = || {
        String::from_utf8(data.to_vec())
            .map_err(|_| Stop::Fail(format!("{what}: the content is no text")))
    };
    match mode {
        "text" => Ok(Node::str(text()?)),
        "binary" => Ok(Node::str(
            base64::engine::general_purpose::STANDARD.encode(data),
        )),
        "yaml" | "import" | "template" => {
            let y: serde_yaml_ng::Value = serde_yaml_ng::from_str(&text()?)
                .map_err(|e| Stop::Fail(format!("error parsing {what}: {e}")))?;
            let node = convert::from_yaml(&y);
            if mode == "template" {
                return Ok(Node::new(Val::Template(Rc::new(
                    crate::eval::TemplateValue { node, scopes: None },
                ))));
            }
            let mut inner = env.clone();
            inner.root = node.clone();
            inner.scopes = None;
            inner.locals = None;
            inner.depth += 1;
            if inner.depth >= eng.limits.max_depth {
                return Err(Stop::Limit(
                    "documents read from documents nest too deeply".into(),
                ));
            }
            flow::nested(eng, &inner, node)
        }
        other => fail(format!("invalid mode '{other}' for {what}")),
    }
}

/// Go's `fmt.Sprintf` for the verbs templates use: %s %v %d %q %t %f %x %X %%.
fn format(args: &[Node]) -> Result<String, Stop> {
    if args.is_empty() {
        return fail("at least one argument required for 'format'");
    }
    let fmt = text_arg(args, 0, "format")?;
    let mut rest = args[1..].iter();
    let mut out = String::new();
    let mut chars = fmt.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut spec = String::new();
        while let Some(&d) = chars.peek() {
            if d.is_ascii_digit() || matches!(d, '-' | '+' | '.' | ' ' | '#') {
                spec.push(d);
                chars.next();
            } else {
                break;
            }
        }
        let Some(verb) = chars.next() else {
            out.push_str("%!(NOVERB)");
            break;
        };
        if verb == '%' {
            out.push('%');
            continue;
        }
        let Some(arg) = rest.next() else {
            out.push_str(&format!("%!{verb}(MISSING)"));
            continue;
        };
        let text = match (verb, &arg.val) {
            ('d', Val::Int(i)) => i.to_string(),
            ('x', Val::Int(i)) => format!("{i:x}"),
            ('X', Val::Int(i)) => format!("{i:X}"),
            ('f', Val::Float(f)) => match spec.split_once('.') {
                Some((_, p)) => format!("{f:.*}", p.parse().unwrap_or(6)),
                None => format!("{f:.6}"),
            },
            ('f', Val::Int(i)) => format!("%!f(int64={i})"),
            ('t', Val::Bool(b)) => b.to_string(),
            ('q', _) => format!("{:?}", value_text(arg)?),
            ('x', Val::Str(s)) => s.bytes().map(|b| format!("{b:02x}")).collect(),
            ('s' | 'v', _) => value_text(arg)?,
            (v, _) => format!("%!{v}({}={})", arg.type_name(), value_text(arg)?),
        };
        let width: usize = spec
            .trim_start_matches(['-', '+', ' ', '#', '0'])
            .split('.')
            .next()
            .and_then(|w| w.parse().ok())
            .unwrap_or(0);
        let pad = width.saturating_sub(text.chars().count());
        if spec.starts_with('-') {
            out.push_str(&text);
            out.push_str(&" ".repeat(pad));
        } else if spec.starts_with('0') && verb != 's' {
            out.push_str(&"0".repeat(pad));
            out.push_str(&text);
        } else {
            out.push_str(&" ".repeat(pad));
            out.push_str(&text);
        }
    }
    let extra: Vec<Node> = rest.cloned().collect();
    if !extra.is_empty() {
        let parts = extra
            .iter()
            .map(|a| Ok(format!("{}={}", a.type_name(), value_text(a)?)))
            .collect::<Result<Vec<_>, Stop>>()?;
        out.push_str(&format!("%!(EXTRA {})", parts.join(", ")));
    }
    Ok(out)
}

/// The text `%s`/`%v` prints: lists and maps as YAML, as spiff does.
fn value_text(n: &Node) -> Result<String, Stop> {
    Ok(match &n.val {
        Val::Null => "<nil>".into(),
        Val::Float(f) => f.to_string(),
        Val::List(_) | Val::Map(_) => yaml_text(n)?,
        Val::Lambda(l) => l.to_string(),
        _ => simple_text(n).unwrap_or_default(),
    })
}
