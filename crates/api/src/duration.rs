//! Go duration strings (`1h30m`, `300ms`) as upstream Landscaper reads and writes them.

use std::fmt;
use std::time::Duration as StdDuration;

use landscaper_go_duration::ParseError;
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

/// Parses Go's `time.ParseDuration` syntax (`landscaper_go_duration::parse`); negative
/// durations are rejected because no Landscaper field has a meaning for them.
pub fn parse_go(text: &str) -> Result<StdDuration, DurationError> {
    let fail = |reason| DurationError {
        text: text.to_owned(),
        reason,
    };
    if text.strip_prefix('+').unwrap_or(text).starts_with('-') {
        return Err(fail("negative durations are not allowed"));
    }
    let nanos = landscaper_go_duration::parse(text).map_err(|e| {
        fail(match e {
            ParseError::Empty => "empty duration",
            ParseError::ExpectedNumber => "expected a number",
            ParseError::OutOfRange => "duration too large",
            ParseError::MissingUnit => "missing unit",
            ParseError::UnknownUnit(_) => "unknown unit",
        })
    })?;
    // Not negative: the sign was checked above.
    Ok(StdDuration::from_nanos(nanos.unsigned_abs()))
}

/// Formats like Go's `time.Duration.String()` (`1h30m0s`, `1.5s`, `300ms`, `0s`); a duration
/// beyond 2^64 ns (584 years) is written as that.
pub fn format_go(value: StdDuration) -> String {
    landscaper_go_duration::format_unsigned(u64::try_from(value.as_nanos()).unwrap_or(u64::MAX))
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
