//! Go's `time.Time` as templates hold it: an instant, the location it is shown in, its
//! printing and its methods.

use std::sync::OnceLock;
use std::time::Instant;

use jiff::Timestamp;
use jiff::civil::DateTime;
use jiff::tz::{Offset, TimeZone};

use super::layout::{Civil, LONG_DAYS, LONG_MONTHS, format};
use crate::engine::value::{MethodError, Object, Value};

/// A Go `time.Time`: an instant, the location it is shown in, and (for `now`) the monotonic
/// clock reading Go prints as `m=+…`.
#[derive(Clone, Debug)]
pub struct GoTime {
    pub(super) instant: Timestamp,
    pub(super) location: Location,
    pub(super) monotonic: Option<i64>,
}

/// Where a time is shown: Go's `*time.Location`.
#[derive(Clone, Debug)]
pub(super) enum Location {
    Utc,
    Local(TimeZone),
    Zone(TimeZone),
    /// `time.FixedZone(name, offset)`, as parsing makes for unknown zones.
    Fixed(String, i32),
}

impl Location {
    /// The offset in seconds east of UTC and the zone abbreviation at `instant`.
    pub(super) fn lookup(&self, instant: Timestamp) -> (i32, String) {
        match self {
            Location::Utc => (0, "UTC".to_string()),
            Location::Local(tz) | Location::Zone(tz) => {
                let info = tz.to_offset_info(instant);
                (info.offset().seconds(), info.abbreviation().to_string())
            }
            Location::Fixed(name, offset) => (*offset, name.clone()),
        }
    }

    /// Go's `time.LoadLocation`: "" and "UTC" are UTC, "Local" the system zone, anything else
    /// a tz database name.
    pub(super) fn load(name: &str) -> Option<Location> {
        match name {
            "" | "UTC" => Some(Location::Utc),
            "Local" => Some(local()),
            // Go refuses names that could walk out of the zone database.
            _ if name.contains("..") || name.starts_with('/') || name.contains('\\') => None,
            _ => TimeZone::get(name).ok().map(Location::Zone),
        }
    }
}

pub(super) fn local() -> Location {
    Location::Local(TimeZone::system())
}

/// When the process started, for the monotonic readings Go prints.
pub(super) fn process_start() -> Instant {
    static START: OnceLock<Instant> = OnceLock::new();
    *START.get_or_init(Instant::now)
}

impl GoTime {
    /// Go's `time.Now()` in the local zone.
    pub fn now() -> GoTime {
        let start = process_start();
        GoTime {
            instant: Timestamp::now(),
            location: local(),
            monotonic: Some(i64::try_from(start.elapsed().as_nanos()).unwrap_or(i64::MAX)),
        }
    }

    /// Go's zero `time.Time`: January 1, year 1, 00:00:00 UTC.
    pub fn zero() -> GoTime {
        let instant = DateTime::new(1, 1, 1, 0, 0, 0, 0)
            .ok()
            .and_then(|dt| Offset::UTC.to_timestamp(dt).ok())
            .unwrap_or(Timestamp::MIN);
        GoTime {
            instant,
            location: Location::Utc,
            monotonic: None,
        }
    }

    /// Go's `time.Unix(sec, 0)` in the local zone (clamped to the range the tz database has).
    pub fn from_unix(seconds: i64) -> GoTime {
        let instant = Timestamp::from_second(seconds).unwrap_or(if seconds < 0 {
            Timestamp::MIN
        } else {
            Timestamp::MAX
        });
        GoTime {
            instant,
            location: local(),
            monotonic: None,
        }
    }

    /// Seconds since the Unix epoch.
    pub fn unix(&self) -> i64 {
        self.instant.as_second()
    }

    pub(super) fn unix_nano(&self) -> i128 {
        self.instant.as_nanosecond()
    }

    /// The same instant shown in `location`.
    pub(super) fn in_location(&self, location: Location) -> GoTime {
        GoTime {
            location,
            ..self.clone()
        }
    }

