//! Go literal syntax inside actions: quoted and raw strings, character constants and numbers,
//! with the kinds Go's executor gives them (`1` is `int`, `1.0` and `1e3` are `float64`,
//! `'a'` is `int`).

use crate::value::Value;

/// Go's `strconv.Unquote` for `"…"` and `` `…` `` literals; `None` on invalid syntax.
pub fn unquote_string(source: &str) -> Option<String> {
    if let Some(raw) = source.strip_prefix('`').and_then(|s| s.strip_suffix('`')) {
        return Some(raw.replace('\r', ""));
    }
    let inner = source.strip_prefix('"')?.strip_suffix('"')?;
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' | '\n' => return None,
            '\\' => unescape(&mut chars, '"', &mut out)?,
            c => out.push(c),
        }
    }
    Some(out)
}

/// Go's `strconv.UnquoteChar` applied to a `'x'` constant: the character's code point.
pub fn unquote_char(source: &str) -> Option<i64> {
    let inner = source.strip_prefix('\'')?.strip_suffix('\'')?;
    let mut chars = inner.chars().peekable();
    let mut out = String::new();
    match chars.next()? {
        '\\' => unescape(&mut chars, '\'', &mut out)?,
        '\'' | '\n' => return None,
        c => out.push(c),
    }
    if chars.next().is_some() {
        return None;
    }
    let mut decoded = out.chars();
    let c = decoded.next()?;
    Some(i64::from(u32::from(c)))
}

/// Decodes one escape sequence after a backslash.
fn unescape(
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    quote: char,
    out: &mut String,
) -> Option<()> {
    let c = chars.next()?;
    let simple = match c {
        'a' => Some('\u{7}'),
        'b' => Some('\u{8}'),
        'f' => Some('\u{c}'),
        'n' => Some('\n'),
        'r' => Some('\r'),
        't' => Some('\t'),
        'v' => Some('\u{b}'),
        '\\' => Some('\\'),
        '\'' | '"' if c == quote => Some(c),
        _ => None,
    };
    if let Some(s) = simple {
        out.push(s);
        return Some(());
    }
    let (digits, radix) = match c {
        'x' => (2, 16),
        'u' => (4, 16),
        'U' => (8, 16),
        '0'..='7' => (3, 8),
        _ => return None,
    };
    let mut text = String::new();
    if radix == 8 {
        text.push(c);
    }
    while text.len() < digits {
        text.push(chars.next()?);
    }
    let code = u32::from_str_radix(&text, radix).ok()?;
    if c == 'x' || radix == 8 {
        // Go writes \x and octal escapes as single bytes; above 0x7f they are not valid UTF-8
        // text, which a Rust string cannot hold, so such escapes are rejected.
        if code > 0x7f {
            return None;
        }
    }
    out.push(char::from_u32(code)?);
    Some(())
}

/// Why a number literal was rejected (Go's messages).
pub fn parse_number(text: &str) -> Result<Value, String> {
    let looks_float = !is_hex(text) && text.contains(['.', 'e', 'E', 'p', 'P']);
    if !looks_float && let Some(i) = parse_int(text) {
        return Ok(Value::Int(i));
    }
    if !looks_float {
        if is_integer_syntax(text) {
            return Err(format!("{text} overflows int"));
        }
        return Err(format!(
            "illegal number syntax: {}",
            crate::value::format::quote(text)
        ));
    }
    let cleaned = text.replace('_', "");
    cleaned.parse::<f64>().map(Value::Float).map_err(|_| {
        format!(
            "illegal number syntax: {}",
            crate::value::format::quote(text)
        )
    })
}

fn is_hex(text: &str) -> bool {
    let t = text.trim_start_matches(['+', '-']);
    (t.starts_with("0x") || t.starts_with("0X")) && !t.contains(['p', 'P'])
}

/// Whether the text is an integer literal in any base (so failing to parse means overflow).
fn is_integer_syntax(text: &str) -> bool {
    let t = text.trim_start_matches(['+', '-']);
    !t.is_empty()
        && t.chars()
            .all(|c| c.is_ascii_hexdigit() || "xXoObB_".contains(c))
}

/// Go's `strconv.ParseInt(text, 0, 64)`: sign, `0x`/`0o`/`0b`/leading-`0` prefixes, underscores
/// between digits.
fn parse_int(text: &str) -> Option<i64> {
    let (negative, body) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let lower = body.to_ascii_lowercase();
    let (radix, digits) = if let Some(d) = lower.strip_prefix("0x") {
        (16, d)
    } else if let Some(d) = lower.strip_prefix("0o") {
        (8, d)
    } else if let Some(d) = lower.strip_prefix("0b") {
        (2, d)
    } else if lower.len() > 1 && lower.starts_with('0') {
        (8, &lower[1..])
    } else {
        (10, lower.as_str())
    };
    if digits.is_empty() || digits.starts_with('_') && radix == 10 || digits.ends_with('_') {
        return None;
    }
    if digits.contains("__") {
        return None;
    }
    let cleaned = digits.replace('_', "");
    let magnitude = u64::from_str_radix(&cleaned, radix).ok()?;
    if negative {
        0i64.checked_sub_unsigned(magnitude)
    } else {
        i64::try_from(magnitude).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_get_go_kinds() {
        assert!(matches!(parse_number("42"), Ok(Value::Int(42))));
        assert!(matches!(parse_number("-0x1F"), Ok(Value::Int(-31))));
        assert!(matches!(parse_number("017"), Ok(Value::Int(15))));
        assert!(matches!(parse_number("1_000"), Ok(Value::Int(1000))));
        assert!(matches!(parse_number("1.5"), Ok(Value::Float(f)) if f == 1.5));
        assert!(matches!(parse_number("1e3"), Ok(Value::Float(f)) if f == 1000.0));
        assert_eq!(
            parse_number("99999999999999999999").unwrap_err(),
            "99999999999999999999 overflows int"
        );
    }

    #[test]
    fn strings_unescape_like_go() {
        assert_eq!(
            unquote_string(r#""a\tb\"\u00e9\x41""#).as_deref(),
            Some("a\tb\"éA")
        );
        assert_eq!(unquote_string("`a\\n\r`").as_deref(), Some("a\\n"));
        assert_eq!(unquote_string(r#""\'""#), None);
        assert_eq!(unquote_char("'a'"), Some(97));
        assert_eq!(unquote_char(r"'\n'"), Some(10));
    }
}
