//! Splits template text into tokens the way Go's `text/template/parse` lexer does: text between
//! `{{ }}` actions, trim markers `{{- ` and ` -}}`, comments, and the words inside actions.

use std::cell::Cell;

/// What a token is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenKind {
    /// A lexing error; the token text is the message.
    Error,
    /// `true` or `false`.
    Bool,
    /// A single ASCII punctuation character inside an action, e.g. `,`.
    Char,
    /// A character constant like `'a'`.
    CharConstant,
    /// A complex number constant (unsupported by the executor, parsed for Go's errors).
    Complex,
    /// `=`.
    Assign,
    /// `:=`.
    Declare,
    /// End of input.
    Eof,
    /// `.Name`.
    Field,
    /// A function name.
    Identifier,
    /// `{{` (with or without trim marker).
    LeftDelim,
    /// `(`.
    LeftParen,
    /// A number.
    Number,
    /// `|`.
    Pipe,
    /// A raw string in backquotes.
    RawString,
    /// `}}` (with or without trim marker).
    RightDelim,
    /// `)`.
    RightParen,
    /// Spaces inside an action.
    Space,
    /// A quoted string.
    String,
    /// Plain text outside actions.
    Text,
    /// `$name` or `$`.
    Variable,
    /// `block`.
    Block,
    /// `break`.
    Break,
    /// `continue`.
    Continue,
    /// `.` alone.
    Dot,
    /// `define`.
    Define,
    /// `else`.
    Else,
    /// `end`.
    End,
    /// `if`.
    If,
    /// `nil`.
    Nil,
    /// `range`.
    Range,
    /// `template`.
    Template,
    /// `with`.
    With,
}

impl TokenKind {
    /// Whether this is a keyword (Go prints keywords as `<if>` in errors).
    pub fn is_keyword(self) -> bool {
        matches!(
            self,
            TokenKind::Block
                | TokenKind::Break
                | TokenKind::Continue
                | TokenKind::Dot
                | TokenKind::Define
                | TokenKind::Else
                | TokenKind::End
                | TokenKind::If
                | TokenKind::Nil
                | TokenKind::Range
                | TokenKind::Template
                | TokenKind::With
        )
    }
}

/// One token: its kind, text and byte offset in the template.
///
/// The text borrows from the template, so lexing and the parser's look-ahead copy no text (a
/// lexing error's message is [`Lexed::error`]).
#[derive(Clone, Copy, Debug)]
pub struct Token<'a> {
    /// The kind.
    pub kind: TokenKind,
    /// The source text (empty for errors).
    pub text: &'a str,
    /// Byte offset of the token's start.
    pub pos: u32,
}

/// `index` as an offset in a template's text, which parse trees keep in 32 bits (half the
/// size of a tree's positions). [`super::parser::parse`] refuses a text longer than
/// [`MAX_TEXT_LEN`], so every offset in one fits.
pub(super) fn offset(index: usize) -> u32 {
    u32::try_from(index).unwrap_or(u32::MAX)
}

/// The longest template text there is a parse of.
pub(super) const MAX_TEXT_LEN: usize = u32::MAX as usize;

/// A lexed template.
pub struct Lexed<'a> {
    /// The tokens; the last is `Eof` or `Error`.
    pub tokens: Vec<Token<'a>>,
    /// The message of the `Error` token, if lexing failed.
    pub error: Option<String>,
}

impl std::fmt::Display for Token<'_> {
    /// Go's `item.String`, used in "unexpected X in Y" messages.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.kind {
            TokenKind::Eof => f.write_str("EOF"),
            TokenKind::Error => f.write_str("lexing error"),
            k if k.is_keyword() => write!(f, "<{}>", self.text),
            _ => {
                let quoted: String = if self.text.chars().count() > 10 {
                    let cut: String = self.text.chars().take(10).collect();
                    format!("{}...", crate::engine::value::format::quote(&cut))
                } else {
                    crate::engine::value::format::quote(self.text)
                };
                f.write_str(&quoted)
            }
        }
    }
}

const LEFT: &str = "{{";
const RIGHT: &str = "}}";

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

