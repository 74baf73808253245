//! Go's `fmt` printing of values: `Sprint`, `Sprintln`, `Sprintf` with Go's verbs, flags, width,
//! precision, argument indexes and error notations (`%!d(string=x)`, `%!v(MISSING)`,
//! `%!(EXTRA int=1)`).

mod float;

pub use crate::formats::strconv::{is_print, quote, quote_rune, quote_to_ascii};

use super::Value;

/// Nesting beyond this depth is not printed: a map that contains itself would recurse forever
/// (Go overflows its stack there); real data is never this deep.
const MAX_PRINT_DEPTH: usize = 256;

/// Go's `fmt.Sprint`: operands printed with `%v`, a space between two operands when neither is
/// a string.
pub fn sprint(args: &[Value]) -> String {
    let mut p = Printer::default();
    let mut prev_string = false;
    for (i, arg) in args.iter().enumerate() {
        let is_string = matches!(arg, Value::String(_) | Value::RawString(_));
        if i > 0 && !is_string && !prev_string {
            p.buf.push(' ');
        }
        p.print_arg(arg, 'v');
        prev_string = is_string;
    }
    p.buf
}

/// Go's `fmt.Sprintln`: operands printed with `%v`, always separated by a space, then a newline.
pub fn sprintln(args: &[Value]) -> String {
    let mut p = Printer::default();
    for (i, arg) in args.iter().enumerate() {
        if i > 0 {
            p.buf.push(' ');
        }
        p.print_arg(arg, 'v');
    }
    p.buf.push('\n');
    p.buf
}

/// Go's `fmt.Sprintf`.
pub fn sprintf(format: &str, args: &[Value]) -> String {
    let mut p = Printer::default();
    p.do_printf(format, args);
    p.buf
}

/// Formatting flags and sizes of one verb.
#[derive(Clone, Copy, Default)]
struct Spec {
    plus: bool,
    minus: bool,
    sharp: bool,
    space: bool,
    zero: bool,
    sharp_v: bool,
    /// `%+v`: structs print their field names.
    plus_v: bool,
    width: Option<usize>,
    prec: Option<usize>,
}

#[derive(Default)]
struct Printer {
    buf: String,
    spec: Spec,
}

/// Largest width, precision or argument index Go accepts in a format.
const MAX_FORMAT_NUMBER: usize = 1_000_000;

/// Parses a decimal number at `i`; returns the number (if any digits) and the index after it.
fn parse_num(s: &[u8], mut i: usize, end: usize) -> (Option<usize>, usize) {
    let mut num: usize = 0;
    let mut found = false;
    while i < end && s[i].is_ascii_digit() {
        if num > MAX_FORMAT_NUMBER {
            return (None, end);
        }
        num = num * 10 + usize::from(s[i] - b'0');
        found = true;
        i += 1;
    }
    (found.then_some(num), i)
}

/// An explicit argument index like `[2]` at `i`: (new argument number, index after it,
/// found, good).
fn arg_number(s: &[u8], arg_num: usize, i: usize, num_args: usize) -> (usize, usize, bool, bool) {
    if i >= s.len() || s[i] != b'[' {
        return (arg_num, i, false, true);
    }
    let rest = &s[i..];
    if rest.len() < 3 {
        return (arg_num, i + 1, false, false);
    }
    let Some(close) = rest.iter().position(|&c| c == b']') else {
        return (arg_num, i + 1, false, false);
    };
    let (num, after) = parse_num(rest, 1, close);
    match num {
        Some(n) if after == close && n >= 1 && n - 1 < num_args => {
            (n - 1, i + close + 1, true, true)
        }
        Some(_) if after == close => (arg_num, i + close + 1, true, false),
        _ => (arg_num, i + close + 1, false, false),
    }
}

/// An integer argument for `*` width or precision.
fn int_from_arg(args: &[Value], arg_num: usize) -> (Option<i64>, usize) {
    match args.get(arg_num) {
        Some(Value::Int(n) | Value::Int64(n)) if n.unsigned_abs() <= MAX_FORMAT_NUMBER as u64 => {
            (Some(*n), arg_num + 1)
        }
        Some(_) => (None, arg_num + 1),
        None => (None, arg_num),
    }
}

