//! `time.ParseDuration`: `[-+]?([0-9]*(\.[0-9]*)?[a-z]+)+`, Go's overflow rules and its
//! float rounding of fractions included.

/// Why a text is not a Go duration. Go words the first three alike ([`ParseError::go_message`]);
/// they are told apart for callers that explain more.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseError {
    /// Nothing after the optional sign.
    Empty,
    /// A place where a number must start holds something else, or a number has no digits.
    ExpectedNumber,
    /// The value does not fit Go's `int64` nanoseconds (about 292 years).
    OutOfRange,
    /// A number without a unit.
    MissingUnit,
    /// A unit Go does not know (the unit as written).
    UnknownUnit(String),
}

impl ParseError {
    /// Go's error text for `text`, with Go strings quoted by `quote` (Go's `strconv.Quote`).
    pub fn go_message(&self, text: &str, quote: impl Fn(&str) -> String) -> String {
        match self {
            Self::Empty | Self::ExpectedNumber | Self::OutOfRange => {
                format!("time: invalid duration {}", quote(text))
            }
            Self::MissingUnit => format!("time: missing unit in duration {}", quote(text)),
            Self::UnknownUnit(unit) => format!(
                "time: unknown unit {} in duration {}",
                quote(unit),
                quote(text)
            ),
        }
    }
}

/// 2^63: the largest magnitude Go accepts (for a negative duration).
const LIMIT: u64 = 1 << 63;

/// Go's `time.ParseDuration`, in nanoseconds.
pub fn parse(text: &str) -> Result<i64, ParseError> {
    let mut s = text;
    let mut negative = false;
    if let Some(rest) = s.strip_prefix('-') {
        negative = true;
        s = rest;
    } else if let Some(rest) = s.strip_prefix('+') {
        s = rest;
    }
    // Go's special case: a bare zero needs no unit.
    if s == "0" {
        return Ok(0);
    }
    if s.is_empty() {
        return Err(ParseError::Empty);
    }
    let mut total: u64 = 0;
    while !s.is_empty() {
        let (nanos, rest) = component(s)?;
        s = rest;
        total = total
            .checked_add(nanos)
            .filter(|&t| t <= LIMIT)
            .ok_or(ParseError::OutOfRange)?;
    }
    if negative {
        // -2^63 is Go's smallest duration; everything else negates within range.
        return Ok((total as i64).wrapping_neg());
    }
    i64::try_from(total).map_err(|_| ParseError::OutOfRange)
}

/// One `number unit` pair at the start of `s`: its nanoseconds and the rest of `s`.
fn component(s: &str) -> Result<(u64, &str), ParseError> {
    if !s.starts_with(|c: char| c == '.' || c.is_ascii_digit()) {
        return Err(ParseError::ExpectedNumber);
    }
    let before = s.len();
    let (whole, mut s) = leading_int(s)?;
    let has_whole = s.len() != before;
    let (mut fraction, mut scale, mut has_fraction) = (0, 1.0, false);
    if let Some(rest) = s.strip_prefix('.') {
        let after_dot = rest.len();
        (fraction, scale, s) = leading_fraction(rest);
        has_fraction = s.len() != after_dot;
    }
    if !has_whole && !has_fraction {
        return Err(ParseError::ExpectedNumber);
    }
    let unit_len = s
        .find(|c: char| c == '.' || c.is_ascii_digit())
        .unwrap_or(s.len());
    if unit_len == 0 {
        return Err(ParseError::MissingUnit);
    }
    let (unit, rest) = s.split_at(unit_len);
    let unit_nanos = unit_nanos(unit).ok_or_else(|| ParseError::UnknownUnit(unit.to_owned()))?;
    if whole > LIMIT / unit_nanos {
        return Err(ParseError::OutOfRange);
    }
    let mut nanos = whole * unit_nanos;
    if fraction > 0 {
        // Go computes the fraction in float64, which is nanosecond-accurate for fractions of
        // an hour, and truncates.
        nanos += (fraction as f64 * (unit_nanos as f64 / scale)) as u64;
        if nanos > LIMIT {
            return Err(ParseError::OutOfRange);
        }
    }
    Ok((nanos, rest))
}

/// Nanoseconds of a unit Go knows.
fn unit_nanos(unit: &str) -> Option<u64> {
    Some(match unit {
        "ns" => 1,
        // U+00B5 (micro sign) and U+03BC (Greek mu), as Go accepts both.
        "us" | "µs" | "μs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "m" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        _ => return None,
    })
}