/// Go's `isAlphaNumeric`: `_`, a letter (`unicode.IsLetter`, the categories L*) or a decimal
/// digit (`unicode.IsDigit`, Nd). Rust's `is_alphabetic` and `is_numeric` take more, such as
/// `²`, `Ⅻ` and combining vowel signs.
fn is_alphanumeric(c: char) -> bool {
    use unicode_general_category::{GeneralCategory, get_general_category};
    if c.is_ascii() {
        return c == '_' || c.is_ascii_alphanumeric();
    }
    matches!(
        get_general_category(c),
        GeneralCategory::UppercaseLetter
            | GeneralCategory::LowercaseLetter
            | GeneralCategory::TitlecaseLetter
            | GeneralCategory::ModifierLetter
            | GeneralCategory::OtherLetter
            | GeneralCategory::DecimalNumber
    )
}

/// The ASCII bytes of names (letters, digits and `_`) by value: one lookup per byte where
/// three range tests were, in the scan that names are most of the lexing time of.
const NAME_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 128 {
        table[byte] = (byte as u8).is_ascii_alphanumeric() || byte == b'_' as usize;
        byte += 1;
    }
    table
};

/// `- ` right after `{{`.
fn has_left_trim(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 2 && b[0] == b'-' && is_space(char::from(b[1]))
}

/// Whether `bytes` start with a closing delimiter, and whether it is trim-marked (` -}}`).
fn right_delim_at(bytes: &[u8]) -> (bool, bool) {
    match bytes {
        [b'}', b'}', ..] => (true, false),
        [space, b'-', b'}', b'}', ..] if is_space(char::from(*space)) => (true, true),
        _ => (false, false),
    }
}

/// Where the next `{{` starts. Text is most of a template's bytes, so the scan for `{` is
/// memchr's vectorised one.
fn find_left_delim(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut from = 0;
    while let Some(offset) = memchr::memchr(b'{', &bytes[from..]) {
        let at = from + offset;
        if bytes.get(at + 1) == Some(&b'{') {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// Tokens per byte of template text in real charts is about one in nine; reserving for one in
/// sixteen spares most of the growing.
const BYTES_PER_TOKEN: usize = 16;

/// The largest token list whose memory a thread keeps for its next file (384 KiB, the tokens of
/// a template file of about 150 KB).
const MAX_SPARE_TOKENS: usize = 16 * 1024;

thread_local! {
    /// The memory of this thread's last token list, empty, for the next file it lexes: a chart's
    /// template files are lexed one after another, and a new list for each (grown as it
    /// filled) made the lexing of kube-prometheus-stack touch about 2.6 MB of fresh pages, the
    /// costliest memory there is.
    static SPARE_TOKENS: Cell<Vec<Token<'static>>> = const { Cell::new(Vec::new()) };
}

/// Hands the memory of a token list that is no longer needed to this thread's next [`lex`].
pub fn recycle(mut tokens: Vec<Token<'_>>) {
    if tokens.capacity() > MAX_SPARE_TOKENS {
        return;
    }
    tokens.clear();
    // Collecting an emptied list into tokens of another lifetime keeps its memory: the two
    // types have one layout, and std collects such a list in place.
    #[expect(
        clippy::unnecessary_filter_map,
        reason = "`filter` would keep the tokens' lifetime, which is what must change"
    )]
    let spare: Vec<Token<'static>> = tokens.into_iter().filter_map(|_| None).collect();
    SPARE_TOKENS.set(spare);
}

/// Tokenizes a whole template.
pub fn lex(input: &str) -> Lexed<'_> {
    let mut tokens: Vec<Token<'_>> = SPARE_TOKENS.take();
    tokens.reserve(input.len() / BYTES_PER_TOKEN + 1);
    let mut lexer = Lexer {
        input,
        pos: 0,
        start: 0,
        paren_depth: 0,
        tokens,
        error: None,
    };
    lexer.run();
    Lexed {
        tokens: lexer.tokens,
        error: lexer.error,
    }
}

