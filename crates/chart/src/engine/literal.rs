//! Go literal syntax inside actions: quoted and raw strings, character constants and numbers,
//! with the kinds Go's executor gives them (`1` is `int`, `1.0` and `1e3` are `float64`,
//! `'a'` is `int`).

use super::ast::Literal;
use crate::engine::value::format::quote;

/// Where the value of a `"…"` or `` `…` `` literal is its text between the quotes, as it
/// mostly is (no escapes; in a raw string, no carriage returns, which Go drops): that range of
/// `source`. What [`unquote_string`] would return, without a copy.
pub fn verbatim_string(source: &str) -> Option<std::ops::Range<usize>> {
    let bytes = source.as_bytes();
    let (&first, &last) = (bytes.first()?, bytes.last()?);
    let inner = bytes.get(1..bytes.len() - 1)?;
    let verbatim = match (first, last) {
        (b'`', b'`') => memchr::memchr(b'\r', inner).is_none(),
        (b'"', b'"') => memchr::memchr3(b'\\', b'"', b'\n', inner).is_none(),
        _ => false,
    };
    verbatim.then_some(1..bytes.len() - 1)
}

/// Go's `strconv.Unquote` for `"…"` and `` `…` `` literals; `None` on invalid syntax.
pub fn unquote_string(source: &str) -> Option<String> {
    if let Some(inner) = verbatim_string(source) {
        return Some(source[inner].to_string());
    }
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

/// A number literal's value with the kind Go's executor gives it, or Go's message when the
/// literal is rejected.
pub fn parse_number(text: &str) -> Result<Literal, String> {
    let looks_float = !is_hex(text) && text.contains(['.', 'e', 'E', 'p', 'P']);
    if !looks_float {
        if let Some(i) = parse_int(text) {
            return Ok(Literal::Int(i));
        }
        if parse_uint(text).is_some() {
            return Err(format!("{text} overflows int"));
        }
        return match parse_float(text) {
            Some(_) => Err(format!("integer overflow: {}", quote(text))),
            None => Err(format!("illegal number syntax: {}", quote(text))),
        };
    }
    parse_float(text)
        .map(Literal::Float)
        .ok_or_else(|| format!("illegal number syntax: {}", quote(text)))
}

/// Go's `strconv.ParseFloat` for template literals: decimal, or hexadecimal with a `p`
/// exponent; underscores between digits.
fn parse_float(text: &str) -> Option<f64> {
    let cleaned = text.replace('_', "");
    let (negative, body) = match cleaned.as_bytes().first() {
        Some(b'-') => (true, &cleaned[1..]),
        Some(b'+') => (false, &cleaned[1..]),
        _ => (false, cleaned.as_str()),
    };
    let magnitude = match body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        Some(hex) => parse_hex_float(hex)?,
        None if body
            .chars()
            .all(|c| c.is_ascii_digit() || ".eE+-".contains(c)) =>
        {
            body.parse::<f64>().ok()?
        }
        None => return None,
    };
    if !magnitude.is_finite() {
        // Go's ParseFloat reports a range error rather than an infinity.
        return None;
    }
    Some(if negative { -magnitude } else { magnitude })
}

/// `1.8p3` (after `0x`): hexadecimal mantissa times a power of two.
fn parse_hex_float(hex: &str) -> Option<f64> {
    let (mantissa, exponent) = hex.split_once(['p', 'P'])?;
    let exponent: i32 = exponent.parse().ok()?;
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if whole.is_empty() && fraction.is_empty() {
        return None;
    }
    let mut value = 0f64;
    for digit in whole.chars() {
        value = value * 16.0 + f64::from(digit.to_digit(16)?);
    }
    let mut scale = 1.0 / 16.0;
    for digit in fraction.chars() {
        value += f64::from(digit.to_digit(16)?) * scale;
        scale /= 16.0;
    }
    Some(value * 2f64.powi(exponent))
}

fn is_hex(text: &str) -> bool {
    let t = text.trim_start_matches(['+', '-']);
    (t.starts_with("0x") || t.starts_with("0X")) && !t.contains(['p', 'P'])
}

/// Go's `strconv.ParseInt(text, 0, 64)`: sign, `0x`/`0o`/`0b`/leading-`0` prefixes, underscores
/// between digits.
fn parse_int(text: &str) -> Option<i64> {
    let (negative, magnitude) = parse_magnitude(text)?;
    if negative {
        0i64.checked_sub_unsigned(magnitude)
    } else {
        i64::try_from(magnitude).ok()
    }
}

/// Go's `strconv.ParseUint(text, 0, 64)`.
fn parse_uint(text: &str) -> Option<u64> {
    match parse_magnitude(text)? {
        (false, magnitude) => Some(magnitude),
        (true, _) => None,
    }
}

/// The sign and magnitude of an integer literal in any base.
fn parse_magnitude(text: &str) -> Option<(bool, u64)> {
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
    Some((negative, magnitude))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_get_go_kinds() {
        assert!(matches!(parse_number("42"), Ok(Literal::Int(42))));
        assert!(matches!(parse_number("-0x1F"), Ok(Literal::Int(-31))));
        assert!(matches!(parse_number("017"), Ok(Literal::Int(15))));
        assert!(matches!(parse_number("1_000"), Ok(Literal::Int(1000))));
        assert!(matches!(parse_number("1.5"), Ok(Literal::Float(f)) if f == 1.5));
        assert!(matches!(parse_number("1e3"), Ok(Literal::Float(f)) if f == 1000.0));
        assert_eq!(
            parse_number("18446744073709551615").unwrap_err(),
            "18446744073709551615 overflows int"
        );
        assert_eq!(
            parse_number("99999999999999999999").unwrap_err(),
            "integer overflow: \"99999999999999999999\""
        );
        assert_eq!(parse_number("08").unwrap_err(), "integer overflow: \"08\"");
        assert!(matches!(parse_number("0x1p4"), Ok(Literal::Float(f)) if f == 16.0));
        assert!(matches!(parse_number("0x1.8p1"), Ok(Literal::Float(f)) if f == 3.0));
        assert!(matches!(parse_number(".5"), Ok(Literal::Float(f)) if f == 0.5));
        assert_eq!(
            parse_number("1e400").unwrap_err(),
            "illegal number syntax: \"1e400\""
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

    #[test]
    fn strings_without_escapes_are_their_text_between_the_quotes() {
        for (source, verbatim) in [
            (r#""plain é""#, Some(1..9)),
            ("`raw\\n \"x\"`", Some(1..10)),
            ("``", Some(1..1)),
            (r#""""#, Some(1..1)),
            (r#""a\tb""#, None),
            ("`a\r`", None),
            ("\"", None),
            ("`", None),
            ("'a'", None),
        ] {
            assert_eq!(verbatim_string(source), verbatim, "{source:?}");
            if let Some(inner) = verbatim {
                assert_eq!(unquote_string(source).as_deref(), Some(&source[inner]));
            }
        }
    }
}
