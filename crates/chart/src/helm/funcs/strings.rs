//! Sprig's string functions: trimming, case, truncation, quoting, splitting, joining, wrapping
//! and random strings, with the byte-oriented quirks of Go's `strings` package and of the
//! libraries Sprig delegates to (goutils, xstrings).

use std::iter::Peekable;
use std::str::CharIndices;
use std::sync::OnceLock;

use regex::Regex;

use super::conversion::{strval, to_strings};
use super::{FuncError, FuncMap, args};
use crate::engine::value::format::quote;
use crate::engine::value::{Map, Value};

/// The longest string a function here builds. Go would allocate until memory runs out; a
/// hostile template must not take the agent down, so we fail instead.
pub(crate) const MAX_OUTPUT: usize = 64 << 20;

/// Registers the string functions.
pub fn install(funcs: &mut FuncMap) {
    funcs.add("hello", |a: &[Value]| {
        args::count(a, 0)?;
        Ok(Value::from("Hello!"))
    });
    install_case(funcs);
    install_trim(funcs);
    install_cut(funcs);
    install_quote(funcs);
    install_split_join(funcs);
    install_random(funcs);
}

fn unary(funcs: &mut FuncMap, name: &str, f: fn(&str) -> String) {
    funcs.add(name, move |a: &[Value]| {
        args::count(a, 1)?;
        Ok(Value::from(f(args::string(a, 0)?)))
    });
}

fn install_case(funcs: &mut FuncMap) {
    unary(funcs, "upper", |s| s.chars().map(to_upper).collect());
    unary(funcs, "lower", |s| s.chars().map(to_lower).collect());
    unary(funcs, "title", title);
    unary(funcs, "untitle", untitle);
    unary(funcs, "swapcase", swapcase);
    unary(funcs, "snakecase", |s| camel_to_lower(s, '_'));
    unary(funcs, "kebabcase", |s| camel_to_lower(s, '-'));
    unary(funcs, "camelcase", pascal_case);
    unary(funcs, "initials", initials);
    unary(funcs, "nospace", nospace);
    funcs.add("shuffle", |a: &[Value]| {
        args::count(a, 1)?;
        Ok(Value::from(shuffle(args::string(a, 0)?)?))
    });
}

fn install_trim(funcs: &mut FuncMap) {
    unary(funcs, "trim", |s| s.trim().to_string());
    for name in ["trimAll", "trimall"] {
        funcs.add(name, |a: &[Value]| {
            args::count(a, 2)?;
            let cutset = args::string(a, 0)?;
            let s = args::string(a, 1)?;
            Ok(Value::from(s.trim_matches(|c| cutset.contains(c))))
        });
    }
    funcs.add("trimPrefix", |a: &[Value]| {
        args::count(a, 2)?;
        let prefix = args::string(a, 0)?;
        let s = args::string(a, 1)?;
        Ok(Value::from(s.strip_prefix(prefix).unwrap_or(s)))
    });
    funcs.add("trimSuffix", |a: &[Value]| {
        args::count(a, 2)?;
        let suffix = args::string(a, 0)?;
        let s = args::string(a, 1)?;
        Ok(Value::from(s.strip_suffix(suffix).unwrap_or(s)))
    });
    funcs.add("contains", |a: &[Value]| {
        args::count(a, 2)?;
        Ok(Value::Bool(
            args::string(a, 1)?.contains(args::string(a, 0)?),
        ))
    });
    funcs.add("hasPrefix", |a: &[Value]| {
        args::count(a, 2)?;
        Ok(Value::Bool(
            args::string(a, 1)?.starts_with(args::string(a, 0)?),
        ))
    });
    funcs.add("hasSuffix", |a: &[Value]| {
        args::count(a, 2)?;
        Ok(Value::Bool(
            args::string(a, 1)?.ends_with(args::string(a, 0)?),
        ))
    });
    funcs.add("replace", |a: &[Value]| {
        args::count(a, 3)?;
        let old = args::string(a, 0)?;
        let new = args::string(a, 1)?;
        let s = args::string(a, 2)?;
        Ok(Value::from(replace_all(s, old, new)?))
    });
    funcs.add("plural", |a: &[Value]| {
        args::count(a, 3)?;
        let one = args::string(a, 0)?;
        let many = args::string(a, 1)?;
        let count = args::int(a, 2)?;
        Ok(Value::from(if count == 1 { one } else { many }))
    });
}

