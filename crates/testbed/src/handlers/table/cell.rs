//! One cell of a custom resource's table, as kube-apiserver's CRD table convertor fills it:
//! `string` columns get the JSONPath text of any value, `date` columns an age, and the
//! other types the value when it has that type, else nothing (kubectl prints `<none>`).

use crate::clock;
use serde_json::{Map, Value};

const NANOS_PER_SEC: i128 = 1_000_000_000;

/// The cell of a column of type `column_type` for `found` (`None`: the path found nothing);
/// `now_nanos` is the cluster's now, for ages.
pub fn cell(column_type: &str, found: Option<&Value>, now_nanos: i128) -> Value {
    let Some(value) = found else {
        return Value::Null;
    };
    if column_type == "string" {
        return Value::String(jsonpath_text(value));
    }
    match (column_type, value) {
        ("integer", Value::Number(n)) => match n.as_i64() {
            Some(i) => i.into(),
            None => (n.as_f64().unwrap_or_default() as i64).into(),
        },
        ("number", Value::Number(n)) => number(n.as_f64().unwrap_or_default()),
        ("boolean", Value::Bool(b)) => (*b).into(),
        ("date", Value::String(s)) => age_of(s, now_nanos).into(),
        _ => Value::Null,
    }
}

/// A float cell: integral values as integers, as Go's JSON encoder writes a float64.
fn number(f: f64) -> Value {
    if f.fract() == 0.0 && f.abs() < 9.0e15 {
        (f as i64).into()
    } else {
        serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)
    }
}

/// A `date` cell: the age of an RFC 3339 time, `<unknown>` for an empty or zero time,
/// `<invalid>` for text that is no time.
fn age_of(text: &str, now_nanos: i128) -> String {
    // Go's zero time.Time, 0001-01-01T00:00:00Z.
    const GO_ZERO_TIME: i128 = -62_135_596_800 * NANOS_PER_SEC;
    if text.is_empty() || text == "null" {
        return "<unknown>".into();
    }
    match clock::parse_rfc3339_nanos(text) {
        None => "<invalid>".into(),
        Some(GO_ZERO_TIME) => "<unknown>".into(),
        Some(t) => human_duration(now_nanos - t),
    }
}

/// apimachinery's `duration.HumanDuration`: about two significant figures, finer for
/// short spans (`1m30s`, `3h2m`, `2d5h`, `2y10d`); up to a second in the future is `0s`,
/// more is `<invalid>`.
pub fn human_duration(nanos: i128) -> String {
    let seconds = nanos / NANOS_PER_SEC;
    if seconds < -1 {
        return "<invalid>".into();
    }
    if seconds < 0 {
        return "0s".into();
    }
    if seconds < 120 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        return with_rest(minutes, "m", seconds % 60, "s");
    }
    if minutes < 180 {
        return format!("{minutes}m");
    }
    let hours = minutes / 60;
    if hours < 8 {
        return with_rest(hours, "h", minutes % 60, "m");
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    let days = hours / 24;
    if hours < 24 * 8 {
        return with_rest(days, "d", hours % 24, "h");
    }
    if hours < 24 * 365 * 2 {
        return format!("{days}d");
    }
    let years = days / 365;
    if hours < 24 * 365 * 8 {
        return with_rest(years, "y", days % 365, "d");
    }
    format!("{years}y")
}

/// `5m` or `5m30s`: the smaller unit only when it is not zero.
fn with_rest(big: i128, big_unit: &str, small: i128, small_unit: &str) -> String {
    if small == 0 {
        format!("{big}{big_unit}")
    } else {
        format!("{big}{big_unit}{small}{small_unit}")
    }
}

