//! Helm's `--set` family (pkg/strvals): `a.b=1,c[0]=x,d={x,y}` parsed into values.
//!
//! Modes: `--set` types `true`/`false`/`null`/integers (as int64), `--set-string` keeps
//! strings, `--set-json` reads JSON values, `--set-file` reads each value through a caller's
//! reader, `--set-literal` takes everything after `=` verbatim. A backslash escapes the next
//! character except in literal mode. Parsing writes into an existing map, as Helm merges
//! each flag into the values gathered so far; errors read like Helm's.

use std::fmt;

use crate::formats::json;
use crate::formats::tree::{Data, Map};

/// Largest list index accepted (`a[65536]`), as Helm's `MaxIndex`.
pub const MAX_INDEX: usize = 65536;

/// Deepest `a.b.c` name nesting accepted, as Helm's `MaxNestedNameLevel`.
pub const MAX_NESTED_NAME_LEVEL: usize = 30;

/// Deepest nesting of lists and maps in one assignment; Go recurses without a bound, we stop
/// here instead of exhausting the stack.
pub const MAX_RECURSION: usize = 200;

/// A `--set` style parse error, worded like Helm's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StrvalsError(pub String);

impl fmt::Display for StrvalsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StrvalsError {}

/// Reads the value of a `--set-file` entry (the text after `=`, usually a path).
pub type FileReader<'a> = dyn FnMut(&str) -> Result<Data, String> + 'a;

enum Mode<'r, 'a> {
    Typed,
    Strings,
    Json,
    File(&'r mut FileReader<'a>),
    Literal,
}

/// `--set`: `strvals.ParseInto`.
pub fn parse_into(line: &str, dest: &mut Map) -> Result<(), StrvalsError> {
    Parser::new(line, Mode::Typed).run(dest)
}

/// `--set-string`: `strvals.ParseIntoString`.
pub fn parse_into_string(line: &str, dest: &mut Map) -> Result<(), StrvalsError> {
    Parser::new(line, Mode::Strings).run(dest)
}

/// `--set-json`: `strvals.ParseJSON`; an empty value means `null`.
pub fn parse_json_into(line: &str, dest: &mut Map) -> Result<(), StrvalsError> {
    Parser::new(line, Mode::Json).run(dest)
}

/// `--set-file`: `strvals.ParseIntoFile`, each value passed to `reader`.
pub fn parse_file_into(
    line: &str,
    dest: &mut Map,
    reader: &mut FileReader<'_>,
) -> Result<(), StrvalsError> {
    Parser::new(line, Mode::File(reader)).run(dest)
}

/// `--set-literal`: `strvals.ParseLiteralInto`; the value is the rest of the line verbatim.
pub fn parse_literal_into(line: &str, dest: &mut Map) -> Result<(), StrvalsError> {
    Parser::new(line, Mode::Literal).run(dest)
}

/// `strvals.Parse`: a fresh map from one `--set` line.
pub fn parse(line: &str) -> Result<Map, StrvalsError> {
    let mut m = Map::default();
    parse_into(line, &mut m)?;
    Ok(m)
}

/// What ended a run of characters.
#[derive(PartialEq, Clone, Copy)]
enum Stop {
    Char(char),
    End,
}

/// Go's flow signals: `End` is `io.EOF` (a clean end), `Fail` a real error.
enum Flow {
    End,
    Fail(StrvalsError),
}

impl From<StrvalsError> for Flow {
    fn from(e: StrvalsError) -> Self {
        Flow::Fail(e)
    }
}

fn fail(msg: String) -> Flow {
    Flow::Fail(StrvalsError(msg))
}

/// Go's `%q` of a string.
fn go_quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        out.push_str(&go_escape(c, '"'));
    }
    out.push('"');
    out
}

/// Go's `%q` of a `[]rune`: each rune quoted, space separated, in brackets.
fn go_quote_runes(s: &str) -> String {
    let quoted: Vec<String> = s
        .chars()
        .map(|c| format!("'{}'", go_escape(c, '\'')))
        .collect();
    format!("[{}]", quoted.join(" "))
}

