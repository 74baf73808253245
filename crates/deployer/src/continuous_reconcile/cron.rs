//! Cron schedules: five fields (minute, hour, day of month, month, day of week) or one of the
//! `@yearly`, `@annually`, `@monthly`, `@weekly`, `@daily`, `@midnight`, `@hourly` keywords,
//! evaluated in UTC.

use k8s_openapi::jiff::civil::{Date, DateTime};
use k8s_openapi::jiff::tz::TimeZone;
use k8s_openapi::jiff::{Timestamp, ToSpan};

/// A parsed cron schedule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CronSchedule {
    minutes: Vec<bool>,
    hours: Vec<bool>,
    days_of_month: Vec<bool>,
    months: Vec<bool>,
    days_of_week: Vec<bool>,
    dom_restricted: bool,
    dow_restricted: bool,
}

const MONTHS: [&str; 12] = [
    "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
];
const WEEKDAYS: [&str; 7] = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

/// How far ahead a next run is searched; a schedule like `0 0 30 2 *` never runs.
const SEARCH_YEARS: i16 = 5;

impl CronSchedule {
    /// Parses a schedule; the error names the offending field.
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let expanded = match text {
            "@yearly" | "@annually" => "0 0 1 1 *",
            "@monthly" => "0 0 1 * *",
            "@weekly" => "0 0 * * 0",
            "@daily" | "@midnight" => "0 0 * * *",
            "@hourly" => "0 * * * *",
            other if other.starts_with('@') => {
                return Err(format!("unknown cron keyword {other:?}"));
            }
            other => other,
        };
        let fields: Vec<&str> = expanded.split_whitespace().collect();
        let [minute, hour, dom, month, dow] = fields.as_slice() else {
            return Err(format!(
                "a cron schedule has 5 fields (minute hour day-of-month month day-of-week), got {}",
                fields.len()
            ));
        };
        let mut days_of_week = parse_field(dow, 0, 7, &WEEKDAYS, "day of week")?;
        // 7 is another name for Sunday.
        if days_of_week[7] {
            days_of_week[0] = true;
        }
        days_of_week.truncate(7);
        Ok(Self {
            minutes: parse_field(minute, 0, 59, &[], "minute")?,
            hours: parse_field(hour, 0, 23, &[], "hour")?,
            days_of_month: parse_field(dom, 1, 31, &[], "day of month")?,
            months: parse_field(month, 1, 12, &MONTHS, "month")?,
            days_of_week,
            dom_restricted: !is_star(dom),
            dow_restricted: !is_star(dow),
        })
    }

    /// The first time strictly after `after` (at a whole minute) the schedule fires, if any
    /// within the next years.
    pub fn next_after(&self, after: Timestamp) -> Option<Timestamp> {
        let start = after.to_zoned(TimeZone::UTC).datetime();
        let first_minute = start
            .with()
            .second(0)
            .subsec_nanosecond(0)
            .build()
            .ok()?
            .checked_add(1.minute())
            .ok()?;
        let mut date = first_minute.date();
        let last_year = date.year() + SEARCH_YEARS;
        while date.year() <= last_year {
            if self.day_matches(date) {
                let from = if date == first_minute.date() {
                    (first_minute.hour(), first_minute.minute())
                } else {
                    (0, 0)
                };
                if let Some((h, m)) = self.first_time_of_day(from) {
                    let dt =
                        DateTime::new(date.year(), date.month(), date.day(), h, m, 0, 0).ok()?;
                    return dt.to_zoned(TimeZone::UTC).ok().map(|z| z.timestamp());
                }
            }
            date = date.tomorrow().ok()?;
        }
        None
    }

    fn day_matches(&self, date: Date) -> bool {
        if !self.months[date.month() as usize] {
            return false;
        }
        let dom = self.days_of_month[date.day() as usize];
        let dow = self.days_of_week[date.weekday().to_sunday_zero_offset() as usize];
        // Cron's rule: when both day fields are restricted, either may match.
        if self.dom_restricted && self.dow_restricted {
            dom || dow
        } else {
            dom && dow
        }
    }

    fn first_time_of_day(&self, (from_hour, from_minute): (i8, i8)) -> Option<(i8, i8)> {
        for h in from_hour..24 {
            if !self.hours[h as usize] {
                continue;
            }
            let m0 = if h == from_hour { from_minute } else { 0 };
            if let Some(m) = (m0..60).find(|m| self.minutes[*m as usize]) {
                return Some((h, m));
            }
        }
        None
    }
}

fn is_star(field: &str) -> bool {
    field == "*" || field == "?"
}

