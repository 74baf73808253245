//! Go `encoding/json` output: sorted keys, Go's string escaping and float formatting.

use crate::formats::gofloat::{format_json, go_non_finite_name};
use crate::formats::tree::{Data, sorted_entries};

use super::JsonError;
use super::decode::MAX_DEPTH;

/// How the text is laid out and escaped.
#[derive(Clone, Copy)]
pub struct Options {
    /// Escape `<`, `>` and `&` as `json.Marshal` does (not `toRawJson`).
    pub escape_html: bool,
    /// `json.MarshalIndent(v, "", "  ")` layout.
    pub pretty: bool,
}

/// Writes `data` as Go's encoder would.
pub fn encode(data: &Data, opts: Options) -> Result<String, JsonError> {
    let mut out = String::new();
    write_value(&mut out, data, opts, 0)?;
    Ok(out)
}

/// A line break and the indentation of `depth` in the pretty layout; nothing when compact.
pub fn newline(out: &mut String, opts: Options, depth: usize) {
    if opts.pretty {
        out.push('\n');
        for _ in 0..depth {
            out.push_str("  ");
        }
    }
}

/// Writes `data` at nesting `depth` (which sets the pretty layout's indentation).
pub fn write_value(
    out: &mut String,
    data: &Data,
    opts: Options,
    depth: usize,
) -> Result<(), JsonError> {
    if depth > MAX_DEPTH {
        return Err(JsonError::new(format!("exceeded max depth of {MAX_DEPTH}")));
    }
    match data {
        Data::Null => out.push_str("null"),
        Data::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Data::Int(i) => out.push_str(&i.to_string()),
        Data::Uint(u) => out.push_str(&u.to_string()),
        Data::Float(f) => match format_json(*f) {
            Some(s) => out.push_str(&s),
            None => {
                return Err(JsonError::new(format!(
                    "json: unsupported value: {}",
                    go_non_finite_name(*f)
                )));
            }
        },
        Data::String(s) => write_string(out, s, opts.escape_html),
        Data::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, opts, depth + 1);
                write_value(out, item, opts, depth + 1)?;
            }
            if !items.is_empty() {
                newline(out, opts, depth);
            }
            out.push(']');
        }
        Data::Map(map) => {
            out.push('{');
            for (i, (k, v)) in sorted_entries(map).into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, opts, depth + 1);
                write_string(out, k, opts.escape_html);
                out.push(':');
                if opts.pretty {
                    out.push(' ');
                }
                write_value(out, v, opts, depth + 1)?;
            }
            if !map.is_empty() {
                newline(out, opts, depth);
            }
            out.push('}');
        }
    }
    Ok(())
}

/// A JSON string literal with Go's escapes: short forms for `\b \f \n \r \t`, `\u00XX` for
/// other control characters, always `\u2028`/`\u2029`, and HTML characters when asked.
pub fn write_string(out: &mut String, s: &str, escape_html: bool) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '<' | '>' | '&' if escape_html => out.push_str(&format!("\\u{:04x}", c as u32)),
            '\u{2028}' | '\u{2029}' => out.push_str(&format!("\\u{:04x}", c as u32)),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}