fn go_escape(c: char, quote: char) -> String {
    match c {
        '\x07' => "\\a".into(),
        '\x08' => "\\b".into(),
        '\x0c' => "\\f".into(),
        '\n' => "\\n".into(),
        '\r' => "\\r".into(),
        '\t' => "\\t".into(),
        '\x0b' => "\\v".into(),
        '\\' => "\\\\".into(),
        c if c == quote => format!("\\{c}"),
        c if (c as u32) < 0x20 || c as u32 == 0x7f => format!("\\x{:02x}", c as u32),
        c if c.is_control() => format!("\\u{:04x}", c as u32),
        c => c.to_string(),
    }
}

/// `strconv.Atoi` with Go's error text.
fn atoi(s: &str) -> Result<i64, String> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "strconv.Atoi: parsing {}: invalid syntax",
            go_quote(s)
        ));
    }
    s.parse::<i64>()
        .map_err(|_| format!("strconv.Atoi: parsing {}: value out of range", go_quote(s)))
}

/// Helm's `typedVal`: booleans, null and base-10 integers not starting with `0`.
fn typed_value(text: &str, strings: bool) -> Data {
    if strings {
        return Data::String(text.to_owned());
    }
    if text.eq_ignore_ascii_case("true") {
        return Data::Bool(true);
    }
    if text.eq_ignore_ascii_case("false") {
        return Data::Bool(false);
    }
    if text.eq_ignore_ascii_case("null") {
        return Data::Null;
    }
    if text == "0" {
        return Data::Int(0);
    }
    if !text.is_empty() && !text.starts_with('0') {
        let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
        if !digits.is_empty()
            && digits.bytes().all(|b| b.is_ascii_digit())
            && let Ok(i) = text.parse::<i64>()
        {
            return Data::Int(i);
        }
    }
    Data::String(text.to_owned())
}

fn type_mismatch(found: &Data, wanted: &str) -> Flow {
    fail(format!(
        "unable to parse key: interface conversion: interface {{}} is {}, not {wanted}",
        found.go_type_name()
    ))
}

const LIST_TYPE: &str = "[]interface {}";
const MAP_TYPE: &str = "map[string]interface {}";

fn set(data: &mut Map, key: &str, value: Data) {
    if !key.is_empty() {
        data.insert(key.to_owned(), value);
    }
}

fn set_index(mut list: Vec<Data>, index: i64, value: Data) -> Result<Vec<Data>, (Vec<Data>, Flow)> {
    if index < 0 {
        return Err((list, fail(format!("negative {index} index not allowed"))));
    }
    if index as u64 > MAX_INDEX as u64 {
        return Err((
            list,
            fail(format!(
                "index of {index} is greater than maximum supported index of {MAX_INDEX}"
            )),
        ));
    }
    let index = index as usize;
    if list.len() <= index {
        list.resize(index + 1, Data::Null);
    }
    list[index] = value;
    Ok(list)
}

struct Parser<'r, 'a> {
    chars: Vec<char>,
    pos: usize,
    mode: Mode<'r, 'a>,
    depth: usize,
}

impl<'r, 'a> Parser<'r, 'a> {
    fn new(line: &str, mode: Mode<'r, 'a>) -> Parser<'r, 'a> {
        Parser {
            chars: line.chars().collect(),
            pos: 0,
            mode,
            depth: 0,
        }
    }

    fn literal(&self) -> bool {
        matches!(self.mode, Mode::Literal)
    }

    fn run(mut self, dest: &mut Map) -> Result<(), StrvalsError> {
        loop {
            match self.key(dest, 0) {
                Ok(()) => {}
                Err(Flow::End) => return Ok(()),
                Err(Flow::Fail(e)) => return Err(e),
            }
        }
    }

    /// Reads up to a stop character; a backslash takes the next character as is (not in
    /// literal mode). Returns the text and what stopped it.
    fn until(&mut self, stops: &[char]) -> (String, Stop) {
        let mut out = String::new();
        while let Some(&c) = self.chars.get(self.pos) {
            self.pos += 1;
            if stops.contains(&c) {
                return (out, Stop::Char(c));
            }
            if c == '\\' && !self.literal() {
                match self.chars.get(self.pos) {
                    Some(&next) => {
                        self.pos += 1;
                        out.push(next);
                    }
                    None => return (out, Stop::End),
                }
            } else {
                out.push(c);
            }
        }
        (out, Stop::End)
    }