fn install_cut(funcs: &mut FuncMap) {
    funcs.add("repeat", |a: &[Value]| {
        args::count(a, 2)?;
        let count = args::int(a, 0)?;
        Ok(Value::from(repeat(args::string(a, 1)?, count)?))
    });
    funcs.add("substr", |a: &[Value]| {
        args::count(a, 3)?;
        let start = args::int(a, 0)?;
        let end = args::int(a, 1)?;
        Ok(Value::from(substr(start, end, args::string(a, 2)?)?))
    });
    funcs.add("trunc", |a: &[Value]| {
        args::count(a, 2)?;
        let c = args::int(a, 0)?;
        Ok(Value::from(trunc(c, args::string(a, 1)?)))
    });
    funcs.add("abbrev", |a: &[Value]| {
        args::count(a, 2)?;
        let width = args::int(a, 0)?;
        let s = args::string(a, 1)?;
        if width < 4 {
            return Ok(Value::from(s));
        }
        Ok(Value::from(abbreviate(s, 0, width)))
    });
    funcs.add("abbrevboth", |a: &[Value]| {
        args::count(a, 3)?;
        let left = args::int(a, 0)?;
        let right = args::int(a, 1)?;
        let s = args::string(a, 2)?;
        if right < 4 || left > 0 && right < 7 {
            return Ok(Value::from(s));
        }
        Ok(Value::from(abbreviate(s, left, right)))
    });
    funcs.add("wrap", |a: &[Value]| {
        args::count(a, 2)?;
        let width = args::int(a, 0)?;
        Ok(Value::from(wrap(args::string(a, 1)?, width, "\n", false)))
    });
    funcs.add("wrapWith", |a: &[Value]| {
        args::count(a, 3)?;
        let width = args::int(a, 0)?;
        let sep = args::string(a, 1)?;
        Ok(Value::from(wrap(args::string(a, 2)?, width, sep, true)))
    });
    funcs.add("indent", |a: &[Value]| {
        args::count(a, 2)?;
        let spaces = args::int(a, 0)?;
        Ok(Value::from(indent(spaces, args::string(a, 1)?)?))
    });
    funcs.add("nindent", |a: &[Value]| {
        args::count(a, 2)?;
        let spaces = args::int(a, 0)?;
        Ok(Value::from(format!(
            "\n{}",
            indent(spaces, args::string(a, 1)?)?
        )))
    });
}

fn install_quote(funcs: &mut FuncMap) {
    funcs.add("quote", |a: &[Value]| {
        let quoted: Vec<String> = a
            .iter()
            .filter(|v| !v.is_nil())
            .map(|v| quote(&strval(v)))
            .collect();
        Ok(Value::from(quoted.join(" ")))
    });
    funcs.add("squote", |a: &[Value]| {
        let quoted: Vec<String> = a
            .iter()
            .filter(|v| !v.is_nil())
            .map(|v| format!("'{}'", v.to_go_string()))
            .collect();
        Ok(Value::from(quoted.join(" ")))
    });
    funcs.add("cat", |a: &[Value]| {
        let printed: Vec<String> = a
            .iter()
            .filter(|v| !v.is_nil())
            .map(Value::to_go_string)
            .collect();
        Ok(Value::from(printed.join(" ")))
    });
}

fn install_split_join(funcs: &mut FuncMap) {
    funcs.add("split", |a: &[Value]| {
        args::count(a, 2)?;
        let sep = args::string(a, 0)?;
        Ok(indexed_parts(go_split(args::string(a, 1)?, sep, -1)))
    });
    funcs.add("splitn", |a: &[Value]| {
        args::count(a, 3)?;
        let sep = args::string(a, 0)?;
        let n = args::int(a, 1)?;
        Ok(indexed_parts(go_split(args::string(a, 2)?, sep, n)))
    });
    funcs.add("splitList", |a: &[Value]| {
        args::count(a, 2)?;
        let sep = args::string(a, 0)?;
        let parts = go_split(args::string(a, 1)?, sep, -1);
        Ok(Value::list(parts.into_iter().map(Value::from).collect()))
    });
    funcs.add("join", |a: &[Value]| {
        args::count(a, 2)?;
        let sep = args::string(a, 0)?;
        Ok(Value::from(to_strings(&a[1]).join(sep)))
    });
    funcs.add("sortAlpha", |a: &[Value]| {
        args::count(a, 1)?;
        let mut items = match &a[0] {
            Value::List(_) | Value::Bytes(_) => to_strings(&a[0]),
            other => vec![strval(other)],
        };
        items.sort_unstable();
        Ok(Value::list(items.into_iter().map(Value::from).collect()))
    });
}