impl Printer {
    fn do_printf(&mut self, format: &str, args: &[Value]) {
        let s = format.as_bytes();
        let end = s.len();
        let mut arg_num = 0;
        let mut reordered = false;
        let mut i = 0;
        while i < end {
            let start = i;
            while i < end && s[i] != b'%' {
                i += 1;
            }
            self.buf.push_str(&format[start..i]);
            if i >= end {
                break;
            }
            i += 1;
            self.spec = Spec::default();
            while i < end {
                match s[i] {
                    b'#' => self.spec.sharp = true,
                    b'0' => self.spec.zero = !self.spec.minus,
                    b'+' => self.spec.plus = true,
                    b'-' => {
                        self.spec.minus = true;
                        self.spec.zero = false;
                    }
                    b' ' => self.spec.space = true,
                    _ => break,
                }
                i += 1;
            }
            let mut good_arg_num = true;
            let (n, ni, mut after_index, good) = arg_number(s, arg_num, i, args.len());
            reordered |= ni != i;
            good_arg_num &= good;
            arg_num = n;
            i = ni;
            if i < end && s[i] == b'*' {
                i += 1;
                let (width, next) = int_from_arg(args, arg_num);
                arg_num = next;
                match width {
                    Some(w) => {
                        if w < 0 {
                            self.spec.minus = true;
                            self.spec.zero = false;
                        }
                        self.spec.width = usize::try_from(w.unsigned_abs()).ok();
                    }
                    None => self.buf.push_str("%!(BADWIDTH)"),
                }
                after_index = false;
            } else {
                let (width, ni) = parse_num(s, i, end);
                self.spec.width = width;
                i = ni;
                if after_index && width.is_some() {
                    good_arg_num = false;
                }
            }
            if i + 1 < end && s[i] == b'.' {
                i += 1;
                if after_index {
                    good_arg_num = false;
                }
                let (n, ni, found, good) = arg_number(s, arg_num, i, args.len());
                reordered |= ni != i;
                good_arg_num &= good;
                arg_num = n;
                i = ni;
                after_index = found;
                if i < end && s[i] == b'*' {
                    i += 1;
                    let (prec, next) = int_from_arg(args, arg_num);
                    arg_num = next;
                    match prec {
                        Some(p) if p >= 0 => self.spec.prec = usize::try_from(p).ok(),
                        _ => {
                            self.spec.prec = None;
                            self.buf.push_str("%!(BADPREC)");
                        }
                    }
                    after_index = false;
                } else {
                    let (prec, ni) = parse_num(s, i, end);
                    self.spec.prec = Some(prec.unwrap_or(0));
                    i = ni;
                }
            }
            if !after_index {
                let (n, ni, _, good) = arg_number(s, arg_num, i, args.len());
                reordered |= ni != i;
                good_arg_num &= good;
                arg_num = n;
                i = ni;
            }
            if i >= end {
                self.buf.push_str("%!(NOVERB)");
                break;
            }
            let Some(verb) = format[i..].chars().next() else {
                break;
            };
            i += verb.len_utf8();
            if verb == '%' {
                self.buf.push('%');
            } else if !good_arg_num {
                self.buf.push_str(&format!("%!{verb}(BADINDEX)"));
            } else if arg_num >= args.len() {
                self.buf.push_str(&format!("%!{verb}(MISSING)"));
            } else {
                if verb == 'v' {
                    self.spec.sharp_v = self.spec.sharp;
                    self.spec.sharp = false;
                    self.spec.plus_v = self.spec.plus;
                    self.spec.plus = false;
                }
                self.print_arg(&args[arg_num], verb);
                arg_num += 1;
            }
        }
        if !reordered && arg_num < args.len() {
            self.spec = Spec::default();
            self.buf.push_str("%!(EXTRA ");
            for (k, arg) in args[arg_num..].iter().enumerate() {
                if k > 0 {
                    self.buf.push_str(", ");
                }
                if arg.is_nil() {
                    self.buf.push_str("<nil>");
                } else {
                    self.buf.push_str(&arg.type_name());
                    self.buf.push('=');
                    self.print_arg(arg, 'v');
                }
            }
            self.buf.push(')');
        }
    }

    /// Prints one top-level operand.
    fn print_arg(&mut self, arg: &Value, verb: char) {
        if arg.is_nil() {
            match verb {
                'T' | 'v' => self.pad_str("<nil>"),
                _ => self.bad_verb(arg, verb),
            }
            return;
        }
        if verb == 'T' {
            let name = arg.type_name();
            self.fmt_s(&name);
            return;
        }
        self.print_value(arg, verb, 0);
    }

