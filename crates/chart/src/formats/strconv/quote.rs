//! Go's `strconv.Quote` family, used by `%q` (and so by Sprig's `quote`).

pub use super::printable::is_print;

fn push_escaped(out: &mut String, c: char, quote: char, ascii_only: bool) {
    if c == quote || c == '\\' {
        out.push('\\');
        out.push(c);
        return;
    }
    let printable = if ascii_only {
        c.is_ascii() && is_print(c)
    } else {
        is_print(c)
    };
    if printable {
        out.push(c);
        return;
    }
    match c {
        '\u{7}' => out.push_str("\\a"),
        '\u{8}' => out.push_str("\\b"),
        '\u{c}' => out.push_str("\\f"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\u{b}' => out.push_str("\\v"),
        c if c < ' ' || c == '\u{7f}' => out.push_str(&format!("\\x{:02x}", u32::from(c))),
        c if u32::from(c) < 0x10000 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
        c => out.push_str(&format!("\\U{:08x}", u32::from(c))),
    }
}

fn quote_with(s: &str, quote: char, ascii_only: bool) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        push_escaped(&mut out, c, quote, ascii_only);
    }
    out.push(quote);
    out
}

/// Go's `strconv.Quote`: a double-quoted Go string literal.
pub fn quote(s: &str) -> String {
    quote_with(s, '"', false)
}

/// Go's `strconv.QuoteToASCII`: like [`quote`] with every non-ASCII character escaped.
pub fn quote_to_ascii(s: &str) -> String {
    quote_with(s, '"', true)
}

/// Go's `strconv.QuoteRune` (or `QuoteRuneToASCII` when `ascii_only`): `'a'`.
pub fn quote_rune(c: char, ascii_only: bool) -> String {
    let mut out = String::from('\'');
    push_escaped(&mut out, c, '\'', ascii_only);
    out.push('\'');
    out
}
