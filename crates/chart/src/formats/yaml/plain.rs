//! Plain block YAML read line by line, without the full reader: block mappings and sequences
//! with plain-word or double-quoted keys, one-line scalars, `{}`, one-line flow sequences of
//! scalars, and literal block scalars (`|`, `|-`).
//!
//! Values files, rendered manifests and `toYaml` output are almost always written this way,
//! and the full reader (scanner, parser, node tree, then the typed tree) was a large part of
//! rendering a chart: kube-prometheus-stack's `values.yaml` alone, two thirds of it comment
//! lines that the scanner steps over one character at a time, cost over a third of what
//! parsing all its templates cost. [`read_plain`] gives the typed tree the full reader would
//! give, or `None` for anything outside that subset — flow mappings, anchors, aliases, tags,
//! folded or kept block scalars, quoted or plain scalars over several lines, tabs, text that is
//! not printable ASCII, several documents — and for whatever it is unsure of, so that the full
//! reader reads it as before: the tests compare the two on every YAML file and rendered
//! document of the conformance corpus and on mutations of them. The syntax helpers are shared
//! with the reading of rendered documents' heads (`render::quick_head`).

use super::decode::{MapBuilder, Yaml, plain_scalar};
use super::resolve::{Resolved, resolve_plain};

/// Deepest nesting read here; deeper documents go to the full reader, which has its own limit.
pub(crate) const MAX_NESTING: usize = 64;

/// Longest key read here (YAML limits implicit keys to 1024 characters).
const MAX_KEY_LEN: usize = 512;

/// Whether `text` is lines of printable ASCII, the only text read here: no tabs, carriage
/// returns, control characters, byte order marks or line breaks other than `\n`.
pub(crate) fn is_printable_ascii(text: &str) -> bool {
    text.bytes()
        .all(|b| b == b'\n' || (b' '..=b'~').contains(&b))
}

/// The typed tree of `src` (one document), when it is written in plain block YAML; `None`
/// leaves it to the full reader.
pub fn read_plain(src: &str) -> Option<Yaml> {
    if !is_printable_ascii(src) {
        return None;
    }
    let mut reader = TreeReader {
        lines: lines(src).collect(),
        at: 0,
        depth: 0,
    };
    let (indent, rest) = reader.peek()?;
    let root = if is_dash(rest) {
        reader.sequence(indent, false)?
    } else {
        reader.mapping(indent)?
    };
    // Anything left is less indented than the root, or a second document.
    match reader.peek() {
        None => Some(root),
        Some(_) => None,
    }
}

/// The lines of `text`, as `split('\n')` gives them, each found with memchr (the searcher
/// behind `split` costs more per line than most lines are long).
pub(crate) fn lines(text: &str) -> Lines<'_> {
    Lines { rest: Some(text) }
}

/// See [`lines`].
pub(crate) struct Lines<'a> {
    /// What is left of the text; `None` once the last line has been taken.
    rest: Option<&'a str>,
}

impl<'a> Iterator for Lines<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let rest = self.rest?;
        match memchr::memchr(b'\n', rest.as_bytes()) {
            Some(end) => {
                self.rest = Some(&rest[end + 1..]);
                Some(&rest[..end])
            }
            None => self.rest.take(),
        }
    }
}

/// A line-by-line reader of one document.
struct TreeReader<'a> {
    lines: Vec<&'a str>,
    /// The next line to read.
    at: usize,
    /// How many collections are open.
    depth: usize,
}

impl<'a> TreeReader<'a> {
    /// The next line with content (neither empty nor a comment), as its indentation and text;
    /// the lines before it are passed over. `None` at the end or at a document marker.
    fn peek(&mut self) -> Option<(usize, &'a str)> {
        while let Some(&line) = self.lines.get(self.at) {
            let indent = line.bytes().take_while(|&b| b == b' ').count();
            let rest = &line[indent..];
            if rest.is_empty() || rest.starts_with('#') {
                self.at += 1;
                continue;
            }
            if indent == 0
                && (rest.starts_with("---") || rest.starts_with("...") || rest.starts_with('%'))
            {
                // A marker or directive: the full reader decides what it means.
                self.at = self.lines.len() + 1;
                return None;
            }
            return Some((indent, rest));
        }
        None
    }

