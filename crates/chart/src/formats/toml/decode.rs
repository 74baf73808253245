//! TOML 1.0 read into template data as Helm's `fromToml` gets it from BurntSushi/toml:
//! integers as int64, floats as float64, tables as maps, arrays of tables as lists of maps.
//!
//! Date-times become the text Go's `time.Time` marshals to (RFC 3339, local times taken as
//! UTC, as on a machine running in UTC): that is what `toJson`/`toYaml` print for them.
//! Printed directly in a template, Go would show `2006-01-02 15:04:05 +0000 UTC` instead.

use std::collections::HashSet;
use std::fmt;

use crate::formats::tree::{Data, Map};

/// A TOML syntax or structure error, printed as BurntSushi/toml prints its `ParseError`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TomlError {
    /// Line of the problem, from 1.
    pub line: usize,
    /// The last key read before the problem, dotted; empty before the first key.
    pub last_key: String,
    /// The problem.
    pub message: String,
}

impl fmt::Display for TomlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.last_key.is_empty() {
            write!(f, "toml: line {}: {}", self.line, self.message)
        } else {
            write!(
                f,
                "toml: line {} (last key {:?}): {}",
                self.line, self.last_key, self.message
            )
        }
    }
}

impl std::error::Error for TomlError {}

/// Deepest nesting of arrays and inline tables accepted.
const MAX_DEPTH: usize = 200;

/// Parses a TOML document (Helm's `fromToml`).
pub fn from_toml(src: &str) -> Result<Map, TomlError> {
    let mut p = Parser {
        chars: src.chars().collect(),
        pos: 0,
        root: Map::default(),
        current: Vec::new(),
        last_key: Vec::new(),
        headers: HashSet::new(),
        dotted: HashSet::new(),
        frozen: HashSet::new(),
        table_arrays: HashSet::new(),
    };
    p.document()?;
    Ok(p.root)
}

type Path = Vec<String>;

struct Parser {
    chars: Vec<char>,
    pos: usize,
    root: Map,
    /// The table that key/value lines go into.
    current: Path,
    last_key: Path,
    /// Tables opened by a `[header]`: a second header for them is an error.
    headers: HashSet<Path>,
    /// Tables made by dotted keys: a `[header]` may not open them again.
    dotted: HashSet<Path>,
    /// Inline tables and arrays given as values: nothing may be added to them.
    frozen: HashSet<Path>,
    /// Arrays made by `[[header]]`.
    table_arrays: HashSet<Path>,
}

