//! Block scalars (`|`, `>`) that run into the end of the input, read as libyaml reads them.
//!
//! yaml-rust2 ends such a scalar as if one more line break followed its last line, so
//! `f: |\n  x` (no line break after `x`) reads `"x\n"` where libyaml, and so Helm, reads `"x"`;
//! and it gives a scalar with no content at all (`f: |\n`) the line break of its header, where
//! libyaml gives the empty string. Both happen constantly in Helm: `toYaml` drops the final
//! line break and `fromYaml` reads its output back, and values files often lack one. Scalars
//! that do not reach the end of the input read the same in both.

use std::cell::OnceCell;

/// What libyaml reads for the block scalar yaml-rust2 read as `value` at `line`/`col` (its
/// marker: the first character of its content, or its `|`/`>` indicator when it has none).
pub(super) fn libyaml_value(
    src: &Source<'_>,
    mut value: String,
    line: usize,
    col: usize,
) -> String {
    if value.is_empty() {
        return value;
    }
    if value.bytes().all(|b| b == b'\n') {
        return src.empty_scalar(line, col).unwrap_or(value);
    }
    // yaml-rust2 adds the line break when the input ends on a line at least as long as the
    // scalar's indentation (and at least one character long).
    if value.ends_with('\n') && src.last_line_chars >= col.max(1) && src.reaches_end(line, col) {
        value.pop();
    }
    value
}

/// The input being composed, with what the checks above need of it.
pub(super) struct Source<'a> {
    text: &'a str,
    /// Characters after the input's last line break.
    last_line_chars: usize,
    /// How many lines the input has, counted when first needed.
    line_count: OnceCell<usize>,
}

impl<'a> Source<'a> {
    /// Takes `text` as the whole input.
    pub(super) fn new(text: &'a str) -> Source<'a> {
        let last_line = text.rsplit(['\n', '\r']).next().unwrap_or(text);
        Source {
            text,
            last_line_chars: last_line.chars().count(),
            line_count: OnceCell::new(),
        }
    }

    /// The lines from 1-based `line` on, without their line breaks.
    fn lines_from(&self, line: usize) -> impl Iterator<Item = &'a str> {
        lines(self.text).skip(line.saturating_sub(1))
    }

    /// Whether a block scalar whose content starts on `line` at indentation `indent` goes on
    /// to the end of the input: no later line holds text left of the indentation (or, at
    /// indentation 0, a document marker). Read from the end, where the line that ends an
    /// earlier scalar is soon found.
    fn reaches_end(&self, line: usize, indent: usize) -> bool {
        let count = *self.line_count.get_or_init(|| lines(self.text).count());
        lines_reversed(self.text)
            .take(count.saturating_sub(line))
            .all(|l| {
                let spaces = l.len() - l.trim_start_matches(' ').len();
                let rest = &l[spaces..];
                rest.is_empty() || (spaces >= indent && !(indent == 0 && is_document_marker(l)))
            })
    }

    /// libyaml's value of a block scalar without content whose indicator is at `line`/`col`:
    /// nothing, except the line breaks after the header with keep chomping (`|+`). `None` when
    /// there is no such header there or more than blank lines follow it.
    fn empty_scalar(&self, line: usize, col: usize) -> Option<String> {
        let mut rest = self.lines_from(line);
        let header: String = rest.next()?.chars().skip(col).collect();
        let mut header = header.chars();
        if !matches!(header.next(), Some('|' | '>')) {
            return None;
        }
        let keep = header
            .take_while(|c| matches!(c, '+' | '-' | '1'..='9'))
            .any(|c| c == '+');
        let mut lines_after: usize = 0;
        for l in rest {
            if !l.bytes().all(|b| b == b' ') {
                return None;
            }
            lines_after += 1;
        }
        // Every line after the header but the last ends in a line break.
        let breaks = lines_after.saturating_sub(1);
        Some(if keep {
            "\n".repeat(breaks)
        } else {
            String::new()
        })
    }
}

/// `text` split at its line breaks (`\r\n`, `\n`, `\r`) as YAML counts lines; a final line
/// break ends a last, empty line.
fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let current = rest?;
        match current.find(['\n', '\r']) {
            Some(i) => {
                let width = if current[i..].starts_with("\r\n") {
                    2
                } else {
                    1
                };
                rest = Some(&current[i + width..]);
                Some(&current[..i])
            }
            None => {
                rest = None;
                Some(current)
            }
        }
    })
}

/// [`lines`] from the last to the first.
fn lines_reversed(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let current = rest?;
        match current.rfind(['\n', '\r']) {
            Some(i) => {
                let crlf = current.as_bytes()[i] == b'\n' && current[..i].ends_with('\r');
                rest = Some(&current[..if crlf { i - 1 } else { i }]);
                Some(&current[i + 1..])
            }
            None => {
                rest = None;
                Some(current)
            }
        }
    })
}

fn is_document_marker(line: &str) -> bool {
    (line.starts_with("---") || line.starts_with("..."))
        && line[3..]
            .chars()
            .next()
            .is_none_or(|c| c == ' ' || c == '\t')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_read_backwards_are_the_lines_read_forwards() {
        for text in ["", "a", "a\n", "a\r\nb\rc\n\n", "\r\n", "x\r", "a\n\r\nb"] {
            let mut backwards: Vec<&str> = lines_reversed(text).collect();
            backwards.reverse();
            assert_eq!(backwards, lines(text).collect::<Vec<_>>(), "{text:?}");
        }
    }
}
