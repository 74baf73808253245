//! `toYaml` exactly as Helm prints it: sigs.k8s.io/yaml.Marshal, i.e. Go's `json.Marshal`,
//! re-read by go-yaml v2, then written by go-yaml v2's emitter (libyaml's rules): keys in
//! natural order, two-space indent, sequences not indented under their key, YAML 1.1 quoting,
//! literal blocks for multi-line strings and plain/quoted text folded at 80 columns.

use std::borrow::Cow;
use std::fmt;

use crate::formats::gofloat::{format_g, format_json, go_non_finite_name};
use crate::formats::tree::Data;

use super::compose::MAX_DEPTH;
use super::key_order::sort_keys;
use super::resolve::{Resolved, resolve_plain};

mod analysis;

use analysis::{Style, analyze, is_break, is_printable, requested_style, select_style};

const BEST_INDENT: i32 = 2;
const BEST_WIDTH: usize = 80;
/// Longest key (in bytes) libyaml writes as a simple `key: value`; longer ones use `? key`.
const MAX_SIMPLE_KEY: usize = 128;

/// Why a value cannot be marshalled (Helm's `toYaml` then prints nothing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodeError(pub String);

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for EncodeError {}

/// sigs.k8s.io/yaml.Marshal: the YAML document text, ending in a newline.
pub fn marshal(data: &Data) -> Result<String, EncodeError> {
    let tree = normalize(data, 0)?;
    let mut e = Emitter::new(Flavor::V2);
    e.node(&tree, false, false);
    e.write_indent();
    Ok(e.out)
}

/// [`marshal`], with the two strings quoted that go-yaml v2 writes plain though YAML 1.1
/// readers (PyYAML) take them for something else: `=` (the value key) and `<<` (the merge
/// key). For YAML the project prints itself; Helm's `toYaml` keeps [`marshal`]'s output.
pub fn marshal_for_every_reader(data: &Data) -> Result<String, EncodeError> {
    let tree = normalize(data, 0)?;
    let mut e = Emitter::new(Flavor::V2);
    e.quote_value_and_merge_keys = true;
    e.node(&tree, false, false);
    e.write_indent();
    Ok(e.out)
}

/// Helm's `toYaml`: [`marshal`] without the final newline, or `""` when marshalling fails.
pub fn to_yaml(data: &Data) -> String {
    match marshal(data) {
        Ok(mut s) => {
            if s.ends_with('\n') {
                s.pop();
            }
            s
        }
        Err(_) => String::new(),
    }
}

/// Helm 4's `toYamlPretty`: go-yaml v3's encoder with a two-space indent on the data as it
/// is (no JSON round trip): sequences indented under their key, no line folding, floats in
/// Go's `%g` form; `""` when encoding fails, final newline trimmed.
pub fn to_yaml_pretty(data: &Data) -> String {
    let Ok(tree) = normalize_v3(data, 0) else {
        return String::new();
    };
    let mut e = Emitter::new(Flavor::V3);
    e.node(&tree, false, false);
    e.write_indent();
    let mut s = e.out;
    if s.ends_with('\n') {
        s.pop();
    }
    s
}

/// Which go-yaml generation's emitter rules apply.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Flavor {
    /// go-yaml v2 (Helm's `toYaml`): sequences flush under their key, folding at 80 columns.
    V2,
    /// go-yaml v3 (Helm's `toYamlPretty`): sequences indented, no folding.
    V3,
}

/// The data as go-yaml v3 sees it: Go values, no JSON step.
fn normalize_v3(data: &Data, depth: usize) -> Result<Out<'_>, EncodeError> {
    if depth > MAX_DEPTH {
        return Err(EncodeError(format!("exceeded max depth of {MAX_DEPTH}")));
    }
    Ok(match data {
        Data::Float(f) => {
            let text = match format_g(*f, false).as_str() {
                "+Inf" => ".inf".to_owned(),
                "-Inf" => "-.inf".to_owned(),
                "NaN" => ".nan".to_owned(),
                s => s.to_owned(),
            };
            Out::Scalar(Cow::Owned(text), false)
        }
        Data::String(s) => Out::Scalar(Cow::Borrowed(s), true),
        Data::List(items) => Out::Seq(
            items
                .iter()
                .map(|i| normalize_v3(i, depth + 1))
                .collect::<Result<_, _>>()?,
        ),
        Data::Map(map) => {
            let mut entries = Vec::with_capacity(map.len());
            for (k, v) in map {
                entries.push((Cow::Borrowed(k.as_str()), normalize_v3(v, depth + 1)?));
            }
            Out::Map(sort_keys(entries, |(k, _)| k, true))
        }
        other => normalize(other, depth)?,
    })
}

