//! How template errors are reported: a snippet of the source around the failing line, and
//! the binding the template saw, with the values of sensitive keys hidden.

use std::io::Write as _;

use base64::Engine as _;
use serde_json::Value as Json;

/// The keys whose values a GoTemplate error report hides.
pub const GO_TEMPLATE_SENSITIVE_KEYS: &[&str] = &["imports", "targets", "values", "state"];

/// The keys whose values a Spiff error report hides.
pub const SPIFF_SENSITIVE_KEYS: &[&str] = &["imports", "values", "state"];

/// Formatted values longer than this are compressed.
const MAX_PLAIN_VALUE: usize = 512;

/// How deep hidden values are walked before the rest is hidden whole.
const MAX_HIDE_DEPTH: usize = 10;

/// Up to five lines before and after `line` (1-based) of `lines`, each prefixed by its number,
/// with a caret under `column` of the failing line.
pub fn source_snippet(lines: &[&str], line: usize, column: usize) -> String {
    let first = line.saturating_sub(5).max(1);
    let last = (line + 5).min(lines.len());
    let mut out = String::new();
    for number in first..=last {
        let prefix = format!("{number}:");
        out.push_str(&format!("{prefix:<6}{}\n", lines[number - 1]));
        if number == line {
            out.push_str(&" ".repeat(column + 6));
            out.push_str("ˆ≈≈≈≈≈≈≈\n");
        }
    }
    out
}

/// The line and column of the first `:<line>[:<col>]:` in an error message (column 0 when
/// only the line is given).
pub fn error_position(message: &str) -> Option<(usize, usize)> {
    let bytes = message.as_bytes();
    let number_at = |start: usize| -> Option<(usize, usize)> {
        let len = bytes[start..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        (len > 0)
            .then(|| {
                message[start..start + len]
                    .parse()
                    .ok()
                    .map(|n| (n, start + len))
            })
            .flatten()
    };
    for (i, _) in message.match_indices(':') {
        let Some((line, end)) = number_at(i + 1) else {
            continue;
        };
        if bytes.get(end) != Some(&b':') {
            continue;
        }
        return Some(match number_at(end + 1) {
            Some((column, after)) if bytes.get(after) == Some(&b':') => (line, column),
            _ => (line, 0),
        });
    }
    None
}

/// Formats a binding for an error report: one `<prefix><key>: <JSON>` line per key, in key
/// order, with every leaf under a sensitive key replaced by `"[...] (<Go type>)"`.
pub fn format_input(
    binding: &serde_json::Map<String, Json>,
    sensitive: &[&str],
    prefix: &str,
    pretty: bool,
) -> String {
    let mut keys: Vec<&String> = binding.keys().collect();
    keys.sort();
    let mut out = String::new();
    for key in keys {
        let value = &binding[key];
        let shown = sorted(&if sensitive.contains(&key.as_str()) {
            hide(value, 0)
        } else {
            value.clone()
        });
        let text = if pretty {
            pretty_json(&shown, prefix)
        } else {
            let text = serde_json::to_string(&shown).unwrap_or_default();
            if text.len() > MAX_PLAIN_VALUE {
                compress(&text)
            } else {
                text
            }
        };
        out.push_str(&format!("{prefix}{key}: {text}\n"));
    }
    out
}

fn hide(value: &Json, depth: usize) -> Json {
    match value {
        Json::Object(map) if depth < MAX_HIDE_DEPTH => Json::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), hide(v, depth + 1)))
                .collect(),
        ),
        other => Json::String(format!("[...] ({})", go_type(other))),
    }
}

/// The value with its maps' keys in order, as Go's encoder writes them.
fn sorted(value: &Json) -> Json {
    match value {
        Json::Object(map) => {
            let mut entries: Vec<(&String, &Json)> = map.iter().collect();
            entries.sort_by_key(|(k, _)| *k);
            Json::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k.clone(), sorted(v)))
                    .collect(),
            )
        }
        Json::Array(items) => Json::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// The name Go gives the type of a decoded value.
fn go_type(value: &Json) -> &'static str {
    match value {
        Json::Null => "<nil>",
        Json::Bool(_) => "bool",
        Json::Number(n) if n.is_i64() || n.is_u64() => "int",
        Json::Number(_) => "float64",
        Json::String(_) => "string",
        Json::Array(_) => "[]interface {}",
        Json::Object(_) => "map[string]interface {}",
    }
}

/// `json.MarshalIndent(value, prefix, "  ")`.
fn pretty_json(value: &Json, prefix: &str) -> String {
    let text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.replace('\n', &format!("\n{prefix}"))
}

fn compress(text: &str) -> String {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let compressed = encoder
        .write_all(text.as_bytes())
        .and_then(|()| encoder.finish())
        .unwrap_or_default();
    format!(
        ">gzip>base64> {}",
        base64::engine::general_purpose::STANDARD.encode(compressed)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn positions_are_read_from_go_template_errors() {
        assert_eq!(
            error_position(
                "template: execution:7:26: executing \"execution\" at <.a.b>: nil pointer"
            ),
            Some((7, 26))
        );
        assert_eq!(
            error_position("template: execution:8: unexpected \"}\" in operand"),
            Some((8, 0))
        );
        assert_eq!(error_position("no position here"), None);
    }

    #[test]
    fn sensitive_values_show_only_their_types() {
        let binding = json!({"imports": {"a": {"b": 1}, "c": "x"}, "cd": null})
            .as_object()
            .cloned()
            .unwrap();
        assert_eq!(
            format_input(&binding, GO_TEMPLATE_SENSITIVE_KEYS, "\t", false),
            "\tcd: null\n\timports: {\"a\":{\"b\":\"[...] (int)\"},\"c\":\"[...] (string)\"}\n"
        );
    }
}
