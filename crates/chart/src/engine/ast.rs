//! The parse tree of a template, with Go's node kinds and Go's way of printing nodes in error
//! messages (`at <.Values.foo>`).

use std::fmt;

use smallvec::SmallVec;

use crate::engine::value::Value;

/// A constant written in a template. Parse trees hold these rather than [`Value`]s (whose
/// strings are `Rc`) so that files can be parsed on several threads; each template turns its
/// file's constants into values once, and constants refer to them by index.
#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    /// `true` or `false`.
    Bool(bool),
    /// An integer or character constant (Go `int`).
    Int(i64),
    /// A floating-point constant.
    Float(f64),
    /// A quoted or raw string with escapes (or, raw, carriage returns) decoded.
    Str(String),
    /// A quoted or raw string whose value is its text between the quotes: that range of the
    /// source, not a copy (dashboards embedded as raw strings are tens of kilobytes).
    Verbatim(Span),
}

impl Literal {
    /// The value the executor works with; `text` is the source the literal was parsed from.
    pub fn to_value(&self, text: &str) -> Value {
        match self {
            Literal::Bool(b) => Value::Bool(*b),
            Literal::Int(i) => Value::Int(*i),
            Literal::Float(f) => Value::Float(*f),
            Literal::Str(s) => Value::str(s.as_str()),
            Literal::Verbatim(span) => Value::str(span.of(text)),
        }
    }
}

/// A sequence of nodes (a template body or a branch).
#[derive(Debug, Default)]
pub struct List {
    /// The nodes in order.
    pub nodes: Vec<Node>,
}

/// A statement-level node. Actions, branches and template calls are boxed, so that a node is
/// no larger than a text span: a chart's templates hold tens of thousands of nodes, about half
/// of them text, and lists of inline pipelines (160 bytes each) took several times the memory
/// of the templates' text.
#[derive(Debug)]
pub enum Node {
    /// Plain text, printed as is: this part of the template's source (text is never
    /// rewritten, only trimmed, so trees need no copy of it).
    Text(Span),
    /// `{{pipeline}}`: prints the value unless the pipeline declares variables.
    Action(Box<Pipe>),
    /// `{{if}}`, `{{with}}` or `{{range}}`.
    Branch(Box<Branch>),
    /// `{{template "name" pipeline}}` (also what `{{block}}` leaves in place).
    Template(Box<TemplateCall>),
    /// `{{break}}`.
    Break,
    /// `{{continue}}`.
    Continue,
}

/// Which control structure a [`Branch`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BranchKind {
    /// `if`.
    If,
    /// `with`.
    With,
    /// `range`.
    Range,
}

/// `{{if p}}list{{else}}else_list{{end}}` and its `with`/`range` siblings.
#[derive(Debug)]
pub struct Branch {
    /// The kind.
    pub kind: BranchKind,
    /// The condition or ranged value.
    pub pipe: Pipe,
    /// Executed when true (or for each element).
    pub list: List,
    /// Executed otherwise (`{{else}}`), if present.
    pub else_list: Option<List>,
}

/// `{{template "name" pipeline}}`.
#[derive(Debug)]
pub struct TemplateCall {
    /// Byte offset of the name token.
    pub pos: u32,
    /// The called template's name.
    pub name: String,
    /// The new dot, if given.
    pub pipe: Option<Pipe>,
}

/// A byte range of the template's source. Names and spellings in the tree are ranges of the
/// text it was parsed from rather than copies: a chart's templates hold tens of thousands of
/// them, and allocating and freeing each was a large part of parsing. Offsets in a tree are 32
/// bits (the parser refuses larger texts).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    /// Offset of the first byte.
    pub start: u32,
    /// Offset after the last byte.
    pub end: u32,
}

impl Span {
    /// The span's text in `text`, the source the tree was parsed from.
    pub fn of(self, text: &str) -> &str {
        &text[self.start as usize..self.end as usize]
    }
}