/// Which bytes a random string may contain.
type ByteTest = fn(u8) -> bool;

fn install_random(funcs: &mut FuncMap) {
    let kinds: [(&str, ByteTest); 4] = [
        ("randAlphaNum", |b| b.is_ascii_alphanumeric()),
        ("randAlpha", |b| b.is_ascii_alphabetic()),
        ("randNumeric", |b| b.is_ascii_digit()),
        ("randAscii", |b| (b' '..=b'~').contains(&b)),
    ];
    for (name, accept) in kinds {
        funcs.add(name, move |a: &[Value]| {
            args::count(a, 1)?;
            let count = args::int(a, 0)?;
            Ok(Value::from(random_string(count, accept)?))
        });
    }
}

/// A string of `len` bytes, or the error Helm's limit gives.
fn check_len(len: usize) -> Result<(), FuncError> {
    if len > MAX_OUTPUT {
        return Err(FuncError::failed(format!(
            "output of {len} bytes exceeds the limit of {MAX_OUTPUT} bytes"
        )));
    }
    Ok(())
}

/// Go's `strings.Repeat`, with its panics as errors and the size limit.
fn repeat(s: &str, count: i64) -> Result<String, FuncError> {
    let count =
        usize::try_from(count).map_err(|_| FuncError::failed("strings: negative Repeat count"))?;
    let len = s
        .len()
        .checked_mul(count)
        .ok_or_else(|| FuncError::failed("strings: Repeat output length overflow"))?;
    check_len(len)?;
    Ok(s.repeat(count))
}

fn replace_all(s: &str, old: &str, new: &str) -> Result<String, FuncError> {
    if old.is_empty() {
        // Go inserts `new` before every character and at the end.
        let chars = s.chars().count() + 1;
        check_len(s.len() + new.len().saturating_mul(chars))?;
        let mut out = String::new();
        for c in s.chars() {
            out.push_str(new);
            out.push(c);
        }
        out.push_str(new);
        return Ok(out);
    }
    let matches = s.matches(old).count();
    check_len(s.len() + new.len().saturating_mul(matches))?;
    Ok(s.replace(old, new))
}

fn indent(spaces: i64, s: &str) -> Result<String, FuncError> {
    let pad = repeat(" ", spaces)?;
    let lines = s.bytes().filter(|&b| b == b'\n').count() + 1;
    check_len(s.len() + pad.len().saturating_mul(lines))?;
    Ok(format!("{pad}{}", s.replace('\n', &format!("\n{pad}"))))
}

/// `s[from..to]` on bytes, as Go slices strings; a cut inside a character gives U+FFFD, since
/// our strings are UTF-8.
fn byte_slice(s: &str, from: usize, to: usize) -> String {
    String::from_utf8_lossy(&s.as_bytes()[from..to]).into_owned()
}

/// Go's runtime message for a slice expression out of range.
fn slice_error(text: String) -> FuncError {
    FuncError::failed(format!("runtime error: slice bounds out of range {text}"))
}

/// Sprig's `substr`: byte offsets; a negative start means from the beginning, a negative or too
/// large end means to the end.
fn substr(start: i64, end: i64, s: &str) -> Result<String, FuncError> {
    let len = s.len() as i64;
    if start < 0 {
        if end < 0 {
            return Err(slice_error(format!("[:{end}]")));
        }
        if end > len {
            return Err(slice_error(format!("[:{end}] with length {len}")));
        }
        return Ok(byte_slice(s, 0, end as usize));
    }
    if end < 0 || end > len {
        if start > len {
            return Err(slice_error(format!("[{start}:{len}]")));
        }
        return Ok(byte_slice(s, start as usize, s.len()));
    }
    if start > end {
        return Err(slice_error(format!("[{start}:{end}]")));
    }
    Ok(byte_slice(s, start as usize, end as usize))
}

/// Sprig's `trunc`: the first `c` bytes, or the last `-c` bytes when negative.
fn trunc(c: i64, s: &str) -> String {
    let len = s.len() as i64;
    if c < 0 && len + c > 0 {
        return byte_slice(s, (len + c) as usize, s.len());
    }
    if c >= 0 && len > c {
        return byte_slice(s, 0, c as usize);
    }
    s.to_string()
}

