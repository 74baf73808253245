//! Sprig's string functions (Sprig v3.3.0 as Helm vendors it): case, trimming, cutting,
//! quoting, wrapping, indenting and splitting, with the argument types Sprig declares (a Go
//! `int` parameter refuses `int64` and `float64`, as in Helm).

use super::{FuncError, FuncMap, FuncResult, args};
use crate::value::format::{quote, sprintf};
use crate::value::{Map, Value};

/// Output larger than this is refused rather than allocated (`repeat` with a hostile count).
const MAX_OUTPUT: usize = 1 << 30;

/// Registers the string functions.
pub fn install(funcs: &mut FuncMap) {
    funcs.add("hello", |a: &[Value]| {
        args::count(a, 0)?;
        Ok(Value::from("Hello!"))
    });
    string_to_string(funcs, "upper", |s| s.to_uppercase());
    string_to_string(funcs, "lower", |s| s.to_lowercase());
    string_to_string(funcs, "title", title);
    string_to_string(funcs, "untitle", untitle);
    string_to_string(funcs, "trim", |s| {
        s.trim_matches(char::is_whitespace).to_string()
    });
    string_to_string(funcs, "nospace", |s| {
        s.chars().filter(|c| !c.is_whitespace()).collect()
    });
    string_to_string(funcs, "initials", initials);
    string_to_string(funcs, "swapcase", swapcase);
    string_to_string(funcs, "snakecase", |s| split_case(s, '_'));
    string_to_string(funcs, "kebabcase", |s| split_case(s, '-'));
    string_to_string(funcs, "camelcase", camelcase);
    funcs.add("trimAll", |a: &[Value]| {
        two_strings(a, |cutset, s| {
            s.trim_matches(|c| cutset.contains(c)).to_string()
        })
    });
    funcs.add("trimPrefix", |a: &[Value]| {
        two_strings(a, |prefix, s| {
            s.strip_prefix(prefix).unwrap_or(s).to_string()
        })
    });
    funcs.add("trimSuffix", |a: &[Value]| {
        two_strings(a, |suffix, s| {
            s.strip_suffix(suffix).unwrap_or(s).to_string()
        })
    });
    funcs.add("contains", |a: &[Value]| {
        string_test(a, |sub, s| s.contains(sub))
    });
    funcs.add("hasPrefix", |a: &[Value]| {
        string_test(a, |p, s| s.starts_with(p))
    });
    funcs.add("hasSuffix", |a: &[Value]| {
        string_test(a, |p, s| s.ends_with(p))
    });
    funcs.add("substr", substr);
    funcs.add("repeat", repeat);
    funcs.add("trunc", trunc);
    funcs.add("abbrev", abbrev);
    funcs.add("abbrevboth", abbrevboth);
    funcs.add("wrap", |a: &[Value]| {
        args::count(a, 2)?;
        let width = args::int(a, 0)?;
        Ok(Value::from(wrap(args::string(a, 1)?, width, "\n", false)))
    });
    funcs.add("wrapWith", |a: &[Value]| {
        args::count(a, 3)?;
        let width = args::int(a, 0)?;
        let separator = args::string(a, 1)?;
        Ok(Value::from(wrap(
            args::string(a, 2)?,
            width,
            separator,
            true,
        )))
    });
    funcs.add("indent", |a: &[Value]| {
        args::count(a, 2)?;
        Ok(Value::from(indent(args::int(a, 0)?, args::string(a, 1)?)?))
    });
    funcs.add("nindent", |a: &[Value]| {
        args::count(a, 2)?;
        Ok(Value::from(format!(
            "\n{}",
            indent(args::int(a, 0)?, args::string(a, 1)?)?
        )))
    });
    funcs.add("replace", |a: &[Value]| {
        args::count(a, 3)?;
        let (old, new, src) = (
            args::string(a, 0)?,
            args::string(a, 1)?,
            args::string(a, 2)?,
        );
        Ok(Value::from(src.replace(old, new)))
    });
    funcs.add("plural", |a: &[Value]| {
        args::count(a, 3)?;
        let (one, many) = (args::string(a, 0)?, args::string(a, 1)?);
        Ok(Value::from(if args::int(a, 2)? == 1 { one } else { many }))
    });
    funcs.add("quote", |a: &[Value]| {
        let quoted: Vec<String> = non_nil(a).map(|v| quote(&strval(v))).collect();
        Ok(Value::from(quoted.join(" ")))
    });
    funcs.add("squote", |a: &[Value]| {
        let quoted: Vec<String> = non_nil(a).map(|v| format!("'{}'", strval(v))).collect();
        Ok(Value::from(quoted.join(" ")))
    });
    funcs.add("cat", |a: &[Value]| {
        let items: Vec<Value> = non_nil(a).cloned().collect();
        let format = vec!["%v"; items.len()].join(" ");
        Ok(Value::from(sprintf(&format, &items)))
    });
    funcs.add("join", |a: &[Value]| {
        args::count(a, 2)?;
        let separator = args::string(a, 0)?;
        Ok(Value::from(string_slice(&a[1]).join(separator)))
    });
    funcs.add("splitList", |a: &[Value]| {
        args::count(a, 2)?;
        let (separator, text) = (args::string(a, 0)?, args::string(a, 1)?);
        let parts = go_split(text, separator, usize::MAX);
        Ok(Value::list(parts.into_iter().map(Value::from).collect()))
    });
    funcs.add("split", |a: &[Value]| {
        args::count(a, 2)?;
        let (separator, text) = (args::string(a, 0)?, args::string(a, 1)?);
        Ok(numbered_parts(go_split(text, separator, usize::MAX)))
    });
    funcs.add("splitn", |a: &[Value]| {
        args::count(a, 3)?;
        let separator = args::string(a, 0)?;
        let n = args::int(a, 1)?;
        let text = args::string(a, 2)?;
        let parts = match usize::try_from(n) {
            Ok(0) => Vec::new(),
            Ok(n) => go_split(text, separator, n),
            Err(_) => go_split(text, separator, usize::MAX),
        };
        Ok(numbered_parts(parts))
    });
    funcs.add("sortAlpha", |a: &[Value]| {
        args::count(a, 1)?;
        let mut items = match &a[0] {
            Value::List(_) | Value::Bytes(_) => string_slice(&a[0]),
            other => vec![strval(other)],
        };
        items.sort();
        Ok(Value::list(items.into_iter().map(Value::from).collect()))
    });
}

