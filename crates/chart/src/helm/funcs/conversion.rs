//! Sprig's conversions: `toString`, `toStrings`, `atoi`, `int`, `int64`, `float64`,
//! `toDecimal`, and the spf13/cast rules (`cast.ToInt64`, `cast.ToFloat64`) that Sprig's math
//! and list functions apply to their `interface{}` arguments.

use super::{FuncMap, args};
use crate::engine::value::Value;
use crate::engine::value::format::sprint;

/// Registers the conversion functions.
pub fn install(funcs: &mut FuncMap) {
    funcs.add("toString", |a: &[Value]| {
        args::count(a, 1)?;
        // A string or byte slice converts byte for byte, as Go's `string(b)` does.
        match &a[0] {
            Value::String(_) | Value::RawString(_) => Ok(a[0].clone()),
            Value::Bytes(b) => Ok(Value::string_from_bytes(b.to_vec())),
            other => Ok(Value::from(strval(other))),
        }
    });
    funcs.add("toStrings", |a: &[Value]| {
        args::count(a, 1)?;
        Ok(Value::list(
            to_strings(&a[0]).into_iter().map(Value::from).collect(),
        ))
    });
    funcs.add("atoi", |a: &[Value]| {
        args::count(a, 1)?;
        Ok(Value::Int(atoi(args::string(a, 0)?)))
    });
    funcs.add("int", |a: &[Value]| {
        args::count(a, 1)?;
        Ok(Value::Int(to_int64(&a[0])))
    });
    funcs.add("int64", |a: &[Value]| {
        args::count(a, 1)?;
        Ok(Value::Int64(to_int64(&a[0])))
    });
    funcs.add("float64", |a: &[Value]| {
        args::count(a, 1)?;
        Ok(Value::Float(to_float64(&a[0])))
    });
    funcs.add("toDecimal", |a: &[Value]| {
        args::count(a, 1)?;
        let digits = sprint(std::slice::from_ref(&a[0]));
        Ok(Value::Int64(parse_int(&digits, 8).unwrap_or(0)))
    });
}

/// Sprig's `strval`: strings as they are, byte slices as text, objects through their `String`
/// method, anything else as `%v` prints it.
pub fn strval(v: &Value) -> String {
    match v {
        Value::String(s) => s.to_string(),
        Value::RawString(b) | Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        Value::Object(o) => o.format(),
        other => other.to_go_string(),
    }
}

/// Sprig's `strslice` (`toStrings`): list elements through [`strval`], nils dropped; a single
/// value becomes a one-element list, nil an empty one.
pub fn to_strings(v: &Value) -> Vec<String> {
    match v {
        Value::List(items) => items
            .iter()
            .filter(|item| !item.is_nil())
            .map(strval)
            .collect(),
        Value::Bytes(bytes) => bytes.iter().map(|b| b.to_string()).collect(),
        Value::Nil => Vec::new(),
        other => vec![strval(other)],
    }
}

/// `cast.ToInt64`: numbers converted (floats truncated), bools as 0/1, strings parsed as Go
/// integer literals (after dropping a zero fraction like `.00`), anything else 0.
pub fn to_int64(v: &Value) -> i64 {
    match v {
        Value::Int(i) | Value::Int64(i) => *i,
        Value::Float(f) => float_to_int(*f),
        Value::Bool(b) => i64::from(*b),
        Value::String(s) => parse_int(trim_zero_decimal(s), 0).unwrap_or(0),
        _ => 0,
    }
}

/// `cast.ToFloat64`: numbers converted, bools as 0/1, strings parsed by Go's `ParseFloat`,
/// anything else 0.
pub fn to_float64(v: &Value) -> f64 {
    match v {
        Value::Int(i) | Value::Int64(i) => *i as f64,
        Value::Float(f) => *f,
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::String(s) => parse_float(s).unwrap_or(0.0),
        _ => 0.0,
    }
}

/// Go's `int64(f)` on amd64: truncation, and the "integer indefinite" value `i64::MIN` for NaN
/// and out-of-range values (Rust's `as` would saturate instead).
pub fn float_to_int(f: f64) -> i64 {
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    if f.is_nan() || !(-LIMIT..LIMIT).contains(&f) {
        i64::MIN
    } else {
        f as i64
    }
}

/// spf13/cast's `trimZeroDecimal`: `"10.00"` becomes `"10"`; anything else is unchanged.
fn trim_zero_decimal(s: &str) -> &str {
    let mut found_zero = false;
    for (i, c) in s.bytes().enumerate().rev() {
        match c {
            b'.' if found_zero => return &s[..i],
            b'.' => {}
            b'0' => found_zero = true,
            _ => return s,
        }
    }
    s
}

/// Go's `strconv.Atoi`: decimal with an optional sign; out of range gives the nearest limit,
/// anything else 0.
pub fn atoi(s: &str) -> i64 {
    let (negative, digits) = split_sign(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return 0;
    }
    parse_digits(digits, 10, negative).unwrap_or(if negative { i64::MIN } else { i64::MAX })
}

fn split_sign(s: &str) -> (bool, &str) {
    match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    }
}