    /// Fails if the reading stopped at a marker (see [`TreeReader::peek`]).
    fn at_marker(&self) -> bool {
        self.at > self.lines.len()
    }

    fn enter(&mut self) -> Option<()> {
        self.depth += 1;
        (self.depth <= MAX_NESTING).then_some(())
    }

    /// The block mapping whose first key is on the next content line, at `indent`.
    fn mapping(&mut self, indent: usize) -> Option<Yaml> {
        self.enter()?;
        let mut map = MapBuilder::with_capacity(8);
        while let Some((line_indent, rest)) = self.peek() {
            if line_indent < indent {
                break;
            }
            if line_indent > indent || is_dash(rest) {
                return None;
            }
            self.at += 1;
            let (key, value) = split_key(rest)?;
            let key = key.text()?;
            let value = self.value_after_key(indent, value)?;
            map.set(Yaml::String(key.to_string()), value);
        }
        if self.at_marker() {
            return None;
        }
        self.depth -= 1;
        Some(map.finish())
    }

    /// A block mapping that starts after a dash (`- key: value`), its keys at `column`.
    fn compact_mapping(&mut self, column: usize, first: &'a str) -> Option<Yaml> {
        self.enter()?;
        let mut map = MapBuilder::with_capacity(8);
        let (key, value) = split_key(first)?;
        let key = key.text()?;
        let value = self.value_after_key(column, value)?;
        map.set(Yaml::String(key.to_string()), value);
        self.depth -= 1;
        let rest = match self.peek() {
            Some((indent, _)) if indent == column => self.mapping(column)?,
            _ => Yaml::Map(Vec::new()),
        };
        let Yaml::Map(entries) = rest else {
            return None;
        };
        for (k, v) in entries {
            map.set(k, v);
        }
        Some(map.finish())
    }

    /// The block sequence whose first dash is on the next content line, at `indent`;
    /// `at_key_indent` for one at the indentation of the key it is the value of, which a line
    /// at that indentation without a dash ends.
    fn sequence(&mut self, indent: usize, at_key_indent: bool) -> Option<Yaml> {
        self.enter()?;
        let mut items = Vec::new();
        while let Some((line_indent, rest)) = self.peek() {
            if line_indent < indent || (at_key_indent && line_indent == indent && !is_dash(rest)) {
                break;
            }
            if line_indent > indent || !is_dash(rest) {
                return None;
            }
            self.at += 1;
            let content = rest[1..].trim_start_matches(' ');
            let item = if content.is_empty() || content.starts_with('#') {
                self.value_below(indent, false)?
            } else if is_dash(content) {
                return None;
            } else if split_key(content).is_some() {
                self.compact_mapping(indent + rest.len() - content.len(), content)?
            } else {
                self.inline_value(indent, content)?
            };
            items.push(item);
        }
        if self.at_marker() {
            return None;
        }
        self.depth -= 1;
        Some(Yaml::Seq(items))
    }

    /// The value of a key at `indent` whose line continues with `value` (perhaps nothing).
    fn value_after_key(&mut self, indent: usize, value: &'a str) -> Option<Yaml> {
        if value.is_empty() || value.starts_with('#') {
            self.value_below(indent, true)
        } else {
            self.inline_value(indent, value)
        }
    }

    /// The value of a key or dash at `indent` that has none on its line: a collection on the
    /// lines below, `{}` or a flow sequence on the next line, or `null`.
    fn value_below(&mut self, indent: usize, after_key: bool) -> Option<Yaml> {
        let Some((next_indent, rest)) = self.peek() else {
            return (!self.at_marker()).then_some(Yaml::Null);
        };
        if next_indent > indent {
            if rest.starts_with(['{', '[']) {
                self.at += 1;
                return self.inline_value(indent, rest);
            }
            return if is_dash(rest) {
                self.sequence(next_indent, false)
            } else {
                self.mapping(next_indent)
            };
        }
        if after_key && next_indent == indent && is_dash(rest) {
            return self.sequence(indent, true);
        }
        Some(Yaml::Null)
    }