/// Sprig's `strval`: strings and byte slices as text, anything else as `%v` prints it.
pub fn strval(value: &Value) -> String {
    match value {
        Value::String(s) => s.to_string(),
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        other => other.to_go_string(),
    }
}

/// Sprig's `strslice`: the elements of a list as strings, nils dropped; a non-list alone.
pub fn string_slice(value: &Value) -> Vec<String> {
    match value {
        Value::List(items) => items.iter().filter(|v| !v.is_nil()).map(strval).collect(),
        Value::Bytes(bytes) => bytes.iter().map(|b| b.to_string()).collect(),
        Value::Nil => Vec::new(),
        other => vec![strval(other)],
    }
}

fn non_nil(a: &[Value]) -> impl Iterator<Item = &Value> {
    a.iter().filter(|v| !v.is_nil())
}

fn string_to_string(funcs: &mut FuncMap, name: &str, f: fn(&str) -> String) {
    funcs.add(name, move |a: &[Value]| {
        args::count(a, 1)?;
        Ok(Value::from(f(args::string(a, 0)?)))
    });
}

fn two_strings(a: &[Value], f: impl Fn(&str, &str) -> String) -> FuncResult {
    args::count(a, 2)?;
    Ok(Value::from(f(args::string(a, 0)?, args::string(a, 1)?)))
}

fn string_test(a: &[Value], f: impl Fn(&str, &str) -> bool) -> FuncResult {
    args::count(a, 2)?;
    Ok(Value::Bool(f(args::string(a, 0)?, args::string(a, 1)?)))
}

