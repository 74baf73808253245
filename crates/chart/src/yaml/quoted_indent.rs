//! libyaml accepts the continuation lines of a quoted scalar at any indentation
//! (`key: "some\ntext"` with `text` at column 0); yaml-rust2 refuses those below the block's
//! indentation. Continuation lines lose their leading spaces when the scalar is folded, so
//! indenting them further changes nothing in the value and lets yaml-rust2 read it.

/// The text with the continuation lines of the quoted scalar starting at character
/// `scalar_start` indented past it; `None` when there is no such scalar to repair.
pub fn reindent(text: &str, scalar_start: usize) -> Option<String> {
    let (start, quote) = text.char_indices().nth(scalar_start)?;
    if quote != '"' && quote != '\'' {
        return None;
    }
    let end = closing_quote(text, start, quote)?;
    let column = text[..start]
        .chars()
        .rev()
        .take_while(|c| *c != '\n')
        .count();
    let padding = " ".repeat(column + 1);
    let mut out = String::with_capacity(text.len() + padding.len() * 4);
    out.push_str(&text[..start]);
    let mut changed = false;
    for (i, c) in text[start..end].char_indices() {
        out.push(c);
        if c == '\n' {
            let rest = &text[start + i + 1..];
            // A document marker at column 0 ends the scalar in libyaml too: keep it there.
            if !(rest.starts_with("---") || rest.starts_with("...")) {
                out.push_str(&padding);
                changed = true;
            }
        }
    }
    out.push_str(&text[end..]);
    changed.then_some(out)
}

/// Byte offset of the quote that closes the scalar opened at `start`.
fn closing_quote(text: &str, start: usize, quote: char) -> Option<usize> {
    let mut chars = text[start + 1..].char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' if quote == '"' => {
                chars.next();
            }
            '\'' if quote == '\'' => {
                if chars.peek().is_some_and(|(_, n)| *n == '\'') {
                    chars.next();
                } else {
                    return Some(start + 1 + i);
                }
            }
            '"' if quote == '"' => return Some(start + 1 + i),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continuation_lines_are_indented_past_the_quote() {
        assert_eq!(
            reindent("a: \"x\ny\"\nb: 1\n", 3).as_deref(),
            Some("a: \"x\n    y\"\nb: 1\n")
        );
        assert_eq!(
            reindent("k: 'it''s\nmore'\n", 3).as_deref(),
            Some("k: 'it''s\n    more'\n")
        );
        assert_eq!(
            reindent("a: \"x\\\"\ny\"", 3).as_deref(),
            Some("a: \"x\\\"\n    y\"")
        );
    }

    #[test]
    fn nothing_to_repair() {
        assert_eq!(reindent("a: \"unterminated\n", 3), None);
        assert_eq!(reindent("a: plain\n", 3), None);
        assert_eq!(reindent("a: \"x\n---\"", 3), None);
        assert_eq!(reindent("", 7), None);
    }
}
