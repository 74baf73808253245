//! YAML 1.1 implicit typing of plain scalars, as go-yaml v2 resolves them.
//!
//! The same rules decide how a plain scalar is read and whether a string must be quoted
//! when written, so the reader and the emitter share this module.

/// What a plain (unquoted, untagged) scalar means.
#[derive(Debug, Clone, PartialEq)]
pub enum Resolved {
    /// `~`, `null`, `Null`, `NULL` or nothing.
    Null,
    /// One of go-yaml v2's boolean words (`yes`, `On`, `n`, `TRUE`, …).
    Bool(bool),
    /// An integer that fits in `int64`.
    Int(i64),
    /// An integer above `int64` that fits in `uint64`.
    Uint(u64),
    /// An integer too large for 64 bits; the value is approximate.
    BigInt(f64),
    /// A float, including `.inf` and `.nan`.
    Float(f64),
    /// A timestamp; go-yaml v2 keeps those as the original string in untyped targets.
    Timestamp,
    /// Anything else: the text itself.
    Str,
}

/// Resolves a plain scalar the way go-yaml v2's `resolve("", s)` does.
pub fn resolve_plain(s: &str) -> Resolved {
    if let Some(r) = resolve_word(s) {
        return r;
    }
    match s.as_bytes().first() {
        Some(b'.') => parse_dot_float(s).map_or(Resolved::Str, Resolved::Float),
        Some(b'+' | b'-' | b'0'..=b'9') => resolve_number(s),
        _ => Resolved::Str,
    }
}

fn resolve_word(s: &str) -> Option<Resolved> {
    Some(match s {
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            Resolved::Bool(true)
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            Resolved::Bool(false)
        }
        "" | "~" | "null" | "Null" | "NULL" => Resolved::Null,
        ".nan" | ".NaN" | ".NAN" => Resolved::Float(f64::NAN),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => Resolved::Float(f64::INFINITY),
        "-.inf" | "-.Inf" | "-.INF" => Resolved::Float(f64::NEG_INFINITY),
        _ => return None,
    })
}

fn resolve_number(s: &str) -> Resolved {
    if is_timestamp(s) {
        return Resolved::Timestamp;
    }
    // go-yaml drops every underscore before trying the number parsers.
    let plain: String = s.chars().filter(|c| *c != '_').collect();
    if let Ok(v) = parse_go_int(&plain, true) {
        return Resolved::Int(v as i64);
    }
    let uint = parse_go_int(&plain, false);
    if let Ok(v) = uint {
        return Resolved::Uint(v as u64);
    }
    if is_yaml_style_float(&plain)
        && let Some(f) = parse_finite(&plain)
    {
        return Resolved::Float(f);
    }
    if let Some(bits) = plain.strip_prefix("0b") {
        if let Ok(v) = parse_radix(bits, 2) {
            if v <= i64::MAX as u128 {
                return Resolved::Int(v as i64);
            }
            if v <= u64::MAX as u128 {
                return Resolved::Uint(v as u64);
            }
        }
    } else if let Some(bits) = plain.strip_prefix("-0b")
        && let Ok(v) = parse_radix(bits, 2)
        && v <= 1u128 << 63
    {
        return Resolved::Int((v as i128).wrapping_neg() as i64);
    }
    if uint == Err(IntError::Range)
        && let Some(f) = parse_big_int(&plain)
    {
        return Resolved::BigInt(f);
    }
    Resolved::Str
}

#[derive(Debug, PartialEq)]
enum IntError {
    Syntax,
    Range,
}

/// `strconv.ParseInt(s, 0, 64)` when `signed`, else `strconv.ParseUint(s, 0, 64)`; the value
/// is returned as i128 (already range-checked).
fn parse_go_int(s: &str, signed: bool) -> Result<i128, IntError> {
    let (negative, body) = match s.as_bytes().first() {
        Some(b'-') if signed => (true, &s[1..]),
        Some(b'+') if signed => (false, &s[1..]),
        _ => (false, s),
    };
    let (radix, digits) = split_radix(body);
    let magnitude = parse_radix(digits, radix)?;
    if signed {
        let limit = if negative {
            1u128 << 63
        } else {
            (1u128 << 63) - 1
        };
        if magnitude > limit {
            return Err(IntError::Range);
        }
        let v = magnitude as i128;
        Ok(if negative { -v } else { v })
    } else {
        if magnitude > u64::MAX as u128 {
            return Err(IntError::Range);
        }
        Ok(magnitude as i128)
    }
}

/// Go's base-0 prefixes: `0x`, `0o`, `0b` and a bare leading `0` for octal.
fn split_radix(body: &str) -> (u32, &str) {
    let lower = body.get(..2).map(str::to_ascii_lowercase);
    match lower.as_deref() {
        Some("0x") => (16, &body[2..]),
        Some("0o") => (8, &body[2..]),
        Some("0b") => (2, &body[2..]),
        _ if body.len() > 1 && body.starts_with('0') => (8, &body[1..]),
        _ => (10, body),
    }
}