/// goutils' `AbbreviateFull` (byte offsets), for widths Sprig has already checked.
fn abbreviate(s: &str, offset: i64, width: i64) -> String {
    const MARKER: &str = "...";
    let len = s.len() as i64;
    if s.is_empty() || width < 4 {
        return String::new();
    }
    if len <= width {
        return s.to_string();
    }
    let mut offset = offset.min(len);
    if len - offset < width - 3 {
        offset = len - (width - 3);
    }
    if offset <= 4 {
        return format!("{}{MARKER}", byte_slice(s, 0, (width - 3) as usize));
    }
    if width < 7 {
        return String::new();
    }
    if offset + width - 3 < len {
        let rest = byte_slice(s, offset as usize, s.len());
        return format!("{MARKER}{}", abbreviate(&rest, 0, width - 3));
    }
    format!(
        "{MARKER}{}",
        byte_slice(s, (len - (width - 3)) as usize, s.len())
    )
}

/// goutils' `WrapCustom`: breaks at spaces so that lines are at most `width` bytes; long words
/// are cut only when `wrap_long`.
fn wrap(s: &str, width: i64, newline: &str, wrap_long: bool) -> String {
    if s.is_empty() {
        return String::new();
    }
    let newline = if newline.is_empty() { "\n" } else { newline };
    let width = usize::try_from(width.max(1)).unwrap_or(usize::MAX);
    let bytes = s.as_bytes();
    let len = bytes.len();
    let mut offset = 0;
    let mut out = String::new();
    while len - offset > width {
        if bytes[offset] == b' ' {
            offset += 1;
            continue;
        }
        let end = width + offset + 1;
        if let Some(space) = bytes[offset..end].iter().rposition(|&b| b == b' ') {
            out.push_str(&byte_slice(s, offset, offset + space));
            out.push_str(newline);
            offset += space + 1;
        } else if wrap_long {
            out.push_str(&byte_slice(s, offset, offset + width));
            out.push_str(newline);
            offset += width;
        } else {
            let end = width + offset;
            match bytes[end..].iter().position(|&b| b == b' ') {
                Some(index) => {
                    out.push_str(&byte_slice(s, offset, end + index));
                    out.push_str(newline);
                    offset = end + index + 1;
                }
                None => {
                    out.push_str(&byte_slice(s, offset, len));
                    offset = len;
                }
            }
        }
    }
    out.push_str(&byte_slice(s, offset, len));
    out
}

/// Go's `unicode.IsSpace` of a byte read as a Latin-1 character, as goutils reads strings.
fn is_space_byte(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | b' ' | 0x85 | 0xa0)
}

/// goutils' `Initials`: it walks bytes, so a non-ASCII first letter comes out as the Latin-1
/// character of its first byte, exactly as Sprig prints it.
fn initials(s: &str) -> String {
    let mut out = String::new();
    let mut gap = true;
    for &b in s.as_bytes() {
        if is_space_byte(b) {
            gap = true;
        } else if gap {
            out.push(char::from(b));
            gap = false;
        }
    }
    out
}

/// goutils' `DeleteWhiteSpace`, byte-wise like [`initials`].
fn nospace(s: &str) -> String {
    if !s.bytes().any(is_space_byte) {
        return s.to_string();
    }
    s.bytes()
        .filter(|&b| !is_space_byte(b))
        .map(char::from)
        .collect()
}

fn untitle(s: &str) -> String {
    let mut next = true;
    s.chars()
        .map(|c| {
            if c.is_whitespace() {
                next = true;
                c
            } else if next {
                next = false;
                to_lower(c)
            } else {
                c
            }
        })
        .collect()
}

/// Go's deprecated `strings.Title`: the first letter of every word in title case.
fn title(s: &str) -> String {
    let mut prev = ' ';
    s.chars()
        .map(|c| {
            let out = if is_title_separator(prev) {
                to_title(c)
            } else {
                c
            };
            prev = c;
            out
        })
        .collect()
}

fn is_title_separator(c: char) -> bool {
    if c.is_ascii() {
        return !(c.is_ascii_alphanumeric() || c == '_');
    }
    if class(Class::Letter, c) || class(Class::Digit, c) {
        return false;
    }
    c.is_whitespace()
}