fn starts_with(path: &Path, prefix: &Path) -> bool {
    path.len() > prefix.len() && path[..prefix.len()] == prefix[..]
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, offset: usize) -> Option<char> {
        self.chars.get(self.pos + offset).copied()
    }

    fn error(&self, message: impl Into<String>) -> TomlError {
        // At the end of the text, BurntSushi names the line of the last item read.
        let mut end = self.pos.min(self.chars.len());
        if end == self.chars.len() {
            while end > 0 && self.chars[end - 1].is_whitespace() {
                end -= 1;
            }
        }
        self.error_at(end, message)
    }

    fn error_at(&self, end: usize, message: impl Into<String>) -> TomlError {
        let end = end.min(self.chars.len());
        let line = 1 + self.chars[..end].iter().filter(|c| **c == '\n').count();
        TomlError {
            line,
            last_key: self.last_key.join("."),
            message: message.into(),
        }
    }

    fn found(&self) -> String {
        match self.peek() {
            None => "end of file".to_owned(),
            Some(c) => format!("{c:?}"),
        }
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.pos += 1;
        }
    }

    fn skip_comment(&mut self) -> Result<(), TomlError> {
        if self.peek() != Some('#') {
            return Ok(());
        }
        while let Some(c) = self.peek() {
            if c == '\n' || (c == '\r' && self.peek_at(1) == Some('\n')) {
                break;
            }
            if is_control(c) {
                return Err(self.error(format!(
                    "control characters are not allowed in comments: {c:?}"
                )));
            }
            self.pos += 1;
        }
        Ok(())
    }

    /// Whitespace, comments and line breaks between items.
    fn skip_trivia(&mut self) -> Result<(), TomlError> {
        loop {
            self.skip_ws();
            self.skip_comment()?;
            match self.peek() {
                Some('\n') => self.pos += 1,
                Some('\r') if self.peek_at(1) == Some('\n') => self.pos += 2,
                _ => return Ok(()),
            }
        }
    }

    fn document(&mut self) -> Result<(), TomlError> {
        loop {
            self.skip_trivia()?;
            match self.peek() {
                None => return Ok(()),
                Some('[') if self.peek_at(1) == Some('[') => self.table_array_header()?,
                Some('[') => self.table_header()?,
                Some(_) => {
                    let path = self.current.clone();
                    self.key_value_line(&path)?;
                }
            }
            self.skip_ws();
            self.skip_comment()?;
            match self.peek() {
                None | Some('\n') => {}
                Some('\r') if self.peek_at(1) == Some('\n') => {}
                Some(_) => {
                    let found = self.found();
                    self.last_key.clear();
                    return Err(self.error(format!(
                        "expected a top-level item to end with a newline, comment, or EOF, but got {found} instead"
                    )));
                }
            }
        }
    }

    fn table_header(&mut self) -> Result<(), TomlError> {
        let path = self.table_name(1)?;
        let defined = self.headers.contains(&path)
            || self.dotted.contains(&path)
            || self.frozen.contains(&path)
            || self.table_arrays.contains(&path)
            || self.holds_value(&path);
        if defined {
            return Err(self.error(format!(
                "Key '{}' has already been defined.",
                path.join(".")
            )));
        }
        self.table_mut(&path)?;
        self.headers.insert(path.clone());
        self.current = path;
        Ok(())
    }

    fn table_array_header(&mut self) -> Result<(), TomlError> {
        let path = self.table_name(2)?;
        let (parent, name) = path.split_at(path.len() - 1);
        let parent = parent.to_vec();
        let name = name[0].clone();
        let array_known = self.table_arrays.contains(&path);
        let table = self.table_mut(&parent)?;
        match table.get_mut(&name) {
            None => {
                table.insert(name, Data::List(vec![Data::Map(Map::default())]));
            }
            Some(Data::List(items)) if array_known => items.push(Data::Map(Map::default())),
            Some(_) => {
                return Err(self.error(format!(
                    "Key '{}' was already created and cannot be used as an array.",
                    path.join(".")
                )));
            }
        }
        self.table_arrays.insert(path.clone());
        // A new element starts empty: what was defined under the previous one is forgotten.
        for set in [&mut self.headers, &mut self.dotted, &mut self.frozen] {
            set.retain(|p| !starts_with(p, &path));
        }
        self.current = path;
        Ok(())
    }

    /// The name of a table (`[name]`, one bracket) or array of tables (`[[name]]`, two), with
    /// its brackets.
    fn table_name(&mut self, brackets: usize) -> Result<Path, TomlError> {
        // BurntSushi names the table of the previous key in errors about headers.
        self.last_key.pop();
        self.pos += brackets;
        self.skip_ws();
        let path = self.key()?;
        self.skip_ws();
        for _ in 0..brackets {
            if self.peek() != Some(']') {
                let found = self.found();
                // BurntSushi has already read the offending character when it reports.
                let e = self.error_at(
                    self.pos + 1,
                    format!("expected '.' or ']' to end table name, but got {found} instead"),
                );
                return Err(TomlError {
                    last_key: String::new(),
                    ..e
                });
            }
            self.pos += 1;
        }
        Ok(path)
    }

    /// Whether `path` names a value that is not a table.
    fn holds_value(&self, path: &[String]) -> bool {
        let mut table = &self.root;
        for (i, segment) in path.iter().enumerate() {
            let last = i + 1 == path.len();
            match table.get(segment) {
                None => return false,
                Some(Data::Map(m)) => table = m,
                Some(Data::List(items)) => match items.last() {
                    Some(Data::Map(m)) if !last => table = m,
                    _ => return true,
                },
                Some(_) => return true,
            }
        }
        false
    }

    /// The table at `path`, created (as an implicit table) where missing. The last element
    /// of an array of tables stands for the array.
    fn table_mut(&mut self, path: &[String]) -> Result<&mut Map, TomlError> {
        let template = self.error("");
        let fail = |i: usize, what: &str| TomlError {
            message: format!("key {:?} {what}", path[..=i].join(".")),
            ..template.clone()
        };
        for i in 0..path.len() {
            if self.frozen.contains(&path[..=i]) {
                return Err(fail(i, "cannot be extended"));
            }
        }
        let mut table = &mut self.root;
        for (i, segment) in path.iter().enumerate() {
            let entry = table
                .entry(segment.clone())
                .or_insert_with(|| Data::Map(Map::default()));
            table = match entry {
                Data::Map(m) => m,
                Data::List(items) => match items.last_mut() {
                    Some(Data::Map(m)) => m,
                    _ => return Err(fail(i, "is not a table")),
                },
                _ => return Err(fail(i, "is not a table")),
            };
        }
        Ok(table)
    }

    /// A dotted key: bare or quoted parts separated by dots.
    fn key(&mut self) -> Result<Path, TomlError> {
        let mut parts = vec![self.simple_key()?];
        loop {
            let save = self.pos;
            self.skip_ws();
            if self.peek() != Some('.') {
                self.pos = save;
                return Ok(parts);
            }
            self.pos += 1;
            self.skip_ws();
            parts.push(self.simple_key()?);
        }
    }

    fn simple_key(&mut self) -> Result<String, TomlError> {
        match self.peek() {
            Some(quote @ ('"' | '\'')) => {
                self.pos += 1;
                self.string(quote, false)
            }
            Some(c) if is_bare(c) => {
                let start = self.pos;
                while self.peek().is_some_and(is_bare) {
                    self.pos += 1;
                }
                Ok(self.chars[start..self.pos].iter().collect())
            }
            Some('=') => Err(self.error("unexpected '=': key name appears blank")),
            _ => {
                let found = self.found();
                Err(self.error(format!("expected a key but found {found} instead")))
            }
        }
    }

    /// `key = value` into the table at `table_path` (the current table, or an inline one).
    fn key_value_line(&mut self, table_path: &Path) -> Result<(), TomlError> {
        let key = self.key()?;
        let mut full = table_path.clone();
        full.extend(key.iter().cloned());
        self.skip_ws();
        // BurntSushi's lexer stops at the end of input before the parser sees this key, so
        // the error names the key before it.
        if self.peek().is_none() {
            return Err(self.error("unexpected EOF; expected key separator '='"));
        }
        self.last_key = full.clone();
        self.key_separator()?;
        let value = self.value(0, &full)?;
        self.insert(table_path, &key, value)
    }

    /// The `=` between a key and its value, and the whitespace after it.
    fn key_separator(&mut self) -> Result<(), TomlError> {
        if self.peek() != Some('=') {
            let found = self.found();
            return Err(self.error(format!(
                "expected key separator '=', but got {found} instead"
            )));
        }
        self.pos += 1;
        self.skip_ws();
        Ok(())
    }

    fn insert(&mut self, table_path: &Path, key: &[String], value: Data) -> Result<(), TomlError> {
        let Some((last, parents)) = key.split_last() else {
            return Ok(());
        };
        let mut path = table_path.clone();
        for p in parents {
            path.push(p.clone());
            self.dotted.insert(path.clone());
        }
        let duplicate = self.error(format!("Key '{}' has already been defined.", {
            let mut full = path.clone();
            full.push(last.clone());
            full.join(".")
        }));
        let table = self.table_mut(&path)?;
        if table.contains_key(last) {
            return Err(duplicate);
        }
        table.insert(last.clone(), value);
        Ok(())
    }

    fn value(&mut self, depth: usize, path: &Path) -> Result<Data, TomlError> {
        if depth > MAX_DEPTH {
            return Err(self.error("value nested too deeply"));
        }
        match self.peek() {
            None => Err(self.error("unexpected EOF; expected value")),
            Some(quote @ ('"' | '\'')) => {
                let multiline = self.peek_at(1) == Some(quote) && self.peek_at(2) == Some(quote);
                self.pos += if multiline { 3 } else { 1 };
                self.string(quote, multiline).map(Data::String)
            }
            Some('[') => {
                self.frozen.insert(path.clone());
                self.array(depth, path)
            }
            Some('{') => {
                self.frozen.insert(path.clone());
                self.inline_table(depth, path)
            }
            Some(_) => self.scalar(),
        }
    }

    fn array(&mut self, depth: usize, path: &Path) -> Result<Data, TomlError> {
        self.pos += 1;
        let mut items = Vec::new();
        loop {
            self.skip_trivia()?;
            match self.peek() {
                Some(']') => {
                    self.pos += 1;
                    return Ok(Data::List(items));
                }
                Some(',') => return Err(self.error("unexpected comma")),
                _ => {}
            }
            items.push(self.value(depth + 1, path)?);
            if self.item_end(']', |found| {
                format!("expected a comma (',') or array terminator (']'), but got {found}")
            })? {
                return Ok(Data::List(items));
            }
        }
    }

    fn inline_table(&mut self, depth: usize, path: &Path) -> Result<Data, TomlError> {
        self.pos += 1;
        let mut table = Map::default();
        // TOML 1.1, which BurntSushi/toml reads: line breaks, comments and a trailing comma
        // are allowed inside inline tables.
        loop {
            self.skip_trivia()?;
            if self.peek() == Some('}') {
                self.pos += 1;
                return Ok(Data::Map(table));
            }
            let key = self.key()?;
            self.skip_ws();
            self.key_separator()?;
            let mut full = path.clone();
            full.extend(key.iter().cloned());
            self.last_key = full.clone();
            let value = self.value(depth + 1, &full)?;
            if !insert_inline(&mut table, &key, value) {
                return Err(self.error(format!(
                    "Key '{}' has already been defined.",
                    full.join(".")
                )));
            }
            if self.item_end('}', |found| {
                format!(
                    "expected a comma or an inline table terminator '}}', but got {found} instead"
                )
            })? {
                return Ok(Data::Map(table));
            }
        }
    }

    /// Reads what follows an array item or inline-table entry: a comma (false: more may
    /// come) or the closing bracket (true); anything else is the error `expected` words.
    fn item_end(
        &mut self,
        close: char,
        expected: impl FnOnce(String) -> String,
    ) -> Result<bool, TomlError> {
        self.skip_trivia()?;
        match self.peek() {
            Some(',') => {
                self.pos += 1;
                Ok(false)
            }
            Some(c) if c == close => {
                self.pos += 1;
                Ok(true)
            }
            _ => Err(self.error(expected(self.found()))),
        }
    }

    /// A basic (`"`) or literal (`'`) string after its opening quote(s); only basic strings
    /// know escapes.
    fn string(&mut self, quote: char, multiline: bool) -> Result<String, TomlError> {
        let basic = quote == '"';
        let mut out = String::new();
        if multiline {
            self.skip_first_newline();
        }
        loop {
            let Some(c) = self.peek() else {
                // BurntSushi quotes the two terminators differently.
                return Err(self.error(if basic {
                    "unexpected EOF; expected '\"'"
                } else {
                    "unexpected EOF; expected \"'\""
                }));
            };
            if c == quote {
                if !multiline {
                    self.pos += 1;
                    return Ok(out);
                }
                let quotes = self.count(quote);
                if quotes >= 3 {
                    out.extend(std::iter::repeat_n(quote, quotes.min(5) - 3));
                    self.pos += quotes.min(5);
                    return Ok(out);
                }
                out.extend(std::iter::repeat_n(quote, quotes));
                self.pos += quotes;
                continue;
            }
            self.pos += 1;
            match c {
                '\\' if basic && multiline && self.line_ending_backslash() => {}
                '\\' if basic => out.push(self.escape()?),
                '\n' if multiline => out.push('\n'),
                '\r' if multiline && self.peek() == Some('\n') => {}
                '\n' => {
                    self.pos -= 1;
                    return Err(self.error("strings cannot contain newlines"));
                }
                c if is_control(c) => {
                    self.pos -= 1;
                    return Err(self.error(format!(
                        "control characters are not allowed in strings: {c:?}"
                    )));
                }
                c => out.push(c),
            }
        }
    }

    fn count(&self, c: char) -> usize {
        self.chars[self.pos..]
            .iter()
            .take_while(|x| **x == c)
            .count()
    }

    fn skip_first_newline(&mut self) {
        if self.peek() == Some('\n') {
            self.pos += 1;
        } else if self.peek() == Some('\r') && self.peek_at(1) == Some('\n') {
            self.pos += 2;
        }
    }

    /// A backslash at the end of a line in a multi-line basic string swallows the line break
    /// and all whitespace after it.
    fn line_ending_backslash(&mut self) -> bool {
        let mut i = self.pos;
        while matches!(self.chars.get(i), Some(' ' | '\t')) {
            i += 1;
        }
        let at_break = matches!(self.chars.get(i), Some('\n'))
            || (self.chars.get(i) == Some(&'\r') && self.chars.get(i + 1) == Some(&'\n'));
        if !at_break {
            return false;
        }
        self.pos = i;
        while matches!(self.peek(), Some(' ' | '\t' | '\n' | '\r')) {
            self.pos += 1;
        }
        true
    }

    fn escape(&mut self) -> Result<char, TomlError> {
        let Some(c) = self.peek() else {
            return Err(self.error("unexpected EOF in escape sequence"));
        };
        self.pos += 1;
        Ok(match c {
            'b' => '\u{8}',
            't' => '\t',
            'n' => '\n',
            'f' => '\u{c}',
            'r' => '\r',
            '"' => '"',
            '\\' => '\\',
            'e' => '\u{1b}',
            'x' => self.unicode_escape(2)?,
            'u' => self.unicode_escape(4)?,
            'U' => self.unicode_escape(8)?,
            other => {
                self.pos -= 1;
                return Err(self.error(format!("invalid escape character {other:?}; only the following escape characters are allowed: \\b, \\t, \\n, \\f, \\r, \\e, \\\", \\\\, \\xXX, \\uXXXX, and \\UXXXXXXXX")));
            }
        })
    }

    fn unicode_escape(&mut self, digits: usize) -> Result<char, TomlError> {
        let text: String = self.chars[self.pos..].iter().take(digits).collect();
        let code = (text.chars().count() == digits)
            .then(|| u32::from_str_radix(&text, 16).ok())
            .flatten()
            .and_then(char::from_u32);
        match code {
            Some(c) => {
                self.pos += digits;
                Ok(c)
            }
            None => Err(self.error(format!("invalid unicode escape: \\u{text}"))),
        }
    }

    /// Numbers, booleans and date-times: everything up to a delimiter.
    fn scalar(&mut self) -> Result<Data, TomlError> {
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '+' | '-' | '.' | ':'))
        {
            self.pos += 1;
        }
        // A date and a time may be separated by one space.
        if is_date(&self.chars[start..self.pos])
            && self.peek() == Some(' ')
            && self.peek_at(1).is_some_and(|c| c.is_ascii_digit())
        {
            let save = self.pos;
            self.pos += 1;
            let time_start = self.pos;
            while self
                .peek()
                .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.' | ':'))
            {
                self.pos += 1;
            }
            if !is_time_start(&self.chars[time_start..self.pos]) {
                self.pos = save;
            }
        }
        let token: String = self.chars[start..self.pos].iter().collect();
        match token.as_str() {
            "true" => return Ok(Data::Bool(true)),
            "false" => return Ok(Data::Bool(false)),
            "inf" | "+inf" => return Ok(Data::Float(f64::INFINITY)),
            "-inf" => return Ok(Data::Float(f64::NEG_INFINITY)),
            "nan" | "+nan" | "-nan" => return Ok(Data::Float(f64::NAN)),
            "" => {
                let found = self.found();
                return Err(self.error(format!("expected value but found {found} instead")));
            }
            _ => {}
        }
        if let Some(text) = datetime(&token) {
            return Ok(Data::String(text));
        }
        if let Some(v) = integer(&token) {
            return v.map(Data::Int).map_err(|m| self.at(start, m));
        }
        if let Some(f) = float(&token) {
            return f.map(Data::Float).map_err(|m| self.at(start, m));
        }
        Err(self.at(start, number_problem(&token)))
    }

    fn at(&self, pos: usize, message: String) -> TomlError {
        let mut e = self.error(message);
        e.line = 1 + self.chars[..pos].iter().filter(|c| **c == '\n').count();
        e
    }
}