fn parse_radix(digits: &str, radix: u32) -> Result<u128, IntError> {
    if digits.is_empty() {
        return Err(IntError::Syntax);
    }
    let mut value: u128 = 0;
    let mut overflow = false;
    for c in digits.chars() {
        let d = c.to_digit(radix).ok_or(IntError::Syntax)?;
        match value
            .checked_mul(radix as u128)
            .and_then(|v| v.checked_add(d as u128))
        {
            Some(v) if v <= u64::MAX as u128 + 1 => value = v,
            _ => overflow = true,
        }
    }
    if overflow {
        Err(IntError::Range)
    } else {
        Ok(value)
    }
}

/// `big.Int.SetString(s, 0)` for numbers beyond 64 bits, as an approximate float.
fn parse_big_int(s: &str) -> Option<f64> {
    let (negative, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (radix, digits) = split_radix(body);
    if digits.is_empty() {
        return None;
    }
    let mut value = 0f64;
    for c in digits.chars() {
        value = value * radix as f64 + c.to_digit(radix)? as f64;
    }
    Some(if negative { -value } else { value })
}

/// go-yaml's `yamlStyleFloat`: `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
fn is_yaml_style_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            digits(&mut i);
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// `strconv.ParseFloat` on a scalar starting with `.`: only plain decimals qualify.
fn parse_dot_float(s: &str) -> Option<f64> {
    if is_yaml_style_float(s) {
        parse_finite(s)
    } else {
        None
    }
}

/// Parses a decimal float; Go reports values beyond the float64 range as errors.
fn parse_finite(s: &str) -> Option<f64> {
    let f: f64 = s.parse().ok()?;
    f.is_finite().then_some(f)
}

/// go-yaml encodes strings like `1:20` quoted because YAML 1.1 read them as base-60 floats.
pub fn is_base60_float(s: &str) -> bool {
    let b = s.as_bytes();
    if !matches!(b.first(), Some(b'+' | b'-' | b'0'..=b'9')) || !s.contains(':') {
        return false;
    }
    // ^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$
    let mut i = usize::from(matches!(b[0], b'+' | b'-'));
    if !b.get(i).is_some_and(u8::is_ascii_digit) {
        return false;
    }
    while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
        i += 1;
    }
    let mut groups = 0;
    while b.get(i) == Some(&b':') {
        i += 1;
        match (b.get(i), b.get(i + 1)) {
            (Some(b'0'..=b'5'), Some(b'0'..=b'9')) => i += 2,
            (Some(b'0'..=b'9'), _) => i += 1,
            _ => return false,
        }
        groups += 1;
    }
    if groups == 0 {
        return false;
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
            i += 1;
        }
    }
    i == b.len()
}

/// Whether go-yaml v2 reads `s` as a timestamp (`2006-1-2`, with optional time and zone).
pub fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 5 || !b[..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
        return false;
    }
    let mut p = TimeCursor { b, i: 5 };
    let year: u32 = s[..4].parse().unwrap_or(0);
    let Some(month) = p.number(1, 12) else {
        return false;
    };
    if !p.eat(b'-') {
        return false;
    }
    let Some(day) = p.number(1, 31) else {
        return false;
    };
    if day > days_in_month(year, month) {
        return false;
    }
    if p.done() {
        return true;
    }
    let zoned = match b[p.i] {
        b'T' | b't' => true,
        b' ' => false,
        _ => return false,
    };
    p.i += 1;
    if p.number(0, 23).is_none() || !p.eat(b':') || p.number(0, 59).is_none() {
        return false;
    }
    if !p.eat(b':') || p.number(0, 59).is_none() {
        return false;
    }
    p.fraction();
    if zoned { p.zone() } else { p.done() }
}

struct TimeCursor<'a> {
    b: &'a [u8],
    i: usize,
}