    /// `t.Add(d)` with `d` in nanoseconds.
    pub(super) fn add(&self, nanos: i64) -> GoTime {
        let sum = self.instant.as_nanosecond() + i128::from(nanos);
        GoTime {
            instant: Timestamp::from_nanosecond(sum).unwrap_or(self.instant),
            location: self.location.clone(),
            monotonic: self.monotonic.map(|m| m.saturating_add(nanos)),
        }
    }

    /// Go's `t.AddDate(years, months, days)`: the wall clock date moved, then normalised as
    /// `time.Date` does (October 32 is November 1), in the same location.
    pub(super) fn add_date(&self, c: &Civil, years: i64, months: i64, days: i64) -> Option<GoTime> {
        let month0 = (c.month as i64 - 1).checked_add(months)?;
        let year = c
            .year
            .checked_add(years)?
            .checked_add(month0.div_euclid(12))?;
        let first = jiff::civil::Date::new(
            i16::try_from(year).ok()?,
            (month0.rem_euclid(12) + 1) as i8,
            1,
        )
        .ok()?;
        let day = first
            .checked_add(
                jiff::Span::new()
                    .try_days((c.day - 1).checked_add(days)?)
                    .ok()?,
            )
            .ok()?;
        let dt = day.to_datetime(
            jiff::civil::Time::new(c.hour as i8, c.minute as i8, c.second as i8, c.nanos as i32)
                .ok()?,
        );
        let instant = match &self.location {
            Location::Utc => Offset::UTC.to_timestamp(dt).ok()?,
            Location::Fixed(_, offset) => {
                Offset::from_seconds(*offset).ok()?.to_timestamp(dt).ok()?
            }
            Location::Local(tz) | Location::Zone(tz) => {
                tz.to_ambiguous_timestamp(dt).compatible().ok()?
            }
        };
        Some(GoTime {
            instant,
            location: self.location.clone(),
            monotonic: None,
        })
    }

    /// The wall clock fields in this time's location.
    pub(super) fn civil(&self) -> Civil {
        let (offset, zone) = self.location.lookup(self.instant);
        let dt = Offset::from_seconds(offset)
            .unwrap_or(Offset::UTC)
            .to_datetime(self.instant);
        Civil {
            year: i64::from(dt.year()),
            month: dt.month() as usize,
            day: i64::from(dt.day()),
            hour: i64::from(dt.hour()),
            minute: i64::from(dt.minute()),
            second: i64::from(dt.second()),
            nanos: i64::from(dt.subsec_nanosecond()),
            weekday: dt.weekday().to_sunday_zero_offset() as usize,
            yday: i64::from(dt.day_of_year()),
            offset,
            zone,
        }
    }

    /// Go's `t.Format(layout)`.
    pub fn format(&self, layout: &str) -> String {
        format(&self.civil(), layout)
    }

    /// Go's `t.String()`.
    pub(super) fn go_string(&self) -> String {
        let mut s = self.format("2006-01-02 15:04:05.999999999 -0700 MST");
        if let Some(m) = self.monotonic {
            let sign = if m < 0 { '-' } else { '+' };
            let m = m.unsigned_abs();
            s.push_str(&format!(
                " m={sign}{}.{:09}",
                m / 1_000_000_000,
                m % 1_000_000_000
            ));
        }
        s
    }
}

impl Object for GoTime {
    fn type_name(&self) -> String {
        "time.Time".to_string()
    }

    fn field(&self, _name: &str) -> Option<Value> {
        None
    }

    fn has_method(&self, name: &str) -> bool {
        matches!(
            name,
            "Format"
                | "String"
                | "Unix"
                | "UnixMilli"
                | "UnixNano"
                | "Year"
                | "Month"
                | "Day"
                | "Hour"
                | "Minute"
                | "Second"
                | "Nanosecond"
                | "YearDay"
                | "Weekday"
                | "UTC"
                | "Local"
                | "IsZero"
                | "Add"
                | "AddDate"
                | "Before"
                | "After"
                | "Equal"
        )
    }

