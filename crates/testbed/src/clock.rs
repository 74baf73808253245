//! Wall-clock timestamps in the formats Kubernetes writes (`Time` and `MicroTime`).

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// What a cluster reads as now when it shows times relative to now (the ages in tables):
/// the wall clock plus however far a test advanced it. Timestamps the cluster writes keep
/// the wall clock, so advancing makes existing objects look that much older.
#[derive(Debug, Default)]
pub struct Clock {
    advanced_nanos: AtomicI64,
}

impl Clock {
    /// Moves this clock forward by `by`.
    pub fn advance(&self, by: Duration) {
        let nanos = i64::try_from(by.as_nanos()).unwrap_or(i64::MAX);
        self.advanced_nanos.fetch_add(nanos, Ordering::Relaxed);
    }

    /// Nanoseconds since the Unix epoch, now by this clock.
    pub fn now_nanos(&self) -> i128 {
        let wall = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos() as i128;
        wall + i128::from(self.advanced_nanos.load(Ordering::Relaxed))
    }
}

/// Seconds and microseconds since the Unix epoch, now.
pub fn unix_now() -> (i64, u32) {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    (d.as_secs() as i64, d.subsec_micros())
}

/// Now as a `metav1.Time` string: RFC 3339 in UTC with whole seconds.
pub fn now_time() -> String {
    format_time(unix_now().0)
}

/// Formats Unix seconds as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn format_time(unix_secs: i64) -> String {
    let days = unix_secs.div_euclid(86_400);
    let secs_of_day = unix_secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        secs_of_day / 3600,
        secs_of_day / 60 % 60,
        secs_of_day % 60
    )
}

/// Converts days since 1970-01-01 to a proleptic Gregorian (year, month, day).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    // Shift the epoch to 0000-03-01 so leap days fall at the end of a 400-year era.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// Parses `YYYY-MM-DDTHH:MM:SS[.frac]Z` into Unix seconds; `None` when malformed.
pub fn parse_time(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| text.get(r)?.parse::<i64>().ok();
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, s) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let rest = text.get(19..)?;
    let valid_rest = rest == "Z"
        || (rest.starts_with('.')
            && rest.ends_with('Z')
            && rest.len() > 2
            && rest[1..rest.len() - 1].bytes().all(|c| c.is_ascii_digit()));
    if !valid_rest
        || !(1..=12).contains(&mo)
        || !(1..=31).contains(&d)
        || h > 23
        || mi > 59
        || s > 60
    {
        return None;
    }
    Some(days_from_civil(y, mo as u32, d as u32) * 86_400 + h * 3600 + mi * 60 + s)
}

/// Parses an RFC 3339 time as Go's `time.Parse(time.RFC3339, …)` takes it (a fraction of
/// the second and a `Z` or `±hh:mm` offset) into nanoseconds since the Unix epoch.
pub fn parse_rfc3339_nanos(text: &str) -> Option<i128> {
    let b = text.as_bytes();
    if b.len() < 20
        || b[4] != b'-'
        || b[7] != b'-'
        || b[10] != b'T'
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let digits = |r: std::ops::Range<usize>| {
        let part = text.get(r)?;
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse::<i64>().ok())?
    };
    let (y, mo, d) = (digits(0..4)?, digits(5..7)?, digits(8..10)?);
    let (h, mi, s) = (digits(11..13)?, digits(14..16)?, digits(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 59 {
        return None;
    }
    let mut rest = &text[19..];
    let mut fraction_nanos = 0i128;
    if let Some(after_dot) = rest.strip_prefix('.') {
        let len = after_dot.bytes().take_while(u8::is_ascii_digit).count();
        if len == 0 {
            return None;
        }
        let padded = format!("{:0<9}", &after_dot[..len.min(9)]);
        fraction_nanos = padded.parse().ok()?;
        rest = &after_dot[len..];
    }
    let offset_secs = match rest.as_bytes() {
        [b'Z'] => 0,
        [sign @ (b'+' | b'-'), _, _, b':', _, _] => {
            let (oh, om) = (
                rest[1..3].parse::<i64>().ok()?,
                rest[4..6].parse::<i64>().ok()?,
            );
            if oh > 23 || om > 59 {
                return None;
            }
            let secs = oh * 3600 + om * 60;
            if *sign == b'-' { -secs } else { secs }
        }
        _ => return None,
    };
    let unix =
        days_from_civil(y, mo as u32, d as u32) * 86_400 + h * 3600 + mi * 60 + s - offset_secs;
    Some(i128::from(unix) * 1_000_000_000 + fraction_nanos)
}

/// Converts a proleptic Gregorian date to days since 1970-01-01.
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_parses_known_instants() {
        assert_eq!(format_time(0), "1970-01-01T00:00:00Z");
        assert_eq!(format_time(1_709_251_199), "2024-02-29T23:59:59Z");
        assert_eq!(format_time(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(format_time(4_102_444_799), "2099-12-31T23:59:59Z");
        assert_eq!(parse_time("2024-02-29T23:59:59Z"), Some(1_709_251_199));
        assert_eq!(
            parse_time("2024-01-01T00:00:00.123456Z"),
            Some(1_704_067_200)
        );
        assert_eq!(parse_time("2024-01-01 00:00:00Z"), None);
        assert_eq!(parse_time("2024-01-01T00:00:0é0Z"), None);
    }

    #[test]
    fn parses_rfc3339_with_fractions_and_offsets() {
        let base = 1_704_067_200i128 * 1_000_000_000;
        assert_eq!(parse_rfc3339_nanos("2024-01-01T00:00:00Z"), Some(base));
        assert_eq!(
            parse_rfc3339_nanos("2024-01-01T00:00:00.5Z"),
            Some(base + 500_000_000)
        );
        assert_eq!(parse_rfc3339_nanos("2024-01-01T01:30:00+01:30"), Some(base));
        assert_eq!(parse_rfc3339_nanos("2024-01-01 00:00:00Z"), None);
        assert_eq!(parse_rfc3339_nanos("2024-01-01T00:00:00"), None);
        assert_eq!(parse_rfc3339_nanos("2024-01-01T00:00:00.Z"), None);
    }

    #[test]
    fn an_advanced_clock_runs_ahead_of_the_wall_clock() {
        let clock = Clock::default();
        let before = clock.now_nanos();
        clock.advance(Duration::from_secs(3600));
        assert!(clock.now_nanos() - before >= 3600 * 1_000_000_000);
    }
}