    /// A value that starts on the line of its key or dash (`text`, not empty); `owner` is the
    /// indentation of the collection the entry is in.
    fn inline_value(&mut self, owner: usize, text: &'a str) -> Option<Yaml> {
        match text.as_bytes()[0] {
            b'|' => {
                let strip = match text[1..].trim_end_matches(' ') {
                    "" => false,
                    "-" => true,
                    _ => return None,
                };
                self.literal(owner, strip).map(Yaml::String)
            }
            b'"' => {
                let (inner, after, escaped) = double_quoted(text)?;
                end_of_value(after)?;
                Some(Yaml::String(if escaped {
                    unescape_double(inner)
                } else {
                    inner.to_string()
                }))
            }
            b'\'' => {
                let (inner, after) = single_quoted(text)?;
                end_of_value(after)?;
                Some(Yaml::String(inner.replace("''", "'")))
            }
            b'[' => {
                let mut items = Vec::new();
                let after = flow_sequence(text, &mut |item| items.push(item.value()))?;
                end_of_value(after)?;
                Some(Yaml::Seq(items))
            }
            b'{' => {
                end_of_value(text.strip_prefix("{}")?)?;
                Some(Yaml::Map(Vec::new()))
            }
            _ => plain_value(text).map(plain_scalar),
        }
    }

    /// The content of a literal block scalar whose header ended the last line read, in a
    /// collection at `parent`, as libyaml reads it: clipped to one final line break (none if
    /// the input ends without one), or `strip`ped of it.
    fn literal(&mut self, parent: usize, strip: bool) -> Option<String> {
        let mut lines: Vec<&str> = Vec::new();
        let mut content_indent = None;
        let mut empty_lines = 0;
        let mut last_has_break = false;
        while let Some(&line) = self.lines.get(self.at) {
            let indent = line.bytes().take_while(|&b| b == b' ').count();
            if indent == line.len() {
                // An empty line: content if more follows; spaces past the content's
                // indentation (or before it is known) are left to the full reader.
                if content_indent.is_none_or(|c| indent > c) && indent > 0 {
                    return None;
                }
                if self.at + 1 < self.lines.len() {
                    empty_lines += 1;
                }
                self.at += 1;
                continue;
            }
            let content = match content_indent {
                Some(c) if indent >= c => c,
                None if indent > parent => indent,
                _ if indent > parent => return None,
                _ => break,
            };
            content_indent = Some(content);
            lines.extend(std::iter::repeat_n("", empty_lines));
            empty_lines = 0;
            lines.push(&line[content..]);
            last_has_break = self.at + 1 < self.lines.len();
            self.at += 1;
        }
        if lines.is_empty() {
            // Only empty lines (or none): libyaml reads "" for these.
            return (empty_lines == 0).then(String::new);
        }
        let mut value = lines.join("\n");
        if !strip && last_has_break {
            value.push('\n');
        }
        Some(value)
    }
}

/// A line that is a sequence entry: a dash alone or followed by a space.
pub(crate) fn is_dash(rest: &str) -> bool {
    rest == "-" || rest.starts_with("- ")
}

/// The text of a one-line plain scalar written as `text` (its comment and trailing spaces
/// removed), or `None` when it is not one: it starts with an indicator, or holds `: ` or ends
/// with `:` (which would make it a key).
pub(crate) fn plain_value(text: &str) -> Option<&str> {
    let bytes = text.as_bytes();
    match bytes.first()? {
        b'-' if bytes.get(1).is_none_or(|&b| b == b' ') => return None,
        b':' if !bytes.get(1).is_some_and(u8::is_ascii_alphanumeric) => return None,
        &first if !is_plain_start(first) => return None,
        _ => {}
    }
    // One pass: the comment starts at the first ` #`, and a `: ` before it makes a key.
    let mut end = bytes.len();
    for (i, pair) in bytes.windows(2).enumerate() {
        match pair {
            [b' ', b'#'] => {
                end = i;
                break;
            }
            [b':', b' '] => return None,
            _ => {}
        }
    }
    let text = text[..end].trim_end_matches(' ');
    (!text.ends_with(':')).then_some(text)
}

