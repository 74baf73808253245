//! Go's `strconv.Quote` family, used by `%q` (and so by Sprig's `quote`).

/// Go's `unicode.IsPrint` for the characters Helm output meets: letters, marks, numbers,
/// punctuation, symbols and the ASCII space; not controls, other spaces or format characters.
pub fn is_print(c: char) -> bool {
    let u = u32::from(c);
    if u < 0x80 {
        return (0x20..0x7f).contains(&u);
    }
    if c.is_control() || c.is_whitespace() {
        return false;
    }
    // Format characters (Cf), private use (Co) and the unassigned code points in the blocks
    // above that charts meet; other unassigned code points are taken as printable.
    !matches!(u,
        0xAD | 0x600..=0x605 | 0x61C | 0x6DD | 0x70F | 0x890..=0x891 | 0x8E2 | 0x180E
        | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x206F | 0xFEFF | 0xFFF0..=0xFFFB
        | 0xFFFE..=0xFFFF | 0x110BD | 0x110CD | 0x13430..=0x1343F | 0x1BCA0..=0x1BCA3
        | 0x1D173..=0x1D17A | 0xE000..=0xF8FF | 0xF0000.. | 0xE0000..=0xE007F
        | 0x378..=0x379 | 0x380..=0x383 | 0x38B | 0x38D | 0x3A2)
}

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