/// Inserts a dotted key into an inline table; false when the key is already there.
fn insert_inline(table: &mut Map, key: &[String], value: Data) -> bool {
    let Some((last, parents)) = key.split_last() else {
        return false;
    };
    let mut t = table;
    for p in parents {
        let entry = t
            .entry(p.clone())
            .or_insert_with(|| Data::Map(Map::default()));
        match entry {
            Data::Map(m) => t = m,
            _ => return false,
        }
    }
    if t.contains_key(last) {
        return false;
    }
    t.insert(last.clone(), value);
    true
}

fn is_bare(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

fn is_control(c: char) -> bool {
    (c < ' ' && c != '\t') || c == '\u{7f}'
}

fn digits_with_underscores(s: &str, radix: u32) -> Option<String> {
    if s.is_empty() || s.starts_with('_') || s.ends_with('_') || s.contains("__") {
        return None;
    }
    let digits: String = s.chars().filter(|c| *c != '_').collect();
    digits.chars().all(|c| c.is_digit(radix)).then_some(digits)
}

/// An integer token: `Some(Ok)` for a valid one, `Some(Err)` when out of range.
fn integer(token: &str) -> Option<Result<i64, String>> {
    let radix = match token.get(..2) {
        Some("0x") => Some(16),
        Some("0o") => Some(8),
        Some("0b") => Some(2),
        _ => None,
    };
    if let Some(radix) = radix {
        let digits = digits_with_underscores(&token[2..], radix)?;
        return Some(
            i64::from_str_radix(&digits, radix)
                .map_err(|_| format!("{token} is out of range for int64")),
        );
    }
    let (sign, body) = match token.strip_prefix(['+', '-']) {
        Some(rest) => (&token[..1], rest),
        None => ("", token),
    };
    let digits = digits_with_underscores(body, 10)?;
    if digits.len() > 1 && digits.starts_with('0') {
        return None;
    }
    Some(
        format!("{sign}{digits}")
            .parse::<i64>()
            .map_err(|_| format!("{token} is out of range for int64")),
    )
}

/// BurntSushi's complaint about a token that is no valid value.
fn number_problem(token: &str) -> String {
    let body = token.strip_prefix(['+', '-']).unwrap_or(token);
    let numeric = body.starts_with(|c: char| c.is_ascii_digit() || c == '.')
        && body
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '_' | '.' | 'e' | 'E' | '+' | '-'));
    if !numeric {
        return format!("expected value but found {token:?} instead");
    }
    let kind = if body.contains(['.', 'e', 'E']) {
        "float"
    } else {
        "integer"
    };
    if body.starts_with('.') {
        return "floats must start with a digit, not '.'".to_owned();
    }
    let bad_underscore = body.starts_with('_')
        || body.ends_with('_')
        || body.contains("__")
        || body.contains("_.")
        || body.contains("._");
    if bad_underscore {
        return format!("Invalid {kind} {token:?}: underscores must be surrounded by digits");
    }
    if body.ends_with('.') || body.contains(".e") || body.contains(".E") {
        return format!("Invalid float {token:?}: '.' must be followed by one or more digits");
    }
    if body.len() > 1 && body.starts_with('0') && body.as_bytes()[1].is_ascii_digit() {
        return format!("Invalid {kind} {token:?}: cannot have leading zeroes");
    }
    format!("expected value but found {token:?} instead")
}