/// `key: value` (or `key:` at the end of the line) with a key of plain word characters, or a
/// double-quoted key without escapes: the key and the value with its leading spaces removed.
pub(crate) fn split_key(text: &str) -> Option<(Key<'_>, &str)> {
    let (key, after) = match text.strip_prefix('"') {
        Some(quoted) => {
            let end = quoted.bytes().position(|b| b == b'"' || b == b'\\')?;
            if quoted.as_bytes()[end] != b'"' {
                return None;
            }
            (Key::Quoted(&quoted[..end]), &quoted[end + 1..])
        }
        None => {
            let end = text
                .bytes()
                .position(|b| !is_key_byte(b))
                .unwrap_or(text.len());
            (Key::Plain(&text[..end]), &text[end..])
        }
    };
    let value = after.strip_prefix(':')?;
    if !(value.is_empty() || value.starts_with(' ')) {
        return None;
    }
    Some((key, value.trim_start_matches(' ')))
}

/// A mapping key as written.
#[derive(Clone, Copy)]
pub(crate) enum Key<'a> {
    Plain(&'a str),
    Quoted(&'a str),
}

impl<'a> Key<'a> {
    /// The key's text, if it is one read here: a plain word that reads as a string (not
    /// `true`, `null`, `80` or `.5`), or a quoted string.
    pub(crate) fn text(self) -> Option<&'a str> {
        let text = match self {
            Key::Plain(word) => {
                let string = matches!(resolve_plain(word), Resolved::Str | Resolved::Timestamp);
                (string && !word.starts_with('-')).then_some(word)?
            }
            Key::Quoted(text) => text,
        };
        (!text.is_empty() && text.len() <= MAX_KEY_LEN).then_some(text)
    }
}

/// The bytes of plain-word keys by value: letters, digits, `-`, `_`, `.` and `/`.
const KEY_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 128 {
        let b = byte as u8;
        table[byte] = b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'/');
        byte += 1;
    }
    table
};

fn is_key_byte(b: u8) -> bool {
    KEY_BYTES[usize::from(b)]
}

/// Characters a one-line plain scalar may start with here (indicators and reserved characters
/// excluded; `-` and `:` are checked apart).
fn is_plain_start(b: u8) -> bool {
    b.is_ascii_alphanumeric()
        || matches!(
            b,
            b'/' | b'.'
                | b'_'
                | b'$'
                | b'('
                | b'~'
                | b'+'
                | b'='
                | b'^'
                | b';'
                | b'\\'
                | b'-'
                | b':'
        )
}

/// Whether a plain scalar reads as NaN or an infinity.
pub(crate) fn is_non_finite(text: &str) -> bool {
    matches!(
        text.as_bytes().first(),
        Some(b'.' | b'+' | b'-' | b'0'..=b'9')
    ) && matches!(
        resolve_plain(text),
        Resolved::Float(f) | Resolved::BigInt(f) if !f.is_finite()
    )
}

/// A double-quoted scalar closed on its line: its text between the quotes, what follows the
/// closing quote, and whether it has escapes (only `\\`, `\"`, `\/`, `\n`, `\t` and `\r` are
/// read here).
pub(crate) fn double_quoted(text: &str) -> Option<(&str, &str, bool)> {
    let bytes = text.as_bytes();
    let mut i = 1;
    let mut escaped = false;
    loop {
        match bytes.get(i)? {
            b'"' => return Some((&text[1..i], &text[i + 1..], escaped)),
            b'\\' => {
                if !matches!(bytes.get(i + 1)?, b'\\' | b'"' | b'/' | b'n' | b't' | b'r') {
                    return None;
                }
                escaped = true;
                i += 2;
            }
            _ => i += 1,
        }
    }
}

/// The value of a double-quoted scalar's text with the escapes [`double_quoted`] reads.
fn unescape_double(inner: &str) -> String {
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        out.push(match chars.next() {
            Some('n') => '\n',
            Some('t') => '\t',
            Some('r') => '\r',
            Some(other) => other,
            None => break,
        });
    }
    out
}

/// A single-quoted scalar closed on its line: its text between the quotes (`''` still
/// doubled) and what follows the closing quote.
pub(crate) fn single_quoted(text: &str) -> Option<(&str, &str)> {
    let bytes = text.as_bytes();
    let mut i = 1;
    loop {
        match bytes.get(i)? {
            b'\'' if bytes.get(i + 1) == Some(&b'\'') => i += 2,
            b'\'' => return Some((&text[1..i], &text[i + 1..])),
            _ => i += 1,
        }
    }
}

