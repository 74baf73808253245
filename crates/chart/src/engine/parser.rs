//! Builds parse trees from tokens with Go's grammar, checks (undefined functions and variables,
//! `break` outside `range`) and error messages (`template: NAME:LINE: unexpected …`).

use super::ast::{
    Arg, Branch, BranchKind, Command, List, Literal, Node, Pipe, Show, Span, TemplateCall,
};
use super::error::Error;
use super::lexer::{MAX_TEXT_LEN, Token, TokenKind, lex, offset};
use super::literal::{parse_number, unquote_char, unquote_string, verbatim_string};
use smallvec::SmallVec;

/// Deeper nesting of parentheses or control structures is refused, as Go refuses it, so a
/// hostile template cannot exhaust the stack.
const MAX_NESTING: usize = 10_000;

/// Stack left before nested parsing moves to a fresh stack segment, and that segment's size.
const STACK_RED_ZONE: usize = 64 * 1024;
const STACK_SEGMENT: usize = 1024 * 1024;

/// One named tree produced by parsing a file: the file itself or a `define`/`block` in it.
#[derive(Debug)]
pub struct ParsedTree {
    /// The template name (the file name for the top-level tree).
    pub name: String,
    /// The body.
    pub root: List,
}

/// A parsed file: its trees and the constants they refer to by index.
#[derive(Debug, Default)]
pub struct ParsedFile {
    /// The file's own tree first, then the templates it defines, in source order.
    pub trees: Vec<ParsedTree>,
    /// The constants of all the trees, indexed by [`Arg::Constant`]'s `index`.
    pub literals: Vec<Literal>,
}

/// Parses `text` of the file `parse_name`. The first tree is the file's own; the others are the
/// templates it defines, in source order. `has_function` says which function names exist.
pub fn parse(
    parse_name: &str,
    text: &str,
    has_function: &dyn Fn(&str) -> bool,
) -> Result<ParsedFile, Error> {
    if text.len() > MAX_TEXT_LEN {
        return Err(Error::parse(
            parse_name,
            1,
            format!(
                "template text of {} bytes is larger than the limit of {MAX_TEXT_LEN}",
                text.len()
            ),
        ));
    }
    let lexed = lex(text);
    let mut parser = Parser {
        tokens: lexed.tokens,
        lex_error: lexed.error,
        index: 0,
        text,
        parse_name,
        vars: vec!["$"],
        range_depth: 0,
        depth: 0,
        action_pos: None,
        last_pos: 0,
        has_function,
        defined: Vec::new(),
        literals: Vec::new(),
    };
    let root = parser.parse_top()?;
    super::lexer::recycle(std::mem::take(&mut parser.tokens));
    let mut trees = vec![ParsedTree {
        name: parse_name.to_string(),
        root,
    }];
    trees.append(&mut parser.defined);
    Ok(ParsedFile {
        trees,
        literals: parser.literals,
    })
}

/// What ended an item list.
enum ListEnd {
    End,
    Else,
}

struct Parser<'a> {
    tokens: Vec<Token<'a>>,
    /// The message of the lexing error that ends `tokens`, if any.
    lex_error: Option<String>,
    index: usize,
    text: &'a str,
    parse_name: &'a str,
    vars: Vec<&'a str>,
    range_depth: usize,
    depth: usize,
    action_pos: Option<u32>,
    last_pos: u32,
    has_function: &'a dyn Fn(&str) -> bool,
    defined: Vec<ParsedTree>,
    literals: Vec<Literal>,
}

type Parsed<T> = Result<T, Error>;

impl<'a> Parser<'a> {
    fn line_of(&self, pos: u32) -> usize {
        1 + self.text[..(pos as usize).min(self.text.len())]
            .bytes()
            .filter(|b| *b == b'\n')
            .count()
    }

    fn error(&self, message: impl Into<String>) -> Error {
        Error::parse(self.parse_name, self.line_of(self.last_pos), message.into())
    }