    fn call_method(&self, name: &str, args: &[Value]) -> Result<Value, MethodError> {
        let want = match name {
            "Format" | "Add" | "Before" | "After" | "Equal" => 1,
            "AddDate" => 3,
            _ => 0,
        };
        if args.len() != want {
            return Err(MethodError::ArgCount {
                want,
                got: args.len(),
            });
        }
        let c = self.civil();
        Ok(match name {
            "Format" => match &args[0] {
                Value::String(layout) => Value::from(self.format(layout)),
                _ => {
                    return Err(MethodError::ArgType {
                        index: 0,
                        expected: "string".to_string(),
                    });
                }
            },
            "String" => Value::from(self.go_string()),
            "Unix" => Value::Int64(self.unix()),
            "UnixMilli" => Value::Int64((self.unix_nano() / 1_000_000) as i64),
            "UnixNano" => Value::Int64(self.unix_nano() as i64),
            "Year" => Value::Int(c.year),
            "Month" => Value::from(LONG_MONTHS[c.month - 1]),
            "Day" => Value::Int(c.day),
            "Hour" => Value::Int(c.hour),
            "Minute" => Value::Int(c.minute),
            "Second" => Value::Int(c.second),
            "Nanosecond" => Value::Int(c.nanos),
            "YearDay" => Value::Int(c.yday),
            "Weekday" => Value::from(LONG_DAYS[c.weekday]),
            "UTC" => Value::object(GoTime {
                monotonic: None,
                ..self.in_location(Location::Utc)
            }),
            "Local" => Value::object(GoTime {
                monotonic: None,
                ..self.in_location(local())
            }),
            "IsZero" => Value::Bool(self.instant == GoTime::zero().instant),
            "Add" => match &args[0] {
                Value::Int(d) | Value::Int64(d) => Value::object(self.add(*d)),
                _ => return Err(wrong_method_arg(0, "time.Duration")),
            },
            "AddDate" => {
                let mut n = [0i64; 3];
                for (i, arg) in args.iter().enumerate() {
                    n[i] = match arg {
                        Value::Int(v) => *v,
                        _ => return Err(wrong_method_arg(i, "int")),
                    };
                }
                let moved = self
                    .add_date(&c, n[0], n[1], n[2])
                    .ok_or_else(|| MethodError::Failed("time out of range".to_string()))?;
                Value::object(moved)
            }
            "Before" | "After" | "Equal" => {
                let other =
                    time_of(&args[0], false).ok_or_else(|| wrong_method_arg(0, "time.Time"))?;
                Value::Bool(match name {
                    "Before" => self.instant < other.instant,
                    "After" => self.instant > other.instant,
                    _ => self.instant == other.instant,
                })
            }
            _ => return Err(MethodError::NoSuchMethod),
        })
    }

    fn format(&self) -> String {
        self.go_string()
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }

    /// Go's `Time.MarshalJSON`: RFC 3339 with nanoseconds; years beyond 0–9999 cannot be
    /// encoded.
    fn to_data(&self) -> Option<crate::formats::tree::Data> {
        let year = self.civil().year;
        if !(0..=9999).contains(&year) {
            return None;
        }
        Some(crate::formats::tree::Data::String(
            self.format("2006-01-02T15:04:05.999999999Z07:00"),
        ))
    }
}

pub(super) fn wrong_method_arg(index: usize, expected: &str) -> MethodError {
    MethodError::ArgType {
        index,
        expected: expected.to_string(),
    }
}

/// The time a Sprig date function takes from an `interface{}` argument: a `time.Time`, or
/// with `numbers`, Go `int`/`int64` Unix seconds.
pub(super) fn time_of(value: &Value, numbers: bool) -> Option<GoTime> {
    match value {
        Value::Object(o) => o
            .as_any()
            .and_then(|any| any.downcast_ref::<GoTime>())
            .cloned(),
        Value::Int(n) | Value::Int64(n) if numbers => Some(GoTime::from_unix(*n)),
        _ => None,
    }
}
