//! Sprig's date functions and the `time.Time` value they return: Go's reference-time layouts
//! (`2006-01-02T15:04:05Z07:00`) for formatting and parsing, time zones from the tz database,
//! Go's `Duration` printing and parsing, and `time.Time`'s own printing and methods.

use std::sync::OnceLock;
use std::time::Instant;

use jiff::Timestamp;
use jiff::civil::DateTime;
use jiff::tz::{Offset, TimeZone};

use super::{FuncError, FuncMap, args};
use crate::engine::value::format::quote;
use crate::engine::value::{MethodError, Object, Value};

/// Registers the date functions.
pub fn install(funcs: &mut FuncMap) {
    funcs.add("now", |a: &[Value]| {
        args::count(a, 0)?;
        Ok(Value::object(GoTime::now()))
    });
    funcs.add("date", |a: &[Value]| {
        args::count(a, 2)?;
        Ok(Value::from(date_in_zone(
            args::string(a, 0)?,
            &a[1],
            "Local",
        )))
    });
    for name in ["dateInZone", "date_in_zone"] {
        funcs.add(name, |a: &[Value]| {
            args::count(a, 3)?;
            let zone = args::string(a, 2)?;
            Ok(Value::from(date_in_zone(args::string(a, 0)?, &a[1], zone)))
        });
    }
    funcs.add("htmlDate", |a: &[Value]| {
        args::count(a, 1)?;
        Ok(Value::from(date_in_zone("2006-01-02", &a[0], "Local")))
    });
    funcs.add("htmlDateInZone", |a: &[Value]| {
        args::count(a, 2)?;
        let zone = args::string(a, 1)?;
        Ok(Value::from(date_in_zone("2006-01-02", &a[0], zone)))
    });
    for name in ["dateModify", "date_modify"] {
        funcs.add(name, |a: &[Value]| {
            args::count(a, 2)?;
            let t = time_arg(a, 1)?;
            Ok(Value::object(match parse_duration(args::string(a, 0)?) {
                Ok(d) => t.add(d),
                Err(_) => t.clone(),
            }))
        });
    }
    for name in ["mustDateModify", "must_date_modify"] {
        funcs.add(name, |a: &[Value]| {
            args::count(a, 2)?;
            let t = time_arg(a, 1)?;
            let d = parse_duration(args::string(a, 0)?).map_err(FuncError::failed)?;
            Ok(Value::object(t.add(d)))
        });
    }
    funcs.add("ago", |a: &[Value]| {
        args::count(a, 1)?;
        let t = time_of(&a[0], true).unwrap_or_else(GoTime::now);
        let since = since_nanos(&t);
        Ok(Value::from(format_duration(round_to_second(since))))
    });
    funcs.add("toDate", |a: &[Value]| {
        args::count(a, 2)?;
        let t = parse(args::string(a, 0)?, args::string(a, 1)?).unwrap_or_else(|_| GoTime::zero());
        Ok(Value::object(t))
    });
    funcs.add("mustToDate", |a: &[Value]| {
        args::count(a, 2)?;
        let t = parse(args::string(a, 0)?, args::string(a, 1)?).map_err(FuncError::failed)?;
        Ok(Value::object(t))
    });
    funcs.add("unixEpoch", |a: &[Value]| {
        args::count(a, 1)?;
        Ok(Value::from(time_arg(a, 0)?.unix().to_string()))
    });
    funcs.add("duration", |a: &[Value]| {
        args::count(a, 1)?;
        let seconds = match &a[0] {
            Value::String(s) => s.parse::<i64>().unwrap_or(0),
            Value::Int64(n) => *n,
            _ => 0,
        };
        Ok(Value::from(format_duration(
            i128::from(seconds).wrapping_mul(1_000_000_000) as i64,
        )))
    });
    funcs.add("durationRound", |a: &[Value]| {
        args::count(a, 1)?;
        let d = match &a[0] {
            Value::String(s) => parse_duration(s).unwrap_or(0),
            Value::Int64(n) => *n,
            other => time_of(other, false).map_or(0, |t| since_nanos(&t)),
        };
        Ok(Value::from(duration_round(d)))
    });
}

/// A Go `time.Time`: an instant, the location it is shown in, and (for `now`) the monotonic
/// clock reading Go prints as `m=+…`.
#[derive(Clone, Debug)]
pub struct GoTime {
    instant: Timestamp,
    location: Location,
    monotonic: Option<i64>,
}

/// Where a time is shown: Go's `*time.Location`.
#[derive(Clone, Debug)]
enum Location {
    Utc,
    Local(TimeZone),
    Zone(TimeZone),
    /// `time.FixedZone(name, offset)`, as parsing makes for unknown zones.
    Fixed(String, i32),
}