/// One scalar of a flow sequence, as written.
pub(crate) enum FlowItem<'a> {
    /// Double-quoted: the text between the quotes and whether it has escapes.
    Double(&'a str, bool),
    /// Single-quoted: the text between the quotes, `''` still doubled.
    Single(&'a str),
    /// Plain.
    Plain(&'a str),
}

impl FlowItem<'_> {
    fn value(&self) -> Yaml {
        match *self {
            FlowItem::Double(inner, true) => Yaml::String(unescape_double(inner)),
            FlowItem::Double(inner, false) => Yaml::String(inner.to_string()),
            FlowItem::Single(inner) => Yaml::String(inner.replace("''", "'")),
            FlowItem::Plain(text) => plain_scalar(text),
        }
    }
}

/// A flow sequence closed on its line, of one-line quoted or plain scalars (`[]`,
/// `["", apps]`), each handed to `item`: what follows its `]`.
pub(crate) fn flow_sequence<'a>(
    text: &'a str,
    item: &mut dyn FnMut(FlowItem<'a>),
) -> Option<&'a str> {
    let mut rest = text.strip_prefix('[')?.trim_start_matches(' ');
    if let Some(after) = rest.strip_prefix(']') {
        return Some(after);
    }
    loop {
        rest = match rest.as_bytes().first()? {
            b'"' => {
                let (inner, after, escaped) = double_quoted(rest)?;
                item(FlowItem::Double(inner, escaped));
                after
            }
            b'\'' => {
                let (inner, after) = single_quoted(rest)?;
                item(FlowItem::Single(inner));
                after
            }
            _ => {
                let end = rest.bytes().position(|b| {
                    matches!(b, b',' | b']' | b'[' | b'{' | b'}' | b'#' | b'"' | b'\'')
                })?;
                let plain = rest[..end].trim_end_matches(' ');
                let first = *plain.as_bytes().first()?;
                if !is_plain_start(first)
                    || matches!(first, b'-' | b':')
                    || plain.contains(": ")
                    || plain.ends_with(':')
                {
                    return None;
                }
                item(FlowItem::Plain(plain));
                &rest[end..]
            }
        }
        .trim_start_matches(' ');
        match rest.as_bytes().first()? {
            b']' => return Some(&rest[1..]),
            b',' => rest = rest[1..].trim_start_matches(' '),
            _ => return None,
        }
        if rest.starts_with(']') {
            return None;
        }
    }
}