/// Go's `strings.SplitN` with `n > 0` (`usize::MAX` for `strings.Split`).
fn go_split(text: &str, separator: &str, n: usize) -> Vec<String> {
    if separator.is_empty() {
        let chars: Vec<String> = text.chars().map(String::from).collect();
        if chars.len() <= n {
            return chars;
        }
        let head_bytes: usize = chars[..n - 1].iter().map(String::len).sum();
        let mut parts = chars[..n - 1].to_vec();
        parts.push(text[head_bytes..].to_string());
        return parts;
    }
    text.splitn(n, separator).map(str::to_string).collect()
}

/// Sprig's `split` result: a map from `_0`, `_1`, … to the parts.
fn numbered_parts(parts: Vec<String>) -> Value {
    let map = Map::new();
    for (i, part) in parts.into_iter().enumerate() {
        map.insert(format!("_{i}"), Value::from(part));
    }
    Value::Map(map)
}

/// Go's panic message for slicing a string outside its bounds, as the template error shows it.
fn bounds_error(low: Option<i64>, high: i64, len: usize) -> FuncError {
    FuncError::failed(match low {
        Some(low) if low > high => {
            format!("runtime error: slice bounds out of range [{low}:{high}]")
        }
        Some(low) => format!("runtime error: slice bounds out of range [{low}:{len}]"),
        None => format!("runtime error: slice bounds out of range [:{high}] with length {len}"),
    })
}

fn byte_range(s: &str, from: usize, to: usize) -> String {
    String::from_utf8_lossy(&s.as_bytes()[from..to]).into_owned()
}

/// `substr start end s` with Go's byte offsets: a negative start means 0..end, a negative or
/// too large end means start..len.
fn substr(a: &[Value]) -> FuncResult {
    args::count(a, 3)?;
    let (start, end, s) = (args::int(a, 0)?, args::int(a, 1)?, args::string(a, 2)?);
    let len = s.len();
    let end_ok = usize::try_from(end).ok().filter(|e| *e <= len);
    if start < 0 {
        let end = end_ok.ok_or_else(|| bounds_error(None, end, len))?;
        return Ok(Value::from(byte_range(s, 0, end)));
    }
    let from = usize::try_from(start).unwrap_or(usize::MAX);
    match end_ok {
        None if from <= len => Ok(Value::from(byte_range(s, from, len))),
        None => Err(bounds_error(Some(start), len as i64, len)),
        Some(to) if from <= to => Ok(Value::from(byte_range(s, from, to))),
        Some(_) => Err(bounds_error(Some(start), end, len)),
    }
}

fn repeat(a: &[Value]) -> FuncResult {
    args::count(a, 2)?;
    let (count, s) = (args::int(a, 0)?, args::string(a, 1)?);
    let count =
        usize::try_from(count).map_err(|_| FuncError::failed("strings: negative Repeat count"))?;
    if s.len().saturating_mul(count) > MAX_OUTPUT {
        return Err(FuncError::failed("strings: Repeat output length overflow"));
    }
    Ok(Value::from(s.repeat(count)))
}

/// `trunc n s`: the first `n` bytes, or for negative `n` the last `-n`.
fn trunc(a: &[Value]) -> FuncResult {
    args::count(a, 2)?;
    let (c, s) = (args::int(a, 0)?, args::string(a, 1)?);
    let len = s.len() as i64;
    if c < 0 && len + c > 0 {
        return Ok(Value::from(byte_range(s, (len + c) as usize, s.len())));
    }
    if c >= 0 && len > c {
        return Ok(Value::from(byte_range(s, 0, c as usize)));
    }
    Ok(Value::from(s))
}

fn abbrev(a: &[Value]) -> FuncResult {
    args::count(a, 2)?;
    let (width, s) = (args::int(a, 0)?, args::string(a, 1)?);
    if width < 4 {
        return Ok(Value::from(s));
    }
    Ok(Value::from(abbreviate(s, 0, width)))
}