/// The names of a field chain's text: `.A.B` gives `A`, `B`; a variable's `$x.A` gives `$x`,
/// `A` (a chain's tokens are adjacent, so its text is the names joined by dots).
pub fn chain_names(text: &str) -> ChainNames<'_> {
    ChainNames {
        rest: Some(text.strip_prefix('.').unwrap_or(text)),
    }
}

/// The names of a field chain, from either end. Chains are a few short names, evaluated at
/// every execution of their action: a byte scan finds the dots in fewer steps than the
/// searcher behind `str::split`, which showed in profiles of a large chart's render.
pub struct ChainNames<'a> {
    /// What is left of the chain; `None` once every name has been taken.
    rest: Option<&'a str>,
}

impl<'a> Iterator for ChainNames<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let rest = self.rest?;
        match rest.bytes().position(|b| b == b'.') {
            Some(dot) => {
                self.rest = Some(&rest[dot + 1..]);
                Some(&rest[..dot])
            }
            None => self.rest.take(),
        }
    }
}

impl<'a> DoubleEndedIterator for ChainNames<'a> {
    fn next_back(&mut self) -> Option<&'a str> {
        let rest = self.rest?;
        match rest.bytes().rposition(|b| b == b'.') {
            Some(dot) => {
                self.rest = Some(&rest[..dot]);
                Some(&rest[dot + 1..])
            }
            None => self.rest.take(),
        }
    }
}

/// A pipeline: optional variable declarations and commands joined by `|`.
#[derive(Debug)]
pub struct Pipe {
    /// Byte offset of the first token.
    pub pos: u32,
    /// Whether the variables are assigned (`=`) rather than declared (`:=`).
    pub is_assign: bool,
    /// The variables declared or assigned.
    pub decl: Vec<Span>,
    /// The commands; each one's result is the next one's last argument.
    pub cmds: SmallVec<[Command; 1]>,
}

/// One command of a pipeline: a function or value with arguments.
#[derive(Debug)]
pub struct Command {
    /// Byte offset of the first word.
    pub pos: u32,
    /// The operands; the first is what gets called.
    pub args: SmallVec<[Arg; 2]>,
}

/// An operand.
#[derive(Debug)]
pub enum Arg {
    /// `.A.B`.
    Field {
        /// Offset of the node (Go puts a chain at its second field).
        pos: u32,
        /// The chain's text, `.A.B` (see [`chain_names`]).
        names: Span,
    },
    /// `$x.A.B`.
    Variable {
        /// Offset of the node.
        pos: u32,
        /// The chain's text, `$x.A.B`: the variable, then field names.
        names: Span,
    },
    /// A function name.
    Identifier {
        /// Offset.
        pos: u32,
        /// The name.
        name: Span,
    },
    /// `.`.
    Dot(u32),
    /// `nil`.
    Nil(u32),
    /// A constant: bool, number or string, with its source text.
    Constant {
        /// Offset.
        pos: u32,
        /// Its index among the constants of the parsed file.
        index: u32,
        /// The source spelling (Go prints it in errors).
        source: Span,
    },
    /// `(pipeline)`.
    Pipe(Box<Pipe>),
    /// `(pipeline).A.B` or `func.A` chains on a non-field operand.
    Chain {
        /// Offset of the first field.
        pos: u32,
        /// The operand whose result the fields apply to.
        node: Box<Arg>,
        /// The fields' text, `.A.B`.
        fields: Span,
    },
}

impl Arg {
    /// The byte offset Go reports for this operand.
    pub fn pos(&self) -> u32 {
        match self {
            Arg::Field { pos, .. }
            | Arg::Variable { pos, .. }
            | Arg::Identifier { pos, .. }
            | Arg::Dot(pos)
            | Arg::Nil(pos)
            | Arg::Constant { pos, .. }
            | Arg::Chain { pos, .. } => *pos,
            Arg::Pipe(pipe) => pipe.pos,
        }
    }
}

