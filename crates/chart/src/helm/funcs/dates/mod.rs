//! Sprig's date functions and the `time.Time` value they return. Go's time value, its
//! reference-time layouts and its durations are modules of their own.

mod duration;
mod layout;
mod time;

pub use duration::{format_duration, parse_duration};
pub use layout::{parse, parse_utc};
pub use time::GoTime;

use jiff::Timestamp;

use super::{FuncError, FuncMap, args};
use crate::engine::value::Value;
use duration::round_to_second;
use time::{Location, time_of};

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

#[cfg(test)]
mod tests {
    use super::layout::parse_in;
    use super::time::local;
    use super::*;
    use crate::engine::value::Object;

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