/// What client-go's JSONPath prints for one result: strings as they are, maps and lists
/// as compact JSON, scalars as Go's `fmt.Print`, `null` as `<no value>`.
fn jsonpath_text(value: &Value) -> String {
    match value {
        Value::Null => "<no value>".into(),
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => i.to_string(),
            (None, Some(f)) => GoFloat::of(f).print(),
            (None, None) => n.to_string(),
        },
        Value::Array(_) | Value::Object(_) => {
            let mut out = String::new();
            go_json(value, &mut out);
            out
        }
    }
}

/// Go's `json.Marshal` of a decoded JSON value: keys sorted, `<`, `>` and `&` escaped.
fn go_json(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => out.push_str(&i.to_string()),
            (None, Some(f)) => out.push_str(&GoFloat::of(f).json()),
            (None, None) => out.push_str(&n.to_string()),
        },
        Value::String(s) => go_json_string(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                go_json(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => go_json_object(map, out),
    }
}

fn go_json_object(map: &Map<String, Value>, out: &mut String) {
    let mut keys: Vec<&String> = map.keys().collect();
    keys.sort();
    out.push('{');
    for (i, key) in keys.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        go_json_string(key, out);
        out.push(':');
        go_json(&map[key], out);
    }
    out.push('}');
}

fn go_json_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", u32::from(c)))
            }
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A finite float64 as its shortest decimal digits, to print the way Go does.
struct GoFloat {
    negative: bool,
    /// Significant digits without leading or trailing zeros ("" for zero).
    digits: String,
    /// The decimal exponent of the first digit.
    exp: i32,
}

impl GoFloat {
    fn of(f: f64) -> Self {
        // Rust's `{:e}` gives the shortest digits that read back as `f`, as Go's do.
        let text = format!("{:e}", f.abs());
        let (mantissa, exp) = text.split_once('e').unwrap_or((&text, "0"));
        let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
        let digits = digits.trim_end_matches('0').to_string();
        Self {
            negative: f.is_sign_negative(),
            exp: if digits.is_empty() {
                0
            } else {
                exp.parse().unwrap_or(0)
            },
            digits,
        }
    }

    /// `fmt.Print(f)`: `%g` with the shortest digits, exponent form below 1e-4 and from 1e6.
    fn print(&self) -> String {
        if !self.digits.is_empty() && (self.exp < -4 || self.exp >= 6) {
            self.exponent_form(true)
        } else {
            self.plain_form()
        }
    }

    /// `json.Marshal(f)`: plain from 1e-6 to below 1e21, else exponent form without a
    /// leading zero in a negative exponent.
    fn json(&self) -> String {
        if !self.digits.is_empty() && (self.exp < -6 || self.exp >= 21) {
            self.exponent_form(false)
        } else {
            self.plain_form()
        }
    }