/// The document as go-yaml sees it after the JSON round trip.
enum Out<'a> {
    /// A scalar's text and whether it is a string (strings get quoting analysis).
    Scalar(Cow<'a, str>, bool),
    Seq(Vec<Out<'a>>),
    Map(Vec<(Cow<'a, str>, Out<'a>)>),
}

fn normalize(data: &Data, depth: usize) -> Result<Out<'_>, EncodeError> {
    if depth > MAX_DEPTH {
        return Err(EncodeError(format!("exceeded max depth of {MAX_DEPTH}")));
    }
    Ok(match data {
        Data::Null => Out::Scalar(Cow::Borrowed("null"), false),
        Data::Bool(b) => Out::Scalar(Cow::Borrowed(if *b { "true" } else { "false" }), false),
        Data::Int(i) => Out::Scalar(Cow::Owned(i.to_string()), false),
        Data::Uint(u) => Out::Scalar(Cow::Owned(u.to_string()), false),
        Data::Float(f) => Out::Scalar(Cow::Owned(float_text(*f)?), false),
        Data::String(s) => {
            check_readable(s)?;
            Out::Scalar(reread_json_string(s), true)
        }
        Data::List(items) => Out::Seq(
            items
                .iter()
                .map(|i| normalize(i, depth + 1))
                .collect::<Result<_, _>>()?,
        ),
        Data::Map(map) => {
            let mut entries = Vec::with_capacity(map.len());
            for (k, v) in map {
                check_readable(k)?;
                entries.push((reread_json_string(k), normalize(v, depth + 1)?));
            }
            Out::Map(sort_keys(entries, |(k, _)| k, false))
        }
    })
}

/// A float goes through JSON text and is re-typed by YAML: whole numbers become integers.
fn float_text(f: f64) -> Result<String, EncodeError> {
    let json = format_json(f).ok_or_else(|| {
        EncodeError(format!(
            "error marshaling into JSON: json: unsupported value: {}",
            go_non_finite_name(f)
        ))
    })?;
    Ok(match resolve_plain(&json) {
        Resolved::Int(i) => i.to_string(),
        Resolved::Uint(u) => u.to_string(),
        Resolved::Float(g) | Resolved::BigInt(g) => format_g(g, false),
        _ => json,
    })
}

/// go-yaml's reader refuses characters JSON leaves unescaped but YAML forbids.
fn check_readable(s: &str) -> Result<(), EncodeError> {
    let bad = s.chars().any(|c| {
        let v = c as u32;
        v == 0x7F || (0x80..=0x9F).contains(&v) && v != 0x85 || v == 0xFFFE || v == 0xFFFF
    });
    if bad {
        return Err(EncodeError(
            "error converting JSON to YAML: yaml: control characters are not allowed".into(),
        ));
    }
    Ok(())
}

/// The string go-yaml reads back from the JSON text of `s`. JSON leaves U+0085 (NEL)
/// unescaped, and YAML 1.1 treats it as a line break inside the double-quoted scalar, so it
/// folds: a run of spaces and NELs becomes one space, or n-1 newlines for n NELs.
fn reread_json_string(s: &str) -> Cow<'_, str> {
    if !s.contains('\u{85}') {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut run = String::new();
    let mut breaks = 0;
    for c in s.chars() {
        match c {
            ' ' => run.push(c),
            '\u{85}' => breaks += 1,
            _ => {
                flush_run(&mut out, &mut run, &mut breaks);
                out.push(c);
            }
        }
    }
    flush_run(&mut out, &mut run, &mut breaks);
    Cow::Owned(out)
}

fn flush_run(out: &mut String, run: &mut String, breaks: &mut usize) {
    match *breaks {
        0 => out.push_str(run),
        1 => out.push(' '),
        n => out.extend(std::iter::repeat_n('\n', n - 1)),
    }
    run.clear();
    *breaks = 0;
}

struct Emitter {
    flavor: Flavor,
    /// Whether the strings `=` and `<<` are quoted (go-yaml writes them plain).
    quote_value_and_merge_keys: bool,
    out: String,
    column: usize,
    indent: i32,
    indents: Vec<i32>,
    whitespace: bool,
    indention: bool,
}

impl Emitter {
    fn new(flavor: Flavor) -> Emitter {
        Emitter {
            flavor,
            quote_value_and_merge_keys: false,
            out: String::new(),
            column: 0,
            indent: -1,
            indents: Vec::new(),
            whitespace: true,
            indention: true,
        }
    }

