//! Glob patterns as `.Files.Glob` reads them (gobwas/glob with `/` as separator): `*` within a
//! path segment, `**` across segments, `?`, character classes `[abc]`, `[a-z]`, `[!x]`,
//! alternatives `{a,b}` and `\` escapes.

/// One piece of a compiled pattern.
#[derive(Clone, Debug, PartialEq)]
enum Token {
    Literal(char),
    /// `?`: one character other than `/`.
    AnyChar,
    /// `*`: any run of characters other than `/`.
    Star,
    /// `**`: any run of characters.
    SuperStar,
    /// `[…]`: ranges, negated when the flag is set.
    Class(Vec<(char, char)>, bool),
    /// `{a,b}`: alternative token sequences.
    Alternatives(Vec<Vec<Token>>),
}

/// A compiled glob pattern.
#[derive(Clone, Debug)]
pub struct Glob(Vec<Token>);

impl Glob {
    /// Compiles `pattern`; `None` when it is malformed (an unclosed `[` or `{`).
    pub fn compile(pattern: &str) -> Option<Glob> {
        let chars: Vec<char> = pattern.chars().collect();
        let mut pos = 0;
        let tokens = parse_sequence(&chars, &mut pos, false)?;
        (pos == chars.len()).then_some(Glob(tokens))
    }

    /// Whether `name` matches the whole pattern.
    pub fn matches(&self, name: &str) -> bool {
        let chars: Vec<char> = name.chars().collect();
        let mut budget = MATCH_BUDGET;
        match_tokens(&self.0, &chars, &mut budget)
    }
}

/// Bounds backtracking so that a hostile pattern cannot take forever; real patterns use a
/// tiny fraction of it.
const MATCH_BUDGET: usize = 1_000_000;

fn parse_sequence(chars: &[char], pos: &mut usize, in_braces: bool) -> Option<Vec<Token>> {
    let mut tokens = Vec::new();
    while let Some(&c) = chars.get(*pos) {
        if in_braces && (c == ',' || c == '}') {
            return Some(tokens);
        }
        *pos += 1;
        let token = match c {
            '\\' => {
                let escaped = *chars.get(*pos)?;
                *pos += 1;
                Token::Literal(escaped)
            }
            '?' => Token::AnyChar,
            '*' if chars.get(*pos) == Some(&'*') => {
                *pos += 1;
                Token::SuperStar
            }
            '*' => Token::Star,
            '[' => parse_class(chars, pos)?,
            '{' => parse_alternatives(chars, pos)?,
            c => Token::Literal(c),
        };
        tokens.push(token);
    }
    (!in_braces).then_some(tokens)
}

fn parse_class(chars: &[char], pos: &mut usize) -> Option<Token> {
    let negated = chars.get(*pos) == Some(&'!');
    if negated {
        *pos += 1;
    }
    let mut ranges = Vec::new();
    loop {
        let c = *chars.get(*pos)?;
        *pos += 1;
        if c == ']' {
            return Some(Token::Class(ranges, negated));
        }
        if chars.get(*pos) == Some(&'-') && chars.get(*pos + 1).is_some_and(|e| *e != ']') {
            let end = chars[*pos + 1];
            *pos += 2;
            ranges.push((c, end));
        } else {
            ranges.push((c, c));
        }
    }
}

fn parse_alternatives(chars: &[char], pos: &mut usize) -> Option<Token> {
    let mut alternatives = Vec::new();
    loop {
        alternatives.push(parse_sequence(chars, pos, true)?);
        match chars.get(*pos) {
            Some(',') => *pos += 1,
            Some('}') => {
                *pos += 1;
                return Some(Token::Alternatives(alternatives));
            }
            _ => return None,
        }
    }
}

fn match_tokens(tokens: &[Token], name: &[char], budget: &mut usize) -> bool {
    if *budget == 0 {
        return false;
    }
    *budget -= 1;
    let Some((first, rest)) = tokens.split_first() else {
        return name.is_empty();
    };
    match first {
        Token::Literal(c) => name.first() == Some(c) && match_tokens(rest, &name[1..], budget),
        Token::AnyChar => {
            name.first().is_some_and(|c| *c != '/') && match_tokens(rest, &name[1..], budget)
        }
        Token::Class(ranges, negated) => {
            name.first().is_some_and(|c| {
                let inside = ranges.iter().any(|(lo, hi)| lo <= c && c <= hi);
                inside != *negated
            }) && match_tokens(rest, &name[1..], budget)
        }
        Token::Star | Token::SuperStar => {
            let crosses = *first == Token::SuperStar;
            for skip in 0..=name.len() {
                if match_tokens(rest, &name[skip..], budget) {
                    return true;
                }
                if skip < name.len() && name[skip] == '/' && !crosses {
                    return false;
                }
            }
            false
        }
        Token::Alternatives(alternatives) => alternatives.iter().any(|alternative| {
            let mut joined = alternative.clone();
            joined.extend_from_slice(rest);
            match_tokens(&joined, name, budget)
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, name: &str) -> bool {
        Glob::compile(pattern).is_some_and(|g| g.matches(name))
    }

    #[test]
    fn stars_stop_at_slashes_unless_doubled() {
        assert!(matches("files/*", "files/a.txt"));
        assert!(!matches("files/*", "files/sub/a.txt"));
        assert!(matches("files/**", "files/sub/a.txt"));
        assert!(matches("**.yaml", "a/b/c.yaml"));
        assert!(!matches("*.yaml", "a/c.yaml"));
    }

    #[test]
    fn classes_alternatives_and_escapes() {
        assert!(matches("f?le[0-9].{txt,md}", "file1.md"));
        assert!(!matches("file[!0-9]", "file1"));
        assert!(matches("a\\*b", "a*b"));
        assert!(Glob::compile("a[bc").is_none());
        assert!(Glob::compile("{a,b").is_none());
    }
}