fn abbrevboth(a: &[Value]) -> FuncResult {
    args::count(a, 3)?;
    let (left, right, s) = (args::int(a, 0)?, args::int(a, 1)?, args::string(a, 2)?);
    if right < 4 || left > 0 && right < 7 {
        return Ok(Value::from(s));
    }
    Ok(Value::from(abbreviate(s, left, right)))
}

/// Commons-lang style abbreviation with `...`, around byte `offset`, at most `width` bytes.
fn abbreviate(s: &str, offset: i64, width: i64) -> String {
    let len = s.len() as i64;
    if s.is_empty() || len <= width {
        return s.to_string();
    }
    let mut offset = offset.min(len);
    if len - offset < width - 3 {
        offset = len - (width - 3);
    }
    if offset <= 4 {
        return format!("{}...", byte_range(s, 0, (width - 3) as usize));
    }
    if width < 7 {
        return String::new();
    }
    if offset + width - 3 < len {
        let rest = byte_range(s, offset as usize, s.len());
        return format!("...{}", abbreviate(&rest, 0, width - 3));
    }
    format!(
        "...{}",
        byte_range(s, (len - (width - 3)) as usize, s.len())
    )
}

/// Word wrapping at spaces (commons-lang `WordUtils.wrap`), on bytes as Sprig does.
fn wrap(s: &str, width: i64, newline: &str, wrap_long_words: bool) -> String {
    if s.is_empty() {
        return String::new();
    }
    let newline = if newline.is_empty() { "\n" } else { newline };
    let width = usize::try_from(width).unwrap_or(0).max(1);
    let bytes = s.as_bytes();
    let mut out = String::new();
    let mut offset = 0;
    while bytes.len() - offset > width {
        if bytes[offset] == b' ' {
            offset += 1;
            continue;
        }
        let window = &bytes[offset..offset + width + 1];
        if let Some(space) = window.iter().rposition(|b| *b == b' ') {
            out.push_str(&byte_range(s, offset, offset + space));
            out.push_str(newline);
            offset += space + 1;
        } else if wrap_long_words {
            out.push_str(&byte_range(s, offset, offset + width));
            out.push_str(newline);
            offset += width;
        } else {
            match bytes[offset + width..].iter().position(|b| *b == b' ') {
                None => {
                    out.push_str(&byte_range(s, offset, bytes.len()));
                    offset = bytes.len();
                }
                Some(i) => {
                    let space = offset + width + i;
                    out.push_str(&byte_range(s, offset, space));
                    out.push_str(newline);
                    offset = space + 1;
                }
            }
        }
    }
    out.push_str(&byte_range(s, offset, bytes.len()));
    out
}

fn indent(spaces: i64, s: &str) -> Result<String, FuncError> {
    let count =
        usize::try_from(spaces).map_err(|_| FuncError::failed("strings: negative Repeat count"))?;
    if count.saturating_mul(s.lines().count().max(1)) > MAX_OUTPUT {
        return Err(FuncError::failed("strings: Repeat output length overflow"));
    }
    let pad = " ".repeat(count);
    Ok(format!("{pad}{}", s.replace('\n', &format!("\n{pad}"))))
}

/// Go's `strings.Title`: upper-cases the first letter after any separator.
fn title(s: &str) -> String {
    let mut prev = ' ';
    s.chars()
        .map(|c| {
            let at_start = is_title_separator(prev);
            prev = c;
            if at_start { single_upper(c) } else { c }
        })
        .collect()
}

fn is_title_separator(c: char) -> bool {
    if c.is_ascii() {
        return !(c.is_ascii_alphanumeric() || c == '_');
    }
    if c.is_alphanumeric() {
        return false;
    }
    c.is_whitespace()
}

/// Go maps one rune to one rune; where Unicode upper-cases to several characters, Go keeps it.
fn single_upper(c: char) -> char {
    let mut upper = c.to_uppercase();
    match (upper.next(), upper.next()) {
        (Some(u), None) => u,
        _ => c,
    }
}