/// A float token: `Some(Ok)` for a valid one, `Some(Err)` when beyond float64.
fn float(token: &str) -> Option<Result<f64, String>> {
    let body = token.strip_prefix(['+', '-']).unwrap_or(token);
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let (int_part, frac) = match mantissa.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (mantissa, None),
    };
    let int_digits = digits_with_underscores(int_part, 10)?;
    if int_digits.len() > 1 && int_digits.starts_with('0') {
        return None;
    }
    let mut text = format!("{}{int_digits}", &token[..token.len() - body.len()]);
    if let Some(f) = frac {
        text.push('.');
        text.push_str(&digits_with_underscores(f, 10)?);
    }
    if let Some(e) = exponent {
        let (esign, edigits) = match e.strip_prefix(['+', '-']) {
            Some(rest) => (&e[..1], rest),
            None => ("", e),
        };
        text.push('e');
        text.push_str(esign);
        text.push_str(&digits_with_underscores(edigits, 10)?);
    }
    if frac.is_none() && exponent.is_none() {
        return None;
    }
    let f = text.parse::<f64>().ok()?;
    Some(if f.is_finite() {
        Ok(f)
    } else {
        Err(format!("{token} is out of range for float64"))
    })
}

fn is_date(chars: &[char]) -> bool {
    chars.len() >= 10
        && chars[..4].iter().all(char::is_ascii_digit)
        && chars[4] == '-'
        && chars[5..7].iter().all(char::is_ascii_digit)
        && chars[7] == '-'
        && chars[8..10].iter().all(char::is_ascii_digit)
}