/// Go's `strconv.ParseInt(s, base, 64)` for base 0 (Go literal prefixes and `_` separators)
/// or a fixed base; `None` on a syntax or range error.
pub fn parse_int(s: &str, base: u32) -> Option<i64> {
    let (negative, mut digits) = split_sign(s);
    let mut radix = base;
    if base == 0 {
        radix = 10;
        let lower = digits.to_ascii_lowercase();
        if lower.starts_with("0x") {
            radix = 16;
            digits = &digits[2..];
        } else if lower.starts_with("0b") {
            radix = 2;
            digits = &digits[2..];
        } else if lower.starts_with("0o") {
            radix = 8;
            digits = &digits[2..];
        } else if digits.len() > 1 && digits.starts_with('0') {
            radix = 8;
            digits = &digits[1..];
        }
        if digits.contains('_') {
            if !underscores_ok(s) {
                return None;
            }
            return parse_digits(&digits.replace('_', ""), radix, negative);
        }
    }
    parse_digits(digits, radix, negative)
}

fn parse_digits(digits: &str, radix: u32, negative: bool) -> Option<i64> {
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = u64::from_str_radix(digits, radix).ok()?;
    if negative {
        0i64.checked_sub_unsigned(magnitude)
    } else {
        i64::try_from(magnitude).ok()
    }
}

/// Go's `underscoreOK`: underscores only between digits, or between a base prefix and a digit.
fn underscores_ok(s: &str) -> bool {
    let s = s.strip_prefix(['+', '-']).unwrap_or(s);
    let bytes = s.as_bytes();
    let mut saw = b'^';
    let mut i = 0;
    let mut hex = false;
    if bytes.len() >= 2 && bytes[0] == b'0' && matches!(bytes[1] | 0x20, b'b' | b'o' | b'x') {
        i = 2;
        saw = b'0';
        hex = bytes[1] | 0x20 == b'x';
    }
    for &c in &bytes[i..] {
        if c.is_ascii_digit() || (hex && c.is_ascii_hexdigit()) {
            saw = b'0';
        } else if c == b'_' {
            if saw != b'0' {
                return false;
            }
            saw = b'_';
        } else {
            if saw == b'_' {
                return false;
            }
            saw = b'!';
        }
    }
    saw != b'_'
}

/// Go's `strconv.ParseFloat(s, 64)` for decimal input, `inf`/`infinity`/`nan` and `_`
/// separators; `None` on a syntax or range error (Go then reports an error, cast gives 0).
pub fn parse_float(s: &str) -> Option<f64> {
    let (_, body) = split_sign(s);
    let lower = body.to_ascii_lowercase();
    if matches!(lower.as_str(), "inf" | "infinity" | "nan") {
        return s.to_ascii_lowercase().parse::<f64>().ok();
    }
    let valid = !body.is_empty()
        && body
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-' | b'_'))
        && body.bytes().any(|b| b.is_ascii_digit());
    if !valid {
        return None;
    }
    let cleaned = if body.contains('_') {
        if !underscores_ok(s) {
            return None;
        }
        s.replace('_', "")
    } else {
        s.to_string()
    };
    let f = cleaned.parse::<f64>().ok()?;
    f.is_finite().then_some(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cast_to_int64_follows_spf13_cast() {
        assert_eq!(to_int64(&Value::from("102")), 102);
        assert_eq!(to_int64(&Value::from("10.00")), 10);
        assert_eq!(to_int64(&Value::from("10.5")), 0);
        assert_eq!(to_int64(&Value::from("0x1F")), 31);
        assert_eq!(to_int64(&Value::from("0777")), 511);
        assert_eq!(to_int64(&Value::from("1_000")), 1000);
        assert_eq!(to_int64(&Value::from("_1")), 0);
        assert_eq!(to_int64(&Value::from("frankie")), 0);
        assert_eq!(to_int64(&Value::from("99999999999999999999")), 0);
        assert_eq!(to_int64(&Value::Float(102.9)), 102);
        assert_eq!(to_int64(&Value::Float(-2.5)), -2);
        assert_eq!(to_int64(&Value::Float(f64::NAN)), i64::MIN);
        assert_eq!(to_int64(&Value::Bool(true)), 1);
        assert_eq!(to_int64(&Value::Nil), 0);
        assert_eq!(to_int64(&Value::list(vec![])), 0);
    }

    #[test]
    fn cast_to_float64_follows_parse_float() {
        assert_eq!(to_float64(&Value::from("123.01")), 123.01);
        assert_eq!(to_float64(&Value::from("1e3")), 1000.0);
        assert_eq!(to_float64(&Value::from("frankie")), 0.0);
        assert_eq!(to_float64(&Value::from("1e400")), 0.0);
        assert!(to_float64(&Value::from("NaN")).is_nan());
        assert_eq!(to_float64(&Value::from("-Inf")), f64::NEG_INFINITY);
        assert_eq!(to_float64(&Value::Int(3)), 3.0);
    }

    #[test]
    fn atoi_clamps_out_of_range_and_zeroes_bad_syntax() {
        assert_eq!(atoi("42"), 42);
        assert_eq!(atoi("-42"), -42);
        assert_eq!(atoi("4x"), 0);
        assert_eq!(atoi("99999999999999999999"), i64::MAX);
        assert_eq!(atoi("-99999999999999999999"), i64::MIN);
    }

    #[test]
    fn to_strings_drops_nils_and_wraps_scalars() {
        let list = Value::list(vec![Value::Int(1), Value::Nil, Value::from("a")]);
        assert_eq!(to_strings(&list), ["1", "a"]);
        assert_eq!(to_strings(&Value::from("x")), ["x"]);
        assert!(to_strings(&Value::Nil).is_empty());
    }
}
