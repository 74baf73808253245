//! Go's `path.Match` shell patterns, which `.helmignore` rules and `--show-only` use:
//! `*` and `?` never cross a `/`, `[...]` classes with ranges and `^` negation, `\` escapes.

/// A malformed pattern (Go's `path.ErrBadPattern`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadPattern;

impl std::fmt::Display for BadPattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("syntax error in pattern")
    }
}

impl std::error::Error for BadPattern {}

/// Whether `name` matches the whole of `pattern`, as Go's `path.Match` decides.
///
/// Like Go, a malformed pattern is reported only when matching reaches the bad part, except
/// that [`validate`] checks the whole pattern up front.
pub fn matches(pattern: &str, name: &str) -> Result<bool, BadPattern> {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    match_from(&p, &n, true)
}

/// [`matches()`] on a pattern and name split into characters, with a malformed pattern
/// matching nothing. It skips [`matches()`]'s check of the pattern's rest after a mismatch,
/// which could only turn that `false` into an error: every `.helmignore` rule meets every file
/// of a chart, and most of those meetings are mismatches.
pub fn matches_or_false(pattern: &[char], name: &[char]) -> bool {
    match_from(pattern, name, false).unwrap_or(false)
}

/// Checks that every part of `pattern` is well formed (Go validates while matching; Helm
/// matches a probe name to surface errors, which this replaces).
pub fn validate(pattern: &str) -> Result<(), BadPattern> {
    let p: Vec<char> = pattern.chars().collect();
    let mut i = 0;
    while i < p.len() {
        match p[i] {
            '\\' => {
                if i + 1 >= p.len() {
                    return Err(BadPattern);
                }
                i += 2;
            }
            '[' => {
                let (_, next) = class_match(&p, i, None)?;
                i = next;
            }
            _ => i += 1,
        }
    }
    Ok(())
}

/// Matches; on a mismatch, `check_rest` reports a malformed rest of the pattern as Go does.
fn match_from(p: &[char], n: &[char], check_rest: bool) -> Result<bool, BadPattern> {
    let (mut pi, mut ni) = (0, 0);
    // Backtracking point for the last `*`: pattern index after it and name index it covers to.
    let mut star: Option<(usize, usize)> = None;
    loop {
        if pi < p.len() {
            match p[pi] {
                '*' => {
                    pi += 1;
                    star = Some((pi, ni));
                    continue;
                }
                '?' if ni < n.len() && n[ni] != '/' => {
                    pi += 1;
                    ni += 1;
                    continue;
                }
                '[' if ni < n.len() => {
                    let (ok, next) = class_match(p, pi, Some(n[ni]))?;
                    if ok && n[ni] != '/' {
                        pi = next;
                        ni += 1;
                        continue;
                    }
                }
                '\\' => {
                    if pi + 1 >= p.len() {
                        return Err(BadPattern);
                    }
                    if ni < n.len() && n[ni] == p[pi + 1] {
                        pi += 2;
                        ni += 1;
                        continue;
                    }
                }
                c if c != '?' && c != '[' && ni < n.len() && n[ni] == c => {
                    pi += 1;
                    ni += 1;
                    continue;
                }
                _ => {}
            }
        } else if ni == n.len() {
            return Ok(true);
        }
        // Mismatch: let the last star swallow one more character, unless that is a `/`.
        match star {
            Some((sp, sn)) if sn < n.len() && n[sn] != '/' => {
                star = Some((sp, sn + 1));
                pi = sp;
                ni = sn + 1;
            }
            _ => {
                if check_rest {
                    validate_rest(p, pi)?;
                }
                return Ok(false);
            }
        }
    }
}

/// Go reports a bad pattern even when the name already failed to match.
fn validate_rest(p: &[char], from: usize) -> Result<(), BadPattern> {
    let rest: String = p[from.min(p.len())..].iter().collect();
    validate(&rest)
}

/// Matches `c` against the class starting at `p[start] == '['`; returns whether it matched
/// and the index after the closing `]`. With `c == None` only the syntax is checked.
fn class_match(p: &[char], start: usize, c: Option<char>) -> Result<(bool, usize), BadPattern> {
    let mut i = start + 1;
    let negated = i < p.len() && p[i] == '^';
    if negated {
        i += 1;
    }
    let mut matched = false;
    let mut first = true;
    loop {
        if i >= p.len() {
            return Err(BadPattern);
        }
        if p[i] == ']' && !first {
            i += 1;
            break;
        }
        first = false;
        let (lo, next) = class_char(p, i)?;
        i = next;
        let mut hi = lo;
        if i < p.len() && p[i] == '-' {
            let (h, next) = class_char(p, i + 1)?;
            hi = h;
            i = next;
        }
        if let Some(c) = c
            && lo <= c
            && c <= hi
        {
            matched = true;
        }
    }
    Ok((matched != negated, i))
}

fn class_char(p: &[char], i: usize) -> Result<(char, usize), BadPattern> {
    match p.get(i) {
        None | Some('-') | Some(']') => Err(BadPattern),
        Some('\\') => p.get(i + 1).map(|c| (*c, i + 2)).ok_or(BadPattern),
        Some(c) => Ok((*c, i + 1)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stars_and_questions_stay_inside_one_segment() {
        assert!(matches("templates/*.yaml", "templates/a.yaml").unwrap());
        assert!(!matches("templates/*.yaml", "templates/sub/a.yaml").unwrap());
        assert!(
            matches(
                "templates/subdir/role*",
                "templates/subdir/rolebinding.yaml"
            )
            .unwrap()
        );
        assert!(matches("a?c", "abc").unwrap());
        assert!(!matches("a?c", "a/c").unwrap());
        assert!(matches("*", ".helmignore").unwrap());
    }

    #[test]
    fn classes_ranges_negation_and_escapes() {
        assert!(matches("[a-c]x", "bx").unwrap());
        assert!(!matches("[^a-c]x", "bx").unwrap());
        assert!(matches("\\*", "*").unwrap());
        assert!(matches("templates/.?*", "templates/.hidden").unwrap());
        assert!(!matches("templates/.?*", "templates/.").unwrap());
    }

    #[test]
    fn malformed_patterns_are_errors() {
        assert_eq!(matches("[", "a"), Err(BadPattern));
        assert_eq!(validate("a[b"), Err(BadPattern));
        assert_eq!(matches("x\\", "y"), Err(BadPattern));
        assert!(validate("*.tgz").is_ok());
    }

    #[test]
    fn unchecked_matching_agrees_with_checked_matching() {
        let chars = |s: &str| s.chars().collect::<Vec<_>>();
        for (pattern, name) in [
            ("templates/*.yaml", "templates/a.yaml"),
            ("templates/*.yaml", "templates/sub/a.yaml"),
            ("[^a-c]x", "bx"),
            ("*.tgz", "chart.tgz"),
            ("OWNERS", "values.yaml"),
            ("x[", "y"),
            ("x\\", "x"),
        ] {
            assert_eq!(
                matches_or_false(&chars(pattern), &chars(name)),
                matches(pattern, name).unwrap_or(false),
                "{pattern} {name}"
            );
        }
    }
}