/// goutils' `SwapCase`: upper and title case become lower; a lower-case letter becomes title
/// case at the start of a word and upper case inside one.
fn swapcase(s: &str) -> String {
    let mut word_start = true;
    s.chars()
        .map(|c| {
            if class(Class::Upper, c) || class(Class::Title, c) {
                word_start = false;
                to_lower(c)
            } else if class(Class::Lower, c) {
                let out = if word_start { to_title(c) } else { to_upper(c) };
                word_start = false;
                out
            } else {
                word_start = c.is_whitespace();
                c
            }
        })
        .collect()
}

/// xstrings' `Shuffle`: a Fisher–Yates permutation of the characters.
fn shuffle(s: &str) -> Result<String, FuncError> {
    let mut chars: Vec<char> = s.chars().collect();
    for i in (1..chars.len()).rev() {
        let j = random_below(i as u64 + 1)? as usize;
        chars.swap(i, j);
    }
    Ok(chars.into_iter().collect())
}

fn is_connector(c: char) -> bool {
    c == '-' || c == '_' || c.is_whitespace()
}

/// xstrings' `ToPascalCase`, which Sprig calls `camelcase`: connectors (`_`, `-`, spaces)
/// dropped and the next letter upper-cased; leading and repeated connectors kept.
fn pascal_case(s: &str) -> String {
    let mut chars = s.chars();
    let mut out = String::new();
    let mut first_upper = false;
    let mut r0 = None;
    for c in chars.by_ref() {
        if !is_connector(c) {
            first_upper = class(Class::Upper, c);
            r0 = Some(to_upper(c));
            break;
        }
        out.push(c);
    }
    let Some(mut r0) = r0 else {
        // xstrings writes the last connector it consumed once more.
        if let Some(last) = out.chars().last() {
            out.push(last);
        }
        return out;
    };
    for c in chars {
        let r1 = r0;
        r0 = c;
        if is_connector(r0) && is_connector(r1) {
            out.push(r1);
            continue;
        }
        if is_connector(r1) {
            first_upper = class(Class::Upper, r0);
            r0 = to_upper(r0);
        } else {
            if first_upper {
                if class(Class::Upper, r0) {
                    r0 = to_lower(r0);
                } else {
                    first_upper = false;
                }
            }
            out.push(r1);
        }
    }
    out.push(r0);
    out
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Word {
    /// Past the end (xstrings' `invalidWord` for an empty rest).
    End,
    Number,
    Upper,
    Alphabet,
    Connector,
    Punct,
    Other,
}

/// xstrings' letter test: letters other than CJK ideographs.
fn is_alphabet(c: char) -> bool {
    if !class(Class::Letter, c) {
        return false;
    }
    let cp = u32::from(c);
    !((0x4E00..=0x9FCC).contains(&cp)
        || (0x3400..=0x4D85).contains(&cp)
        || (0x20000..=0x2B81D).contains(&cp))
}

/// The byte offset where the run of characters from `chars` that `keep` accepts ends.
fn run_end(s: &str, chars: &mut Peekable<CharIndices<'_>>, keep: impl Fn(char) -> bool) -> usize {
    while let Some(&(_, c)) = chars.peek() {
        if !keep(c) {
            break;
        }
        chars.next();
    }
    chars.peek().map_or(s.len(), |&(i, _)| i)
}

/// xstrings' `nextWord`: the kind and byte length of the word at the start of `s`.
fn next_word(s: &str) -> (Word, usize) {
    let mut chars = s.char_indices().peekable();
    let Some((_, first)) = chars.next() else {
        return (Word::End, 0);
    };
    if is_connector(first) {
        return (Word::Connector, run_end(s, &mut chars, is_connector));
    }
    if class(Class::Punct, first) {
        return (
            Word::Punct,
            run_end(s, &mut chars, |c| class(Class::Punct, c)),
        );
    }
    let lower_letter = |c| is_alphabet(c) && !class(Class::Upper, c);
    if class(Class::Upper, first) {
        let Some(&(second_at, second)) = chars.peek() else {
            return (Word::Upper, s.len());
        };
        if class(Class::Upper, second) {
            // "HTTPStatus" is "HTTP" then "Status": the last capital before a letter starts
            // the next word.
            let mut last_at = second_at;
            chars.next();
            while let Some(&(i, c)) = chars.peek() {
                if !class(Class::Upper, c) {
                    return (Word::Upper, if is_alphabet(c) { last_at } else { i });
                }
                last_at = i;
                chars.next();
            }
            return (Word::Upper, s.len());
        }
        if is_alphabet(second) {
            return (Word::Upper, run_end(s, &mut chars, lower_letter));
        }
        return (Word::Upper, second_at);
    }
    if is_alphabet(first) {
        return (Word::Alphabet, run_end(s, &mut chars, lower_letter));
    }
    if class(Class::Number, first) {
        return (
            Word::Number,
            run_end(s, &mut chars, |c| class(Class::Number, c)),
        );
    }
    let other = |c| {
        !(is_connector(c) || is_alphabet(c) || class(Class::Number, c) || class(Class::Punct, c))
    };
    (Word::Other, run_end(s, &mut chars, other))
}

/// xstrings' `toLower`: upper-case words and connectors are lowered and connectors replaced.
fn push_lower(out: &mut String, kind: Word, word: &str, connector: char) {
    if kind != Word::Upper && kind != Word::Connector {
        out.push_str(word);
        return;
    }
    for c in word.chars() {
        if is_connector(c) {
            out.push(connector);
        } else {
            out.push(to_lower(c));
        }
    }
}

/// A cursor over the xstrings words of a string.
struct Words<'a> {
    rest: &'a str,
}