impl TimeCursor<'_> {
    fn done(&self) -> bool {
        self.i == self.b.len()
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.b.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    /// One or two digits, as Go's layout elements `1`, `2`, `15`, `4`, `5` accept.
    fn number(&mut self, min: u32, max: u32) -> Option<u32> {
        let first = *self.b.get(self.i).filter(|c| c.is_ascii_digit())?;
        self.i += 1;
        let mut v = u32::from(first - b'0');
        if let Some(c) = self.b.get(self.i).filter(|c| c.is_ascii_digit()) {
            v = v * 10 + u32::from(c - b'0');
            self.i += 1;
        }
        (min..=max).contains(&v).then_some(v)
    }

    fn fraction(&mut self) {
        if self.b.get(self.i) == Some(&b'.')
            && self.b.get(self.i + 1).is_some_and(u8::is_ascii_digit)
        {
            self.i += 1;
            while self.b.get(self.i).is_some_and(u8::is_ascii_digit) {
                self.i += 1;
            }
        }
    }

    /// `Z` or `±hh:mm`, then the end of the text.
    fn zone(&mut self) -> bool {
        if self.eat(b'Z') {
            return self.done();
        }
        let rest = &self.b[self.i..];
        rest.len() == 6
            && matches!(rest[0], b'+' | b'-')
            && rest[1].is_ascii_digit()
            && rest[2].is_ascii_digit()
            && rest[3] == b':'
            && rest[4].is_ascii_digit()
            && rest[5].is_ascii_digit()
            && (rest[1] - b'0') * 10 + (rest[2] - b'0') <= 24
            && (rest[4] - b'0') * 10 + (rest[5] - b'0') <= 60
    }
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400)) => {
            29
        }
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml11_words_resolve_to_bools_and_nulls() {
        for s in ["y", "Yes", "ON", "true", "TRUE"] {
            assert_eq!(resolve_plain(s), Resolved::Bool(true), "{s}");
        }
        for s in ["n", "No", "off", "False"] {
            assert_eq!(resolve_plain(s), Resolved::Bool(false), "{s}");
        }
        for s in ["", "~", "null", "NULL"] {
            assert_eq!(resolve_plain(s), Resolved::Null, "{s}");
        }
        for s in ["yES", "nULL", "tRUE", "Y es", "<<"] {
            assert_eq!(resolve_plain(s), Resolved::Str, "{s}");
        }
    }

    #[test]
    fn integers_follow_go_base_prefixes() {
        let cases: &[(&str, Resolved)] = &[
            ("0", Resolved::Int(0)),
            ("-12", Resolved::Int(-12)),
            ("+7", Resolved::Int(7)),
            ("1_000", Resolved::Int(1000)),
            ("0x1F", Resolved::Int(31)),
            ("0o17", Resolved::Int(15)),
            ("017", Resolved::Int(15)),
            ("0b101", Resolved::Int(5)),
            ("-0b101", Resolved::Int(-5)),
            ("9223372036854775807", Resolved::Int(i64::MAX)),
            ("-9223372036854775808", Resolved::Int(i64::MIN)),
            ("18446744073709551615", Resolved::Uint(u64::MAX)),
            ("08", Resolved::Float(8.0)),
            ("0x", Resolved::Str),
        ];
        for (s, want) in cases {
            assert_eq!(&resolve_plain(s), want, "{s}");
        }
    }

    #[test]
    fn floats_need_yaml_style_syntax() {
        let cases: &[(&str, Resolved)] = &[
            ("1e3", Resolved::Float(1000.0)),
            ("1.5", Resolved::Float(1.5)),
            ("1.", Resolved::Float(1.0)),
            (".5", Resolved::Float(0.5)),
            ("-.5e1", Resolved::Float(-5.0)),
            ("99999999999999999999", Resolved::Float(1e20)),
            (".inf", Resolved::Float(f64::INFINITY)),
            ("-.Inf", Resolved::Float(f64::NEG_INFINITY)),
            ("1e400", Resolved::Str),
            ("1e", Resolved::Str),
            ("1.2.3", Resolved::Str),
            ("1:20", Resolved::Str),
            ("-", Resolved::Str),
            (".", Resolved::Str),
        ];
        for (s, want) in cases {
            assert_eq!(&resolve_plain(s), want, "{s}");
        }
        assert!(matches!(resolve_plain(".NaN"), Resolved::Float(f) if f.is_nan()));
        assert!(matches!(
            resolve_plain("0xFFFFFFFFFFFFFFFFFF"),
            Resolved::BigInt(_)
        ));
    }

    #[test]
    fn timestamps_are_recognised_like_go_time_parse() {
        for s in [
            "2001-12-14",
            "2001-1-2",
            "2001-12-14t21:59:43.10-05:00",
            "2001-12-14T21:59:43Z",
            "2001-12-14 21:59:43.10",
            "2000-02-29",
        ] {
            assert_eq!(resolve_plain(s), Resolved::Timestamp, "{s}");
        }
        for s in [
            "2001-12-14 21:59:43.10 -5",
            "2001-13-01",
            "2001-02-30",
            "1999-02-29",
            "2001-12-14T21:59:43",
            "12345-01-01",
        ] {
            assert_ne!(resolve_plain(s), Resolved::Timestamp, "{s}");
        }
    }

    #[test]
    fn base60_floats_are_detected_for_quoting() {
        assert!(is_base60_float("1:20"));
        assert!(is_base60_float("-190:20:30.15"));
        assert!(!is_base60_float("1:70"));
        assert!(!is_base60_float("a:1"));
        assert!(!is_base60_float("12:"));
    }
}
