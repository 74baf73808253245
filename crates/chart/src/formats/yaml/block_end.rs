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
    if value.ends_with('\n') && src.last_line_chars() >= col.max(1) && src.reaches_end(line, col) {
        value.pop();
    }
    value
}

/// The input being composed, with what the checks above need of it.
pub(super) struct Source<'a> {
    text: &'a str,
    /// Characters after its last line break, counted when first needed.
    last_line_chars: OnceCell<usize>,
    /// Its lines, indexed when first needed.
    lines: OnceCell<Lines<'a>>,
}

/// The lines of an input, and for each what the lines after it hold, so that every check
/// takes constant time however many block scalars the input has.
struct Lines<'a> {
    lines: Vec<&'a str>,
    /// Per line: the least indentation of a non-blank line after it (`usize::MAX` if none).
    least_indent_after: Vec<usize>,
    /// Per line: whether a document end (`...`) follows it.
    document_end_after: Vec<bool>,
}

impl<'a> Lines<'a> {
    fn of(text: &'a str) -> Lines<'a> {
        let lines: Vec<&str> = lines(text).collect();
        let mut least_indent_after = vec![usize::MAX; lines.len()];
        let mut document_end_after = vec![false; lines.len()];
        for i in (0..lines.len().saturating_sub(1)).rev() {
            let next = lines[i + 1];
            let spaces = next.len() - next.trim_start_matches(' ').len();
            let blank = spaces == next.len();
            least_indent_after[i] = if blank {
                least_indent_after[i + 1]
            } else {
                least_indent_after[i + 1].min(spaces)
            };
            document_end_after[i] = document_end_after[i + 1] || is_document_end(next);
        }
        Lines {
            lines,
            least_indent_after,
            document_end_after,
        }
    }
}

impl<'a> Source<'a> {
    /// Takes `text` as the whole input.
    pub(super) fn new(text: &'a str) -> Source<'a> {
        Source {
            text,
            last_line_chars: OnceCell::new(),
            lines: OnceCell::new(),
        }
    }

    /// Characters after the input's last line break. Asked only of block scalars, and a
    /// rendered manifest may end in a line of hundreds of kilobytes (a dashboard's JSON), so
    /// it is not counted up front.
    fn last_line_chars(&self) -> usize {
        *self.last_line_chars.get_or_init(|| {
            let start = memchr::memrchr2(b'\n', b'\r', self.text.as_bytes()).map_or(0, |i| i + 1);
            self.text[start..].chars().count()
        })
    }

    fn lines(&self) -> &Lines<'a> {
        self.lines.get_or_init(|| Lines::of(self.text))
    }

    /// Whether a block scalar whose content starts on 1-based `line` at indentation `indent`
    /// goes on to the end of the input: no later line holds text left of the indentation
    /// (or, at indentation 0, ends the document as yaml-rust2 sees it, with `...`).
    fn reaches_end(&self, line: usize, indent: usize) -> bool {
        let lines = self.lines();
        let Some(index) = line.checked_sub(1).filter(|&i| i < lines.lines.len()) else {
            return false;
        };
        lines.least_indent_after[index] >= indent
            && !(indent == 0 && lines.document_end_after[index])
    }

    /// libyaml's value of a block scalar without content whose indicator is at `line`/`col`:
    /// nothing, except the line breaks after the header with keep chomping (`|+`). `None` when
    /// there is no such header there or more than blank lines follow it.
    fn empty_scalar(&self, line: usize, col: usize) -> Option<String> {
        let lines = self.lines();
        let index = line.checked_sub(1)?;
        let header: String = lines.lines.get(index)?.chars().skip(col).collect();
        let mut header = header.chars();
        if !matches!(header.next(), Some('|' | '>')) {
            return None;
        }
        let keep = header
            .take_while(|c| matches!(c, '+' | '-' | '1'..='9'))
            .any(|c| c == '+');
        if lines.least_indent_after[index] != usize::MAX {
            return None;
        }
        // Every line after the header but the last ends in a line break.
        let breaks = (lines.lines.len() - 1 - index).saturating_sub(1);
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

/// yaml-rust2's end of a document at column 0: `...` followed by a blank or the line's end.
fn is_document_end(line: &str) -> bool {
    line.strip_prefix("...")
        .is_some_and(|rest| rest.chars().next().is_none_or(|c| c == ' ' || c == '\t'))
}