    /// The column past which text folds at a space; go-yaml v3 never folds.
    fn best_width(&self) -> usize {
        match self.flavor {
            Flavor::V2 => BEST_WIDTH,
            Flavor::V3 => usize::MAX,
        }
    }

    fn put(&mut self, c: char) {
        self.out.push(c);
        self.column += 1;
    }

    fn put_break(&mut self) {
        self.out.push('\n');
        self.column = 0;
    }

    fn write_break(&mut self, c: char) {
        if c == '\n' {
            self.put_break();
        } else {
            self.out.push(c);
            self.column = 0;
        }
    }

    fn write_indent(&mut self) {
        let indent = self.indent.max(0) as usize;
        if !self.indention || self.column > indent || (self.column == indent && !self.whitespace) {
            self.put_break();
        }
        while self.column < indent {
            self.put(' ');
        }
        self.whitespace = true;
        self.indention = true;
    }

    fn write_indicator(
        &mut self,
        indicator: &str,
        need_whitespace: bool,
        is_whitespace: bool,
        is_indention: bool,
    ) {
        if need_whitespace && !self.whitespace {
            self.put(' ');
        }
        for c in indicator.chars() {
            self.put(c);
        }
        self.whitespace = is_whitespace;
        self.indention = self.indention && is_indention;
    }

    fn increase_indent(&mut self, flow: bool, indentless: bool) {
        self.indents.push(self.indent);
        if self.indent < 0 {
            self.indent = if flow { BEST_INDENT } else { 0 };
        } else if !indentless {
            self.indent += BEST_INDENT;
        }
    }

    fn decrease_indent(&mut self) {
        self.indent = self.indents.pop().unwrap_or(-1);
    }

    fn node(&mut self, node: &Out, mapping_context: bool, simple_key: bool) {
        match node {
            Out::Scalar(text, is_string) => self.scalar(text, *is_string, simple_key),
            Out::Seq(items) if items.is_empty() => self.empty_collection("[", "]"),
            Out::Map(entries) if entries.is_empty() => self.empty_collection("{", "}"),
            Out::Seq(items) => self.block_sequence(items, mapping_context),
            Out::Map(entries) => self.block_mapping(entries),
        }
    }

    fn empty_collection(&mut self, open: &str, close: &str) {
        self.write_indicator(open, true, true, false);
        self.write_indicator(close, false, false, false);
    }

    fn block_sequence(&mut self, items: &[Out], mapping_context: bool) {
        // go-yaml v2 does not indent a sequence directly under a mapping key ("key:\n- a").
        let indentless = self.flavor == Flavor::V2 && mapping_context && !self.indention;
        self.increase_indent(false, indentless);
        for item in items {
            self.write_indent();
            self.write_indicator("-", true, false, true);
            self.node(item, false, false);
        }
        self.decrease_indent();
    }

    fn block_mapping(&mut self, entries: &[(Cow<'_, str>, Out<'_>)]) {
        self.increase_indent(false, false);
        for (key, value) in entries {
            self.write_indent();
            let a = analyze(key, self.flavor);
            if key.len() <= MAX_SIMPLE_KEY && !a.multiline {
                self.scalar(key, true, true);
                self.write_indicator(":", false, false, false);
            } else {
                self.write_indicator("?", true, false, true);
                self.scalar(key, true, false);
                self.write_indent();
                self.write_indicator(":", true, false, true);
            }
            self.node(value, true, false);
        }
        self.decrease_indent();
    }

    fn scalar(&mut self, text: &str, is_string: bool, simple_key: bool) {
        let analysis = analyze(text, self.flavor);
        let requested =
            if self.quote_value_and_merge_keys && is_string && matches!(text, "=" | "<<") {
                Style::Double
            } else {
                requested_style(text, is_string)
            };
        let style = select_style(text, requested, simple_key, &analysis);
        self.increase_indent(true, false);
        let allow_breaks = !simple_key;
        match style {
            Style::Plain => self.write_plain(text, allow_breaks),
            Style::Single => self.write_single_quoted(text, allow_breaks),
            Style::Double => self.write_double_quoted(text, allow_breaks),
            Style::Literal => self.write_literal(text),
        }
        self.decrease_indent();
    }

