//! Go's `time.Duration` for the template functions: printing and parsing (the
//! `landscaper-go-duration` crate, with Go's quoting in messages) and rounding, in nanoseconds.

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
    landscaper_go_duration::format(d)
}

/// Go's `time.ParseDuration`, in nanoseconds, with Go's error messages.
pub fn parse_duration(s: &str) -> Result<i64, String> {
    landscaper_go_duration::parse(s).map_err(|e| e.go_message(s, quote))
}