impl Location {
    /// The offset in seconds east of UTC and the zone abbreviation at `instant`.
    fn lookup(&self, instant: Timestamp) -> (i32, String) {
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
    fn load(name: &str) -> Option<Location> {
        match name {
            "" | "UTC" => Some(Location::Utc),
            "Local" => Some(local()),
            // Go refuses names that could walk out of the zone database.
            _ if name.contains("..") || name.starts_with('/') || name.contains('\\') => None,
            _ => TimeZone::get(name).ok().map(Location::Zone),
        }
    }
}

fn local() -> Location {
    Location::Local(TimeZone::system())
}

/// When the process started, for the monotonic readings Go prints.
fn process_start() -> Instant {
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

    fn unix_nano(&self) -> i128 {
        self.instant.as_nanosecond()
    }

    /// The same instant shown in `location`.
    fn in_location(&self, location: Location) -> GoTime {
        GoTime {
            location,
            ..self.clone()
        }
    }

    /// `t.Add(d)` with `d` in nanoseconds.
    fn add(&self, nanos: i64) -> GoTime {
        let sum = self.instant.as_nanosecond() + i128::from(nanos);
        GoTime {
            instant: Timestamp::from_nanosecond(sum).unwrap_or(self.instant),
            location: self.location.clone(),
            monotonic: self.monotonic.map(|m| m.saturating_add(nanos)),
        }
    }

    /// Go's `t.AddDate(years, months, days)`: the wall clock date moved, then normalised as
    /// `time.Date` does (October 32 is November 1), in the same location.
    fn add_date(&self, c: &Civil, years: i64, months: i64, days: i64) -> Option<GoTime> {
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
    fn civil(&self) -> Civil {
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
    fn go_string(&self) -> String {
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

fn wrong_method_arg(index: usize, expected: &str) -> MethodError {
    MethodError::ArgType {
        index,
        expected: expected.to_string(),
    }
}

/// A `time.Time` argument, or Go's type error for anything else.
fn time_arg(a: &[Value], index: usize) -> Result<GoTime, FuncError> {
    match a.get(index) {
        Some(value) => time_of(value, false).ok_or_else(|| wrong_time(index)),
        None => Err(wrong_time(index)),
    }
}

fn wrong_time(index: usize) -> FuncError {
    FuncError::ArgType {
        index,
        expected: "time.Time".to_string(),
    }
}

/// The time a Sprig date function takes from an `interface{}` argument: a `time.Time`, or
/// with `numbers`, Go `int`/`int64` Unix seconds.
fn time_of(value: &Value, numbers: bool) -> Option<GoTime> {
    match value {
        Value::Object(o) => o
            .as_any()
            .and_then(|any| any.downcast_ref::<GoTime>())
            .cloned(),
        Value::Int(n) | Value::Int64(n) if numbers => Some(GoTime::from_unix(*n)),
        _ => None,
    }
}

/// Sprig's `dateInZone`: times as they are, Go integers as Unix seconds, anything else (a
/// `float64` from values included) as the current time; an unknown zone is UTC.
fn date_in_zone(layout: &str, date: &Value, zone: &str) -> String {
    let t = time_of(date, true).unwrap_or_else(GoTime::now);
    let location = Location::load(zone).unwrap_or(Location::Utc);
    t.in_location(location).format(layout)
}

fn since_nanos(t: &GoTime) -> i64 {
    let diff = Timestamp::now().as_nanosecond() - t.instant.as_nanosecond();
    diff.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

/// Go's `Duration.Round(time.Second)`.
fn round_to_second(d: i64) -> i64 {
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

/// Sprig's `durationRound`: the largest whole unit (years of 365 days, months of 30).
fn duration_round(d: i64) -> String {
    const HOUR: u64 = 3_600_000_000_000;
    let u = d.unsigned_abs();
    let units = [
        (HOUR * 24 * 365, "y"),
        (HOUR * 24 * 30, "mo"),
        (HOUR * 24, "d"),
        (HOUR, "h"),
        (60_000_000_000, "m"),
        (1_000_000_000, "s"),
    ];
    for (size, name) in units {
        if u > size {
            return format!("{}{name}", u / size);
        }
    }
    "0s".to_string()
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
fn fraction(v: u64, scale: u64) -> String {
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

const LONG_MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

const LONG_DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

/// The wall clock fields of a time in its location.
struct Civil {
    year: i64,
    month: usize,
    day: i64,
    hour: i64,
    minute: i64,
    second: i64,
    nanos: i64,
    weekday: usize,
    yday: i64,
    offset: i32,
    zone: String,
}

/// One element of a Go layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Std {
    LongMonth,
    Month,
    NumMonth,
    ZeroMonth,
    LongWeekDay,
    WeekDay,
    Day,
    UnderDay,
    ZeroDay,
    UnderYearDay,
    ZeroYearDay,
    Hour,
    Hour12,
    ZeroHour12,
    Minute,
    ZeroMinute,
    Second,
    ZeroSecond,
    LongYear,
    Year,
    Pm,
    PmLower,
    Tz,
    /// A numeric zone: `Z` first for ISO 8601 (UTC printed as `Z`), colons, minutes, seconds.
    NumTz {
        iso: bool,
        colon: bool,
        minutes: bool,
        seconds: bool,
    },
    /// Fractional seconds: separator, digit count, trailing zeros trimmed (`.999`).
    Frac {
        sep: char,
        digits: usize,
        trim: bool,
    },
}

/// Go's `nextStdChunk`: the literal text before the next element, the element, the rest.
fn next_chunk(layout: &str) -> (&str, Option<(Std, usize)>) {
    let b = layout.as_bytes();
    let starts = |i: usize, s: &str| layout[i..].starts_with(s);
    let lower_after = |i: usize| b.get(i).is_some_and(u8::is_ascii_lowercase);
    for i in 0..b.len() {
        let found = match b[i] {
            b'J' if starts(i, "January") => Some((Std::LongMonth, 7)),
            b'J' if starts(i, "Jan") && !lower_after(i + 3) => Some((Std::Month, 3)),
            b'M' if starts(i, "Monday") => Some((Std::LongWeekDay, 6)),
            b'M' if starts(i, "Mon") && !lower_after(i + 3) => Some((Std::WeekDay, 3)),
            b'M' if starts(i, "MST") => Some((Std::Tz, 3)),
            b'0' if b.get(i + 1).is_some_and(|c| (b'1'..=b'6').contains(c)) => {
                let std = [
                    Std::ZeroMonth,
                    Std::ZeroDay,
                    Std::ZeroHour12,
                    Std::ZeroMinute,
                    Std::ZeroSecond,
                    Std::Year,
                ][usize::from(b[i + 1] - b'1')];
                Some((std, 2))
            }
            b'0' if starts(i, "002") => Some((Std::ZeroYearDay, 3)),
            b'1' if starts(i, "15") => Some((Std::Hour, 2)),
            b'1' => Some((Std::NumMonth, 1)),
            b'2' if starts(i, "2006") => Some((Std::LongYear, 4)),
            b'2' => Some((Std::Day, 1)),
            b'_' if starts(i, "_2006") => {
                // A literal `_` before the year.
                return (&layout[..=i], Some((Std::LongYear, 4)));
            }
            b'_' if starts(i, "_2") => Some((Std::UnderDay, 2)),
            b'_' if starts(i, "__2") => Some((Std::UnderYearDay, 3)),
            b'3' => Some((Std::Hour12, 1)),
            b'4' => Some((Std::Minute, 1)),
            b'5' => Some((Std::Second, 1)),
            b'P' if starts(i, "PM") => Some((Std::Pm, 2)),
            b'p' if starts(i, "pm") => Some((Std::PmLower, 2)),
            b'-' | b'Z' => zone_chunk(&layout[i..]),
            b'.' | b',' if matches!(b.get(i + 1), Some(b'0' | b'9')) => {
                let digit = b[i + 1];
                let mut j = i + 1;
                while b.get(j) == Some(&digit) {
                    j += 1;
                }
                if b.get(j).is_some_and(u8::is_ascii_digit) {
                    None
                } else {
                    let std = Std::Frac {
                        sep: char::from(b[i]),
                        digits: j - i - 1,
                        trim: digit == b'9',
                    };
                    Some((std, j - i))
                }
            }
            _ => None,
        };
        if let Some((std, len)) = found {
            return (&layout[..i], Some((std, len)));
        }
    }
    (layout, None)
}

fn zone_chunk(s: &str) -> Option<(Std, usize)> {
    let iso = s.starts_with('Z');
    let body = &s[1..];
    let tz = |colon, minutes, seconds| Std::NumTz {
        iso,
        colon,
        minutes,
        seconds,
    };
    for (pattern, std) in [
        ("070000", tz(false, true, true)),
        ("07:00:00", tz(true, true, true)),
        ("0700", tz(false, true, false)),
        ("07:00", tz(true, true, false)),
        ("07", tz(false, false, false)),
    ] {
        if body.starts_with(pattern) {
            return Some((std, pattern.len() + 1));
        }
    }
    None
}

fn pad(out: &mut String, v: i64, width: usize) {
    if v < 0 {
        out.push('-');
    }
    out.push_str(&format!("{:0width$}", v.unsigned_abs()));
}

/// Go's `Time.Format`.
fn format(c: &Civil, layout: &str) -> String {
    let mut out = String::new();
    let mut rest = layout;
    loop {
        let (prefix, chunk) = next_chunk(rest);
        out.push_str(prefix);
        let Some((std, len)) = chunk else {
            return out;
        };
        rest = &rest[prefix.len() + len..];
        match std {
            Std::Year => pad(&mut out, c.year.rem_euclid(100), 2),
            Std::LongYear => pad(&mut out, c.year, 4),
            Std::Month => out.push_str(&LONG_MONTHS[c.month - 1][..3]),
            Std::LongMonth => out.push_str(LONG_MONTHS[c.month - 1]),
            Std::NumMonth => out.push_str(&c.month.to_string()),
            Std::ZeroMonth => pad(&mut out, c.month as i64, 2),
            Std::WeekDay => out.push_str(&LONG_DAYS[c.weekday][..3]),
            Std::LongWeekDay => out.push_str(LONG_DAYS[c.weekday]),
            Std::Day => out.push_str(&c.day.to_string()),
            Std::UnderDay => out.push_str(&format!("{:>2}", c.day)),
            Std::ZeroDay => pad(&mut out, c.day, 2),
            Std::UnderYearDay => out.push_str(&format!("{:>3}", c.yday)),
            Std::ZeroYearDay => pad(&mut out, c.yday, 3),
            Std::Hour => pad(&mut out, c.hour, 2),
            Std::Hour12 | Std::ZeroHour12 => {
                let h = match c.hour % 12 {
                    0 => 12,
                    h => h,
                };
                if std == Std::Hour12 {
                    out.push_str(&h.to_string());
                } else {
                    pad(&mut out, h, 2);
                }
            }
            Std::Minute => out.push_str(&c.minute.to_string()),
            Std::ZeroMinute => pad(&mut out, c.minute, 2),
            Std::Second => out.push_str(&c.second.to_string()),
            Std::ZeroSecond => pad(&mut out, c.second, 2),
            Std::Pm => out.push_str(if c.hour >= 12 { "PM" } else { "AM" }),
            Std::PmLower => out.push_str(if c.hour >= 12 { "pm" } else { "am" }),
            Std::NumTz {
                iso,
                colon,
                minutes,
                seconds,
            } => {
                if iso && c.offset == 0 {
                    out.push('Z');
                    continue;
                }
                let zone = c.offset / 60;
                out.push(if zone < 0 { '-' } else { '+' });
                let (zone, abs) = (zone.abs(), c.offset.abs());
                pad(&mut out, i64::from(zone / 60), 2);
                if colon {
                    out.push(':');
                }
                if minutes {
                    pad(&mut out, i64::from(zone % 60), 2);
                }
                if seconds {
                    if colon {
                        out.push(':');
                    }
                    pad(&mut out, i64::from(abs % 60), 2);
                }
            }
            Std::Tz => {
                if !c.zone.is_empty() {
                    out.push_str(&c.zone);
                    continue;
                }
                let zone = c.offset / 60;
                out.push(if zone < 0 { '-' } else { '+' });
                pad(&mut out, i64::from(zone.abs() / 60), 2);
                pad(&mut out, i64::from(zone.abs() % 60), 2);
            }
            Std::Frac { sep, digits, trim } => {
                if trim && (digits == 0 || c.nanos == 0) {
                    continue;
                }
                let all = format!("{:09}", c.nanos);
                let mut frac = all[..digits.min(9)].to_string();
                if trim {
                    frac = frac.trim_end_matches('0').to_string();
                    if frac.is_empty() {
                        continue;
                    }
                }
                out.push(sep);
                out.push_str(&frac);
            }
        }
    }
}

/// Go's `time.ParseInLocation(layout, value, time.Local)`, with Go's error messages.
pub fn parse(layout: &str, value: &str) -> Result<GoTime, String> {
    parse_in(layout, value, local())
}

/// Go's `time.Parse(layout, value)`: like [`parse`], with UTC where the value names no zone.
pub fn parse_utc(layout: &str, value: &str) -> Result<GoTime, String> {
    parse_in(layout, value, Location::Utc)
}

/// Parsed fields before they become a time.
struct Fields {
    year: i64,
    month: i64,
    day: i64,
    yday: i64,
    hour: i64,
    minute: i64,
    second: i64,
    nanos: i64,
    pm: Option<bool>,
    utc: bool,
    offset: Option<i32>,
    zone_name: String,
}

fn parse_in(layout: &str, value: &str, location: Location) -> Result<GoTime, String> {
    let original = value;
    let bad = |value_elem: &str, layout_elem: &str| {
        format!(
            "parsing time {} as {}: cannot parse {} as {}",
            quote(original),
            quote(layout),
            quote(value_elem),
            quote(layout_elem)
        )
    };
    let range = |what: &str| format!("parsing time {}: {what} out of range", quote(original));
    let mut f = Fields {
        year: 1,
        month: -1,
        day: -1,
        yday: -1,
        hour: 0,
        minute: 0,
        second: 0,
        nanos: 0,
        pm: None,
        utc: false,
        offset: None,
        zone_name: String::new(),
    };
    let mut rest_layout = layout;
    let mut v = value;
    loop {
        let (prefix, chunk) = next_chunk(rest_layout);
        let elem_layout = match chunk {
            Some((_, len)) => &rest_layout[prefix.len()..prefix.len() + len],
            None => "",
        };
        v = skip(v, prefix).map_err(|at| bad(at, prefix))?;
        let Some((std, len)) = chunk else {
            if !v.is_empty() {
                return Err(format!(
                    "parsing time {}: extra text: {}",
                    quote(original),
                    quote(v)
                ));
            }
            break;
        };
        rest_layout = &rest_layout[prefix.len() + len..];
        let before = v;
        let fail = |_| bad(before, elem_layout);
        match std {
            Std::Year => {
                let (n, r) = fixed_digits(v, 2).ok_or(()).map_err(fail)?;
                f.year = if n >= 69 { n + 1900 } else { n + 2000 };
                v = r;
            }
            Std::LongYear => {
                let (n, r) = fixed_digits(v, 4).ok_or(()).map_err(fail)?;
                f.year = n;
                v = r;
            }
            Std::Month | Std::LongMonth => {
                let (i, r) = lookup_name(v, &LONG_MONTHS, std == Std::Month)
                    .ok_or(())
                    .map_err(fail)?;
                f.month = i as i64 + 1;
                v = r;
            }
            Std::WeekDay | Std::LongWeekDay => {
                let (_, r) = lookup_name(v, &LONG_DAYS, std == Std::WeekDay)
                    .ok_or(())
                    .map_err(fail)?;
                v = r;
            }
            Std::NumMonth | Std::ZeroMonth => {
                let (n, r) = number(v, std == Std::ZeroMonth).ok_or(()).map_err(fail)?;
                if !(1..=12).contains(&n) {
                    return Err(range("month"));
                }
                f.month = n;
                v = r;
            }
            Std::Day | Std::UnderDay | Std::ZeroDay => {
                if std == Std::UnderDay {
                    v = v.strip_prefix(' ').unwrap_or(v);
                }
                let (n, r) = number(v, std == Std::ZeroDay).ok_or(()).map_err(fail)?;
                f.day = n;
                v = r;
            }
            Std::UnderYearDay | Std::ZeroYearDay => {
                let mut s = v;
                if std == Std::UnderYearDay {
                    s = s.trim_start_matches(' ');
                }
                let (n, r) = number3(s, std == Std::ZeroYearDay)
                    .ok_or(())
                    .map_err(fail)?;
                f.yday = n;
                v = r;
            }
            Std::Hour => {
                let (n, r) = number(v, false).ok_or(()).map_err(fail)?;
                if !(0..24).contains(&n) {
                    return Err(range("hour"));
                }
                f.hour = n;
                v = r;
            }
            Std::Hour12 | Std::ZeroHour12 => {
                let (n, r) = number(v, std == Std::ZeroHour12).ok_or(()).map_err(fail)?;
                if !(0..=12).contains(&n) {
                    return Err(range("hour"));
                }
                f.hour = n;
                v = r;
            }
            Std::Minute | Std::ZeroMinute => {
                let (n, r) = number(v, std == Std::ZeroMinute).ok_or(()).map_err(fail)?;
                if !(0..60).contains(&n) {
                    return Err(range("minute"));
                }
                f.minute = n;
                v = r;
            }
            Std::Second | Std::ZeroSecond => {
                let (n, r) = number(v, std == Std::ZeroSecond).ok_or(()).map_err(fail)?;
                if !(0..60).contains(&n) {
                    return Err(range("second"));
                }
                f.second = n;
                v = r;
                // A fraction in the value that the layout does not mention is still read.
                let next_is_frac =
                    matches!(next_chunk(rest_layout), ("", Some((Std::Frac { .. }, _))));
                if !next_is_frac
                    && v.len() >= 2
                    && (v.starts_with('.') || v.starts_with(','))
                    && v.as_bytes()[1].is_ascii_digit()
                {
                    let digits = v[1..].bytes().take_while(u8::is_ascii_digit).count();
                    f.nanos = nanos_of(&v[1..=digits]);
                    v = &v[1 + digits..];
                }
            }
            Std::Pm | Std::PmLower => {
                let (am, pm) = if std == Std::Pm {
                    ("AM", "PM")
                } else {
                    ("am", "pm")
                };
                if let Some(r) = v.strip_prefix(pm) {
                    f.pm = Some(true);
                    v = r;
                } else if let Some(r) = v.strip_prefix(am) {
                    f.pm = Some(false);
                    v = r;
                } else {
                    return Err(bad(before, elem_layout));
                }
            }
            Std::NumTz {
                iso,
                colon,
                minutes,
                seconds,
            } => {
                if iso && v.starts_with('Z') {
                    v = &v[1..];
                    f.utc = true;
                    continue;
                }
                let (offset, r) = zone_offset(v, colon, minutes, seconds)
                    .ok_or(())
                    .map_err(fail)?;
                f.offset = Some(offset);
                v = r;
            }
            Std::Tz => {
                if let Some(r) = v
                    .strip_prefix("UTC")
                    .filter(|r| !r.starts_with(|c: char| c.is_ascii_uppercase()))
                {
                    f.utc = true;
                    v = r;
                    continue;
                }
                let len = zone_name_len(v).ok_or(()).map_err(fail)?;
                f.zone_name = v[..len].to_string();
                v = &v[len..];
            }
            Std::Frac { digits, trim, .. } => {
                if trim {
                    if v.len() >= 2
                        && (v.starts_with('.') || v.starts_with(','))
                        && v.as_bytes()[1].is_ascii_digit()
                    {
                        let n = v[1..].bytes().take_while(u8::is_ascii_digit).count();
                        f.nanos = nanos_of(&v[1..=n]);
                        v = &v[1 + n..];
                    }
                } else {
                    let ok = v.len() > digits
                        && (v.starts_with('.') || v.starts_with(','))
                        && v.as_bytes()[1..=digits].iter().all(u8::is_ascii_digit);
                    if !ok {
                        return Err(bad(before, elem_layout));
                    }
                    f.nanos = nanos_of(&v[1..=digits]);
                    v = &v[1 + digits..];
                }
            }
        }
    }
    build(f, location, &range)
}

fn build(
    mut f: Fields,
    location: Location,
    range: &dyn Fn(&str) -> String,
) -> Result<GoTime, String> {
    match f.pm {
        Some(true) if f.hour < 12 => f.hour += 12,
        Some(false) if f.hour == 12 => f.hour = 0,
        _ => {}
    }
    if f.yday >= 0 {
        let leap = f.year % 4 == 0 && (f.year % 100 != 0 || f.year % 400 == 0);
        let days = if leap { 366 } else { 365 };
        if f.yday < 1 || f.yday > days {
            return Err(range("day-of-year"));
        }
        let date = jiff::civil::Date::new(i16::try_from(f.year).map_err(|_| range("year"))?, 1, 1)
            .ok()
            .and_then(|d| {
                let span = jiff::Span::new().try_days(f.yday - 1).ok()?;
                d.checked_add(span).ok()
            })
            .ok_or_else(|| range("day-of-year"))?;
        if f.month >= 0 && f.month != i64::from(date.month())
            || f.day >= 0 && f.day != i64::from(date.day())
        {
            return Err(range("day-of-year"));
        }
        f.month = i64::from(date.month());
        f.day = i64::from(date.day());
    }
    if f.month < 0 {
        f.month = 1;
    }
    if f.day < 0 {
        f.day = 1;
    }
    let year = i16::try_from(f.year).map_err(|_| range("year"))?;
    let dt = DateTime::new(
        year,
        f.month as i8,
        i8::try_from(f.day).unwrap_or(0),
        f.hour as i8,
        f.minute as i8,
        f.second as i8,
        f.nanos as i32,
    )
    .map_err(|_| range("day"))?;
    let at_offset = |offset: i32| {
        Offset::from_seconds(offset)
            .ok()
            .and_then(|o| o.to_timestamp(dt).ok())
            .ok_or_else(|| range("year"))
    };
    let time = |instant, location| GoTime {
        instant,
        location,
        monotonic: None,
    };
    if f.utc {
        return Ok(time(at_offset(0)?, Location::Utc));
    }
    if let Some(offset) = f.offset {
        let instant = at_offset(offset)?;
        let (local_offset, local_name) = location.lookup(instant);
        if local_offset == offset && (f.zone_name.is_empty() || f.zone_name == local_name) {
            return Ok(time(instant, location));
        }
        return Ok(time(instant, Location::Fixed(f.zone_name, offset)));
    }
    if !f.zone_name.is_empty() {
        let guess = at_offset(0)?;
        // The local zone's offset if it uses this abbreviation around then.
        let (local_offset, local_name) = location.lookup(guess);
        if local_name == f.zone_name {
            return Ok(time(at_offset(local_offset)?, location));
        }
        let mut offset = 0;
        if f.zone_name.len() > 3 && f.zone_name.starts_with("GMT") {
            offset = f.zone_name[3..]
                .parse::<i32>()
                .ok()
                .and_then(|h| h.checked_mul(3600))
                .unwrap_or(0);
        }
        return Ok(time(
            at_offset(offset)?,
            Location::Fixed(f.zone_name, offset),
        ));
    }
    let instant = match &location {
        Location::Utc => at_offset(0)?,
        Location::Fixed(_, offset) => at_offset(*offset)?,
        Location::Local(tz) | Location::Zone(tz) => tz
            .to_ambiguous_timestamp(dt)
            .compatible()
            .map_err(|_| range("year"))?,
    };
    Ok(time(instant, location))
}

/// Go's `skip`: the literal layout text must appear in the value; a space in the layout
/// matches any run of spaces. On a mismatch, the value text that failed.
fn skip<'a>(mut value: &'a str, mut prefix: &str) -> Result<&'a str, &'a str> {
    while let Some(p) = prefix.chars().next() {
        if p == ' ' {
            if !value.is_empty() && !value.starts_with(' ') {
                return Err(value);
            }
            prefix = prefix.trim_start_matches(' ');
            value = value.trim_start_matches(' ');
            continue;
        }
        match value.strip_prefix(p) {
            Some(r) => value = r,
            None => return Err(value),
        }
        prefix = &prefix[p.len_utf8()..];
    }
    Ok(value)
}

/// Exactly `n` digits.
fn fixed_digits(v: &str, n: usize) -> Option<(i64, &str)> {
    if v.len() < n || !v.as_bytes()[..n].iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some((v[..n].parse().ok()?, &v[n..]))
}

/// Go's `getnum`: one or two digits (exactly two when `fixed`).
fn number(v: &str, fixed: bool) -> Option<(i64, &str)> {
    let b = v.as_bytes();
    if !b.first().is_some_and(u8::is_ascii_digit) {
        return None;
    }
    if !b.get(1).is_some_and(u8::is_ascii_digit) {
        if fixed {
            return None;
        }
        return Some((i64::from(b[0] - b'0'), &v[1..]));
    }
    Some((
        i64::from(b[0] - b'0') * 10 + i64::from(b[1] - b'0'),
        &v[2..],
    ))
}

/// Go's `getnum3`: one to three digits (exactly three when `fixed`).
fn number3(v: &str, fixed: bool) -> Option<(i64, &str)> {
    let n = v.bytes().take(3).take_while(u8::is_ascii_digit).count();
    if n == 0 || fixed && n != 3 {
        return None;
    }
    Some((v[..n].parse().ok()?, &v[n..]))
}

/// A month or day name, full or its first three letters, matched without regard to case.
fn lookup_name<'a>(v: &'a str, names: &[&str], short: bool) -> Option<(usize, &'a str)> {
    names.iter().enumerate().find_map(|(i, name)| {
        let name = if short { &name[..3] } else { name };
        let head = v.get(..name.len())?;
        head.eq_ignore_ascii_case(name)
            .then(|| (i, &v[name.len()..]))
    })
}

/// A numeric zone offset `±hh[[:]mm[[:]ss]]` in seconds.
fn zone_offset(v: &str, colon: bool, minutes: bool, seconds: bool) -> Option<(i32, &str)> {
    let sign = match v.as_bytes().first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let mut rest = &v[1..];
    let field = |rest: &mut &str, sep: bool| -> Option<i32> {
        if sep {
            *rest = rest.strip_prefix(':')?;
        }
        let (n, r) = fixed_digits(rest, 2)?;
        *rest = r;
        i32::try_from(n).ok()
    };
    let hh = field(&mut rest, false)?;
    let mm = if minutes { field(&mut rest, colon)? } else { 0 };
    let ss = if seconds { field(&mut rest, colon)? } else { 0 };
    if hh > 24 || mm > 60 || ss > 60 {
        return None;
    }
    Some((sign * (hh * 3600 + mm * 60 + ss), rest))
}

/// Go's `parseTimeZone`: the length of a zone abbreviation at the start of `v`.
fn zone_name_len(v: &str) -> Option<usize> {
    let b = v.as_bytes();
    if b.len() < 3 {
        return None;
    }
    if v.starts_with("ChST") || v.starts_with("MeST") {
        return Some(4);
    }
    if v.starts_with("GMT") {
        let rest = &b[3..];
        let sign_len = match rest.first() {
            Some(b'+' | b'-') => {
                let digits = rest[1..].iter().take_while(|c| c.is_ascii_digit()).count();
                if digits == 0 { 0 } else { 1 + digits }
            }
            _ => 0,
        };
        return Some(3 + sign_len);
    }
    let upper = b.iter().take_while(|c| c.is_ascii_uppercase()).count();
    match upper {
        0..=2 => None,
        3..=5 => Some(upper),
        _ => None,
    }
}

/// Nanoseconds from fraction digits (extra digits beyond nine are dropped).
fn nanos_of(digits: &str) -> i64 {
    let mut n: i64 = 0;
    for (i, d) in digits.bytes().enumerate() {
        if i < 9 {
            n = n * 10 + i64::from(d - b'0');
        }
    }
    for _ in digits.len()..9 {
        n *= 10;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(layout: &str, value: &str) -> GoTime {
        parse_in(layout, value, Location::Utc).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn formats_with_go_layouts() {
        let t = utc("2006-01-02T15:04:05Z07:00", "2019-06-13T20:39:39Z");
        assert_eq!(t.format("02/01/2006"), "13/06/2019");
        assert_eq!(
            t.format("Mon Jan _2 15:04:05 MST 2006"),
            "Thu Jun 13 20:39:39 UTC 2019"
        );
        assert_eq!(t.format("3:04PM"), "8:39PM");
        assert_eq!(
            t.format("2006-01-02T15:04:05Z07:00"),
            "2019-06-13T20:39:39Z"
        );
        assert_eq!(
            t.format("Monday, January 2 06 .000 002"),
            "Thursday, June 13 19 .000 164"
        );
        assert_eq!(t.unix(), 1_560_458_379);
        let zone = t.in_location(Location::load("America/New_York").unwrap_or(Location::Utc));
        assert_eq!(
            zone.format("15:04 -0700 MST -07:00:00"),
            "16:39 -0400 EDT -04:00:00"
        );
    }

    #[test]
    fn parses_with_go_layouts() {
        let t = utc(
            "2006-01-02 15:04:05.999999999 -0700 MST",
            "2019-06-13 20:39:39.5 +0200 CEST",
        );
        assert_eq!(t.go_string(), "2019-06-13 20:39:39.5 +0200 CEST");
        assert_eq!(t.unix(), 1_560_451_179);
        let t = utc("02 Jan 06 15:04 MST", "13 Jun 19 20:39 GMT");
        assert_eq!(t.go_string(), "2019-06-13 20:39:00 +0000 GMT");
        assert_eq!(
            parse_in("2006-01-02", "2017-13-01", Location::Utc)
                .err()
                .as_deref(),
            Some("parsing time \"2017-13-01\": month out of range")
        );
        assert_eq!(
            parse_in("2006-01-02", "2017-1-01", Location::Utc)
                .err()
                .as_deref(),
            Some("parsing time \"2017-1-01\" as \"2006-01-02\": cannot parse \"1-01\" as \"01\"")
        );
        assert_eq!(
            parse_in("2006", "2017x", Location::Utc).err().as_deref(),
            Some("parsing time \"2017x\": extra text: \"x\"")
        );
        assert_eq!(GoTime::zero().go_string(), "0001-01-01 00:00:00 +0000 UTC");
    }

    #[test]
    fn durations_print_and_parse_like_go() {
        assert_eq!(format_duration(61_000_000_000), "1m1s");
        assert_eq!(format_duration(3_600_000_000_000), "1h0m0s");
        assert_eq!(format_duration(1_500_000), "1.5ms");
        assert_eq!(format_duration(-2_000), "-2µs");
        assert_eq!(format_duration(0), "0s");
        assert_eq!(format_duration(i64::MIN), "-2562047h47m16.854775808s");
        assert_eq!(parse_duration("1h30m"), Ok(5_400_000_000_000));
        assert_eq!(parse_duration("-1.5s"), Ok(-1_500_000_000));
        assert_eq!(
            parse_duration("1f"),
            Err("time: unknown unit \"f\" in duration \"1f\"".to_string())
        );
        assert_eq!(
            parse_duration("1"),
            Err("time: missing unit in duration \"1\"".to_string())
        );
        assert_eq!(
            parse_duration(""),
            Err("time: invalid duration \"\"".to_string())
        );
        assert_eq!(
            duration_round(parse_duration("2400h5s").unwrap_or(0)),
            "3mo"
        );
        assert_eq!(round_to_second(1_500_000_000), 2_000_000_000);
    }

    #[test]
    fn hostile_values_are_errors_not_panics() {
        for (layout, value) in [
            ("05.000", "01.é12"),
            ("05.000", "01.1"),
            ("MST", "GMT+999999"),
            ("2006 MST", "2024 GMT+99"),
            ("Jan", "Ja"),
            ("_2 __2 002", "é"),
            ("15:04:05.999999999", "23:59:59.99999999999999"),
        ] {
            let _ = parse_in(layout, value, Location::Utc);
        }
        assert!(Location::load("../../etc/passwd").is_none());
        assert!(Location::load("Europe/Berlin").is_some());
        assert_eq!(parse_duration("9999999999999h").ok(), None);
    }

    #[test]
    fn methods_move_and_compare_times() {
        let t = utc("2006-01-02", "2024-01-31");
        let call = |t: &GoTime, name: &str, args: &[Value]| {
            t.call_method(name, args).map(|v| v.to_go_string())
        };
        assert_eq!(
            call(
                &t,
                "AddDate",
                &[Value::Int(0), Value::Int(1), Value::Int(0)]
            )
            .ok()
            .as_deref(),
            Some("2024-03-02 00:00:00 +0000 UTC")
        );
        assert_eq!(
            call(
                &t,
                "AddDate",
                &[Value::Int(-1), Value::Int(-13), Value::Int(1)]
            )
            .ok()
            .as_deref(),
            Some("2022-01-01 00:00:00 +0000 UTC")
        );
        assert_eq!(
            call(&t, "Add", &[Value::Int64(90_000_000_000)])
                .ok()
                .as_deref(),
            Some("2024-01-31 00:01:30 +0000 UTC")
        );
        let later = Value::object(t.add(1));
        assert_eq!(
            call(&t, "Before", std::slice::from_ref(&later))
                .ok()
                .as_deref(),
            Some("true")
        );
        assert_eq!(
            call(&t, "After", std::slice::from_ref(&later))
                .ok()
                .as_deref(),
            Some("false")
        );
        assert_eq!(
            call(&t, "Equal", &[Value::object(t.clone())])
                .ok()
                .as_deref(),
            Some("true")
        );
        assert!(
            call(
                &t,
                "AddDate",
                &[Value::Int(i64::MAX), Value::Int(0), Value::Int(0)]
            )
            .is_err()
        );
    }

    #[test]
    fn times_encode_as_go_json_does() {
        let t = utc(
            "2006-01-02 15:04:05.999 -0700",
            "2024-01-02 03:04:05.120 +0200",
        );
        assert_eq!(
            t.to_data(),
            Some(crate::formats::tree::Data::String(
                "2024-01-02T03:04:05.12+02:00".into()
            ))
        );
        assert_eq!(
            GoTime::zero().to_data(),
            Some(crate::formats::tree::Data::String(
                "0001-01-01T00:00:00Z".into()
            ))
        );
    }

    #[test]
    fn now_prints_a_monotonic_reading() {
        let printed = GoTime::now().go_string();
        let (wall, monotonic) = printed.split_once(" m=+").unwrap_or_default();
        assert!(
            parse_in("2006-01-02 15:04:05.999999999 -0700 MST", wall, local()).is_ok(),
            "{printed}"
        );
        let (secs, nanos) = monotonic.split_once('.').unwrap_or_default();
        assert!(
            secs.bytes().all(|b| b.is_ascii_digit()) && !secs.is_empty(),
            "{printed}"
        );
        assert_eq!(nanos.len(), 9, "{printed}");
    }
}