    fn write_plain(&mut self, text: &str, allow_breaks: bool) {
        if !self.whitespace {
            self.put(' ');
        }
        let chars: Vec<char> = text.chars().collect();
        let (mut spaces, mut breaks) = (false, false);
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                let next_is_space = chars.get(i + 1) == Some(&' ');
                if allow_breaks && !spaces && self.column > self.best_width() && !next_is_space {
                    self.write_indent();
                } else {
                    self.put(c);
                }
                spaces = true;
            } else if is_break(c) {
                if !breaks && c == '\n' {
                    self.put_break();
                }
                self.write_break(c);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                self.put(c);
                self.indention = false;
                spaces = false;
                breaks = false;
            }
        }
        self.whitespace = false;
        self.indention = false;
    }

    fn write_single_quoted(&mut self, text: &str, allow_breaks: bool) {
        self.write_indicator("'", true, false, false);
        let chars: Vec<char> = text.chars().collect();
        let (mut spaces, mut breaks) = (false, false);
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                let inner = i > 0 && i + 1 < chars.len() && chars[i + 1] != ' ';
                if allow_breaks && !spaces && self.column > self.best_width() && inner {
                    self.write_indent();
                } else {
                    self.put(c);
                }
                spaces = true;
            } else if is_break(c) {
                if !breaks && c == '\n' {
                    self.put_break();
                }
                self.write_break(c);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                if c == '\'' {
                    self.put('\'');
                }
                self.put(c);
                self.indention = false;
                spaces = false;
                breaks = false;
            }
        }
        self.write_indicator("'", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    fn write_double_quoted(&mut self, text: &str, allow_breaks: bool) {
        self.write_indicator("\"", true, false, false);
        let chars: Vec<char> = text.chars().collect();
        let mut spaces = false;
        for (i, &c) in chars.iter().enumerate() {
            if !is_printable(c) || c == '\u{FEFF}' || is_break(c) || c == '"' || c == '\\' {
                self.put('\\');
                self.write_escape(c);
                spaces = false;
            } else if c == ' ' {
                if allow_breaks
                    && !spaces
                    && self.column > self.best_width()
                    && i > 0
                    && i + 1 < chars.len()
                {
                    self.write_indent();
                    if chars[i + 1] == ' ' {
                        self.put('\\');
                    }
                } else {
                    self.put(c);
                }
                spaces = true;
            } else {
                self.put(c);
                spaces = false;
            }
        }
        self.write_indicator("\"", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    fn write_escape(&mut self, c: char) {
        let short = match c {
            '\0' => Some('0'),
            '\u{7}' => Some('a'),
            '\u{8}' => Some('b'),
            '\t' => Some('t'),
            '\n' => Some('n'),
            '\u{b}' => Some('v'),
            '\u{c}' => Some('f'),
            '\r' => Some('r'),
            '\u{1b}' => Some('e'),
            '"' => Some('"'),
            '\\' => Some('\\'),
            '\u{85}' => Some('N'),
            '\u{a0}' => Some('_'),
            '\u{2028}' => Some('L'),
            '\u{2029}' => Some('P'),
            _ => None,
        };
        if let Some(s) = short {
            self.put(s);
            return;
        }
        let v = c as u32;
        let (prefix, width) = if v <= 0xFF {
            ('x', 2)
        } else if v <= 0xFFFF {
            ('u', 4)
        } else {
            ('U', 8)
        };
        self.put(prefix);
        for digit in format!("{v:0width$X}").chars() {
            self.put(digit);
        }
    }

    fn write_literal(&mut self, text: &str) {
        self.write_indicator("|", true, false, false);
        self.write_block_hints(text);
        self.put_break();
        self.indention = true;
        self.whitespace = true;
        let mut breaks = true;
        for c in text.chars() {
            if is_break(c) {
                self.write_break(c);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                self.put(c);
                self.indention = false;
                breaks = false;
            }
        }
    }

    /// The indentation indicator (when the text starts with a space or break) and the
    /// chomping indicator: `-` without a final break, `+` with more than one.
    fn write_block_hints(&mut self, text: &str) {
        let mut chars = text.chars();
        if text.starts_with(' ') || text.chars().next().is_some_and(is_break) {
            self.write_indicator(&BEST_INDENT.to_string(), false, false, false);
        }
        let chomp = match chars.next_back() {
            None => Some("-"),
            Some(last) if !is_break(last) => Some("-"),
            Some(_) => match chars.next_back() {
                None => Some("+"),
                Some(prev) if is_break(prev) => Some("+"),
                Some(_) => None,
            },
        };
        if let Some(chomp) = chomp {
            self.write_indicator(chomp, false, false, false);
        }
    }
}

#[cfg(test)]
mod tests;
