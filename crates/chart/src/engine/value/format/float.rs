//! Go's `strconv.FormatFloat` formats (`%e`, `%f`, `%g`, `%b`, `%x`) for `float64`.
//!
//! Digits come from Rust's exact, correctly rounded formatting; only the layout is Go's.

/// Decimal digits of a float's magnitude: `0.d1d2d3… × 10^dp`, trailing zeros trimmed.
struct Digits {
    digits: Vec<u8>,
    dp: i32,
}

/// Splits Rust's `{:e}` output (`d.ddde±x`) into digits and decimal point position.
fn digits_of(scientific: &str) -> Digits {
    let (mantissa, exp) = scientific.split_once('e').unwrap_or((scientific, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let mut digits: Vec<u8> = mantissa.bytes().filter(u8::is_ascii_digit).collect();
    while digits.last() == Some(&b'0') {
        digits.pop();
    }
    if digits.is_empty() {
        return Digits { digits, dp: 0 };
    }
    Digits {
        digits,
        dp: exp + 1,
    }
}

/// Go's special spellings, or `None` for finite numbers.
fn special(f: f64) -> Option<String> {
    if f.is_nan() {
        Some("NaN".into())
    } else if f.is_infinite() {
        Some(if f > 0.0 { "+Inf" } else { "-Inf" }.into())
    } else {
        None
    }
}

fn sign(f: f64) -> &'static str {
    if f.is_sign_negative() { "-" } else { "" }
}

/// Appends Go's exponent after its `marker` (`e` for `%e`, `p` for `%x`): `e+05`, `e-10`,
/// `e+100`.
fn push_exponent(out: &mut String, marker: char, exp: i32) {
    out.push(marker);
    out.push(if exp < 0 { '-' } else { '+' });
    let exp = exp.unsigned_abs();
    if exp < 10 {
        out.push('0');
    }
    out.push_str(&exp.to_string());
}

fn layout_e(d: &Digits, prec: usize, upper: bool) -> String {
    let mut out = String::new();
    out.push(d.digits.first().map_or('0', |c| char::from(*c)));
    if prec > 0 {
        out.push('.');
        for i in 1..=prec {
            out.push(d.digits.get(i).map_or('0', |c| char::from(*c)));
        }
    }
    let exp = if d.digits.is_empty() { 0 } else { d.dp - 1 };
    push_exponent(&mut out, if upper { 'E' } else { 'e' }, exp);
    out
}

fn layout_f(d: &Digits, prec: usize) -> String {
    let mut out = String::new();
    if d.dp > 0 {
        for i in 0..d.dp as usize {
            out.push(d.digits.get(i).map_or('0', |c| char::from(*c)));
        }
    } else {
        out.push('0');
    }
    if prec > 0 {
        out.push('.');
        for i in 0..prec as i64 {
            let j = i64::from(d.dp) + i;
            let c = usize::try_from(j).ok().and_then(|j| d.digits.get(j));
            out.push(c.map_or('0', |c| char::from(*c)));
        }
    }
    out
}

/// `%e` with a precision.
pub fn format_e(f: f64, prec: usize, upper: bool) -> String {
    if let Some(s) = special(f) {
        return s;
    }
    let d = digits_of(&format!("{:.*e}", prec, f.abs()));
    format!("{}{}", sign(f), layout_e(&d, prec, upper))
}

/// `%f` with a precision.
pub fn format_f(f: f64, prec: usize) -> String {
    if let Some(s) = special(f) {
        return s;
    }
    format!("{}{:.*}", sign(f), prec, f.abs())
}

/// `%g` (and `%v`): shortest digits when `prec` is `None`.
pub fn format_g(f: f64, prec: Option<usize>, upper: bool) -> String {
    if let Some(s) = special(f) {
        return s;
    }
    let (d, mut prec, eprec) = match prec {
        None => {
            let d = digits_of(&format!("{:e}", f.abs()));
            let n = d.digits.len();
            (d, n, 6)
        }
        Some(p) => {
            let p = p.max(1);
            let d = digits_of(&format!("{:.*e}", p - 1, f.abs()));
            let nd = d.digits.len();
            let eprec = if p > nd && nd as i32 >= d.dp { nd } else { p };
            (d, p, eprec)
        }
    };
    let nd = d.digits.len();
    let exp = d.dp - 1;
    let body = if exp < -4 || exp >= eprec as i32 {
        if prec > nd {
            prec = nd;
        }
        layout_e(&d, prec.saturating_sub(1), upper)
    } else {
        if prec as i32 > d.dp {
            prec = nd;
        }
        layout_f(&d, (prec as i32 - d.dp).max(0) as usize)
    };
    format!("{}{body}", sign(f))
}

/// The binary mantissa and exponent of a finite float: `f = mant × 2^exp`.
fn binary_parts(f: f64) -> (u64, i32) {
    let bits = f.to_bits();
    let mut exp = ((bits >> 52) & 0x7ff) as i32;
    let mut mant = bits & ((1 << 52) - 1);
    if exp == 0 {
        exp = 1;
    } else {
        mant |= 1 << 52;
    }
    (mant, exp - 1023 - 52)
}

/// `%b`: decimal mantissa and binary exponent, e.g. `4503599627370496p-52`.
pub fn format_b(f: f64) -> String {
    if let Some(s) = special(f) {
        return s;
    }
    let (mant, exp) = binary_parts(f);
    let exp_sign = if exp >= 0 { "+" } else { "" };
    format!("{}{mant}p{exp_sign}{exp}", sign(f))
}

/// `%x`: hexadecimal mantissa and binary exponent, e.g. `0x1.8p+01`; with a precision the
/// mantissa is rounded (half to even) to that many hexadecimal digits.
pub fn format_x(f: f64, prec: Option<usize>, upper: bool) -> String {
    if let Some(s) = special(f) {
        return s;
    }
    let (mut mant, exp) = binary_parts(f);
    // The exponent of the mantissa's leading bit rather than of its last.
    let mut exp = exp + 52;
    if mant == 0 {
        exp = 0;
    }
    // Leading 1 (if any) at bit 60.
    mant <<= 8;
    while mant != 0 && mant & (1 << 60) == 0 {
        mant <<= 1;
        exp -= 1;
    }
    if let Some(p) = prec.filter(|p| *p < 15) {
        let shift = (p * 4) as u32;
        let extra = (mant << shift) & ((1 << 60) - 1);
        mant >>= 60 - shift;
        if extra | (mant & 1) > 1 << 59 {
            mant += 1;
        }
        mant <<= 60 - shift;
        if mant & (1 << 61) != 0 {
            mant >>= 1;
            exp += 1;
        }
    }
    let digits: &[u8; 16] = if upper {
        b"0123456789ABCDEF"
    } else {
        b"0123456789abcdef"
    };
    let mut out = String::from(sign(f));
    out.push('0');
    out.push(if upper { 'X' } else { 'x' });
    out.push(char::from(b'0' + ((mant >> 60) & 1) as u8));
    mant <<= 4;
    let fraction_digits = match prec {
        None if mant != 0 => Some(usize::MAX),
        Some(p) if p > 0 => Some(p),
        _ => None,
    };
    if let Some(count) = fraction_digits {
        out.push('.');
        let mut written = 0;
        while written < count && (count != usize::MAX || mant != 0) {
            out.push(char::from(digits[((mant >> 60) & 15) as usize]));
            mant <<= 4;
            written += 1;
        }
    }
    push_exponent(&mut out, if upper { 'P' } else { 'p' }, exp);
    out
}

/// Go's `#` flag on a formatted float: always a decimal point, and for `%g`/`%v`/`%x` trailing
/// zeros up to the precision (6 when none is given), counting digits as Go does.
pub fn with_sharp_flag(text: &str, verb: char, prec: Option<usize>) -> String {
    // Go pads only these verbs (upper-case %X is not among them).
    let mut digits: i64 = match verb {
        'v' | 'g' | 'G' | 'x' => prec.map_or(6, |p| p as i64),
        _ => 0,
    };
    let (sign, body) = match text.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", text.strip_prefix('+').unwrap_or(text)),
    };
    let hex = matches!(verb, 'x' | 'X');
    let tail_at = body.find(|c: char| matches!(c, 'p' | 'P') || (!hex && matches!(c, 'e' | 'E')));
    let (num, tail) = body.split_at(tail_at.unwrap_or(body.len()));
    let mut saw_nonzero = false;
    for c in num.chars().filter(|c| *c != '.') {
        if c != '0' {
            saw_nonzero = true;
        }
        if saw_nonzero {
            digits -= 1;
        }
    }
    let mut out = format!("{sign}{num}");
    if !num.contains('.') {
        if num == "0" {
            digits -= 1;
        }
        out.push('.');
    }
    for _ in 0..digits.max(0) {
        out.push('0');
    }
    out.push_str(tail);
    out
}
