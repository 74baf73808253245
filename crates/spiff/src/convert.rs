//! Conversions between YAML/JSON data and document nodes, and the output cleanup.

use std::rc::Rc;

use indexmap::IndexMap;
use serde_json::Value;

use crate::node::{Dynaml, Flags, Node, Val};
use crate::parser;

/// The expression text of a `(( … ))` string; `((! … ))` is an escaped literal.
pub(crate) fn embedded_dynaml(s: &str) -> Option<&str> {
    let inner = s.strip_prefix("((")?.strip_suffix("))")?;
    if inner.starts_with('!') {
        return None;
    }
    Some(inner)
}

/// A document node for a string of the template: an expression or a plain string.
pub(crate) fn template_string(s: &str) -> Node {
    match embedded_dynaml(s) {
        Some(src) => Node::new(Val::Expr(Rc::new(Dynaml {
            source: src.trim().to_string(),
            parsed: parser::parse(src),
        }))),
        None => Node::str(s),
    }
}

/// A string with interpolated parts as the expression it stands for, or `None`.
pub(crate) fn interpolated_string(s: &str) -> Option<Node> {
    if embedded_dynaml(s).is_some() {
        return None;
    }
    let src = crate::interpolation::expression(s)?;
    Some(Node::new(Val::Expr(Rc::new(Dynaml {
        parsed: parser::parse(&src),
        source: src,
    }))))
}

/// The template with its interpolated strings turned into expressions.
pub(crate) fn interpolated(n: &Node) -> Node {
    match &n.val {
        Val::Str(s) => match interpolated_string(s) {
            Some(e) => e.flagged(n.flags),
            None => n.clone(),
        },
        Val::List(l) => Node::list(l.iter().map(interpolated).collect()).flagged(n.flags),
        Val::Map(m) => Node::map(
            m.iter()
                .map(|(k, v)| (k.clone(), interpolated(v)))
                .collect(),
        )
        .flagged(n.flags),
        _ => n.clone(),
    }
}

/// Whether a map entry is a `<<`/`<<<` insert (its escaped forms `<<!`, `<<<!` are not).
pub(crate) fn is_insert_key(k: &str) -> bool {
    k == "<<" || k == "<<<"
}

/// An insert key escaped with `!` becomes a plain key without it.
fn unescape_key(k: &str) -> String {
    if k.starts_with("<<") && k.ends_with('!') && k.trim_start_matches('<').len() == 1 {
        return k[..k.len() - 1].to_string();
    }
    k.to_string()
}

fn yaml_key(k: &serde_yaml_ng::Value) -> String {
    match k {
        serde_yaml_ng::Value::String(s) => s.clone(),
        serde_yaml_ng::Value::Number(n) => n.to_string(),
        serde_yaml_ng::Value::Bool(b) => b.to_string(),
        serde_yaml_ng::Value::Null => "null".into(),
        other => serde_yaml_ng::to_string(other)
            .unwrap_or_default()
            .trim_end()
            .to_string(),
    }
}

/// A template node from parsed YAML: strings in `(( ))` become expressions.
pub(crate) fn from_yaml(v: &serde_yaml_ng::Value) -> Node {
    use serde_yaml_ng::Value as Y;
    match v {
        Y::Null => Node::null(),
        Y::Bool(b) => Node::bool(*b),
        Y::Number(n) => number(n.as_i64(), n.as_f64()),
        Y::String(s) => template_string(s),
        Y::Sequence(items) => Node::list(items.iter().map(from_yaml).collect()),
        Y::Mapping(m) => {
            let mut out = IndexMap::new();
            for (k, v) in m {
                let key = yaml_key(k);
                if is_insert_key(&key) && !matches!(v, Y::String(s) if embedded_dynaml(s).is_some())
                {
                    // A plain value under an insert key is ignored, as spiff does.
                    continue;
                }
                out.insert(unescape_key(&key), from_yaml(v));
            }
            Node::map(out)
        }
        Y::Tagged(t) => from_yaml(&t.value),
    }
}

fn number(i: Option<i64>, f: Option<f64>) -> Node {
    match (i, f) {
        (Some(i), _) => Node::int(i),
        (None, Some(f)) => Node::new(Val::Float(f)),
        _ => Node::null(),
    }
}

/// A template node from JSON: strings in `(( ))` become expressions.
pub(crate) fn template_from_json(v: &Value) -> Node {
    match v {
        Value::String(s) => template_string(s),
        Value::Array(items) => Node::list(items.iter().map(template_from_json).collect()),
        Value::Object(m) => {
            let mut out = IndexMap::new();
            for (k, v) in m {
                if is_insert_key(k)
                    && !matches!(v, Value::String(s) if embedded_dynaml(s).is_some())
                {
                    continue;
                }
                out.insert(unescape_key(k), template_from_json(v));
            }
            Node::map(out)
        }
        other => from_json(other),
    }
}