    fn token(&self, index: usize) -> &Token<'a> {
        let last = self.tokens.len() - 1;
        &self.tokens[index.min(last)]
    }

    fn next(&mut self) -> Token<'a> {
        let token = *self.token(self.index);
        self.index += 1;
        self.last_pos = token.pos;
        token
    }

    fn backup(&mut self) {
        self.index -= 1;
    }

    fn peek(&self) -> &Token<'a> {
        self.token(self.index)
    }

    fn next_non_space(&mut self) -> Token<'a> {
        loop {
            let token = self.next();
            if token.kind != TokenKind::Space {
                return token;
            }
        }
    }

    fn peek_non_space(&mut self) -> Token<'a> {
        let token = self.next_non_space();
        self.backup();
        token
    }

    /// Go's `unexpected`: lexing errors print as themselves, other tokens as "unexpected X in Y".
    fn unexpected(&self, token: &Token, context: &str) -> Error {
        if token.kind != TokenKind::Error {
            return self.error(format!("unexpected {token} in {context}"));
        }
        let mut message = self.lex_error.clone().unwrap_or_default();
        if let Some(action) = self.action_pos {
            let action_line = self.line_of(action);
            if action_line != self.line_of(token.pos) {
                let extra = format!(" started at {}:{action_line}", self.parse_name);
                if !message.ends_with(" action") {
                    message.push_str(" in action");
                }
                message.push_str(&extra);
            }
        }
        self.error(message)
    }

    fn expect(&mut self, kind: TokenKind, context: &str) -> Parsed<Token<'a>> {
        let token = self.next_non_space();
        if token.kind != kind {
            return Err(self.unexpected(&token, context));
        }
        Ok(token)
    }

    /// Where `token` is in the source.
    fn span(token: &Token) -> Span {
        Span {
            start: token.pos,
            end: token.pos + offset(token.text.len()),
        }
    }

    /// The source text of `token`.
    fn source(&self, token: &Token) -> &'a str {
        Self::span(token).of(self.text)
    }

    /// A constant node for `literal`, written as `token`.
    fn constant(&mut self, token: &Token, literal: Literal) -> Arg {
        self.literals.push(literal);
        Arg::Constant {
            pos: token.pos,
            index: offset(self.literals.len() - 1),
            source: Self::span(token),
        }
    }

    fn nest(&mut self) -> Parsed<()> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(self.error("max expression depth exceeded"));
        }
        Ok(())
    }

    fn parse_top(&mut self) -> Parsed<List> {
        let mut root = List::default();
        while self.peek().kind != TokenKind::Eof {
            if self.peek().kind == TokenKind::LeftDelim {
                let delim_index = self.index;
                self.next();
                if self.next_non_space().kind == TokenKind::Define {
                    self.parse_definition()?;
                    continue;
                }
                self.index = delim_index;
            }
            match self.text_or_action()? {
                Item::Node(node) => root.nodes.push(node),
                Item::End => return Err(self.error("unexpected {{end}}")),
                Item::Else => return Err(self.error("unexpected {{else}}")),
            }
        }
        Ok(root)
    }

    fn parse_definition(&mut self) -> Parsed<()> {
        let context = "define clause";
        let token = self.next_non_space();
        if !matches!(token.kind, TokenKind::String | TokenKind::RawString) {
            return Err(self.unexpected(&token, context));
        }
        let name = unquote_string(token.text).ok_or_else(|| self.error("invalid syntax"))?;
        self.expect(TokenKind::RightDelim, context)?;
        let outer_vars = std::mem::replace(&mut self.vars, vec!["$"]);
        let (root, end) = self.item_list()?;
        self.vars = outer_vars;
        match end {
            ListEnd::End => {}
            ListEnd::Else => {
                return Err(self.error(format!("unexpected {{{{else}}}} in {context}")));
            }
        }
        self.defined.push(ParsedTree { name, root });
        Ok(())
    }

    fn item_list(&mut self) -> Parsed<(List, ListEnd)> {
        let mut list = List::default();
        while self.peek_non_space().kind != TokenKind::Eof {
            match self.text_or_action()? {
                Item::Node(node) => list.nodes.push(node),
                Item::End => return Ok((list, ListEnd::End)),
                Item::Else => return Ok((list, ListEnd::Else)),
            }
        }
        Err(self.error("unexpected EOF"))
    }

    fn text_or_action(&mut self) -> Parsed<Item> {
        let token = self.next_non_space();
        match token.kind {
            TokenKind::Text => Ok(Item::Node(Node::Text(Self::span(&token)))),
            TokenKind::LeftDelim => {
                let saved = self.action_pos.replace(token.pos);
                let item = self.action();
                self.action_pos = saved;
                item
            }
            _ => Err(self.unexpected(&token, "input")),
        }
    }

    fn action(&mut self) -> Parsed<Item> {
        let token = self.next_non_space();
        let node = match token.kind {
            TokenKind::Block => self.block_control()?,
            TokenKind::Break | TokenKind::Continue => self.loop_control(&token)?,
            TokenKind::Else => return self.else_control(),
            TokenKind::End => {
                self.expect(TokenKind::RightDelim, "end")?;
                return Ok(Item::End);
            }
            TokenKind::If => self.branch(BranchKind::If)?,
            TokenKind::Range => self.branch(BranchKind::Range)?,
            TokenKind::With => self.branch(BranchKind::With)?,
            TokenKind::Template => self.template_control()?,
            _ => {
                self.backup();
                Node::Action(Box::new(self.pipeline("command", TokenKind::RightDelim)?))
            }
        };
        Ok(Item::Node(node))
    }

    fn loop_control(&mut self, keyword: &Token) -> Parsed<Node> {
        let token = self.next_non_space();
        let name = &keyword.text;
        if token.kind != TokenKind::RightDelim {
            return Err(self.unexpected(&token, &format!("{{{{{name}}}}}")));
        }
        if self.range_depth == 0 {
            return Err(self.error(format!("{{{{{name}}}}} outside {{{{range}}}}")));
        }
        Ok(if keyword.kind == TokenKind::Break {
            Node::Break
        } else {
            Node::Continue
        })
    }

    fn else_control(&mut self) -> Parsed<Item> {
        let peek = self.peek_non_space();
        if matches!(peek.kind, TokenKind::If | TokenKind::With) {
            return Ok(Item::Else);
        }
        self.expect(TokenKind::RightDelim, "else")?;
        Ok(Item::Else)
    }

    fn branch(&mut self, kind: BranchKind) -> Parsed<Node> {
        self.nest()?;
        let saved_vars = self.vars.len();
        let context = match kind {
            BranchKind::If => "if",
            BranchKind::With => "with",
            BranchKind::Range => "range",
        };
        let result = stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, || {
            self.branch_body(kind, context)
        });
        self.vars.truncate(saved_vars);
        self.depth -= 1;
        result
    }

    fn branch_body(&mut self, kind: BranchKind, context: &str) -> Parsed<Node> {
        let pipe = self.pipeline(context, TokenKind::RightDelim)?;
        if kind == BranchKind::Range {
            self.range_depth += 1;
        }
        let listed = self.item_list();
        if kind == BranchKind::Range {
            self.range_depth -= 1;
        }
        let (list, end) = listed?;
        let else_list = match end {
            ListEnd::End => None,
            ListEnd::Else => Some(self.else_branch(kind)?),
        };
        Ok(Node::Branch(Box::new(Branch {
            kind,
            pipe,
            list,
            else_list,
        })))
    }

    /// The part after `{{else}}`; `{{else if}}` and `{{else with}}` nest a new branch that
    /// shares the final `{{end}}`.
    fn else_branch(&mut self, kind: BranchKind) -> Parsed<List> {
        let chained = match (kind, self.peek_non_space().kind) {
            (BranchKind::If, TokenKind::If) => Some(BranchKind::If),
            (BranchKind::With, TokenKind::With) => Some(BranchKind::With),
            _ => None,
        };
        if let Some(inner) = chained {
            self.next_non_space();
            let node = self.branch(inner)?;
            return Ok(List { nodes: vec![node] });
        }
        let (list, end) = self.item_list()?;
        match end {
            ListEnd::End => Ok(list),
            ListEnd::Else => Err(self.error("expected end; found {{else}}")),
        }
    }

    fn template_name(&mut self, context: &str) -> Parsed<Token<'a>> {
        let token = self.next_non_space();
        if !matches!(token.kind, TokenKind::String | TokenKind::RawString) {
            return Err(self.unexpected(&token, context));
        }
        Ok(token)
    }

    fn template_control(&mut self) -> Parsed<Node> {
        let context = "template clause";
        let token = self.template_name(context)?;
        let name = unquote_string(token.text).ok_or_else(|| self.error("invalid syntax"))?;
        let pipe = if self.next_non_space().kind == TokenKind::RightDelim {
            None
        } else {
            self.backup();
            Some(self.pipeline(context, TokenKind::RightDelim)?)
        };
        Ok(Node::Template(Box::new(TemplateCall {
            pos: token.pos,
            name,
            pipe,
        })))
    }

    fn block_control(&mut self) -> Parsed<Node> {
        let context = "block clause";
        let token = self.template_name(context)?;
        let name = unquote_string(token.text).ok_or_else(|| self.error("invalid syntax"))?;
        let pipe = self.pipeline(context, TokenKind::RightDelim)?;
        let outer_vars = std::mem::replace(&mut self.vars, vec!["$"]);
        let outer_range = std::mem::replace(&mut self.range_depth, 0);
        let listed = self.item_list();
        self.vars = outer_vars;
        self.range_depth = outer_range;
        let (root, end) = listed?;
        match end {
            ListEnd::End => {}
            ListEnd::Else => {
                return Err(self.error(format!("unexpected {{{{else}}}} in {context}")));
            }
        }
        self.defined.push(ParsedTree {
            name: name.clone(),
            root,
        });
        Ok(Node::Template(Box::new(TemplateCall {
            pos: token.pos,
            name,
            pipe: Some(pipe),
        })))
    }

    fn pipeline(&mut self, context: &str, end: TokenKind) -> Parsed<Pipe> {
        let start = self.peek_non_space();
        let mut pipe = Pipe {
            pos: start.pos,
            is_assign: false,
            decl: Vec::new(),
            cmds: SmallVec::new(),
        };
        self.declarations(&mut pipe, context)?;
        loop {
            let token = self.next_non_space();
            match token.kind {
                k if k == end => {
                    self.check_pipeline(&pipe, context)?;
                    return Ok(pipe);
                }
                TokenKind::Bool
                | TokenKind::CharConstant
                | TokenKind::Complex
                | TokenKind::Dot
                | TokenKind::Field
                | TokenKind::Identifier
                | TokenKind::Number
                | TokenKind::Nil
                | TokenKind::RawString
                | TokenKind::String
                | TokenKind::Variable
                | TokenKind::LeftParen => {
                    self.backup();
                    let command = self.command()?;
                    pipe.cmds.push(command);
                }
                _ => return Err(self.unexpected(&token, context)),
            }
        }
    }

    /// `$x :=`, `$x =` and range's `$i, $v :=` at the start of a pipeline.
    fn declarations(&mut self, pipe: &mut Pipe, context: &str) -> Parsed<()> {
        loop {
            let v = self.peek_non_space();
            if v.kind != TokenKind::Variable {
                return Ok(());
            }
            let variable_index = self.index;
            self.next();
            let next = self.peek_non_space();
            match next.kind {
                TokenKind::Assign | TokenKind::Declare => {
                    pipe.is_assign = next.kind == TokenKind::Assign;
                    self.next_non_space();
                    pipe.decl.push(Self::span(&v));
                    self.vars.push(self.source(&v));
                    return Ok(());
                }
                TokenKind::Char if next.text == "," => {
                    self.next_non_space();
                    pipe.decl.push(Self::span(&v));
                    self.vars.push(self.source(&v));
                    if context == "range" && pipe.decl.len() < 2 {
                        let following = self.peek_non_space().kind;
                        if matches!(
                            following,
                            TokenKind::Variable | TokenKind::RightDelim | TokenKind::RightParen
                        ) {
                            continue;
                        }
                        return Err(self.error("range can only initialize variables"));
                    }
                    return Err(self.error(format!("too many declarations in {context}")));
                }
                _ => {
                    self.index = variable_index;
                    return Ok(());
                }
            }
        }
    }

    fn check_pipeline(&self, pipe: &Pipe, context: &str) -> Parsed<()> {
        if pipe.cmds.is_empty() {
            return Err(self.error(format!("missing value for {context}")));
        }
        for (i, cmd) in pipe.cmds.iter().enumerate().skip(1) {
            if matches!(
                cmd.args.first(),
                Some(Arg::Constant { .. } | Arg::Dot(_) | Arg::Nil(_))
            ) {
                return Err(self.error(format!(
                    "non executable command in pipeline stage {}",
                    i + 1
                )));
            }
        }
        Ok(())
    }

    fn command(&mut self) -> Parsed<Command> {
        let pos = self.peek_non_space().pos;
        let mut args = SmallVec::new();
        loop {
            self.peek_non_space();
            if let Some(operand) = self.operand()? {
                args.push(operand);
            }
            let token = self.next();
            match token.kind {
                TokenKind::Space => continue,
                TokenKind::RightDelim | TokenKind::RightParen => self.backup(),
                TokenKind::Pipe => {}
                _ => return Err(self.unexpected(&token, "operand")),
            }
            break;
        }
        if args.is_empty() {
            return Err(self.error("empty command"));
        }
        Ok(Command { pos, args })
    }

    fn operand(&mut self) -> Parsed<Option<Arg>> {
        let Some(node) = self.term()? else {
            return Ok(None);
        };
        if self.peek().kind != TokenKind::Field {
            return Ok(Some(node));
        }
        let chain_pos = self.peek().pos;
        let mut fields = Span {
            start: chain_pos,
            end: chain_pos,
        };
        while self.peek().kind == TokenKind::Field {
            let token = self.next();
            fields.end = Self::span(&token).end;
        }
        let node = match node {
            Arg::Field { names, .. } => Arg::Field {
                pos: chain_pos,
                names: Span {
                    end: fields.end,
                    ..names
                },
            },
            Arg::Variable { names, .. } => Arg::Variable {
                pos: chain_pos,
                names: Span {
                    end: fields.end,
                    ..names
                },
            },
            Arg::Constant { .. } | Arg::Nil(_) | Arg::Dot(_) => {
                let quoted = crate::engine::value::format::quote(&node.show(self.text).to_string());
                return Err(self.error(format!("unexpected . after term {quoted}")));
            }
            other => Arg::Chain {
                pos: chain_pos,
                node: Box::new(other),
                fields,
            },
        };
        Ok(Some(node))
    }

    fn term(&mut self) -> Parsed<Option<Arg>> {
        let token = self.next_non_space();
        let pos = token.pos;
        let arg = match token.kind {
            TokenKind::Identifier => {
                if !(self.has_function)(token.text) {
                    let name = crate::engine::value::format::quote(token.text);
                    return Err(self.error(format!("function {name} not defined")));
                }
                Arg::Identifier {
                    pos,
                    name: Self::span(&token),
                }
            }
            TokenKind::Dot => Arg::Dot(pos),
            TokenKind::Nil => Arg::Nil(pos),
            TokenKind::Variable => {
                if !self.vars.iter().any(|v| **v == *token.text) {
                    let name = crate::engine::value::format::quote(token.text);
                    return Err(self.error(format!("undefined variable {name}")));
                }
                Arg::Variable {
                    pos,
                    names: Self::span(&token),
                }
            }
            TokenKind::Field => Arg::Field {
                pos,
                names: Self::span(&token),
            },
            TokenKind::Bool => self.constant(&token, Literal::Bool(token.text == "true")),
            TokenKind::CharConstant => {
                let code = unquote_char(token.text).ok_or_else(|| {
                    self.error(format!("malformed character constant: {}", token.text))
                })?;
                self.constant(&token, Literal::Int(code))
            }
            TokenKind::Complex => {
                return Err(self.error(format!("complex constant {} is not supported", token.text)));
            }
            TokenKind::Number => {
                let literal = parse_number(token.text).map_err(|m| self.error(m))?;
                self.constant(&token, literal)
            }
            TokenKind::LeftParen => {
                self.nest()?;
                let pipe = stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, || {
                    self.pipeline("parenthesized pipeline", TokenKind::RightParen)
                });
                self.depth -= 1;
                Arg::Pipe(Box::new(pipe?))
            }
            TokenKind::String | TokenKind::RawString => {
                let literal = match verbatim_string(token.text) {
                    Some(inner) => Literal::Verbatim(Span {
                        start: token.pos + offset(inner.start),
                        end: token.pos + offset(inner.end),
                    }),
                    None => Literal::Str(
                        unquote_string(token.text).ok_or_else(|| self.error("invalid syntax"))?,
                    ),
                };
                self.constant(&token, literal)
            }
            _ => {
                self.backup();
                return Ok(None);
            }
        };
        Ok(Some(arg))
    }
}