struct Lexer<'a> {
    input: &'a str,
    pos: usize,
    start: usize,
    paren_depth: usize,
    tokens: Vec<Token<'a>>,
    error: Option<String>,
}

/// What to lex next.
enum State {
    Text,
    InsideAction,
    Done,
}

impl<'a> Lexer<'a> {
    fn run(&mut self) {
        let mut state = State::Text;
        loop {
            state = match state {
                State::Text => self.lex_text(),
                State::InsideAction => self.lex_inside_action(),
                State::Done => return,
            };
        }
    }

    // Inlined: as a call, the push's rare growth made every token save and restore six
    // registers, which with the slice's checks made a push cost 54 instructions.
    #[inline(always)]
    fn emit(&mut self, kind: TokenKind) {
        self.tokens.push(Token {
            kind,
            text: &self.input[self.start..self.pos],
            pos: offset(self.start),
        });
        self.start = self.pos;
    }

    fn error(&mut self, message: String) -> State {
        self.tokens.push(Token {
            kind: TokenKind::Error,
            text: "",
            pos: offset(self.start),
        });
        self.error = Some(message);
        State::Done
    }

    fn peek(&self) -> Option<char> {
        // Templates are almost all ASCII: decode a character only where one starts.
        match self.input.as_bytes().get(self.pos) {
            Some(&byte) if byte.is_ascii() => Some(char::from(byte)),
            Some(_) => self.input[self.pos..].chars().next(),
            None => None,
        }
    }

