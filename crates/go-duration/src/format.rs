//! `Duration.String`: `1h2m3.5s`, `1.5ms`, `0s`.

/// Go's `time.Duration.String` of `nanos`.
pub fn format(nanos: i64) -> String {
    let text = format_unsigned(nanos.unsigned_abs());
    if nanos < 0 { format!("-{text}") } else { text }
}

/// Go's `time.Duration.String` of a non-negative duration of `nanos`, also beyond Go's range
/// (a Rust `std::time::Duration` may be longer than 2^63 ns).
pub fn format_unsigned(nanos: u64) -> String {
    const SECOND: u64 = 1_000_000_000;
    if nanos < SECOND {
        // Sub-second values use a smaller unit: 1.5ms, 12µs, 7ns.
        let (unit, scale) = match nanos {
            0 => return "0s".to_owned(),
            1..=999 => ("ns", 1),
            1_000..=999_999 => ("µs", 1_000),
            _ => ("ms", 1_000_000),
        };
        return format!("{}{unit}", fraction(nanos, scale));
    }
    let seconds = nanos / SECOND;
    let secs = fraction(seconds % 60 * SECOND + nanos % SECOND, SECOND);
    let minutes = seconds / 60;
    match (minutes / 60, minutes % 60) {
        (0, 0) => format!("{secs}s"),
        (0, m) => format!("{m}m{secs}s"),
        (h, m) => format!("{h}h{m}m{secs}s"),
    }
}

/// `value / scale` with the remainder as decimals, trailing zeros dropped, no dot when whole.
fn fraction(value: u64, scale: u64) -> String {
    let whole = value / scale;
    let rest = value % scale;
    if rest == 0 {
        return whole.to_string();
    }
    let digits = scale.ilog10() as usize;
    let decimals = format!("{rest:0digits$}");
    format!("{whole}.{}", decimals.trim_end_matches('0'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_what_go_writes() {
        let cases: [(i64, &str); 12] = [
            (0, "0s"),
            (1, "1ns"),
            (1_100, "1.1µs"),
            (2_200_000, "2.2ms"),
            (3_300_000_000, "3.3s"),
            (61_000_000_000, "1m1s"),
            (4 * 60_000_000_000 + 5_000_000_000, "4m5s"),
            (3_600_000_000_000, "1h0m0s"),
            (5_400_000_000_000, "1h30m0s"),
            (-2_000, "-2µs"),
            (i64::MAX, "2562047h47m16.854775807s"),
            (i64::MIN, "-2562047h47m16.854775808s"),
        ];
        for (nanos, want) in cases {
            assert_eq!(format(nanos), want, "{nanos}");
        }
    }
}