/// A node printed as Go prints it in error messages; `text` is the source the tree was parsed
/// from.
pub struct Shown<'a, T> {
    node: &'a T,
    text: &'a str,
}

/// Nodes that print themselves as Go's `String` methods do, given their source.
pub trait Show: Sized {
    /// This node with the source it was parsed from, ready to print.
    fn show<'a>(&'a self, text: &'a str) -> Shown<'a, Self> {
        Shown { node: self, text }
    }
}

impl Show for Arg {}
impl Show for Command {}
impl Show for Pipe {}
impl Show for TemplateCall {}

impl fmt::Display for Shown<'_, Arg> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = self.text;
        match self.node {
            Arg::Field { names: span, .. }
            | Arg::Variable { names: span, .. }
            | Arg::Identifier { name: span, .. }
            | Arg::Constant { source: span, .. } => f.write_str(span.of(text)),
            Arg::Dot(_) => f.write_str("."),
            Arg::Nil(_) => f.write_str("nil"),
            Arg::Pipe(pipe) => write!(f, "({})", pipe.show(text)),
            Arg::Chain { node, fields, .. } => {
                match node.as_ref() {
                    Arg::Pipe(pipe) => write!(f, "({})", pipe.show(text))?,
                    other => write!(f, "{}", other.show(text))?,
                }
                f.write_str(fields.of(text))
            }
        }
    }
}

impl fmt::Display for Shown<'_, Command> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, arg) in self.node.args.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{}", arg.show(self.text))?;
        }
        Ok(())
    }
}

impl fmt::Display for Shown<'_, Pipe> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pipe = self.node;
        if !pipe.decl.is_empty() {
            let names: Vec<&str> = pipe.decl.iter().map(|n| n.of(self.text)).collect();
            let op = if pipe.is_assign { "=" } else { ":=" };
            write!(f, "{} {op} ", names.join(", "))?;
        }
        for (i, cmd) in pipe.cmds.iter().enumerate() {
            if i > 0 {
                f.write_str(" | ")?;
            }
            write!(f, "{}", cmd.show(self.text))?;
        }
        Ok(())
    }
}

impl fmt::Display for Shown<'_, TemplateCall> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let call = self.node;
        let name = crate::engine::value::format::quote(&call.name);
        match &call.pipe {
            Some(pipe) => write!(f, "{{{{template {name} {}}}}}", pipe.show(self.text)),
            None => write!(f, "{{{{template {name}}}}}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chart's templates make tens of thousands of these (kube-prometheus-stack: 9,800 text
    /// nodes, 9,200 actions, 4,900 branches, 20,700 commands, 37,300 operands), so their size
    /// is most of a parse tree's memory: 32-bit offsets and untagged small vectors keep them at
    /// two thirds of what they were.
    #[test]
    fn tree_nodes_stay_small() {
        assert!(size_of::<Node>() <= 16, "{}", size_of::<Node>());
        assert!(size_of::<Arg>() <= 24, "{}", size_of::<Arg>());
        assert!(size_of::<Command>() <= 64, "{}", size_of::<Command>());
        assert!(size_of::<Pipe>() <= 104, "{}", size_of::<Pipe>());
        assert!(size_of::<Branch>() <= 160, "{}", size_of::<Branch>());
    }

    #[test]
    fn chain_names_come_from_either_end() {
        let names = |text| chain_names(text).collect::<Vec<_>>();
        assert_eq!(names(".A.B"), ["A", "B"]);
        assert_eq!(names("$x.A"), ["$x", "A"]);
        assert_eq!(names(".A"), ["A"]);
        assert_eq!(names(""), [""]);
        let mut chain = chain_names(".A.B.C");
        assert_eq!(chain.next_back(), Some("C"));
        assert_eq!(chain.next(), Some("A"));
        assert_eq!(chain.next_back(), Some("B"));
        assert_eq!((chain.next(), chain.next_back()), (None, None));
    }
}
