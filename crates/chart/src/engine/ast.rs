//! The parse tree of a template, with Go's node kinds and Go's way of printing nodes in error
//! messages (`at <.Values.foo>`).

use std::fmt;

use crate::value::Value;

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
    /// A quoted or raw string.
    Str(String),
}

impl Literal {
    /// The value the executor works with.
    pub fn to_value(&self) -> Value {
        match self {
            Literal::Bool(b) => Value::Bool(*b),
            Literal::Int(i) => Value::Int(*i),
            Literal::Float(f) => Value::Float(*f),
            Literal::Str(s) => Value::str(s.as_str()),
        }
    }
}

/// A sequence of nodes (a template body or a branch).
#[derive(Debug, Default)]
pub struct List {
    /// The nodes in order.
    pub nodes: Vec<Node>,
}

/// A statement-level node.
#[derive(Debug)]
pub enum Node {
    /// Plain text, printed as is: this byte range of the template's source (text is never
    /// rewritten, only trimmed, so trees need no copy of it).
    Text(std::ops::Range<usize>),
    /// `{{pipeline}}`: prints the value unless the pipeline declares variables.
    Action(Pipe),
    /// `{{if}}`, `{{with}}` or `{{range}}`.
    Branch(Box<Branch>),
    /// `{{template "name" pipeline}}` (also what `{{block}}` leaves in place).
    Template(TemplateCall),
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
    pub pos: usize,
    /// The called template's name.
    pub name: String,
    /// The new dot, if given.
    pub pipe: Option<Pipe>,
}

/// A pipeline: optional variable declarations and commands joined by `|`.
#[derive(Debug)]
pub struct Pipe {
    /// Byte offset of the first token.
    pub pos: usize,
    /// Whether the variables are assigned (`=`) rather than declared (`:=`).
    pub is_assign: bool,
    /// The variables declared or assigned, with their offsets.
    pub decl: Vec<(String, usize)>,
    /// The commands; each one's result is the next one's last argument.
    pub cmds: Vec<Command>,
}

/// One command of a pipeline: a function or value with arguments.
#[derive(Debug)]
pub struct Command {
    /// Byte offset of the first word.
    pub pos: usize,
    /// The operands; the first is what gets called.
    pub args: Vec<Arg>,
}

/// An operand.
#[derive(Debug)]
pub enum Arg {
    /// `.A.B`.
    Field {
        /// Offset of the node (Go puts a chain at its second field).
        pos: usize,
        /// Field names.
        names: Vec<String>,
    },
    /// `$x.A.B` (names[0] is the variable).
    Variable {
        /// Offset of the node.
        pos: usize,
        /// The variable then field names.
        names: Vec<String>,
    },
    /// A function name.
    Identifier {
        /// Offset.
        pos: usize,
        /// The name.
        name: String,
    },
    /// `.`.
    Dot(usize),
    /// `nil`.
    Nil(usize),
    /// A constant: bool, number or string, with its source text.
    Constant {
        /// Offset.
        pos: usize,
        /// Its index among the constants of the parsed file.
        index: usize,
        /// The source spelling (Go prints it in errors).
        source: String,
    },
    /// `(pipeline)`.
    Pipe(Box<Pipe>),
    /// `(pipeline).A.B` or `func.A` chains on a non-field operand.
    Chain {
        /// Offset of the first field.
        pos: usize,
        /// The operand whose result the fields apply to.
        node: Box<Arg>,
        /// The field names.
        fields: Vec<String>,
    },
}

impl Arg {
    /// The byte offset Go reports for this operand.
    pub fn pos(&self) -> usize {
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

impl fmt::Display for Arg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Arg::Field { names, .. } => {
                for name in names {
                    write!(f, ".{name}")?;
                }
                Ok(())
            }
            Arg::Variable { names, .. } => f.write_str(&names.join(".")),
            Arg::Identifier { name, .. } => f.write_str(name),
            Arg::Dot(_) => f.write_str("."),
            Arg::Nil(_) => f.write_str("nil"),
            Arg::Constant { source, .. } => f.write_str(source),
            Arg::Pipe(pipe) => write!(f, "({pipe})"),
            Arg::Chain { node, fields, .. } => {
                match node.as_ref() {
                    Arg::Pipe(pipe) => write!(f, "({pipe})")?,
                    other => write!(f, "{other}")?,
                }
                for field in fields {
                    write!(f, ".{field}")?;
                }
                Ok(())
            }
        }
    }
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, arg) in self.args.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{arg}")?;
        }
        Ok(())
    }
}

impl fmt::Display for Pipe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.decl.is_empty() {
            let names: Vec<&str> = self.decl.iter().map(|(n, _)| n.as_str()).collect();
            let op = if self.is_assign { "=" } else { ":=" };
            write!(f, "{} {op} ", names.join(", "))?;
        }
        for (i, cmd) in self.cmds.iter().enumerate() {
            if i > 0 {
                f.write_str(" | ")?;
            }
            write!(f, "{cmd}")?;
        }
        Ok(())
    }
}

impl fmt::Display for TemplateCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = crate::value::format::quote(&self.name);
        match &self.pipe {
            Some(pipe) => write!(f, "{{{{template {name} {pipe}}}}}"),
            None => write!(f, "{{{{template {name}}}}}"),
        }
    }
}