fn is_time_start(chars: &[char]) -> bool {
    chars.len() >= 5
        && chars[..2].iter().all(char::is_ascii_digit)
        && chars[2] == ':'
        && chars[3..5].iter().all(char::is_ascii_digit)
}

/// A TOML date-time, local date or local time, as Go's `time.Time` marshals it.
fn datetime(token: &str) -> Option<String> {
    let chars: Vec<char> = token.chars().collect();
    if is_date(&chars) {
        let date = &token[..10];
        let (y, m, d) = (
            &date[..4],
            date[5..7].parse::<u32>().ok()?,
            date[8..10].parse::<u32>().ok()?,
        );
        if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
            return None;
        }
        if token.len() == 10 {
            return Some(format!("{y}-{}-{}T00:00:00Z", &date[5..7], &date[8..10]));
        }
        let sep = chars[10];
        if !matches!(sep, 'T' | 't' | ' ') {
            return None;
        }
        let (time, zone) = split_zone(&token[11..])?;
        return Some(format!("{date}T{}{zone}", time_text(time)?));
    }
    let time = time_text(token)?;
    Some(format!("0000-01-01T{time}Z"))
}

/// Splits `HH:MM:SS[.frac]` from its offset, giving Go's form of the offset (`Z` for zero).
fn split_zone(rest: &str) -> Option<(&str, String)> {
    if let Some(time) = rest.strip_suffix(['Z', 'z']) {
        return Some((time, "Z".to_owned()));
    }
    match rest.len().checked_sub(6).map(|i| rest.split_at(i)) {
        Some((time, offset))
            if matches!(offset.as_bytes()[0], b'+' | b'-')
                && offset.as_bytes()[3] == b':'
                && offset[1..3].bytes().all(|b| b.is_ascii_digit())
                && offset[4..].bytes().all(|b| b.is_ascii_digit()) =>
        {
            let zero = &offset[1..3] == "00" && &offset[4..] == "00";
            Some((
                time,
                if zero {
                    "Z".to_owned()
                } else {
                    offset.to_owned()
                },
            ))
        }
        // A local date-time: taken as UTC.
        _ => Some((rest, "Z".to_owned())),
    }
}

/// `HH:MM[:SS][.frac]` (seconds are optional in TOML 1.1) as `HH:MM:SS[.frac]`, the
/// fraction cut to nanoseconds and its trailing zeros dropped.
fn time_text(time: &str) -> Option<String> {
    let chars: Vec<char> = time.chars().collect();
    if !is_time_start(&chars) || !time.is_ascii() {
        return None;
    }
    let (seconds, rest) = if chars.get(5) == Some(&':') {
        let s = time.get(6..8)?;
        (s, &time[8..])
    } else {
        ("00", &time[5..])
    };
    if !seconds.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (h, m, s) = (
        time[..2].parse::<u32>().ok()?,
        time[3..5].parse::<u32>().ok()?,
        seconds.parse::<u32>().ok()?,
    );
    if h > 23 || m > 59 || s > 60 {
        return None;
    }
    let mut out = format!("{}:{seconds}", &time[..5]);
    match rest {
        "" => {}
        frac => {
            let digits = frac.strip_prefix('.')?;
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let kept: String = digits.chars().take(9).collect();
            let kept = kept.trim_end_matches('0');
            if !kept.is_empty() {
                out.push('.');
                out.push_str(kept);
            }
        }
    }
    Some(out)
}
