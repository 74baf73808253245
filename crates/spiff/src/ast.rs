//! The parsed form of a dynaml expression.

use std::rc::Rc;

/// One step of a reference path: a map key (or list entry name) or a literal list index.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Step {
    Key(String),
    Index(i64),
}

/// A dynaml expression.
#[derive(Clone, Debug)]
pub(crate) enum Expr {
    Nil,
    Undefined,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    /// A reference `a.b[1]`, or `.a.b` from the document root.
    Ref {
        absolute: bool,
        path: Vec<Step>,
    },
    /// `.[expr]`: an index on the document root.
    TopIndex(Vec<Arg>),
    List(Vec<Arg>),
    Map(Vec<(Expr, Expr)>),
    /// `[a .. b]`: a list of integers.
    Range(Option<Box<Expr>>, Option<Box<Expr>>),
    Grouped(Box<Expr>),
    /// A primary expression followed by field, index, slice, call and projection steps.
    Qualified(Box<Expr>, Vec<Qualifier>),
    /// `( name = value, … ) expr`: expr with extra local names.
    Scoped(Vec<(Expr, Expr)>, Box<Expr>),
    Lambda(Rc<LambdaDef>),
    /// `lambda expr`: a lambda from a value or from a string.
    LambdaRef(Box<Expr>),
    Merge(MergeSpec),
    Auto,
    Not(Box<Expr>),
    /// `*expr`: template instantiation.
    Substitution(Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `a || b` (first defined) and `a // b` (first defined and not nil).
    Or {
        a: Box<Expr>,
        b: Box<Expr>,
        valid: bool,
    },
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    Concat(Box<Expr>, Box<Expr>),
    Mapping {
        kind: MappingKind,
        to_map: bool,
        source: Box<Expr>,
        func: Box<LambdaOrExpr>,
    },
    Sum {
        source: Box<Expr>,
        initial: Box<Expr>,
        func: Box<LambdaOrExpr>,
    },
    Catch {
        expr: Box<Expr>,
        func: Box<LambdaOrExpr>,
    },
    Marked {
        markers: Vec<Marker>,
        expr: Option<Box<Expr>>,
    },
    Prefer(Box<Expr>),
}

/// The binary operators with numeric or comparison semantics.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    LogOr,
    LogAnd,
}

impl BinOp {
    pub(crate) fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Mod => "%",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::LogOr => "-or",
            BinOp::LogAnd => "-and",
        }
    }
}

/// `map`, `select` and `filter` comprehensions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum MappingKind {
    Map,
    Select,
}

/// A steps after a primary expression.
#[derive(Clone, Debug)]
pub(crate) enum Qualifier {
    Field(Step),
    Index(Vec<Arg>),
    Slice(Option<Expr>, Option<Expr>),
    Call(Vec<Arg>),
    Curry(Vec<Arg>),
    /// `.[*]` or a slice, with the steps applied to each element.
    Projection(Option<(Option<Expr>, Option<Expr>)>, Vec<Qualifier>),
}

/// A call or list argument: optionally named, optionally expanded with `...`.
#[derive(Clone, Debug)]
pub(crate) struct Arg {
    pub(crate) name: Option<String>,
    pub(crate) expr: Expr,
    pub(crate) expand: bool,
}

/// An inline lambda or an expression giving one, as in `map[list|x|->…]` or `map[list|f]`.
#[derive(Clone, Debug)]
pub(crate) enum LambdaOrExpr {
    Lambda(Rc<LambdaDef>),
    Expr(Expr),
}

/// A lambda as written: `|x, y=1, z...|->body`.
#[derive(Debug)]
pub(crate) struct LambdaDef {
    pub(crate) params: Vec<Param>,
    pub(crate) varargs: bool,
    pub(crate) body: Expr,
    pub(crate) source: String,
}

/// One lambda parameter with its optional default.
#[derive(Clone, Debug)]
pub(crate) struct Param {
    pub(crate) name: String,
    pub(crate) default: Option<Expr>,
}

/// The forms of `merge`.
#[derive(Clone, Debug)]
pub(crate) struct MergeSpec {
    pub(crate) replace: bool,
    pub(crate) required: bool,
    pub(crate) on: Option<String>,
    /// `merge foo.bar`: merge another stub path; `merge none` has an empty path.
    pub(crate) redirect: Option<Vec<Step>>,
}

/// Node markers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Marker {
    Template,
    Temporary,
    Local,
    State,
    Inject,
    Default,
    Dynamic,
}
