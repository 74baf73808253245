//! Go's reference-time layouts (`2006-01-02T15:04:05Z07:00`): formatting and parsing.

use std::ops::RangeInclusive;

use jiff::civil::DateTime;
use jiff::tz::Offset;

use super::time::{GoTime, Location, local};
use crate::engine::value::format::quote;

pub(super) const LONG_MONTHS: [&str; 12] = [
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

pub(super) const LONG_DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

/// The wall clock fields of a time in its location.
pub(super) struct Civil {
    pub(super) year: i64,
    pub(super) month: usize,
    pub(super) day: i64,
    pub(super) hour: i64,
    pub(super) minute: i64,
    pub(super) second: i64,
    pub(super) nanos: i64,
    pub(super) weekday: usize,
    pub(super) yday: i64,
    pub(super) offset: i32,
    pub(super) zone: String,
}

/// One element of a Go layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Std {
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
pub(super) fn next_chunk(layout: &str) -> (&str, Option<(Std, usize)>) {
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

pub(super) fn zone_chunk(s: &str) -> Option<(Std, usize)> {
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

pub(super) fn pad(out: &mut String, v: i64, width: usize) {
    if v < 0 {
        out.push('-');
    }
    out.push_str(&format!("{:0width$}", v.unsigned_abs()));
}

/// Go's `Time.Format`.
pub(super) fn format(c: &Civil, layout: &str) -> String {
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
pub(super) struct Fields {
    pub(super) year: i64,
    pub(super) month: i64,
    pub(super) day: i64,
    pub(super) yday: i64,
    pub(super) hour: i64,
    pub(super) minute: i64,
    pub(super) second: i64,
    pub(super) nanos: i64,
    pub(super) pm: Option<bool>,
    pub(super) utc: bool,
    pub(super) offset: Option<i32>,
    pub(super) zone_name: String,
}

pub(super) fn parse_in(layout: &str, value: &str, location: Location) -> Result<GoTime, String> {
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
        // Go's `getnum` and the range check after it.
        let number_within =
            |fixed: bool, valid: RangeInclusive<i64>, what: &str| match number(before, fixed) {
                None => Err(bad(before, elem_layout)),
                Some((n, _)) if !valid.contains(&n) => Err(range(what)),
                Some(read) => Ok(read),
            };
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
                (f.month, v) = number_within(std == Std::ZeroMonth, 1..=12, "month")?;
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
                (f.hour, v) = number_within(false, 0..=23, "hour")?;
            }
            Std::Hour12 | Std::ZeroHour12 => {
                (f.hour, v) = number_within(std == Std::ZeroHour12, 0..=12, "hour")?;
            }
            Std::Minute | Std::ZeroMinute => {
                (f.minute, v) = number_within(std == Std::ZeroMinute, 0..=59, "minute")?;
            }
            Std::Second | Std::ZeroSecond => {
                (f.second, v) = number_within(std == Std::ZeroSecond, 0..=59, "second")?;
                // A fraction in the value that the layout does not mention is still read.
                let next_is_frac =
                    matches!(next_chunk(rest_layout), ("", Some((Std::Frac { .. }, _))));
                if !next_is_frac && let Some(read) = any_fraction(v) {
                    (f.nanos, v) = read;
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
                    if let Some(read) = any_fraction(v) {
                        (f.nanos, v) = read;
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

pub(super) fn build(
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
pub(super) fn skip<'a>(mut value: &'a str, mut prefix: &str) -> Result<&'a str, &'a str> {
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
pub(super) fn fixed_digits(v: &str, n: usize) -> Option<(i64, &str)> {
    if v.len() < n || !v.as_bytes()[..n].iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some((v[..n].parse().ok()?, &v[n..]))
}

/// Go's `getnum`: one or two digits (exactly two when `fixed`).
pub(super) fn number(v: &str, fixed: bool) -> Option<(i64, &str)> {
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
pub(super) fn number3(v: &str, fixed: bool) -> Option<(i64, &str)> {
    let n = v.bytes().take(3).take_while(u8::is_ascii_digit).count();
    if n == 0 || fixed && n != 3 {
        return None;
    }
    Some((v[..n].parse().ok()?, &v[n..]))
}

/// A month or day name, full or its first three letters, matched without regard to case.
pub(super) fn lookup_name<'a>(v: &'a str, names: &[&str], short: bool) -> Option<(usize, &'a str)> {
    names.iter().enumerate().find_map(|(i, name)| {
        let name = if short { &name[..3] } else { name };
        let head = v.get(..name.len())?;
        head.eq_ignore_ascii_case(name)
            .then(|| (i, &v[name.len()..]))
    })
}

/// A numeric zone offset `±hh[[:]mm[[:]ss]]` in seconds.
pub(super) fn zone_offset(
    v: &str,
    colon: bool,
    minutes: bool,
    seconds: bool,
) -> Option<(i32, &str)> {
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
pub(super) fn zone_name_len(v: &str) -> Option<usize> {
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

/// A fraction of a second at the start of `v` in nanoseconds, and the rest: `.` or `,` and
/// every digit after it (at least one), as Go reads a fraction of no fixed length.
fn any_fraction(v: &str) -> Option<(i64, &str)> {
    let digits = v.get(1..)?.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || !(v.starts_with('.') || v.starts_with(',')) {
        return None;
    }
    Some((nanos_of(&v[1..=digits]), &v[1 + digits..]))
}

/// Nanoseconds from fraction digits (extra digits beyond nine are dropped).
pub(super) fn nanos_of(digits: &str) -> i64 {
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