fn single_lower(c: char) -> char {
    let mut lower = c.to_lowercase();
    match (lower.next(), lower.next()) {
        (Some(l), None) => l,
        _ => c,
    }
}

/// Lower-cases the first letter of each whitespace-separated word.
fn untitle(s: &str) -> String {
    let mut at_start = true;
    s.chars()
        .map(|c| {
            let out = if at_start { single_lower(c) } else { c };
            at_start = c.is_whitespace();
            out
        })
        .collect()
}

/// The first character of each whitespace-separated word.
fn initials(s: &str) -> String {
    s.split(char::is_whitespace)
        .filter_map(|word| word.chars().next())
        .collect()
}

fn swapcase(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_uppercase() {
                single_lower(c)
            } else if c.is_lowercase() {
                single_upper(c)
            } else {
                c
            }
        })
        .collect()
}

/// `snakecase`/`kebabcase`: words split at case changes and separators (`_`, `-`, space),
/// lower-cased and joined by `delimiter`; runs of separators keep their length.
fn split_case(s: &str, delimiter: char) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if matches!(c, '_' | '-' | ' ') {
            out.push(delimiter);
            continue;
        }
        let prev = i.checked_sub(1).map(|p| chars[p]);
        let next = chars.get(i + 1).copied();
        let boundary = match prev {
            Some(p) if c.is_uppercase() => {
                p.is_lowercase()
                    || p.is_ascii_digit()
                    || (p.is_uppercase() && next.is_some_and(char::is_lowercase))
            }
            Some(p) if c.is_ascii_digit() => p.is_lowercase(),
            _ => false,
        };
        if boundary && !out.ends_with(delimiter) {
            out.push(delimiter);
        }
        out.extend(c.to_lowercase());
    }
    out
}

/// `camelcase`: words separated by `_` joined with their first letter upper-cased and the
/// rest lower-cased; leading underscores stay, a run of underscores inside keeps all but one.
fn camelcase(s: &str) -> String {
    let body = s.trim_start_matches('_');
    let mut out = String::from(&s[..s.len() - body.len()]);
    let mut chars = body.chars();
    let Some(first) = chars.next() else {
        return out;
    };
    let mut current = single_upper(first);
    for c in chars {
        let previous = current;
        if previous == '_' && c == '_' {
            out.push('_');
            continue;
        }
        current = if previous == '_' {
            single_upper(c)
        } else {
            single_lower(c)
        };
        if previous != '_' {
            out.push(previous);
        }
    }
    out.push(current);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_conversions_match_sprig_samples() {
        for (input, snake) in [
            ("FirstName", "first_name"),
            ("HTTPServer", "http_server"),
            ("NoHTTPS", "no_https"),
            ("GO_PATH", "go_path"),
            ("GO PATH", "go_path"),
            ("GO-PATH", "go_path"),
        ] {
            assert_eq!(split_case(input, '_'), snake, "{input}");
        }
        for (input, camel) in [
            ("http_server", "HttpServer"),
            ("_camel_case", "_CamelCase"),
            ("no_https", "NoHttps"),
            ("_complex__case_", "_Complex_Case_"),
            ("all", "All"),
        ] {
            assert_eq!(camelcase(input), camel, "{input}");
        }
        assert_eq!(title("hello wORLD-x_y"), "Hello WORLD-X_y");
        assert_eq!(untitle("First Try"), "first try");
        assert_eq!(swapcase("Hello World"), "hELLO wORLD");
    }

    #[test]
    fn cutting_follows_byte_offsets() {
        assert_eq!(abbreviate("hello world", 0, 5), "he...");
        assert_eq!(abbreviate("1234 5678 9123", 5, 10), "...5678...");
        assert_eq!(wrap("Hello World", 5, "\n", false), "Hello\nWorld");
        assert_eq!(wrap("Hello World", 5, "\t", true), "Hello\tWorld");
        assert_eq!(go_split("a,b,c", ",", 2), ["a", "b,c"]);
        assert_eq!(go_split("abc", "", usize::MAX), ["a", "b", "c"]);
    }
}