impl<'a> Words<'a> {
    fn next(&mut self) -> (Word, &'a str) {
        let (kind, len) = next_word(self.rest);
        let word = &self.rest[..len];
        self.rest = &self.rest[len..];
        (kind, word)
    }

    fn done(&self) -> bool {
        self.rest.is_empty()
    }
}

/// xstrings' `camelCaseToLowerCase`, behind `snakecase` and `kebabcase`.
fn camel_to_lower(s: &str, connector: char) -> String {
    let mut out = String::new();
    let mut words = Words { rest: s };
    let (mut kind, mut word) = words.next();
    let separated = |k: Word| !matches!(k, Word::End | Word::Punct | Word::Connector);
    while !words.done() {
        if kind != Word::Connector {
            push_lower(&mut out, kind, word, connector);
        }
        let (prev, last) = (kind, word);
        (kind, word) = words.next();
        match prev {
            Word::Number => {
                while matches!(kind, Word::Alphabet | Word::Number) {
                    push_lower(&mut out, kind, word, connector);
                    (kind, word) = words.next();
                }
                if separated(kind) {
                    out.push(connector);
                }
            }
            Word::Connector => push_lower(&mut out, prev, last, connector),
            Word::Punct => {}
            _ if kind != Word::Number => {
                if kind != Word::Connector && kind != Word::Punct {
                    out.push(connector);
                }
            }
            _ if words.done() => {}
            _ => {
                // A number inside a word belongs to it ("Bld4Floor"), unless lower-case
                // letters follow ("HTTP2xx" is "http_2xx").
                let number = word;
                (kind, word) = words.next();
                if kind != Word::Alphabet {
                    push_lower(&mut out, Word::Number, number, connector);
                    if kind != Word::Connector && kind != Word::Punct {
                        out.push(connector);
                    }
                    continue;
                }
                out.push(connector);
                push_lower(&mut out, Word::Number, number, connector);
                while matches!(kind, Word::Alphabet | Word::Number) {
                    push_lower(&mut out, kind, word, connector);
                    (kind, word) = words.next();
                }
                if separated(kind) {
                    out.push(connector);
                }
            }
        }
    }
    push_lower(&mut out, kind, word, connector);
    out
}

/// Go's `strings.SplitN` (`n < 0`: all parts; `n == 0`: none).
fn go_split<'a>(s: &'a str, sep: &str, n: i64) -> Vec<&'a str> {
    if n == 0 {
        return Vec::new();
    }
    if sep.is_empty() {
        return explode(s, n);
    }
    s.splitn(usize::try_from(n).unwrap_or(usize::MAX), sep)
        .collect()
}

/// Go's `strings.explode`: `s` split into its characters, at most `n` parts (`n < 0`: no
/// limit), the last part holding the rest.
pub(super) fn explode(s: &str, n: i64) -> Vec<&str> {
    let limit = usize::try_from(n).unwrap_or(usize::MAX);
    let mut parts = Vec::new();
    let mut rest = s;
    while !rest.is_empty() {
        if parts.len() + 1 == limit {
            parts.push(rest);
            return parts;
        }
        let len = rest.chars().next().map_or(1, char::len_utf8);
        parts.push(&rest[..len]);
        rest = &rest[len..];
    }
    parts
}