    /// Moves past the letters, digits and `_` here (an identifier's or a field's name).
    fn skip_alphanumeric(&mut self) {
        let bytes = self.input.as_bytes();
        loop {
            while bytes
                .get(self.pos)
                .is_some_and(|&byte| NAME_BYTES[usize::from(byte)])
            {
                self.pos += 1;
            }
            match bytes.get(self.pos) {
                Some(byte) if !byte.is_ascii() => match self.peek() {
                    Some(c) if is_alphanumeric(c) => self.pos += c.len_utf8(),
                    _ => return,
                },
                _ => return,
            }
        }
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    /// Moves past the next byte if it is one of `valid` (ASCII characters).
    fn accept(&mut self, valid: &str) -> bool {
        debug_assert!(valid.is_ascii());
        match self.input.as_bytes().get(self.pos) {
            Some(byte) if valid.as_bytes().contains(byte) => {
                self.pos += 1;
                true
            }
            _ => false,
        }
    }

    fn accept_run(&mut self, valid: &str) {
        while self.accept(valid) {}
    }

    fn rest(&self) -> &str {
        &self.input[self.pos..]
    }

    fn lex_text(&mut self) -> State {
        let Some(offset) = find_left_delim(self.rest()) else {
            self.pos = self.input.len();
            if self.pos > self.start {
                self.emit(TokenKind::Text);
            }
            self.tokens.push(Token {
                kind: TokenKind::Eof,
                text: "",
                pos: offset(self.pos),
            });
            return State::Done;
        };
        self.pos += offset;
        let trim = has_left_trim(&self.input[self.pos + LEFT.len()..]);
        let text_end = if trim {
            self.input[self.start..self.pos]
                .trim_end_matches(is_space)
                .len()
                + self.start
        } else {
            self.pos
        };
        if text_end > self.start {
            let delim = self.pos;
            self.pos = text_end;
            self.emit(TokenKind::Text);
            self.pos = delim;
        }
        self.start = self.pos;
        self.lex_left_delim(trim)
    }

    fn lex_left_delim(&mut self, trim: bool) -> State {
        self.pos += LEFT.len();
        let after_marker = if trim { 2 } else { 0 };
        if self.rest()[after_marker..].starts_with("/*") {
            self.pos += after_marker;
            self.start = self.pos;
            return self.lex_comment();
        }
        self.emit(TokenKind::LeftDelim);
        self.pos += after_marker;
        self.start = self.pos;
        self.paren_depth = 0;
        State::InsideAction
    }

    fn lex_comment(&mut self) -> State {
        self.pos += 2;
        let Some(end) = self.rest().find("*/") else {
            return self.error("unclosed comment".into());
        };
        self.pos += end + 2;
        let (delim, trim) = self.at_right_delim();
        if !delim {
            return self.error("comment ends before closing delimiter".into());
        }
        if trim {
            self.pos += 2;
        }
        self.pos += RIGHT.len();
        if trim {
            self.skip_leading_space();
        }
        self.start = self.pos;
        State::Text
    }

    fn skip_leading_space(&mut self) {
        let rest = self.rest();
        self.pos += rest.len() - rest.trim_start_matches(is_space).len();
    }

    /// Whether a closing delimiter (possibly trim-marked) starts here.
    fn at_right_delim(&self) -> (bool, bool) {
        // Called before every token inside an action: bytes, not a checked `str` slice.
        right_delim_at(&self.input.as_bytes()[self.pos..])
    }

    fn lex_right_delim(&mut self) -> State {
        let (_, trim) = self.at_right_delim();
        if trim {
            self.pos += 2;
            self.start = self.pos;
        }
        self.pos += RIGHT.len();
        self.emit(TokenKind::RightDelim);
        if trim {
            self.skip_leading_space();
            self.start = self.pos;
        }
        State::Text
    }

    fn lex_inside_action(&mut self) -> State {
        let bytes = self.input.as_bytes();
        let Some(&byte) = bytes.get(self.pos) else {
            return self.error("unclosed action".into());
        };
        // Only `}` and spaces can start a closing delimiter.
        if matches!(byte, b'}' | b' ' | b'\t' | b'\r' | b'\n') && self.at_right_delim().0 {
            if self.paren_depth == 0 {
                return self.lex_right_delim();
            }
            return self.error("unclosed left paren".into());
        }
        // Most of an action's bytes are ASCII: a character is decoded only where one starts.
        if !byte.is_ascii() {
            return self.lex_other_character();
        }
        self.pos += 1;
        match byte {
            b' ' | b'\t' | b'\r' | b'\n' => return self.lex_space(),
            b'=' => self.emit(TokenKind::Assign),
            b':' => {
                if self.next() != Some('=') {
                    return self.error("expected :=".into());
                }
                self.emit(TokenKind::Declare);
            }
            b'|' => self.emit(TokenKind::Pipe),
            b'"' => return self.lex_quote(),
            b'`' => return self.lex_raw_quote(),
            b'$' => return self.lex_variable(),
            b'\'' => return self.lex_char(),
            b'.' if !bytes.get(self.pos).is_some_and(u8::is_ascii_digit) => {
                return self.lex_field_or_variable(TokenKind::Field);
            }
            b'.' | b'+' | b'-' | b'0'..=b'9' => {
                self.pos -= 1;
                return self.lex_number();
            }
            byte if NAME_BYTES[usize::from(byte)] => {
                self.pos -= 1;
                return self.lex_identifier();
            }
            b'(' => {
                self.emit(TokenKind::LeftParen);
                self.paren_depth += 1;
            }
            b')' => {
                if self.paren_depth == 0 {
                    return self.error("unexpected right paren".into());
                }
                self.paren_depth -= 1;
                self.emit(TokenKind::RightParen);
            }
            byte if !byte.is_ascii_control() => self.emit(TokenKind::Char),
            byte => {
                return self.error(format!(
                    "unrecognized character in action: {}",
                    unicode_name(char::from(byte))
                ));
            }
        }
        State::InsideAction
    }

    /// A character beyond ASCII inside an action: the start of a name, or an error.
    fn lex_other_character(&mut self) -> State {
        match self.peek() {
            Some(c) if is_alphanumeric(c) => self.lex_identifier(),
            Some(c) => {
                self.pos += c.len_utf8();
                self.error(format!(
                    "unrecognized character in action: {}",
                    unicode_name(c)
                ))
            }
            None => self.error("unclosed action".into()),
        }
    }

    /// Moves past a run of spaces, which is a token unless it is the one before ` -}}`.
    fn lex_space(&mut self) -> State {
        let bytes = self.input.as_bytes();
        let first = self.pos - 1;
        while bytes
            .get(self.pos)
            .is_some_and(|&byte| is_space(char::from(byte)))
        {
            self.pos += 1;
        }
        // A space followed by `-}}` is a trim marker, not an argument separator.
        if right_delim_at(&bytes[self.pos - 1..]) == (true, true) {
            self.pos -= 1;
            if self.pos == first {
                return State::InsideAction;
            }
        }
        self.emit(TokenKind::Space);
        State::InsideAction
    }

    /// Whether a name ends here: at the end, a space, `.`, `,`, `|`, `:`, a paren or `}}`.
    fn at_terminator(&self) -> bool {
        let bytes = self.input.as_bytes();
        match bytes.get(self.pos) {
            None => true,
            Some(b' ' | b'\t' | b'\r' | b'\n' | b'.' | b',' | b'|' | b':' | b')' | b'(') => true,
            Some(b'}') => bytes.get(self.pos + 1) == Some(&b'}'),
            Some(_) => false,
        }
    }

    fn lex_identifier(&mut self) -> State {
        self.skip_alphanumeric();
        if !self.at_terminator() {
            let bad = self.peek().unwrap_or(' ');
            return self.error(format!("bad character {}", unicode_name(bad)));
        }
        let kind = match &self.input[self.start..self.pos] {
            "block" => TokenKind::Block,
            "break" => TokenKind::Break,
            "continue" => TokenKind::Continue,
            "define" => TokenKind::Define,
            "else" => TokenKind::Else,
            "end" => TokenKind::End,
            "if" => TokenKind::If,
            "range" => TokenKind::Range,
            "nil" => TokenKind::Nil,
            "template" => TokenKind::Template,
            "with" => TokenKind::With,
            "true" | "false" => TokenKind::Bool,
            _ => TokenKind::Identifier,
        };
        self.emit(kind);
        State::InsideAction
    }

    fn lex_variable(&mut self) -> State {
        if self.at_terminator() {
            self.emit(TokenKind::Variable);
            return State::InsideAction;
        }
        self.lex_field_or_variable(TokenKind::Variable)
    }

    fn lex_field_or_variable(&mut self, kind: TokenKind) -> State {
        if self.at_terminator() {
            self.emit(if kind == TokenKind::Variable {
                TokenKind::Variable
            } else {
                TokenKind::Dot
            });
            return State::InsideAction;
        }
        self.skip_alphanumeric();
        if !self.at_terminator() {
            let bad = self.peek().unwrap_or(' ');
            return self.error(format!("bad character {}", unicode_name(bad)));
        }
        self.emit(kind);
        State::InsideAction
    }

    fn lex_char(&mut self) -> State {
        loop {
            match self.next() {
                Some('\\') => match self.next() {
                    Some('\n') | None => {
                        return self.error("unterminated character constant".into());
                    }
                    Some(_) => {}
                },
                Some('\n') | None => return self.error("unterminated character constant".into()),
                Some('\'') => break,
                Some(_) => {}
            }
        }
        self.emit(TokenKind::CharConstant);
        State::InsideAction
    }

    fn lex_quote(&mut self) -> State {
        let bytes = self.input.as_bytes();
        // Only a quote, a backslash or a newline ends or escapes a quoted string, and none of
        // them is part of another character's UTF-8: the scan steps over everything else.
        while let Some(at) = memchr::memchr3(b'"', b'\\', b'\n', &bytes[self.pos..]) {
            self.pos += at + 1;
            match bytes[self.pos - 1] {
                b'"' => {
                    self.emit(TokenKind::String);
                    return State::InsideAction;
                }
                // The escaped character's first byte: the scan goes on after it.
                b'\\' if !matches!(bytes.get(self.pos), None | Some(b'\n')) => self.pos += 1,
                _ => break,
            }
        }
        self.error("unterminated quoted string".into())
    }

    fn lex_raw_quote(&mut self) -> State {
        let Some(end) = self.rest().find('`') else {
            return self.error("unterminated raw quoted string".into());
        };
        self.pos += end + 1;
        self.emit(TokenKind::RawString);
        State::InsideAction
    }

    fn lex_number(&mut self) -> State {
        if !self.scan_number() {
            return self.error(format!(
                "bad number syntax: {}",
                crate::engine::value::format::quote(&self.input[self.start..self.pos])
            ));
        }
        if matches!(self.peek(), Some('+' | '-')) {
            if !self.scan_number() || !self.input[..self.pos].ends_with('i') {
                return self.error(format!(
                    "bad number syntax: {}",
                    crate::engine::value::format::quote(&self.input[self.start..self.pos])
                ));
            }
            self.emit(TokenKind::Complex);
        } else {
            self.emit(TokenKind::Number);
        }
        State::InsideAction
    }

    fn scan_number(&mut self) -> bool {
        self.accept("+-");
        let mut digits = "0123456789_";
        if self.accept("0") {
            if self.accept("xX") {
                digits = "0123456789abcdefABCDEF_";
            } else if self.accept("oO") {
                digits = "01234567_";
            } else if self.accept("bB") {
                digits = "01_";
            }
        }
        self.accept_run(digits);
        if self.accept(".") {
            self.accept_run(digits);
        }
        if digits.len() == 11 && self.accept("eE") {
            self.accept("+-");
            self.accept_run("0123456789_");
        }
        if digits.len() == 23 && self.accept("pP") {
            self.accept("+-");
            self.accept_run("0123456789_");
        }
        self.accept("i");
        if self.peek().is_some_and(is_alphanumeric) {
            self.next();
            return false;
        }
        true
    }
}

/// Go's `%#U` of a character: `U+0023 '#'`.
fn unicode_name(c: char) -> String {
    format!("U+{:04X} '{c}'", u32::from(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(input: &str) -> Vec<(TokenKind, String)> {
        lex(input)
            .tokens
            .into_iter()
            .map(|t| (t.kind, t.text.to_string()))
            .collect()
    }

    /// The tokens but spaces, with their texts.
    fn without_spaces(tokens: &[(TokenKind, String)]) -> Vec<(TokenKind, &str)> {
        tokens
            .iter()
            .filter(|(k, _)| *k != TokenKind::Space)
            .map(|(k, t)| (*k, t.as_str()))
            .collect()
    }

    #[test]
    fn trim_markers_eat_surrounding_whitespace() {
        let tokens = kinds("a  {{- .x -}} \n b");
        let texts: Vec<&str> = tokens
            .iter()
            .filter(|(k, _)| *k == TokenKind::Text)
            .map(|(_, t)| t.as_str())
            .collect();
        assert_eq!(texts, ["a", "b"]);
    }

    #[test]
    fn quoted_strings_end_at_the_first_unescaped_quote_on_their_line() {
        for (action, string) in [
            (r#"{{ "a b" }}"#, r#""a b""#),
            (r#"{{ "a\"b" }}"#, r#""a\"b""#),
            (r#"{{ "a\\" }}"#, r#""a\\""#),
            (r#"{{ "\é\"é" }}"#, r#""\é\"é""#),
            (r#"{{ "" }}"#, r#""""#),
        ] {
            let tokens = kinds(action);
            assert_eq!(tokens[2], (TokenKind::String, string.into()), "{action}");
            assert_eq!(tokens[4].0, TokenKind::RightDelim, "{action}");
        }
        for unterminated in ["{{ \"a\n\" }}", "{{ \"a\\\n\" }}", "{{ \"a\\", "{{ \"a"] {
            let lexed = lex(unterminated);
            assert_eq!(
                lexed.error.as_deref(),
                Some("unterminated quoted string"),
                "{unterminated:?}"
            );
            assert_eq!(lexed.tokens.last().map(|t| t.pos), Some(3));
        }
    }

    #[test]
    fn only_the_space_right_before_a_trim_marker_belongs_to_it() {
        let kinds_of = |input: &str| -> Vec<TokenKind> {
            lex(input).tokens.into_iter().map(|t| t.kind).collect()
        };
        use TokenKind::{Eof, Field, LeftDelim, RightDelim, Space};
        assert_eq!(
            kinds_of("{{ .a -}}"),
            [LeftDelim, Space, Field, RightDelim, Eof]
        );
        assert_eq!(
            kinds_of("{{ .a \t -}}"),
            [LeftDelim, Space, Field, Space, RightDelim, Eof]
        );
        let spaced = lex("{{ .a  -}}");
        assert_eq!(spaced.tokens[3].text, " ");
        assert_eq!(
            (spaced.tokens[4].kind, spaced.tokens[4].text),
            (RightDelim, "}}")
        );
        // A single `}` is a character of the action, and `}}` ends a name.
        assert_eq!(kinds("{{ } }}")[2], (TokenKind::Char, "}".into()));
        assert_eq!(kinds("{{.a}}")[1], (TokenKind::Field, ".a".into()));
        assert_eq!(
            lex("{{ .a}b }}").error.as_deref(),
            Some("bad character U+007D '}'")
        );
    }

    #[test]
    fn a_minus_without_space_is_a_number_sign() {
        let tokens = kinds("{{-3}}");
        assert_eq!(tokens[1], (TokenKind::Number, "-3".into()));
    }

    #[test]
    fn comments_vanish_and_must_touch_the_delimiters() {
        assert_eq!(
            kinds("a{{/* c */}}b"),
            [
                (TokenKind::Text, "a".into()),
                (TokenKind::Text, "b".into()),
                (TokenKind::Eof, String::new())
            ]
        );
        let bad = lex("{{/* c */ }}");
        assert_eq!(
            bad.error.as_deref(),
            Some("comment ends before closing delimiter")
        );
    }

    #[test]
    fn names_take_letters_and_digits_of_any_script() {
        let tokens = kinds("{{.größe $ñandú2 fünf_x}}");
        let words = without_spaces(&tokens);
        assert_eq!(
            words,
            [
                (TokenKind::LeftDelim, "{{"),
                (TokenKind::Field, ".größe"),
                (TokenKind::Variable, "$ñandú2"),
                (TokenKind::Identifier, "fünf_x"),
                (TokenKind::RightDelim, "}}"),
                (TokenKind::Eof, "")
            ]
        );
        // Only letters and decimal digits, as Go's `unicode.IsLetter` and `IsDigit` say.
        for (template, message) in [
            ("{{.a€}}", "bad character U+20AC '€'"),
            ("{{$नाम}}", "bad character U+093E 'ा'"),
            ("{{3²}}", "unrecognized character in action: U+00B2 '²'"),
            ("{{ Ⅻ }}", "unrecognized character in action: U+216B 'Ⅻ'"),
        ] {
            let bad = lex(template);
            assert_eq!(bad.error.as_deref(), Some(message), "{template}");
            assert_eq!(bad.tokens.last().map(|t| t.kind), Some(TokenKind::Error));
        }
        // A decimal digit of another script starts a name, not a number, as in Go.
        assert_eq!(kinds("{{ ٣ }}")[2], (TokenKind::Identifier, "٣".into()));
    }

    #[test]
    fn a_thread_lexes_its_next_file_into_the_memory_of_the_last() {
        let first = lex("{{ .a }} text {{ .b | quote }}").tokens;
        let memory = first.as_ptr();
        recycle(first);
        let second = lex("{{ .c }}").tokens;
        assert_eq!(second.as_ptr(), memory);
        assert_eq!(second.last().map(|t| t.kind), Some(TokenKind::Eof));

        // A list too large to keep is let go.
        recycle(Vec::with_capacity(MAX_SPARE_TOKENS + 1));
        assert!(lex("{{ .d }}").tokens.capacity() <= MAX_SPARE_TOKENS);
    }

    #[test]
    fn fields_chain_as_separate_tokens() {
        let tokens = kinds("{{.a.b $x.c}}");
        let words = without_spaces(&tokens);
        assert_eq!(
            words,
            [
                (TokenKind::LeftDelim, "{{"),
                (TokenKind::Field, ".a"),
                (TokenKind::Field, ".b"),
                (TokenKind::Variable, "$x"),
                (TokenKind::Field, ".c"),
                (TokenKind::RightDelim, "}}"),
                (TokenKind::Eof, "")
            ]
        );
    }
}