/// Go's `leadingInt`: the digits at the start of `s`, failing beyond 2^63.
fn leading_int(s: &str) -> Result<(u64, &str), ParseError> {
    let mut x: u64 = 0;
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    for c in s[..digits].bytes() {
        if x > LIMIT / 10 {
            return Err(ParseError::OutOfRange);
        }
        x = x * 10 + u64::from(c - b'0');
        if x > LIMIT {
            return Err(ParseError::OutOfRange);
        }
    }
    Ok((x, &s[digits..]))
}

/// Go's `leadingFraction`: the digits at the start of `s` as `x / scale`; digits past what
/// fits 2^63 are consumed and dropped.
fn leading_fraction(s: &str) -> (u64, f64, &str) {
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    let (mut x, mut scale, mut overflow): (u64, f64, bool) = (0, 1.0, false);
    for c in s[..digits].bytes() {
        if overflow {
            continue;
        }
        if x > (LIMIT - 1) / 10 {
            overflow = true;
            continue;
        }
        let y = x * 10 + u64::from(c - b'0');
        if y > LIMIT {
            overflow = true;
            continue;
        }
        x = y;
        scale *= 10.0;
    }
    (x, scale, &s[digits..])
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: i64 = 1_000_000_000;

    #[test]
    fn reads_what_go_reads() {
        let cases: [(&str, i64); 16] = [
            ("0", 0),
            ("-0", 0),
            ("+0", 0),
            ("5s", 5 * S),
            ("30s", 30 * S),
            ("1478s", 1478 * S),
            ("-5s", -5 * S),
            ("+5s", 5 * S),
            ("1.5h", 5400 * S),
            ("1h30m", 5400 * S),
            (".5s", S / 2),
            ("1.s", S),
            ("1.004s", S + 4_000_000),
            ("100.00100s", 100 * S + 1_000_000),
            ("1µs", 1_000),
            ("1μs", 1_000),
        ];
        for (text, want) in cases {
            assert_eq!(parse(text), Ok(want), "{text}");
        }
    }

    #[test]
    fn reads_go_edges_of_range_and_precision() {
        // From Go's own tests of ParseDuration.
        assert_eq!(parse("9223372036854775807ns"), Ok(i64::MAX));
        assert_eq!(parse("-9223372036854775808ns"), Ok(i64::MIN));
        assert_eq!(parse("9223372036s854ms775us807ns"), Ok(i64::MAX));
        assert_eq!(parse("0.3333333333333333333h"), Ok(20 * 60 * S));
        assert_eq!(
            parse("0.100000000000000000000h"),
            Ok(6 * 60 * S),
            "digits past 2^63 are dropped"
        );
        assert_eq!(
            parse("0.830103483285477580700h"),
            Ok(49 * 60 * S + 48_372_539_827)
        );
    }

    #[test]
    fn fails_as_go_fails() {
        let cases = [
            ("", ParseError::Empty),
            ("-", ParseError::Empty),
            ("3", ParseError::MissingUnit),
            ("-s", ParseError::ExpectedNumber),
            (".s", ParseError::ExpectedNumber),
            ("+.s", ParseError::ExpectedNumber),
            ("1d", ParseError::UnknownUnit("d".into())),
            ("1.2.3s", ParseError::MissingUnit),
            ("1h-2m", ParseError::UnknownUnit("h-".into())),
            ("9223372036854775808ns", ParseError::OutOfRange),
            ("9223372036854775.808us", ParseError::OutOfRange),
            ("9223372036854ms775us808ns", ParseError::OutOfRange),
            ("-9223372036854775809ns", ParseError::OutOfRange),
        ];
        for (text, want) in cases {
            assert_eq!(parse(text), Err(want), "{text}");
        }
    }

    #[test]
    fn words_errors_as_go_does() {
        let quote = |s: &str| format!("{s:?}");
        assert_eq!(
            ParseError::UnknownUnit("f".into()).go_message("1f", quote),
            "time: unknown unit \"f\" in duration \"1f\""
        );
        assert_eq!(
            ParseError::MissingUnit.go_message("1", quote),
            "time: missing unit in duration \"1\""
        );
        assert_eq!(
            ParseError::OutOfRange.go_message("", quote),
            "time: invalid duration \"\""
        );
    }
}