    fn enter(&mut self) -> Result<(), Flow> {
        self.depth += 1;
        if self.depth > MAX_RECURSION {
            return Err(fail(format!(
                "value nesting is deeper than the supported {MAX_RECURSION} levels"
            )));
        }
        Ok(())
    }

    fn key(&mut self, data: &mut Map, level: usize) -> Result<(), Flow> {
        self.enter()?;
        let result = self.key_inner(data, level);
        self.depth -= 1;
        result
    }

    fn key_inner(&mut self, data: &mut Map, level: usize) -> Result<(), Flow> {
        let stops: &[char] = if self.literal() {
            &['=', '[', '.']
        } else {
            &['=', '[', ',', '.']
        };
        let (key, stop) = self.until(stops);
        match stop {
            Stop::End if key.is_empty() => Err(Flow::End),
            Stop::End => Err(fail(format!("key {} has no value", go_quote(&key)))),
            Stop::Char('[') => {
                let index = self.key_index()?;
                let list = match data.get(&key) {
                    None => Vec::new(),
                    Some(Data::List(l)) => l.clone(),
                    Some(other) => return Err(type_mismatch(other, LIST_TYPE)),
                };
                match self.list_item(list, index, level) {
                    Ok(list) => {
                        set(data, &key, Data::List(list));
                        Ok(())
                    }
                    Err((list, flow)) => {
                        set(data, &key, list.map_or(Data::Null, Data::List));
                        Err(flow)
                    }
                }
            }
            Stop::Char('=') => self.assign(data, &key),
            Stop::Char(',') => {
                set(data, &key, Data::String(String::new()));
                Err(fail(format!(
                    "key {} has no value (cannot end with ,)",
                    go_quote(&key)
                )))
            }
            Stop::Char(_) => {
                let level = level + 1;
                if level > MAX_NESTED_NAME_LEVEL {
                    return Err(fail(format!(
                        "value name nested level is greater than maximum supported nested level of {MAX_NESTED_NAME_LEVEL}"
                    )));
                }
                let mut inner = match data.get(&key) {
                    None => Map::default(),
                    Some(Data::Map(m)) => m.clone(),
                    Some(other) => return Err(type_mismatch(other, MAP_TYPE)),
                };
                let result = self.key(&mut inner, level);
                if result.is_ok() && inner.is_empty() {
                    return Err(fail(format!("key map {} has no value", go_quote(&key))));
                }
                if !inner.is_empty() {
                    set(data, &key, Data::Map(inner));
                }
                result
            }
        }
    }

    /// The value after `key=`.
    fn assign(&mut self, data: &mut Map, key: &str) -> Result<(), Flow> {
        match self.value()? {
            Some(v) => {
                set(data, key, v);
                Ok(())
            }
            None => {
                // Nothing after `=`: the key gets an empty string and the line ends.
                set(data, key, Data::String(String::new()));
                Err(Flow::End)
            }
        }
    }

    /// Reads one value in the current mode; `None` when the line ended right after `=`
    /// (not in JSON or literal mode, which have their own meaning for that).
    fn value(&mut self) -> Result<Option<Data>, Flow> {
        match self.mode {
            Mode::Literal => {
                let rest: String = self.chars[self.pos..].iter().collect();
                self.pos = self.chars.len();
                return Ok(Some(Data::String(rest)));
            }
            Mode::Json => return self.json_value().map(Some),
            _ => {}
        }
        match self.chars.get(self.pos) {
            None => Ok(None),
            Some('{') => {
                self.pos += 1;
                self.value_list().map(|l| Some(Data::List(l)))
            }
            Some(_) => {
                let (text, _) = self.until(&[',']);
                self.read(&text).map(Some)
            }
        }
    }

    fn read(&mut self, text: &str) -> Result<Data, Flow> {
        match &mut self.mode {
            Mode::Typed => Ok(typed_value(text, false)),
            Mode::Strings => Ok(typed_value(text, true)),
            Mode::File(reader) => reader(text).map_err(fail),
            Mode::Json | Mode::Literal => Ok(Data::String(text.to_owned())),
        }
    }