/// A data node from JSON: strings stay strings.
pub(crate) fn from_json(v: &Value) -> Node {
    match v {
        Value::Null => Node::null(),
        Value::Bool(b) => Node::bool(*b),
        Value::Number(n) => number(n.as_i64(), n.as_f64()),
        Value::String(s) => Node::str(s.as_str()),
        Value::Array(items) => Node::list(items.iter().map(from_json).collect()),
        Value::Object(m) => Node::map(m.iter().map(|(k, v)| (k.clone(), from_json(v))).collect()),
    }
}

/// JSON for a value handed to a registered function or encoded by `asjson`.
pub(crate) fn to_json(n: &Node) -> Result<Value, String> {
    Ok(match &n.val {
        Val::Null => Value::Null,
        Val::Bool(b) => Value::Bool(*b),
        Val::Int(i) => Value::from(*i),
        Val::Float(f) => serde_json::Number::from_f64(*f)
            .map(Value::Number)
            .ok_or_else(|| format!("float {f} has no JSON form"))?,
        Val::Str(s) => Value::String(s.to_string()),
        Val::List(l) => Value::Array(
            l.iter()
                .filter(|e| !e.undefined())
                .map(to_json)
                .collect::<Result<_, _>>()?,
        ),
        Val::Map(m) => {
            let mut out = serde_json::Map::new();
            for (k, v) in m.iter() {
                if !v.undefined() {
                    out.insert(k.clone(), to_json(v)?);
                }
            }
            Value::Object(out)
        }
        Val::Lambda(l) => Value::String(format!("(( {l} ))")),
        Val::Template(_) => return Err("a template value has no JSON form".into()),
        Val::Expr(d) => Value::String(format!("(( {} ))", d.source)),
    })
}

/// Counts output nodes against the limit while converting.
pub(crate) struct OutputBudget {
    pub(crate) left: usize,
    /// With interpolation, escaped parts `((! x ))` inside strings are unescaped too.
    pub(crate) interpolation: bool,
}

impl OutputBudget {
    fn take(&mut self) -> Result<(), String> {
        if self.left == 0 {
            return Err("the result exceeds the output size limit".into());
        }
        self.left -= 1;
        Ok(())
    }
}

fn removed(n: &Node) -> bool {
    n.flags.has(Flags::TEMPORARY) || n.flags.has(Flags::LOCAL) || n.undefined()
}

/// The final output: temporary and local nodes dropped, escapes removed, lambdas and
/// templates as text.
pub(crate) fn output(n: &Node, budget: &mut OutputBudget) -> Result<Value, String> {
    budget.take()?;
    Ok(match &n.val {
        Val::Str(s) => {
            let text = match s.strip_prefix("((!") {
                Some(rest) if s.ends_with("))") => format!("(({rest}"),
                _ if budget.interpolation => {
                    crate::interpolation::unescape(s).unwrap_or_else(|| s.to_string())
                }
                _ => s.to_string(),
            };
            Value::String(text)
        }
        Val::List(l) => {
            let mut out = Vec::with_capacity(l.len());
            for e in l.iter().filter(|e| !removed(e)) {
                out.push(output(e, budget)?);
            }
            Value::Array(out)
        }
        Val::Map(m) => {
            // Upstream spiff writes its result through Go's YAML encoder, which sorts keys.
            let mut entries: Vec<(&String, &Node)> =
                m.iter().filter(|(_, v)| !removed(v)).collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            let mut out = serde_json::Map::with_capacity(entries.len());
            for (k, v) in entries {
                out.insert(k.clone(), output(v, budget)?);
            }
            Value::Object(out)
        }
        Val::Template(t) => {
            let mut out = serde_json::Map::new();
            out.insert("<<<".into(), Value::String("(( &template ))".into()));
            match to_json(&t.node)? {
                Value::Object(m) => out.extend(m),
                other => {
                    out.insert("value".into(), other);
                }
            }
            Value::Object(out)
        }
        Val::Float(f) => match serde_json::Number::from_f64(*f) {
            Some(num) => Value::Number(num),
            None => Value::String(f.to_string()),
        },
        _ => to_json(n)?,
    })
}

/// The state document: the root's entries marked `&state`, without the others.
pub(crate) fn state(n: &Node, budget: &mut OutputBudget) -> Result<Value, String> {
    match &n.val {
        Val::Map(m) => {
            let mut entries: Vec<(&String, &Node)> = m
                .iter()
                .filter(|(_, v)| v.flags.has(Flags::STATE) && !removed(v))
                .collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            let mut out = serde_json::Map::with_capacity(entries.len());
            for (k, v) in entries {
                out.insert(k.clone(), output(v, budget)?);
            }
            Ok(Value::Object(out))
        }
        Val::List(l) => {
            let mut out = Vec::new();
            for v in l
                .iter()
                .filter(|v| v.flags.has(Flags::STATE) && !removed(v))
            {
                out.push(output(v, budget)?);
            }
            Ok(Value::Array(out))
        }
        _ => Ok(Value::Null),
    }
}

/// Map keys sorted, as Go's encoders write them.
pub(crate) fn sorted(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sorted(&m[k])))
                    .collect(),
            )
        }
        Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
        other => other.clone(),
    }
}
