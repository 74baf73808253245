//! Go duration strings (`1h30m`, `300ms`) as upstream Landscaper reads and writes them.

use std::fmt;
use std::time::Duration as StdDuration;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A duration written as a Go duration string, or `none` for "no duration".
///
/// The text is kept as written, so a manifest round-trips unchanged; the parsed value is
/// checked when the duration is read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Duration {
    text: String,
    value: StdDuration,
}

impl Duration {
    /// A duration of the given length, written as Go writes it (`none` for zero).
    pub fn from_std(value: StdDuration) -> Self {
        let text = if value.is_zero() {
            "none".to_owned()
        } else {
            format_go(value)
        };
        Self { text, value }
    }

    /// The length of the duration; zero for `none`.
    pub fn as_std(&self) -> StdDuration {
        self.value
    }

    /// Whether this is `none` (or zero), i.e. no limit.
    pub fn is_none(&self) -> bool {
        self.value.is_zero()
    }

    /// The duration as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl std::str::FromStr for Duration {
    type Err = DurationError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let value = if text == "none" {
            StdDuration::ZERO
        } else {
            parse_go(text)?
        };
        Ok(Self {
            text: text.to_owned(),
            value,
        })
    }
}

impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Serialize for Duration {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for Duration {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

impl JsonSchema for Duration {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Duration".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "string" })
    }
}

/// A duration string that is neither `none` nor a valid Go duration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid duration {text:?}: {reason} (expected a Go duration such as \"1h30m\" or \"300s\", or \"none\")"
)]
pub struct DurationError {
    text: String,
    reason: &'static str,
}

/// Parses Go's `time.ParseDuration` syntax; negative durations are rejected because no
/// Landscaper field has a meaning for them.
pub fn parse_go(text: &str) -> Result<StdDuration, DurationError> {
    let fail = |reason| DurationError {
        text: text.to_owned(),
        reason,
    };
    let mut rest = text.strip_prefix('+').unwrap_or(text);
    if rest.starts_with('-') {
        return Err(fail("negative durations are not allowed"));
    }
    if rest == "0" {
        return Ok(StdDuration::ZERO);
    }
    if rest.is_empty() {
        return Err(fail("empty duration"));
    }
    let mut total_nanos: u128 = 0;
    while !rest.is_empty() {
        let number_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (number, after) = rest.split_at(number_end);
        if number.is_empty() || number == "." || number.matches('.').count() > 1 {
            return Err(fail("expected a number"));
        }
        let unit_end = after
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after.len());
        let (unit, after_unit) = after.split_at(unit_end);
        let unit_nanos: u128 = match unit {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            "" => return Err(fail("missing unit")),
            _ => return Err(fail("unknown unit")),
        };
        let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
        let whole: u128 = if whole.is_empty() {
            0
        } else {
            whole.parse().map_err(|_| fail("number too large"))?
        };
        let mut nanos = whole
            .checked_mul(unit_nanos)
            .ok_or_else(|| fail("duration too large"))?;
        let mut scale = unit_nanos;
        for digit in fraction.bytes().take(30) {
            scale /= 10;
            nanos += u128::from(digit - b'0') * scale;
        }
        total_nanos = total_nanos
            .checked_add(nanos)
            .ok_or_else(|| fail("duration too large"))?;
        rest = after_unit;
    }
    let secs =
        u64::try_from(total_nanos / 1_000_000_000).map_err(|_| fail("duration too large"))?;
    Ok(StdDuration::new(secs, (total_nanos % 1_000_000_000) as u32))
}

/// Formats like Go's `time.Duration.String()` (`1h30m0s`, `1.5s`, `300ms`, `0s`).
pub fn format_go(value: StdDuration) -> String {
    let nanos = value.as_nanos();
    if nanos == 0 {
        return "0s".to_owned();
    }
    if nanos < 1_000_000_000 {
        let (unit_nanos, unit) = match nanos {
            n if n < 1_000 => (1, "ns"),
            n if n < 1_000_000 => (1_000, "µs"),
            _ => (1_000_000, "ms"),
        };
        return format!("{}{unit}", fixed_fraction(nanos, unit_nanos));
    }
    let hours = nanos / 3_600_000_000_000;
    let minutes = (nanos / 60_000_000_000) % 60;
    let seconds = fixed_fraction(nanos % 60_000_000_000, 1_000_000_000);
    match (hours, minutes) {
        (0, 0) => format!("{seconds}s"),
        (0, m) => format!("{m}m{seconds}s"),
        (h, m) => format!("{h}h{m}m{seconds}s"),
    }
}

/// `value / unit` printed with the fraction Go prints: no trailing zeros, no dot when whole.
fn fixed_fraction(value: u128, unit: u128) -> String {
    let whole = value / unit;
    let fraction = value % unit;
    if fraction == 0 {
        return whole.to_string();
    }
    let width = unit.ilog10() as usize;
    let digits = format!("{fraction:0width$}");
    format!("{whole}.{}", digits.trim_end_matches('0'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_go_duration_strings() {
        let cases = [
            ("1h30m", 5_400_000),
            ("300s", 300_000),
            ("1.5h", 5_400_000),
            ("10m", 600_000),
            ("250ms", 250),
            ("1h0m0s", 3_600_000),
            ("0", 0),
        ];
        for (text, millis) in cases {
            assert_eq!(
                parse_go(text).unwrap(),
                StdDuration::from_millis(millis),
                "{text}"
            );
        }
        assert_eq!(parse_go("1500us").unwrap(), StdDuration::from_micros(1500));
    }

    #[test]
    fn rejects_what_go_rejects_and_negative_durations() {
        for text in ["", "1", "h", "1x", "1.2.3s", "-5s", "1h-2m"] {
            assert!(parse_go(text).is_err(), "{text} should fail");
        }
        let message = parse_go("10 minutes").unwrap_err().to_string();
        assert!(message.contains("\"10 minutes\""), "{message}");
    }

    #[test]
    fn formats_like_go() {
        let cases = [
            (StdDuration::from_secs(5400), "1h30m0s"),
            (StdDuration::from_secs(300), "5m0s"),
            (StdDuration::from_millis(1500), "1.5s"),
            (StdDuration::from_millis(300), "300ms"),
            (StdDuration::from_nanos(1), "1ns"),
            (StdDuration::from_micros(1500), "1.5ms"),
            (StdDuration::ZERO, "0s"),
        ];
        for (value, text) in cases {
            assert_eq!(format_go(value), text);
        }
    }

    #[test]
    fn none_means_zero_and_text_round_trips() {
        let none: Duration = serde_json::from_str("\"none\"").unwrap();
        assert!(none.is_none());
        let ten: Duration = serde_json::from_str("\"10m\"").unwrap();
        assert_eq!(ten.as_std(), StdDuration::from_secs(600));
        assert_eq!(serde_json::to_string(&ten).unwrap(), "\"10m\"");
        assert_eq!(Duration::from_std(StdDuration::ZERO).as_str(), "none");
        assert_eq!(
            Duration::from_std(StdDuration::from_secs(90)).as_str(),
            "1m30s"
        );
    }
}
