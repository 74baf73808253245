//! YAML that every reader takes as written: YAML 1.2 readers and YAML 1.1 ones (PyYAML,
//! go-yaml v2) alike. `serde_yaml_ng` quotes the strings a YAML 1.2 reader would take for
//! something else, but writes `=`, `<<`, `yes`, `on`, `y`, `1:20` or `2001-12-14` plain, which
//! YAML 1.1 reads as a value tag, a merge key, booleans, a sexagesimal number or a date.
//! Everything the project writes as YAML for people and tools goes through [`to_string`];
//! Helm's `toYaml` and `template` output keep go-yaml's own rules (the chart crate).

use serde::Serialize;
use serde_json::{Map, Value};

/// Why a value could not be written as YAML.
#[derive(Debug, thiserror::Error)]
pub enum YamlError {
    /// The value has no JSON form (a map with non-string keys, a failing `Serialize`).
    #[error("converting to JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// The YAML emitter refused it.
    #[error("writing YAML: {0}")]
    Yaml(#[from] serde_yaml_ng::Error),
}

/// `value` as a YAML document, every string a YAML 1.1 reader would take for something else
/// single-quoted.
pub fn to_string<T: Serialize + ?Sized>(value: &T) -> Result<String, YamlError> {
    let mut json = serde_json::to_value(value)?;
    let marker = unused_marker(&json);
    let mut protected = Vec::new();
    protect(&mut json, marker, &mut protected);
    let text = serde_yaml_ng::to_string(&json)?;
    Ok(restore(&text, marker, &protected))
}

/// Whether a YAML 1.1 reader would take the plain scalar `s` for something other than the
/// string: booleans (`y`, `on`, …), nulls, the value (`=`) and merge (`<<`) keys, and anything
/// shaped like a number (octal `0777`, sexagesimal `1:20`, `1_000`, `.inf`) or a date. The
/// number and date shapes are judged loosely: quoting a string that needed none changes
/// nothing for any reader.
pub fn yaml11_reads_otherwise(s: &str) -> bool {
    const WORDS: &[&str] = &[
        "", "~", "=", "<<", "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "true",
        "True", "TRUE", "false", "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF", "null",
        "Null", "NULL",
    ];
    if WORDS.contains(&s) {
        return true;
    }
    let lower = s.to_ascii_lowercase();
    if matches!(lower.as_str(), ".inf" | "+.inf" | "-.inf" | ".nan") {
        return true;
    }
    let number_like = s.starts_with(|c: char| c.is_ascii_digit() || matches!(c, '+' | '-' | '.'))
        && s.chars()
            .all(|c| c.is_ascii_hexdigit() || "_:.+-xXoO".contains(c));
    let date_like = s.len() >= 10
        && s.as_bytes()[..4].iter().all(u8::is_ascii_digit)
        && s.as_bytes()[4] == b'-'
        && s.chars()
            .all(|c| c.is_ascii_digit() || "-:.+ \tTtZ".contains(c));
    number_like || date_like
}

/// A private-use character no string of `json` contains, to build placeholders from.
fn unused_marker(json: &Value) -> char {
    let text = json.to_string();
    ('\u{E000}'..='\u{F8FF}')
        .find(|c| !text.contains(*c))
        .unwrap_or('\u{E000}')
}

/// The placeholder for the `index`th protected string: a `#` start makes the emitter
/// single-quote it, the markers make it unique.
fn placeholder(marker: char, index: usize) -> String {
    format!("#{marker}{index}{marker}")
}

/// Replaces every string (keys too) that YAML 1.1 would misread by a placeholder.
fn protect(value: &mut Value, marker: char, protected: &mut Vec<String>) {
    match value {
        Value::String(s) => protect_string(s, marker, protected),
        Value::Array(items) => items
            .iter_mut()
            .for_each(|item| protect(item, marker, protected)),
        Value::Object(map) => {
            let entries = std::mem::take(map);
            let mut rebuilt = Map::with_capacity(entries.len());
            for (mut key, mut item) in entries {
                protect_string(&mut key, marker, protected);
                protect(&mut item, marker, protected);
                rebuilt.insert(key, item);
            }
            *map = rebuilt;
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

fn protect_string(s: &mut String, marker: char, protected: &mut Vec<String>) {
    if yaml11_reads_otherwise(s) {
        let placeholder = placeholder(marker, protected.len());
        protected.push(std::mem::replace(s, placeholder));
    }
}

/// Puts the protected strings back, single-quoted, where the emitter wrote their
/// placeholders (also single-quoted).
fn restore(text: &str, marker: char, protected: &[String]) -> String {
    let mut out = text.to_owned();
    for (index, original) in protected.iter().enumerate() {
        let quoted_placeholder = format!("'{}'", placeholder(marker, index));
        let quoted = format!("'{}'", original.replace('\'', "''"));
        out = out.replacen(&quoted_placeholder, &quoted, 1);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn yaml11_specials_are_single_quoted_and_others_left_alone() {
        let value = json!({
            "operators": ["=", "!=", "in", "<<"],
            "on": "y",
            "plain": ["hello", "1.2.3-beta", "v1", "10Gi"],
            "numbers": ["0777", "1:20", "1_000", ".Inf", "2001-12-14"],
            "kept": [1, true, null],
        });
        assert_eq!(
            to_string(&value).unwrap(),
            "operators:\n- '='\n- '!='\n- in\n- '<<'\n'on': 'y'\nplain:\n- hello\n- 1.2.3-beta\n- v1\n- 10Gi\nnumbers:\n- '0777'\n- '1:20'\n- '1_000'\n- '.Inf'\n- '2001-12-14'\nkept:\n- 1\n- true\n- null\n"
        );
    }

    #[test]
    fn quotes_inside_protected_strings_are_doubled_and_markers_never_collide() {
        let marker = '\u{E000}';
        let value = json!([format!("{marker}"), "=", "no"]);
        let text = to_string(&value).unwrap();
        assert_eq!(text, format!("- {marker}\n- '='\n- 'no'\n"));
        assert_eq!(
            restore("'#\u{E001}0\u{E001}'", '\u{E001}', &["it's".into()]),
            "'it''s'"
        );
    }
}
