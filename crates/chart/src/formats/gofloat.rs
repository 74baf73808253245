//! Go's `strconv.FormatFloat` with the shortest round-trip precision (`prec = -1`), in the
//! formats the encoders need: `'g'` (YAML), and `encoding/json`'s choice between `'f'` and `'e'`.
//!
//! Rust's `{:e}` formatting already yields the shortest digits that round-trip, which is
//! exactly the digit string Go computes; only the layout around the digits differs.

/// The shortest decimal digits of a finite float: value = 0.`digits` × 10^`point`.
struct Shortest {
    negative: bool,
    /// Significant digits without leading or trailing zeros; empty for zero.
    digits: Vec<u8>,
    /// Position of the decimal point relative to the first digit.
    point: i32,
}

impl Shortest {
    fn of(f: f64, bits32: bool) -> Shortest {
        // Formatting an f32 gives the shortest digits at single precision, as Go's bitSize 32.
        let text = if bits32 {
            format!("{:e}", f as f32)
        } else {
            format!("{f:e}")
        };
        let (negative, body) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text.as_str()),
        };
        let (mantissa, exponent) = body.split_once('e').unwrap_or((body, "0"));
        let exponent: i32 = exponent.parse().unwrap_or(0);
        let digits: Vec<u8> = mantissa.bytes().filter(u8::is_ascii_digit).collect();
        if digits.iter().all(|d| *d == b'0') {
            return Shortest {
                negative,
                digits: Vec::new(),
                point: 0,
            };
        }
        Shortest {
            negative,
            digits,
            point: exponent + 1,
        }
    }

    fn digit(&self, index: i32) -> u8 {
        if index < 0 {
            return b'0';
        }
        self.digits.get(index as usize).copied().unwrap_or(b'0')
    }

    /// `%e` with as many fraction digits as there are significant digits after the first.
    fn format_e(&self, out: &mut String) {
        if self.negative {
            out.push('-');
        }
        out.push(char::from(self.digit(0)));
        if self.digits.len() > 1 {
            out.push('.');
            for d in &self.digits[1..] {
                out.push(char::from(*d));
            }
        }
        out.push('e');
        let exp = if self.digits.is_empty() {
            0
        } else {
            self.point - 1
        };
        out.push(if exp < 0 { '-' } else { '+' });
        let exp = exp.unsigned_abs();
        if exp < 10 {
            out.push('0');
        }
        out.push_str(&exp.to_string());
    }

    /// `%f` with just enough fraction digits to hold every significant digit.
    fn format_f(&self, out: &mut String) {
        if self.negative {
            out.push('-');
        }
        if self.point > 0 {
            for i in 0..self.point {
                out.push(char::from(self.digit(i)));
            }
        } else {
            out.push('0');
        }
        let fraction = (self.digits.len() as i32 - self.point).max(0);
        if fraction > 0 {
            out.push('.');
            for i in 0..fraction {
                out.push(char::from(self.digit(self.point + i)));
            }
        }
    }
}

fn non_finite(f: f64) -> Option<&'static str> {
    if f.is_nan() {
        Some("NaN")
    } else if f == f64::INFINITY {
        Some("+Inf")
    } else if f == f64::NEG_INFINITY {
        Some("-Inf")
    } else {
        None
    }
}

/// `strconv.FormatFloat(f, 'g', -1, 64)` (or bit size 32 when `bits32`).
pub fn format_g(f: f64, bits32: bool) -> String {
    if let Some(s) = non_finite(f) {
        return s.to_owned();
    }
    let s = Shortest::of(f, bits32);
    let exp = s.point - 1;
    let mut out = String::new();
    // With the shortest precision Go switches to %e when the exponent is < -4 or >= 6
    // (zero has no digits and prints as "0").
    if !s.digits.is_empty() && !(-4..6).contains(&exp) {
        s.format_e(&mut out);
    } else {
        s.format_f(&mut out);
    }
    out
}

/// `strconv.FormatFloat(f, 'e', -1, 64)`.
pub fn format_e(f: f64) -> String {
    if let Some(s) = non_finite(f) {
        return s.to_owned();
    }
    let mut out = String::new();
    Shortest::of(f, false).format_e(&mut out);
    out
}

/// `strconv.FormatFloat(f, 'f', -1, 64)`.
pub fn format_f(f: f64) -> String {
    if let Some(s) = non_finite(f) {
        return s.to_owned();
    }
    let mut out = String::new();
    Shortest::of(f, false).format_f(&mut out);
    out
}

/// How Go's `encoding/json` writes a float64, or `None` for NaN and infinities, which it
/// refuses with `json: unsupported value: …`.
pub fn format_json(f: f64) -> Option<String> {
    if !f.is_finite() {
        return None;
    }
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let mut s = format_e(f);
        // encoding/json shortens a two-digit negative exponent with a leading zero: e-07 → e-7.
        let n = s.len();
        if s.as_bytes()[n - 4..n - 1] == *b"e-0" {
            s.remove(n - 2);
        }
        Some(s)
    } else {
        Some(format_f(f))
    }
}

/// The text Go prints for a non-finite float inside `json: unsupported value: …`.
pub fn go_non_finite_name(f: f64) -> &'static str {
    non_finite(f).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn g_format_matches_go_shortest() {
        let cases: &[(f64, &str)] = &[
            (0.0, "0"),
            (-0.0, "-0"),
            (1.0, "1"),
            (1.5, "1.5"),
            (100000.0, "100000"),
            (1e6, "1e+06"),
            (1234567.5, "1.2345675e+06"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1e21, "1e+21"),
            (1e100, "1e+100"),
            (-2.5e-7, "-2.5e-07"),
            (0.1, "0.1"),
            (123456.0, "123456"),
            (f64::INFINITY, "+Inf"),
            (f64::NAN, "NaN"),
        ];
        for (f, want) in cases {
            assert_eq!(format_g(*f, false), *want, "{f}");
        }
    }

    #[test]
    fn g_format_with_32_bit_precision() {
        assert_eq!(format_g(0.1, true), "0.1");
        assert_eq!(format_g(1.1, true), "1.1");
        assert_eq!(format_g(16777217.0, true), "1.6777216e+07");
    }

    #[test]
    fn json_format_matches_encoding_json() {
        let cases: &[(f64, &str)] = &[
            (0.0, "0"),
            (1.0, "1"),
            (3.25, "3.25"),
            (1e6, "1000000"),
            (1e20, "100000000000000000000"),
            (1e21, "1e+21"),
            (0.000001, "0.000001"),
            (0.0000001, "1e-7"),
            (1.5e-10, "1.5e-10"),
            (-1e300, "-1e+300"),
        ];
        for (f, want) in cases {
            assert_eq!(format_json(*f).as_deref(), Some(*want), "{f}");
        }
        assert_eq!(format_json(f64::NAN), None);
    }
}