/// What may follow a quoted scalar or a flow collection on its line: spaces, then perhaps a
/// comment.
pub(crate) fn end_of_value(after: &str) -> Option<()> {
    let trimmed = after.trim_start_matches(' ');
    (trimmed.is_empty() || (trimmed.starts_with('#') && trimmed.len() < after.len())).then_some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::yaml::corpus::{conformance_texts, is_rendered, mutants_read};

    /// The tree as the full reader reads it (`Debug` text, so that NaN equals itself).
    fn full_tree(src: &str) -> Result<String, String> {
        match super::super::compose::compose_first(src) {
            Ok(Some(node)) => super::super::decode::decode(node)
                .map(|y| format!("{y:?}"))
                .map_err(|e| e.helm_message()),
            Ok(None) => Ok(format!("{:?}", Yaml::Null)),
            Err(e) => Err(e.helm_message()),
        }
    }

    /// Fails when this reading accepts `src` and the full reader refuses it or reads another
    /// tree; whether it was accepted.
    fn agrees(src: &str) -> bool {
        let Some(tree) = read_plain(src) else {
            return false;
        };
        assert_eq!(Ok(format!("{tree:?}")), full_tree(src), "text:\n{src}");
        true
    }

    fn s(text: &str) -> Yaml {
        Yaml::String(text.to_string())
    }

    #[test]
    fn plain_block_yaml_reads_as_the_full_reader_reads_it() {
        let cases: Vec<(&str, Yaml)> = vec![
            (
                "# c\na: 1\nb:\n  c: yes\n  d: ~\ne:\n- x\n- 'it''s'\n-\n  f: \"q\\\"\\n\"\ng: []\nh: {}\n",
                Yaml::Map(vec![
                    (s("a"), Yaml::Int(1)),
                    (
                        s("b"),
                        Yaml::Map(vec![(s("c"), Yaml::Bool(true)), (s("d"), Yaml::Null)]),
                    ),
                    (
                        s("e"),
                        Yaml::Seq(vec![
                            s("x"),
                            s("it's"),
                            Yaml::Map(vec![(s("f"), s("q\"\n"))]),
                        ]),
                    ),
                    (s("g"), Yaml::Seq(vec![])),
                    (s("h"), Yaml::Map(vec![])),
                ]),
            ),
            (
                "a: |\n  one\n\n    two\nb: |-\n  x\nc: |\nd: 2 # two\na: again\n",
                Yaml::Map(vec![
                    (s("a"), s("again")),
                    (s("b"), s("x")),
                    (s("c"), s("")),
                    (s("d"), Yaml::Int(2)),
                ]),
            ),
            ("k: |\n  end", Yaml::Map(vec![(s("k"), s("end"))])),
            (
                "- name: a\n  args: [\"--x\", 1, 'y']\n- b\n",
                Yaml::Seq(vec![
                    Yaml::Map(vec![
                        (s("name"), s("a")),
                        (s("args"), Yaml::Seq(vec![s("--x"), Yaml::Int(1), s("y")])),
                    ]),
                    s("b"),
                ]),
            ),
            (
                "list:\n- a\nnext: .inf\n\"9000\": x\n",
                Yaml::Map(vec![
                    (s("list"), Yaml::Seq(vec![s("a")])),
                    (s("next"), Yaml::Float(f64::INFINITY)),
                    (s("9000"), s("x")),
                ]),
            ),
        ];
        for (src, tree) in cases {
            assert_eq!(read_plain(src), Some(tree), "{src}");
            assert!(agrees(src));
        }
    }

    #[test]
    fn lines_are_those_split_gives() {
        for text in ["", "\n", "a", "a\n", "a\nb", "a\n\nb\n", "\n\na"] {
            assert_eq!(
                lines(text).collect::<Vec<_>>(),
                text.split('\n').collect::<Vec<_>>(),
                "{text:?}"
            );
        }
    }

    #[test]
    fn anything_else_is_left_to_the_full_reader() {
        for src in [
            "",
            "# only a comment\n",
            "scalar\n",
            "a: &x 1\nb: *x\n",
            "a: !!str 1\n",
            "a: {b: 1}\n",
            "a: >\n  folded\n",
            "a: |+\n  kept\n\n",
            "a: |2\n   x\n",
            "a: |\n    x\n  y\n",
            "a: |\n   \n  x\n",
            "a: b\n  c\n",
            "a: \"b\n  c\"\n",
            "a:\tb\n",
            "a: \u{e9}\n",
            "a: 1\r\n",
            "1: a\n",
            "<<: {a: 1}\n",
            "a: b: c\n",
            "a: 1\n---\nb: 2\n",
            "a:\n  - b\n  c: d\n",
            "- - a\n",
            "a: \"\\x41\"\n",
            "a: [1, [2]]\n",
            "a: [1,]\n",
        ] {
            assert_eq!(read_plain(src), None, "{src}");
        }
    }

    #[test]
    fn the_corpus_reads_the_same() {
        let mut rendered = (0, 0);
        for (path, text) in &conformance_texts() {
            let read = agrees(text);
            if is_rendered(path) && !text.contains("\n---") {
                rendered = (rendered.0 + usize::from(read), rendered.1 + 1);
            }
            // The values files of the large chart are what this reading is for.
            let values = [
                "kube-prometheus-stack/chart/values.yaml",
                "charts/grafana/values.yaml",
                "kube-prometheus-stack/values-default.yaml",
            ];
            if values.iter().any(|v| path.ends_with(v)) {
                assert!(read, "{} is left to the full reader", path.display());
            }
        }
        // Rendered documents too (whole files hold several, which is left to the full reader).
        assert!(
            rendered.0 * 10 >= rendered.1 * 8,
            "{} of {} rendered documents read here",
            rendered.0,
            rendered.1
        );
    }

    #[test]
    fn mutated_texts_are_never_read_differently() {
        let texts = conformance_texts();
        let read_here = texts
            .iter()
            .map(|(_, text)| text.as_str())
            .filter(|text| text.len() <= 4096 && read_plain(text).is_some());
        let (accepted, tried) = mutants_read(read_here, 0x2545_F491_4F6C_DD1D, agrees);
        assert!(
            accepted * 4 >= tried,
            "{accepted} of {tried} mutants read here"
        );
    }
}
