//! Go's `time.Duration`: printing, parsing and rounding, in nanoseconds.

use crate::engine::value::format::quote;

/// Go's `Duration.Round(time.Second)`.
pub(super) fn round_to_second(d: i64) -> i64 {
    const S: i64 = 1_000_000_000;
    let r = d % S;
    if d < 0 {
        let r = -r;
        if r + r < S {
            return d + r;
        }
        return d.checked_sub(S - r).map_or(i64::MIN, |v| v);
    }
    if r + r < S {
        return d - r;
    }
    d.checked_add(S - r).unwrap_or(i64::MAX)
}

/// Go's `time.Duration.String`: `1h2m3.5s`, `1.5ms`, `0s`.
pub fn format_duration(d: i64) -> String {
    let negative = d < 0;
    let u = d.unsigned_abs();
    let mut out = String::new();
    if u < 1_000_000_000 {
        // Sub-second values use a smaller unit: 1.5ms, 12µs, 7ns.
        let (unit, scale) = match u {
            0 => return "0s".to_string(),
            1..=999 => ("ns", 1),
            1_000..=999_999 => ("µs", 1_000),
            _ => ("ms", 1_000_000),
        };
        out.push_str(&fraction(u, scale));
        out.push_str(unit);
    } else {
        let seconds = u / 1_000_000_000;
        let frac = u % 1_000_000_000;
        let mut secs = fraction(seconds % 60 * 1_000_000_000 + frac, 1_000_000_000);
        secs.push('s');
        let minutes = seconds / 60;
        if minutes > 0 {
            let hours = minutes / 60;
            if hours > 0 {
                out.push_str(&format!("{hours}h"));
            }
            out.push_str(&format!("{}m", minutes % 60));
        }
        out.push_str(&secs);
    }
    if negative {
        out.insert(0, '-');
    }
    out
}

/// `v / scale` with the remainder as decimals, trailing zeros dropped.
pub(super) fn fraction(v: u64, scale: u64) -> String {
    let whole = v / scale;
    let rest = v % scale;
    if rest == 0 {
        return whole.to_string();
    }
    let digits = scale.to_string().len() - 1;
    let decimals = format!("{rest:0digits$}");
    format!("{whole}.{}", decimals.trim_end_matches('0'))
}

/// Go's `time.ParseDuration`, in nanoseconds, with Go's error messages.
pub fn parse_duration(s: &str) -> Result<i64, String> {
    let invalid = || format!("time: invalid duration {}", quote(s));
    let mut rest = s;
    let mut negative = false;
    if let Some(r) = rest.strip_prefix('-') {
        negative = true;
        rest = r;
    } else if let Some(r) = rest.strip_prefix('+') {
        rest = r;
    }
    if rest == "0" {
        return Ok(0);
    }
    if rest.is_empty() {
        return Err(invalid());
    }
    let mut total: u64 = 0;
    while !rest.is_empty() {
        if !rest.starts_with(|c: char| c == '.' || c.is_ascii_digit()) {
            return Err(invalid());
        }
        let int_len = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let int_part = &rest[..int_len];
        rest = &rest[int_len..];
        let mut frac_part = "";
        if let Some(r) = rest.strip_prefix('.') {
            let frac_len = r.find(|c: char| !c.is_ascii_digit()).unwrap_or(r.len());
            frac_part = &r[..frac_len];
            rest = &r[frac_len..];
        }
        if int_part.is_empty() && frac_part.is_empty() {
            return Err(invalid());
        }
        let unit_len = rest
            .find(|c: char| c == '.' || c.is_ascii_digit())
            .unwrap_or(rest.len());
        let unit = &rest[..unit_len];
        rest = &rest[unit_len..];
        let scale: u64 = match unit {
            "" => return Err(format!("time: missing unit in duration {}", quote(s))),
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => {
                return Err(format!(
                    "time: unknown unit {} in duration {}",
                    quote(unit),
                    quote(s)
                ));
            }
        };
        let whole: u64 = if int_part.is_empty() {
            0
        } else {
            int_part.parse().map_err(|_| invalid())?
        };
        let mut v = whole.checked_mul(scale).ok_or_else(invalid)?;
        if !frac_part.is_empty() {
            // Go keeps up to 19 significant fraction digits and truncates.
            let mut f: u64 = 0;
            let mut div: u64 = 1;
            for d in frac_part.bytes().take(18) {
                f = f * 10 + u64::from(d - b'0');
                div *= 10;
            }
            let part = (f as f64 * (scale as f64 / div as f64)) as u64;
            v = v.checked_add(part).ok_or_else(invalid)?;
        }
        total = total.checked_add(v).ok_or_else(invalid)?;
        if total > 1 << 63 {
            return Err(invalid());
        }
    }
    if negative {
        return Ok((total as i64).wrapping_neg());
    }
    if total > i64::MAX as u64 {
        return Err(invalid());
    }
    Ok(total as i64)
}