/// Sprig's `split`/`splitn` result: a map from `_0`, `_1`, … to the parts.
fn indexed_parts(parts: Vec<&str>) -> Value {
    Value::Map(Map::from_entries(
        parts
            .into_iter()
            .enumerate()
            .map(|(i, part)| (format!("_{i}"), Value::from(part))),
    ))
}

/// Random bytes from the operating system.
pub(crate) fn random_bytes(buf: &mut [u8]) -> Result<(), FuncError> {
    getrandom::fill(buf).map_err(|e| FuncError::failed(format!("crypto/rand: {e}")))
}

/// A uniform random number below `bound` (which is not 0), by rejection sampling.
fn random_below(bound: u64) -> Result<u64, FuncError> {
    let zone = u64::MAX - (u64::MAX % bound);
    loop {
        let mut buf = [0u8; 8];
        random_bytes(&mut buf)?;
        let x = u64::from_le_bytes(buf);
        if x < zone {
            return Ok(x % bound);
        }
    }
}

/// goutils' `CryptoRandom*`: `count` characters drawn from `' '..='z'` (or `' '..='~'`) that
/// `accept` takes; an error for a negative count, which Sprig turns into "".
fn random_string(count: i64, accept: fn(u8) -> bool) -> Result<String, FuncError> {
    let Ok(count) = usize::try_from(count) else {
        return Ok(String::new());
    };
    check_len(count)?;
    let alphabet: Vec<u8> = (b' '..=b'~').filter(|&b| accept(b)).collect();
    let mut out = String::with_capacity(count);
    let mut buf = [0u8; 64];
    while out.len() < count {
        random_bytes(&mut buf)?;
        for &b in &buf {
            // Rejection keeps the choice uniform over the alphabet.
            let limit = 256 - 256 % alphabet.len();
            if usize::from(b) < limit && out.len() < count {
                out.push(char::from(alphabet[usize::from(b) % alphabet.len()]));
            }
        }
    }
    Ok(out)
}

/// Unicode classes Go's `unicode` package tests by general category.
#[derive(Clone, Copy)]
enum Class {
    Letter,
    Upper,
    Lower,
    Title,
    Digit,
    Number,
    Punct,
}

/// Whether `c` is in the general category `class` (Rust's `is_uppercase` and friends use
/// derived properties, which differ from Go's categories for a few characters).
fn class(class: Class, c: char) -> bool {
    static CLASSES: OnceLock<Vec<Regex>> = OnceLock::new();
    let classes = CLASSES.get_or_init(|| {
        [
            r"^\p{L}$",
            r"^\p{Lu}$",
            r"^\p{Ll}$",
            r"^\p{Lt}$",
            r"^\p{Nd}$",
            r"^\p{N}$",
            r"^\p{P}$",
        ]
        .iter()
        .filter_map(|p| Regex::new(p).ok())
        .collect()
    });
    if c.is_ascii() {
        return match class {
            Class::Letter => c.is_ascii_alphabetic(),
            Class::Upper => c.is_ascii_uppercase(),
            Class::Lower => c.is_ascii_lowercase(),
            Class::Title => false,
            Class::Digit | Class::Number => c.is_ascii_digit(),
            Class::Punct => matches!(
                c,
                '!'..='#' | '%'..='*' | ','..='/' | ':' | ';' | '?' | '@' | '['..=']' | '_' | '{' | '}'
            ),
        };
    }
    let mut buf = [0u8; 4];
    classes
        .get(class as usize)
        .is_some_and(|re| re.is_match(c.encode_utf8(&mut buf)))
}

/// One character mapped by a Rust case conversion, if it maps to exactly one (Go's
/// `unicode.To*` never changes the length).
fn single(mut mapped: impl Iterator<Item = char>, c: char) -> char {
    match (mapped.next(), mapped.next()) {
        (Some(m), None) => m,
        _ => c,
    }
}

/// Go's `unicode.ToUpper`.
fn to_upper(c: char) -> char {
    single(c.to_uppercase(), c)
}

/// Go's `unicode.ToLower`.
fn to_lower(c: char) -> char {
    if c == '\u{130}' {
        return 'i';
    }
    single(c.to_lowercase(), c)
}