/// Parses one field into a table indexed by value (`0..=max`).
fn parse_field(
    field: &str,
    min: u32,
    max: u32,
    names: &[&str],
    what: &str,
) -> Result<Vec<bool>, String> {
    let mut table = vec![false; max as usize + 1];
    for part in field.split(',') {
        let (range, step) = match part.split_once('/') {
            Some((r, s)) => {
                let step: u32 = s
                    .parse()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| format!("{what}: invalid step {s:?} in {field:?}"))?;
                (r, step)
            }
            None => (part, 1),
        };
        let (lo, hi) = if is_star(range) {
            (min, max)
        } else if let Some((a, b)) = range.split_once('-') {
            (
                value(a, min, max, names, what)?,
                value(b, min, max, names, what)?,
            )
        } else {
            let v = value(range, min, max, names, what)?;
            // `5/10` means from 5 to the end in steps of 10.
            (v, if part.contains('/') { max } else { v })
        };
        if lo > hi {
            return Err(format!("{what}: range {range:?} runs backwards"));
        }
        for v in (lo..=hi).step_by(step as usize) {
            table[v as usize] = true;
        }
    }
    Ok(table)
}

fn value(text: &str, min: u32, max: u32, names: &[&str], what: &str) -> Result<u32, String> {
    let upper = text.to_ascii_uppercase();
    if let Some(i) = names.iter().position(|n| *n == upper) {
        // Month names count from 1, weekday names from 0.
        return Ok(i as u32 + min);
    }
    let v: u32 = text
        .parse()
        .map_err(|_| format!("{what}: {text:?} is not a number"))?;
    if v < min || v > max {
        return Err(format!("{what}: {v} is outside {min}-{max}"));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    fn next(expr: &str, after: &str) -> String {
        CronSchedule::parse(expr)
            .unwrap()
            .next_after(ts(after))
            .unwrap()
            .to_string()
    }

    #[test]
    fn keywords_expand_to_their_schedules() {
        assert_eq!(
            next("@daily", "2026-03-04T10:15:00Z"),
            "2026-03-05T00:00:00Z"
        );
        assert_eq!(
            next("@hourly", "2026-03-04T10:15:00Z"),
            "2026-03-04T11:00:00Z"
        );
        assert_eq!(
            next("@weekly", "2026-03-04T10:15:00Z"),
            "2026-03-08T00:00:00Z"
        );
        assert_eq!(
            next("@monthly", "2026-03-04T10:15:00Z"),
            "2026-04-01T00:00:00Z"
        );
        assert_eq!(
            next("@yearly", "2026-03-04T10:15:00Z"),
            "2027-01-01T00:00:00Z"
        );
        assert_eq!(
            next("@midnight", "2026-12-31T23:59:59Z"),
            "2027-01-01T00:00:00Z"
        );
    }

    #[test]
    fn fields_with_steps_ranges_lists_and_names() {
        assert_eq!(
            next("*/15 * * * *", "2026-03-04T10:16:30Z"),
            "2026-03-04T10:30:00Z"
        );
        assert_eq!(
            next("5,35 8-9 * * *", "2026-03-04T09:36:00Z"),
            "2026-03-05T08:05:00Z"
        );
        assert_eq!(
            next("0 12 * JUN MON-FRI", "2026-03-04T10:00:00Z"),
            "2026-06-01T12:00:00Z"
        );
        assert_eq!(
            next("0 0 * * 7", "2026-03-04T10:00:00Z"),
            "2026-03-08T00:00:00Z"
        );
        assert_eq!(
            next("10/20 * * * *", "2026-03-04T10:31:00Z"),
            "2026-03-04T10:50:00Z"
        );
    }

    #[test]
    fn restricted_day_fields_match_either_day() {
        // The 15th, or any Monday: Monday 2026-03-09 comes first.
        assert_eq!(
            next("0 0 15 * 1", "2026-03-04T10:00:00Z"),
            "2026-03-09T00:00:00Z"
        );
    }

    #[test]
    fn next_is_strictly_after_the_given_time() {
        assert_eq!(
            next("* * * * *", "2026-03-04T10:00:00Z"),
            "2026-03-04T10:01:00Z"
        );
    }

    #[test]
    fn impossible_dates_never_fire() {
        let s = CronSchedule::parse("0 0 30 2 *").unwrap();
        assert_eq!(s.next_after(ts("2026-01-01T00:00:00Z")), None);
    }

    #[test]
    fn bad_schedules_name_the_field() {
        assert!(
            CronSchedule::parse("* * * *")
                .unwrap_err()
                .contains("5 fields")
        );
        assert!(
            CronSchedule::parse("61 * * * *")
                .unwrap_err()
                .contains("minute")
        );
        assert!(
            CronSchedule::parse("* * * FOO *")
                .unwrap_err()
                .contains("month")
        );
        assert!(
            CronSchedule::parse("*/0 * * * *")
                .unwrap_err()
                .contains("step")
        );
        assert!(
            CronSchedule::parse("@often")
                .unwrap_err()
                .contains("keyword")
        );
        assert!(
            CronSchedule::parse("5-1 * * * *")
                .unwrap_err()
                .contains("backwards")
        );
    }
}
