//! The warnings Helm logs while it prepares values (they never stop a render), as helm v4.1.4
//! prints them on stderr: Go's `log/slog` text format without a time, e.g.
//! `level=WARN msg="returned non-bool value" tag=t1 chart=sub`.

use crate::engine::value::format::{is_print, quote};

/// Warnings in the order Helm logs them, each one formatted line.
#[derive(Debug, Default)]
pub struct Warnings(pub Vec<String>);

impl Warnings {
    /// Helm's `slog.Info(message)` (its coalescing warnings).
    pub fn info(&mut self, message: &str) {
        self.0.push(slog_line("INFO", message, &[]));
    }

    /// Helm's `slog.Info(message, key, value, …)`.
    pub fn info_with(&mut self, message: &str, attrs: &[(&str, &str)]) {
        self.0.push(slog_line("INFO", message, attrs));
    }

    /// Helm's `slog.Warn(message, key, value, …)`.
    pub fn warn(&mut self, message: &str, attrs: &[(&str, &str)]) {
        self.0.push(slog_line("WARN", message, attrs));
    }
}

/// One record as slog's text handler writes it: `level=L msg=M key=value…`, each value
/// quoted as Go's `strconv.Quote` does when it is empty or holds a space, `=`, `"`, or a
/// character that is not printable.
pub fn slog_line(level: &str, message: &str, attrs: &[(&str, &str)]) -> String {
    let mut line = format!("level={level} msg={}", slog_value(message));
    for (key, value) in attrs {
        line.push_str(&format!(" {key}={}", slog_value(value)));
    }
    line
}

fn slog_value(text: &str) -> String {
    let needs_quoting = text.is_empty()
        || text.chars().any(|c| {
            if c.is_ascii() {
                c != '\\' && (c == ' ' || c == '=' || c == '"' || !(' '..='~').contains(&c))
            } else {
                c.is_whitespace() || !is_print(c)
            }
        });
    if needs_quoting {
        quote(text)
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_read_as_helm_prints_them() {
        assert_eq!(
            slog_line(
                "WARN",
                "returned non-bool value",
                &[("tag", "t1"), ("chart", "sub")]
            ),
            r#"level=WARN msg="returned non-bool value" tag=t1 chart=sub"#
        );
        assert_eq!(
            slog_line(
                "WARN",
                "ImportValues missing table from chart",
                &[("error", "\"x\" is not a table")]
            ),
            r#"level=WARN msg="ImportValues missing table from chart" error="\"x\" is not a table""#
        );
        assert_eq!(
            slog_line("INFO", "a\\b", &[("k", "")]),
            r#"level=INFO msg=a\b k="""#
        );
    }
}