    fn sign(&self) -> &'static str {
        if self.negative { "-" } else { "" }
    }

    fn plain_form(&self) -> String {
        if self.digits.is_empty() {
            return format!("{}0", self.sign());
        }
        let point = self.exp + 1;
        let body = if point <= 0 {
            format!("0.{}{}", "0".repeat((-point) as usize), self.digits)
        } else if point as usize >= self.digits.len() {
            format!(
                "{}{}",
                self.digits,
                "0".repeat(point as usize - self.digits.len())
            )
        } else {
            let (int, frac) = self.digits.split_at(point as usize);
            format!("{int}.{frac}")
        };
        format!("{}{body}", self.sign())
    }

    fn exponent_form(&self, two_digit_exponent: bool) -> String {
        let (first, rest) = self.digits.split_at(1);
        let mantissa = if rest.is_empty() {
            first.to_string()
        } else {
            format!("{first}.{rest}")
        };
        let exp_sign = if self.exp < 0 { '-' } else { '+' };
        let exp = self.exp.abs();
        if two_digit_exponent {
            format!("{}{mantissa}e{exp_sign}{exp:02}", self.sign())
        } else {
            format!("{}{mantissa}e{exp_sign}{exp}", self.sign())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const SEC: i128 = NANOS_PER_SEC;

    #[test]
    fn ages_read_as_kubectl_shows_them() {
        let cases: &[(i128, &str)] = &[
            (-2 * SEC, "<invalid>"),
            (-SEC / 2, "0s"),
            (0, "0s"),
            (12 * SEC, "12s"),
            (119 * SEC, "119s"),
            (120 * SEC, "2m"),
            (150 * SEC, "2m30s"),
            (9 * 60 * SEC + 59 * SEC, "9m59s"),
            (10 * 60 * SEC + 30 * SEC, "10m"),
            (179 * 60 * SEC, "179m"),
            ((3 * 3600 + 2 * 60 + 5) * SEC, "3h2m"),
            (5 * 3600 * SEC, "5h"),
            (8 * 3600 * SEC, "8h"),
            (47 * 3600 * SEC, "47h"),
            (2 * 86_400 * SEC, "2d"),
            ((2 * 86_400 + 5 * 3600) * SEC, "2d5h"),
            (8 * 86_400 * SEC, "8d"),
            (729 * 86_400 * SEC, "729d"),
            (740 * 86_400 * SEC, "2y10d"),
            (365 * 3 * 86_400 * SEC, "3y"),
            (365 * 9 * 86_400 * SEC, "9y"),
        ];
        for (nanos, want) in cases {
            assert_eq!(human_duration(*nanos), *want, "{nanos} ns");
        }
    }

    #[test]
    fn date_cells_are_ages_or_say_why_not() {
        let created = clock::parse_rfc3339_nanos("2026-01-01T00:00:00Z").unwrap();
        let now = created + 300 * SEC;
        assert_eq!(
            cell("date", Some(&json!("2026-01-01T00:00:00Z")), now),
            json!("5m")
        );
        assert_eq!(cell("date", Some(&json!("")), now), json!("<unknown>"));
        assert_eq!(
            cell("date", Some(&json!("0001-01-01T00:00:00Z")), now),
            json!("<unknown>")
        );
        assert_eq!(
            cell("date", Some(&json!("yesterday")), now),
            json!("<invalid>")
        );
        assert_eq!(cell("date", Some(&json!(5)), now), Value::Null);
    }

    #[test]
    fn typed_cells_keep_only_values_of_their_type() {
        assert_eq!(cell("integer", Some(&json!(3)), 0), json!(3));
        assert_eq!(cell("integer", Some(&json!(3.7)), 0), json!(3));
        assert_eq!(cell("integer", Some(&json!("3")), 0), Value::Null);
        assert_eq!(cell("number", Some(&json!(2)), 0), json!(2));
        assert_eq!(cell("number", Some(&json!(0.25)), 0), json!(0.25));
        assert_eq!(cell("boolean", Some(&json!(true)), 0), json!(true));
        assert_eq!(cell("boolean", Some(&json!("true")), 0), Value::Null);
        assert_eq!(cell("integer", Some(&Value::Null), 0), Value::Null);
        assert_eq!(cell("string", None, 0), Value::Null);
    }

    #[test]
    fn string_cells_print_any_value_as_jsonpath_does() {
        let text = |v: Value| cell("string", Some(&v), 0);
        assert_eq!(text(json!("Succeeded")), json!("Succeeded"));
        assert_eq!(text(json!(42)), json!("42"));
        assert_eq!(text(json!(1.5)), json!("1.5"));
        assert_eq!(text(json!(1e6)), json!("1e+06"));
        assert_eq!(text(json!(100000.0)), json!("100000"));
        assert_eq!(text(json!(0.00001)), json!("1e-05"));
        assert_eq!(text(json!(true)), json!("true"));
        assert_eq!(text(Value::Null), json!("<no value>"));
        assert_eq!(
            text(json!({"b": [1, 2.5, 1e-7], "a": "<x&y>"})),
            json!(r#"{"a":"\u003cx\u0026y\u003e","b":[1,2.5,1e-7]}"#)
        );
    }
}