/// What one `text_or_action` produced.
enum Item {
    Node(Node),
    End,
    Else,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_error(text: &str) -> String {
        let known = |name: &str| matches!(name, "printf" | "len");
        match parse("t", text, &known) {
            Ok(_) => String::from("parsed"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn parse_errors_read_like_go() {
        let rows = [
            ("{{foo}}", r#"template: t:1: function "foo" not defined"#),
            ("{{$x}}", r#"template: t:1: undefined variable "$x""#),
            ("{{if .a}}", "template: t:1: unexpected EOF"),
            ("{{end}}", "template: t:1: unexpected {{end}}"),
            ("a\n{{break}}", "template: t:2: {{break}} outside {{range}}"),
            ("{{.a", "template: t:1: unclosed action"),
            ("{{ \"abc }}", "template: t:1: unterminated quoted string"),
            (
                "{{ printf | 1 }}",
                "template: t:1: non executable command in pipeline stage 2",
            ),
            (
                "{{ ( ) }}",
                "template: t:1: missing value for parenthesized pipeline",
            ),
            ("{{ 3.x }}", "template: t:1: bad number syntax: \"3.x\""),
            ("{{ # }}", "template: t:1: unexpected \"#\" in command"),
            (
                "{{range $i, $v, $w := .}}{{end}}",
                "template: t:1: too many declarations in range",
            ),
            ("{{if}}{{end}}", "template: t:1: missing value for if"),
            (
                "{{with .a}}{{else}}{{else}}{{end}}",
                "template: t:1: expected end; found {{else}}",
            ),
            ("{{define \"x\"}}", "template: t:1: unexpected EOF"),
            ("{{ .a\n.b }}", "parsed"),
            (
                "{{ \"a\".b }}",
                "template: t:1: unexpected . after term \"\\\"a\\\"\"",
            ),
        ];
        for (text, want) in rows {
            assert_eq!(parse_error(text), want, "template {text:?}");
        }
    }

    #[test]
    fn variables_declared_in_a_branch_end_with_it() {
        assert_eq!(
            parse_error("{{if 1}}{{$x := 1}}{{end}}{{$x}}"),
            r#"template: t:1: undefined variable "$x""#
        );
        assert_eq!(
            parse_error("{{$x := 1}}{{if 1}}{{$x = 2}}{{end}}{{$x}}"),
            "parsed"
        );
    }

    #[test]
    fn defines_and_blocks_become_their_own_trees() {
        let trees = parse(
            "file",
            "a{{define \"x\"}}X{{end}}{{block \"y\" .}}Y{{end}}",
            &|_: &str| false,
        )
        .unwrap_or_default()
        .trees;
        let names: Vec<&str> = trees.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["file", "x", "y"]);
    }
}