/// Go's `unicode.ToTitle`: upper case except for the Latin digraphs, which have a title form.
fn to_title(c: char) -> char {
    match c {
        '\u{1C4}'..='\u{1C6}' => '\u{1C5}',
        '\u{1C7}'..='\u{1C9}' => '\u{1C8}',
        '\u{1CA}'..='\u{1CC}' => '\u{1CB}',
        '\u{1F1}'..='\u{1F3}' => '\u{1F2}',
        c => to_upper(c),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snake_and_kebab_case_follow_xstrings_words() {
        for (input, snake) in [
            ("FirstName", "first_name"),
            ("HTTPServer", "http_server"),
            ("NoHTTPS", "no_https"),
            ("GO_PATH", "go_path"),
            ("GO PATH", "go_path"),
            ("GO-PATH", "go_path"),
            ("http2xx", "http_2xx"),
            ("HTTP20xOK", "http_20x_ok"),
            ("Duration2m3s", "duration_2m3s"),
            ("Bld4Floor3rd", "bld4_floor_3rd"),
            ("a", "a"),
            ("", ""),
        ] {
            assert_eq!(camel_to_lower(input, '_'), snake, "{input}");
        }
        assert_eq!(camel_to_lower("HTTP20xOK", '-'), "http-20x-ok");
    }

    #[test]
    fn camelcase_is_pascal_case() {
        for (input, want) in [
            ("http_server", "HttpServer"),
            ("_camel_case", "_CamelCase"),
            ("no_https", "NoHttps"),
            ("_complex__case_", "_Complex_Case_"),
            ("all", "All"),
            ("GOLANG_IS_GREAT", "GolangIsGreat"),
            ("some words", "SomeWords"),
            ("x", "X"),
            ("__", "___"),
        ] {
            assert_eq!(pascal_case(input), want, "{input}");
        }
    }

    #[test]
    fn substr_mirrors_go_slicing_and_its_panics() {
        assert_eq!(substr(0, 3, "fooo").ok(), Some("foo".to_string()));
        assert_eq!(substr(-1, 2, "fooo").ok(), Some("fo".to_string()));
        assert_eq!(substr(1, -1, "fooo").ok(), Some("ooo".to_string()));
        assert_eq!(
            substr(3, 1, "fooo").err().map(|e| e.to_string()),
            Some("runtime error: slice bounds out of range [3:1]".to_string())
        );
        assert_eq!(
            substr(-1, 9, "fooo").err().map(|e| e.to_string()),
            Some("runtime error: slice bounds out of range [:9] with length 4".to_string())
        );
    }

    #[test]
    fn wrap_breaks_at_spaces_and_keeps_long_words() {
        assert_eq!(wrap("Hello World", 5, "\n", false), "Hello\nWorld");
        assert_eq!(
            wrap("averylongword and", 4, "\n", false),
            "averylongword\nand"
        );
        assert_eq!(wrap("abcdefgh", 3, "|", true), "abc|def|gh");
    }

    #[test]
    fn abbreviations_follow_goutils() {
        assert_eq!(abbreviate("hello world", 0, 5), "he...");
        assert_eq!(abbreviate("1234 5678 9123", 5, 10), "...5678...");
        assert_eq!(abbreviate("short", 0, 10), "short");
    }

    #[test]
    fn random_strings_have_the_length_and_alphabet_asked_for() {
        for _ in 0..20 {
            let s = random_string(40, |b| b.is_ascii_alphanumeric()).unwrap_or_default();
            assert_eq!(s.len(), 40);
            assert!(s.bytes().all(|b| b.is_ascii_alphanumeric()));
            let n = random_string(17, |b| b.is_ascii_digit()).unwrap_or_default();
            assert_eq!(n.len(), 17);
            assert!(n.bytes().all(|b| b.is_ascii_digit()));
        }
        assert_eq!(
            random_string(-3, |b| b.is_ascii_digit()).ok(),
            Some(String::new())
        );
        assert!(random_string(i64::MAX, |b| b.is_ascii_digit()).is_err());
    }

    #[test]
    fn shuffle_permutes_characters() {
        let s = "aébcdefghij";
        let mut shuffled: Vec<char> = shuffle(s).unwrap_or_default().chars().collect();
        let mut original: Vec<char> = s.chars().collect();
        shuffled.sort_unstable();
        original.sort_unstable();
        assert_eq!(shuffled, original);
    }

    #[test]
    fn byte_wise_goutils_functions_keep_their_quirks() {
        assert_eq!(initials("First Try"), "FT");
        assert_eq!(nospace("h e l l o "), "hello");
        assert_eq!(nospace("héllo"), "héllo");
        assert_eq!(swapcase("hello World"), "HELLO wORLD");
        assert_eq!(title("hello wide_world-x"), "Hello Wide_world-X");
    }
}
