//! Rewrites of YAML text that libyaml (and so Helm) reads but yaml-rust2 refuses, each
//! leaving the meaning unchanged: they only touch whitespace that YAML discards.
//!
//! - Continuation lines of a quoted scalar may sit at any indentation in libyaml
//!   (`key: "some\ntext"` with `text` at column 0); folding drops their leading spaces, so
//!   indenting them further changes nothing.
//! - A tab may separate `key:` from its value in libyaml; as separation it is a space.

/// The text with the continuation lines of the quoted scalar starting at character
/// `scalar_start` indented past it; `None` when there is no such scalar to repair.
pub fn reindent_quoted(text: &str, scalar_start: usize) -> Option<String> {
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

/// The text with the tabs between a `:` and the value starting at character `value_start`
/// turned into spaces; `None` when no such tab precedes it.
pub fn untab_value(text: &str, value_start: usize) -> Option<String> {
    let (start, _) = text.char_indices().nth(value_start)?;
    let gap_start = text[..start].trim_end_matches([' ', '\t']).len();
    let gap = &text[gap_start..start];
    if !text[..gap_start].ends_with(':') || !gap.contains('\t') {
        return None;
    }
    Some(format!(
        "{}{}{}",
        &text[..gap_start],
        gap.replace('\t', " "),
        &text[start..]
    ))
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
            reindent_quoted("a: \"x\ny\"\nb: 1\n", 3).as_deref(),
            Some("a: \"x\n    y\"\nb: 1\n")
        );
        assert_eq!(
            reindent_quoted("k: 'it''s\nmore'\n", 3).as_deref(),
            Some("k: 'it''s\n    more'\n")
        );
        assert_eq!(
            reindent_quoted("a: \"x\\\"\ny\"", 3).as_deref(),
            Some("a: \"x\\\"\n    y\"")
        );
    }

    #[test]
    fn nothing_to_repair() {
        assert_eq!(reindent_quoted("a: \"unterminated\n", 3), None);
        assert_eq!(reindent_quoted("a: plain\n", 3), None);
        assert_eq!(reindent_quoted("a: \"x\n---\"", 3), None);
        assert_eq!(reindent_quoted("", 7), None);
    }

    #[test]
    fn tabs_after_a_colon_become_spaces() {
        assert_eq!(untab_value("a:\tb\n", 3).as_deref(), Some("a: b\n"));
        assert_eq!(
            untab_value("x: 1\na: \t\tb\n", 10).as_deref(),
            Some("x: 1\na:   b\n")
        );
        assert_eq!(untab_value("a: b\n", 3), None);
        assert_eq!(untab_value("-\tb\n", 2), None);
    }
}