    fn print_value(&mut self, value: &Value, verb: char, depth: usize) {
        if depth > MAX_PRINT_DEPTH {
            self.buf.push_str("...");
            return;
        }
        match value {
            // A nil element inside a list or map prints without padding, as in Go.
            Value::Nil if self.spec.sharp_v => self.buf.push_str("interface {}(nil)"),
            Value::Nil => self.buf.push_str("<nil>"),
            Value::Bool(b) => match verb {
                't' | 'v' => self.pad_str(if *b { "true" } else { "false" }),
                _ => self.bad_verb(value, verb),
            },
            Value::Int(n) | Value::Int64(n) => self.fmt_integer(value, *n, verb),
            Value::Float(f) => self.fmt_float(value, *f, verb),
            Value::String(s) => self.fmt_string(value, s, verb),
            Value::RawString(b) => self.fmt_raw_string(value, b, verb),
            Value::Bytes(b) => self.fmt_bytes(value, b, verb, depth),
            Value::List(items) => {
                if self.spec.sharp_v {
                    self.buf.push_str("[]interface {}{");
                    for (i, item) in items.iter().enumerate() {
                        if i > 0 {
                            self.buf.push_str(", ");
                        }
                        self.print_value(item, verb, depth + 1);
                    }
                    self.buf.push('}');
                    return;
                }
                self.buf.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.buf.push(' ');
                    }
                    self.print_value(item, verb, depth + 1);
                }
                self.buf.push(']');
            }
            Value::Map(map) => {
                let sharp_v = self.spec.sharp_v;
                self.buf.push_str(if sharp_v {
                    "map[string]interface {}{"
                } else {
                    "map["
                });
                for (i, (key, item)) in map.entries().iter().enumerate() {
                    if i > 0 {
                        self.buf.push_str(if sharp_v { ", " } else { " " });
                    }
                    self.fmt_string(&Value::str(key.as_str()), key, verb);
                    self.buf.push(':');
                    self.print_value(item, verb, depth + 1);
                }
                self.buf.push(if sharp_v { '}' } else { ']' });
            }
            Value::Object(object) => match verb {
                'v' | 's' => {
                    let text = if self.spec.plus_v {
                        object.format_verbose()
                    } else {
                        object.format()
                    };
                    self.pad_str(&text);
                }
                _ => self.bad_verb(value, verb),
            },
        }
    }

    /// Go's `%!verb(type=value)` for a verb the value's kind does not support.
    fn bad_verb(&mut self, value: &Value, verb: char) {
        self.buf.push_str("%!");
        self.buf.push(verb);
        self.buf.push('(');
        if value.is_nil() {
            self.buf.push_str("<nil>");
        } else {
            self.buf.push_str(&value.type_name());
            self.buf.push('=');
            let saved_sharp_v = self.spec.sharp_v;
            self.spec.sharp_v = false;
            self.print_value(value, 'v', 0);
            self.spec.sharp_v = saved_sharp_v;
        }
        self.buf.push(')');
    }

    fn write_padding(&mut self, n: usize) {
        let pad = if self.spec.zero { '0' } else { ' ' };
        self.buf.extend(std::iter::repeat_n(pad, n));
    }

    /// Pads `s` to the width (counted in characters), left or right.
    fn pad_str(&mut self, s: &str) {
        let Some(width) = self.spec.width else {
            self.buf.push_str(s);
            return;
        };
        let chars = s.chars().count();
        if chars >= width {
            self.buf.push_str(s);
        } else if self.spec.minus {
            self.buf.push_str(s);
            self.buf.extend(std::iter::repeat_n(' ', width - chars));
        } else {
            self.write_padding(width - chars);
            self.buf.push_str(s);
        }
    }

    /// `%s`: the string cut to the precision (in characters), then padded.
    fn fmt_s(&mut self, s: &str) {
        let cut = self.truncate(s);
        self.pad_str(cut);
    }

    fn truncate<'a>(&self, s: &'a str) -> &'a str {
        match self.spec.prec {
            Some(p) => match s.char_indices().nth(p) {
                Some((i, _)) => &s[..i],
                None => s,
            },
            None => s,
        }
    }

    fn fmt_string(&mut self, value: &Value, s: &str, verb: char) {
        match verb {
            'v' if self.spec.sharp_v => self.fmt_q(s),
            'v' | 's' => self.fmt_s(s),
            'x' => self.fmt_hex_bytes(s.as_bytes(), false),
            'X' => self.fmt_hex_bytes(s.as_bytes(), true),
            'q' => self.fmt_q(s),
            _ => self.bad_verb(value, verb),
        }
    }

    /// A string that is not valid UTF-8: hex verbs see its bytes; the text verbs print it
    /// with U+FFFD for each bad byte, because printed output is text here (Helm could not
    /// parse such bytes in a manifest either).
    fn fmt_raw_string(&mut self, value: &Value, bytes: &[u8], verb: char) {
        match verb {
            'x' => self.fmt_hex_bytes(bytes, false),
            'X' => self.fmt_hex_bytes(bytes, true),
            _ => self.fmt_string(value, &String::from_utf8_lossy(bytes), verb),
        }
    }

    fn fmt_bytes(&mut self, value: &Value, bytes: &[u8], verb: char, depth: usize) {
        match verb {
            'v' | 'd' => {
                self.buf.push('[');
                for (i, b) in bytes.iter().enumerate() {
                    if i > 0 {
                        self.buf.push(' ');
                    }
                    self.fmt_integer(value, i64::from(*b), 'd');
                }
                self.buf.push(']');
            }
            's' => {
                let text = String::from_utf8_lossy(bytes);
                self.fmt_s(&text);
            }
            'x' => self.fmt_hex_bytes(bytes, false),
            'X' => self.fmt_hex_bytes(bytes, true),
            'q' => {
                let text = String::from_utf8_lossy(bytes);
                self.fmt_q(&text);
            }
            _ => {
                let items = bytes.iter().map(|b| Value::Int(i64::from(*b))).collect();
                self.print_value(&Value::list(items), verb, depth + 1);
            }
        }
    }

    fn fmt_q(&mut self, s: &str) {
        let s = self.truncate(s);
        if self.spec.sharp && can_backquote(s) {
            self.pad_str(&format!("`{s}`"));
        } else if self.spec.plus {
            self.pad_str(&quote_to_ascii(s));
        } else {
            self.pad_str(&quote(s));
        }
    }

    /// `%x`/`%X` on strings and byte slices.
    fn fmt_hex_bytes(&mut self, bytes: &[u8], upper: bool) {
        let digits: &[u8; 16] = if upper {
            b"0123456789ABCDEF"
        } else {
            b"0123456789abcdef"
        };
        let x = if upper { 'X' } else { 'x' };
        let length = self.spec.prec.map_or(bytes.len(), |p| p.min(bytes.len()));
        if length == 0 {
            if let Some(w) = self.spec.width {
                self.write_padding(w);
            }
            return;
        }
        let mut width = 2 * length;
        if self.spec.space {
            if self.spec.sharp {
                width *= 2;
            }
            width += length - 1;
        } else if self.spec.sharp {
            width += 2;
        }
        let pad = self.spec.width.filter(|w| *w > width).map(|w| w - width);
        if let (Some(n), false) = (pad, self.spec.minus) {
            self.write_padding(n);
        }
        if self.spec.sharp {
            self.buf.push('0');
            self.buf.push(x);
        }
        for (i, b) in bytes[..length].iter().enumerate() {
            if self.spec.space && i > 0 {
                self.buf.push(' ');
                if self.spec.sharp {
                    self.buf.push('0');
                    self.buf.push(x);
                }
            }
            self.buf.push(char::from(digits[usize::from(b >> 4)]));
            self.buf.push(char::from(digits[usize::from(b & 0xf)]));
        }
        if let (Some(n), true) = (pad, self.spec.minus) {
            self.buf.extend(std::iter::repeat_n(' ', n));
        }
    }

    fn fmt_integer(&mut self, value: &Value, n: i64, verb: char) {
        match verb {
            'v' | 'd' => self.fmt_integer_base(n, 10, verb, false),
            'b' => self.fmt_integer_base(n, 2, verb, false),
            'o' | 'O' => self.fmt_integer_base(n, 8, verb, false),
            'x' => self.fmt_integer_base(n, 16, verb, false),
            'X' => self.fmt_integer_base(n, 16, verb, true),
            'c' => {
                let c = rune_of(n);
                self.pad_str(c.encode_utf8(&mut [0; 4]));
            }
            'q' => {
                let quoted = quote_rune(rune_of(n), self.spec.plus);
                self.pad_str(&quoted);
            }
            'U' => self.fmt_unicode(n),
            _ => self.bad_verb(value, verb),
        }
    }

    fn fmt_integer_base(&mut self, n: i64, base: u32, verb: char, upper: bool) {
        let negative = n < 0;
        let mut digits = match base {
            2 => format!("{:b}", n.unsigned_abs()),
            8 => format!("{:o}", n.unsigned_abs()),
            16 if upper => format!("{:X}", n.unsigned_abs()),
            16 => format!("{:x}", n.unsigned_abs()),
            _ => n.unsigned_abs().to_string(),
        };
        let mut min_digits = 0;
        if let Some(p) = self.spec.prec {
            if p == 0 && n == 0 {
                let saved = self.spec.zero;
                self.spec.zero = false;
                self.write_padding(self.spec.width.unwrap_or(0));
                self.spec.zero = saved;
                return;
            }
            min_digits = p;
        } else if let (true, false, Some(w)) = (self.spec.zero, self.spec.minus, self.spec.width) {
            min_digits = w;
            if negative || self.spec.plus || self.spec.space {
                min_digits = min_digits.saturating_sub(1);
            }
        }
        if digits.len() < min_digits {
            digits = "0".repeat(min_digits - digits.len()) + &digits;
        }
        let mut prefix = String::new();
        if negative {
            prefix.push('-');
        } else if self.spec.plus {
            prefix.push('+');
        } else if self.spec.space {
            prefix.push(' ');
        }
        if self.spec.sharp {
            match base {
                2 => prefix.push_str("0b"),
                8 if !digits.starts_with('0') => prefix.push('0'),
                16 if upper => prefix.push_str("0X"),
                16 => prefix.push_str("0x"),
                _ => {}
            }
        }
        if verb == 'O' {
            prefix.push_str("0o");
        }
        let saved = self.spec.zero;
        self.spec.zero = false;
        self.pad_str(&(prefix + &digits));
        self.spec.zero = saved;
    }

    fn fmt_unicode(&mut self, n: i64) {
        let hex = format!("{:X}", n as u64);
        let min = self.spec.prec.unwrap_or(4).max(4);
        let mut s = format!("U+{}{hex}", "0".repeat(min.saturating_sub(hex.len())));
        if self.spec.sharp
            && let Some(c) = u32::try_from(n).ok().and_then(char::from_u32)
            && is_print(c)
        {
            s.push_str(&format!(" '{c}'"));
        }
        let saved = self.spec.zero;
        self.spec.zero = false;
        self.pad_str(&s);
        self.spec.zero = saved;
    }

    fn fmt_float(&mut self, value: &Value, f: f64, verb: char) {
        let text = match verb {
            'v' | 'g' => float::format_g(f, self.spec.prec, false),
            'G' => float::format_g(f, self.spec.prec, true),
            'e' => float::format_e(f, self.spec.prec.unwrap_or(6), false),
            'E' => float::format_e(f, self.spec.prec.unwrap_or(6), true),
            'f' | 'F' => float::format_f(f, self.spec.prec.unwrap_or(6)),
            'b' => float::format_b(f),
            'x' => float::format_x(f, self.spec.prec, false),
            'X' => float::format_x(f, self.spec.prec, true),
            _ => return self.bad_verb(value, verb),
        };
        let text = if self.spec.sharp && verb != 'b' && f.is_finite() {
            float::with_sharp_flag(&text, verb, self.spec.prec)
        } else {
            text
        };
        self.pad_float(&text);
    }

    /// Signs, infinities and zero padding as Go's `fmtFloat` applies them.
    fn pad_float(&mut self, text: &str) {
        let (sign, body) = match text.as_bytes().first() {
            Some(b'-') => ('-', &text[1..]),
            Some(b'+') => ('+', &text[1..]),
            _ => ('+', text),
        };
        let sign = if self.spec.space && sign == '+' && !self.spec.plus {
            ' '
        } else {
            sign
        };
        if body == "Inf" || body == "NaN" {
            let saved = self.spec.zero;
            self.spec.zero = false;
            let shown = if body == "NaN" && !self.spec.space && !self.spec.plus {
                body.to_string()
            } else {
                format!("{sign}{body}")
            };
            self.pad_str(&shown);
            self.spec.zero = saved;
            return;
        }
        if self.spec.plus || sign != '+' {
            let full_len = body.len() + 1;
            if let (true, false, Some(w)) = (self.spec.zero, self.spec.minus, self.spec.width)
                && w > full_len
            {
                self.buf.push(sign);
                self.write_padding(w - full_len);
                self.buf.push_str(body);
                return;
            }
            self.pad_str(&format!("{sign}{body}"));
            return;
        }
        self.pad_str(body);
    }
}

/// The character Go's `%c` prints for an integer (U+FFFD when out of range).
fn rune_of(n: i64) -> char {
    u32::try_from(n)
        .ok()
        .and_then(char::from_u32)
        .unwrap_or('\u{FFFD}')
}

/// Go's `strconv.CanBackquote`.
fn can_backquote(s: &str) -> bool {
    s.chars()
        .all(|c| c != '`' && c != '\u{FEFF}' && (c == '\t' || !(c < ' ' || c == '\u{7f}')))
}

#[cfg(test)]
mod tests;
