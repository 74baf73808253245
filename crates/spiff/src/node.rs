//! Document nodes: the values of a spiff document while it is evaluated.

use std::rc::Rc;

use indexmap::IndexMap;

use crate::ast::Expr;
use crate::eval::{LambdaValue, TemplateValue};

/// Node markers and states carried beside a value.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub(crate) struct Flags(u8);

impl Flags {
    /// `&temporary`: usable while evaluating, dropped from the output.
    pub(crate) const TEMPORARY: Flags = Flags(1);
    /// `&local`: like temporary, and dropped from stubs before merging.
    pub(crate) const LOCAL: Flags = Flags(2);
    /// `&state`: kept in the state document.
    pub(crate) const STATE: Flags = Flags(4);
    /// `~~`: the node counts as absent.
    pub(crate) const UNDEFINED: Flags = Flags(8);
    /// The value still holds an unevaluated expression somewhere below it.
    pub(crate) const UNRESOLVED: Flags = Flags(16);
    /// The value came from a `merge`: stubs no longer override it.
    pub(crate) const MERGED: Flags = Flags(32);

    pub(crate) fn has(self, other: Flags) -> bool {
        self.0 & other.0 == other.0 && other.0 != 0
    }

    pub(crate) fn with(self, other: Flags) -> Flags {
        Flags(self.0 | other.0)
    }

    pub(crate) fn without(self, other: Flags) -> Flags {
        Flags(self.0 & !other.0)
    }

    /// The markers that a value keeps when it moves to another node.
    pub(crate) fn markers(self) -> Flags {
        Flags(self.0 & (Self::TEMPORARY.0 | Self::LOCAL.0 | Self::STATE.0))
    }
}

/// A dynaml expression as it stands in the document, with its source text for messages.
#[derive(Debug)]
pub(crate) struct Dynaml {
    pub(crate) source: String,
    pub(crate) parsed: Result<Expr, String>,
}

/// A value of the document or of an expression.
#[derive(Clone, Debug)]
pub(crate) enum Val {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Rc<str>),
    List(Rc<Vec<Node>>),
    Map(Rc<IndexMap<String, Node>>),
    /// An expression not evaluated yet.
    Expr(Rc<Dynaml>),
    Lambda(Rc<LambdaValue>),
    Template(Rc<TemplateValue>),
}

/// A value with its flags.
#[derive(Clone, Debug)]
pub(crate) struct Node {
    pub(crate) val: Val,
    pub(crate) flags: Flags,
}

impl Node {
    pub(crate) fn new(val: Val) -> Node {
        let flags = match &val {
            Val::Expr(_) => Flags::UNRESOLVED,
            Val::List(items) if items.iter().any(Node::unresolved) => Flags::UNRESOLVED,
            Val::Map(map) if map.values().any(Node::unresolved) => Flags::UNRESOLVED,
            _ => Flags::default(),
        };
        Node { val, flags }
    }

    pub(crate) fn null() -> Node {
        Node::new(Val::Null)
    }

    pub(crate) fn str(s: impl Into<Rc<str>>) -> Node {
        Node::new(Val::Str(s.into()))
    }

    pub(crate) fn int(i: i64) -> Node {
        Node::new(Val::Int(i))
    }

    pub(crate) fn bool(b: bool) -> Node {
        Node::new(Val::Bool(b))
    }

    pub(crate) fn list(items: Vec<Node>) -> Node {
        Node::new(Val::List(Rc::new(items)))
    }

    pub(crate) fn map(map: IndexMap<String, Node>) -> Node {
        Node::new(Val::Map(Rc::new(map)))
    }

    /// The same value with further flags.
    pub(crate) fn flagged(mut self, flags: Flags) -> Node {
        self.flags = self.flags.with(flags);
        self
    }

    /// Whether an unevaluated expression remains in this value.
    pub(crate) fn unresolved(&self) -> bool {
        self.flags.has(Flags::UNRESOLVED)
    }

    pub(crate) fn undefined(&self) -> bool {
        self.flags.has(Flags::UNDEFINED)
    }

    pub(crate) fn as_str(&self) -> Option<&str> {
        match &self.val {
            Val::Str(s) => Some(s),
            _ => None,
        }
    }

    pub(crate) fn as_map(&self) -> Option<&IndexMap<String, Node>> {
        match &self.val {
            Val::Map(m) => Some(m),
            _ => None,
        }
    }

    pub(crate) fn is_null(&self) -> bool {
        matches!(self.val, Val::Null)
    }

    /// The type name spiff uses in messages (`type()` function).
    pub(crate) fn type_name(&self) -> &'static str {
        match &self.val {
            Val::Null => "nil",
            Val::Bool(_) => "bool",
            Val::Int(_) => "int",
            Val::Float(_) => "float",
            Val::Str(_) => "string",
            Val::List(_) => "list",
            Val::Map(_) => "map",
            Val::Expr(_) => "expression",
            Val::Lambda(_) => "lambda",
            Val::Template(_) => "template",
        }
    }
}

/// Value equality as dynaml's `==`: strings equal the text of numbers and booleans.
pub(crate) fn equals(a: &Node, b: &Node) -> bool {
    match (&a.val, &b.val) {
        (Val::Null, Val::Null) => true,
        (Val::Str(x), Val::Str(y)) => x == y,
        (Val::Str(x), Val::Int(i)) | (Val::Int(i), Val::Str(x)) => **x == *i.to_string(),
        (Val::Str(x), Val::Bool(v)) | (Val::Bool(v), Val::Str(x)) => **x == *v.to_string(),
        (Val::Int(x), Val::Int(y)) => x == y,
        (Val::Float(x), Val::Float(y)) => x == y,
        (Val::Int(x), Val::Float(y)) | (Val::Float(y), Val::Int(x)) => (*x as f64) == *y,
        (Val::Bool(x), Val::Bool(y)) => x == y,
        (Val::List(x), Val::List(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| equals(p, q))
        }
        (Val::Map(x), Val::Map(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| equals(v, w)))
        }
        (Val::Lambda(x), Val::Lambda(y)) => Rc::ptr_eq(x, y) || x.to_string() == y.to_string(),
        (Val::Lambda(x), Val::Str(s)) | (Val::Str(s), Val::Lambda(x)) => x.to_string() == **s,
        _ => false,
    }
}

/// Dynaml truth: false, 0, nil and empty strings, lists and maps are false.
pub(crate) fn truthy(n: &Node) -> bool {
    match &n.val {
        Val::Null => false,
        Val::Bool(b) => *b,
        Val::Int(i) => *i != 0,
        Val::Float(f) => *f != 0.0,
        Val::Str(s) => !s.is_empty(),
        Val::List(l) => !l.is_empty(),
        Val::Map(m) => !m.is_empty(),
        _ => true,
    }
}