    /// `{a,b}` after the opening brace; `{}` is a list holding one empty string, as in Helm.
    fn value_list(&mut self) -> Result<Vec<Data>, Flow> {
        let mut list = Vec::new();
        loop {
            let (text, stop) = self.until(&[',', '}']);
            match stop {
                Stop::End => return Err(fail("list must terminate with '}'".into())),
                Stop::Char('}') => {
                    if self.chars.get(self.pos) == Some(&',') {
                        self.pos += 1;
                    }
                    list.push(self.read(&text)?);
                    return Ok(list);
                }
                Stop::Char(_) => list.push(self.read(&text)?),
            }
        }
    }

    /// Skips spaces; true (consuming a comma) when the value is empty.
    fn empty_value(&mut self) -> bool {
        while let Some(&c) = self.chars.get(self.pos) {
            if c == ',' {
                self.pos += 1;
                return true;
            }
            if !c.is_whitespace() {
                return false;
            }
            self.pos += 1;
        }
        true
    }

    fn json_value(&mut self) -> Result<Data, Flow> {
        if self.empty_value() {
            return Ok(Data::Null);
        }
        let rest: String = self.chars[self.pos..].iter().collect();
        let (value, used) = json::parse_prefix(&rest).map_err(|e| fail(e.message))?;
        self.pos += rest[..used].chars().count();
        self.empty_value();
        Ok(value)
    }

    /// The index inside `[…]`. A line ending inside the brackets ends parsing cleanly:
    /// Helm wraps that io.EOF with `%w`, so its caller still sees a plain end of input.
    fn key_index(&mut self) -> Result<i64, Flow> {
        let (text, stop) = self.until(&[']']);
        if stop == Stop::End {
            return Err(Flow::End);
        }
        atoi(&text).map_err(|e| fail(format!("error parsing index: {e}")))
    }

    /// What follows `[i]`: `=value`, `.key…` or another `[j]`. On failure the list as it
    /// stands is handed back with the error (`None` where Helm drops it to nil).
    fn list_item(
        &mut self,
        list: Vec<Data>,
        index: i64,
        level: usize,
    ) -> Result<Vec<Data>, (Option<Vec<Data>>, Flow)> {
        if let Err(flow) = self.enter() {
            return Err((Some(list), flow));
        }
        let result = self.list_item_inner(list, index, level);
        self.depth -= 1;
        result
    }

    fn list_item_inner(
        &mut self,
        list: Vec<Data>,
        index: i64,
        level: usize,
    ) -> Result<Vec<Data>, (Option<Vec<Data>>, Flow)> {
        if index < 0 {
            return Err((
                Some(list),
                fail(format!("negative {index} index not allowed")),
            ));
        }
        let (text, stop) = self.until(&['[', '.', '=']);
        if !text.is_empty() {
            return Err((
                Some(list),
                fail(format!(
                    "unexpected data at end of array index: {}",
                    go_quote_runes(&text)
                )),
            ));
        }
        let at = index as usize;
        match stop {
            Stop::End => Err((Some(list), Flow::End)),
            Stop::Char('=') => {
                let value = match self.value() {
                    Ok(v) => v.unwrap_or(Data::String(String::new())),
                    Err(flow) => return Err((Some(list), flow)),
                };
                set_index(list, index, value).map_err(|(l, f)| (Some(l), f))
            }
            Stop::Char('[') => {
                let next = match self.key_index() {
                    Ok(n) => n,
                    Err(flow) => return Err((Some(list), flow)),
                };
                let current = match list.get(at) {
                    None | Some(Data::Null) => Vec::new(),
                    Some(Data::List(l)) => l.clone(),
                    Some(other) => {
                        let flow = type_mismatch(other, LIST_TYPE);
                        return Err((Some(list), flow));
                    }
                };
                match self.list_item(current, next, level) {
                    Ok(inner) => {
                        set_index(list, index, Data::List(inner)).map_err(|(l, f)| (Some(l), f))
                    }
                    Err((_, flow)) => Err((Some(list), flow)),
                }
            }
            Stop::Char(_) => {
                let mut inner = match list.get(at) {
                    Some(Data::Map(m)) => m.clone(),
                    _ => Map::default(),
                };
                if let Err(flow) = self.key(&mut inner, level) {
                    return Err((Some(list), flow));
                }
                set_index(list, index, Data::Map(inner)).map_err(|(l, f)| (Some(l), f))
            }
        }
    }
}

#[cfg(test)]
mod tests;
