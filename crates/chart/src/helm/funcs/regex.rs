//! Sprig's regular expression functions with Go's RE2 dialect and Go's `regexp` semantics:
//! ASCII-only `\d`, `\w`, `\s` and `\b`, `\Q…\E` quoting, Go's rules for successive empty
//! matches and Go's `$name` expansion in replacements.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ops::Range;

use regex_automata::util::captures::Captures;
use regex_automata::{Input, MatchKind, meta, util::syntax};

use super::strings::explode;
use super::{FuncError, FuncMap, FuncResult, args};
use crate::engine::value::Value;
use crate::engine::value::format::quote;

/// Registers the regular expression functions.
pub fn install(funcs: &mut FuncMap) {
    funcs.add("regexMatch", |a: &[Value]| {
        args::count(a, 2)?;
        let s = args::string(a, 1)?;
        Ok(Value::Bool(
            compile(args::string(a, 0)?).is_ok_and(|re| re.is_match(s)),
        ))
    });
    funcs.add("mustRegexMatch", |a: &[Value]| {
        args::count(a, 2)?;
        let s = args::string(a, 1)?;
        Ok(Value::Bool(compile(args::string(a, 0)?)?.is_match(s)))
    });
    for (name, must) in [("regexFindAll", false), ("mustRegexFindAll", true)] {
        funcs.add(name, move |a: &[Value]| {
            args::count(a, 3)?;
            let re = compile_for(args::string(a, 0)?, must)?;
            let s = args::string(a, 1)?;
            let n = args::int(a, 2)?;
            let found = find_all(&re, s, n)
                .into_iter()
                .map(|(from, to)| Value::from(&s[from..to]))
                .collect();
            Ok(Value::list(found))
        });
    }
    for (name, must) in [("regexFind", false), ("mustRegexFind", true)] {
        funcs.add(name, move |a: &[Value]| {
            args::count(a, 2)?;
            let re = compile_for(args::string(a, 0)?, must)?;
            let s = args::string(a, 1)?;
            Ok(Value::from(re.find_at(s, 0).map_or("", |m| &s[m])))
        });
    }
    for (name, must, literal) in [
        ("regexReplaceAll", false, false),
        ("mustRegexReplaceAll", true, false),
        ("regexReplaceAllLiteral", false, true),
        ("mustRegexReplaceAllLiteral", true, true),
    ] {
        funcs.add(name, move |a: &[Value]| {
            args::count(a, 3)?;
            let re = compile_for(args::string(a, 0)?, must)?;
            let s = args::string(a, 1)?;
            let repl = args::string(a, 2)?;
            replace_all(&re, s, repl, literal)
        });
    }
    for (name, must) in [("regexSplit", false), ("mustRegexSplit", true)] {
        funcs.add(name, move |a: &[Value]| {
            args::count(a, 3)?;
            let re = compile_for(args::string(a, 0)?, must)?;
            let s = args::string(a, 1)?;
            let n = args::int(a, 2)?;
            Ok(Value::list(
                split(&re, s, n).into_iter().map(Value::from).collect(),
            ))
        });
    }
    funcs.add("regexQuoteMeta", |a: &[Value]| {
        args::count(a, 1)?;
        Ok(Value::from(quote_meta(args::string(a, 0)?)))
    });
}

/// Compiles for a `must…` function (the error is returned) or for its plain twin, which in
/// Sprig calls `regexp.MustCompile` and so panics; Go's template engine reports that panic.
fn compile_for(pattern: &str, must: bool) -> Result<Pattern, FuncError> {
    compile(pattern).map_err(|e| {
        if must {
            e
        } else {
            FuncError::failed(format!("regexp: Compile({}): {e}", quote(pattern)))
        }
    })
}

/// How deeply Go lets groups and repetitions nest (`syntax.maxHeight` is 1000).
const MAX_NESTING: u32 = 1000;

/// The largest count Go accepts in `{n,m}`.
const MAX_REPEAT: u64 = 1000;

/// Compiled patterns kept per thread, so a template calling `regexMatch` in a loop compiles
/// its pattern once; the cache is emptied when it reaches this size.
const MAX_CACHED: usize = 256;

thread_local! {
    static COMPILED: RefCell<HashMap<String, Pattern>> = RefCell::new(HashMap::new());
}

/// A compiled pattern: the engine `regex::Regex` wraps, configured as that crate configures
/// it for a `&str` pattern, except that no full DFA is built. A template compiles a pattern to
/// match a few short strings, and building the full DFA was most of compiling one
/// (docs/performance.md); the lazy DFA and the other engines match the same.
#[derive(Clone)]
pub(crate) struct Pattern {
    re: meta::Regex,
    /// Whether the pattern is empty (it splits into characters).
    empty: bool,
}

impl Pattern {
    /// Whether the pattern matches somewhere in `s`.
    pub(crate) fn is_match(&self, s: &str) -> bool {
        self.re.is_match(s)
    }

    /// Where the leftmost match at or after `start` is (with `s` as the context of anchors and
    /// word boundaries).
    fn find_at(&self, s: &str, start: usize) -> Option<Range<usize>> {
        self.re
            .search(&Input::new(s).span(start..s.len()))
            .map(|m| m.range())
    }

    /// The groups of the leftmost match at or after `start`.
    fn captures_at(&self, s: &str, start: usize) -> Option<Captures> {
        let mut caps = self.re.create_captures();
        self.re
            .search_captures(&Input::new(s).span(start..s.len()), &mut caps);
        caps.is_match().then_some(caps)
    }
}

/// Compiles a Go regular expression (or takes it from this thread's cache); errors carry Go's
/// message.
pub(crate) fn compile(pattern: &str) -> Result<Pattern, FuncError> {
    if let Some(re) = COMPILED.with(|cache| cache.borrow().get(pattern).cloned()) {
        return Ok(re);
    }
    let re = compile_uncached(pattern)?;
    COMPILED.with(|cache| {
        let mut cache = cache.borrow_mut();
        if cache.len() >= MAX_CACHED {
            cache.clear();
        }
        cache.insert(pattern.to_string(), re.clone());
    });
    Ok(re)
}

fn compile_uncached(pattern: &str) -> Result<Pattern, FuncError> {
    let translated = translate(pattern)?;
    let parsed = regex_syntax::ast::parse::ParserBuilder::new()
        .nest_limit(MAX_NESTING)
        .build()
        .parse(&translated);
    if let Err(error) = parsed {
        return Err(go_error(pattern, &translated, &error));
    }
    let config = meta::Config::new()
        .match_kind(MatchKind::LeftmostFirst)
        .utf8_empty(true)
        .nfa_size_limit(Some(8 << 20))
        .hybrid_cache_capacity(2 << 20)
        .dfa(false);
    meta::Regex::builder()
        .configure(config)
        .syntax(syntax::Config::new().utf8(true).nest_limit(MAX_NESTING))
        .build(&translated)
        .map(|re| Pattern {
            re,
            empty: translated.is_empty(),
        })
        .map_err(|_| parse_error("expression too large", pattern))
}

fn parse_error(code: &str, expr: &str) -> FuncError {
    FuncError::failed(format!("error parsing regexp: {code}: `{expr}`"))
}

/// Go's `syntax.Error` for what the parser rejected: Go's code, and the part of the pattern
/// Go quotes (the whole pattern for unbalanced groups, the offending piece otherwise).
fn go_error(pattern: &str, translated: &str, error: &regex_syntax::ast::Error) -> FuncError {
    use regex_syntax::ast::ErrorKind as K;
    let span = error.span();
    let piece = translated
        .get(span.start.offset..span.end.offset)
        .unwrap_or(pattern);
    let rest = translated.get(span.start.offset..).unwrap_or(pattern);
    let (code, expr) = match error.kind() {
        K::ClassUnclosed => ("missing closing ]", rest),
        K::GroupUnclosed => ("missing closing )", pattern),
        K::GroupUnopened => ("unexpected )", pattern),
        K::RepetitionMissing => ("missing argument to repetition operator", operator(rest)),
        K::RepetitionCountInvalid => ("invalid repeat count", piece),
        K::ClassRangeInvalid | K::ClassRangeLiteral => ("invalid character class range", piece),
        K::EscapeUnexpectedEof => ("trailing backslash at end of expression", ""),
        K::EscapeUnrecognized
        | K::UnsupportedBackreference
        | K::EscapeHexEmpty
        | K::EscapeHexInvalid
        | K::EscapeHexInvalidDigit
        | K::ClassEscapeInvalid => ("invalid escape sequence", piece),
        K::UnicodeClassInvalid => ("invalid character class range", piece),
        K::GroupNameDuplicate { .. } => ("duplicate capture group name", piece),
        K::GroupNameEmpty | K::GroupNameInvalid | K::GroupNameUnexpectedEof => {
            ("invalid named capture", rest)
        }
        K::NestLimitExceeded(_) => ("expression nests too deeply", pattern),
        K::CaptureLimitExceeded => ("expression too large", pattern),
        _ => ("invalid or unsupported Perl syntax", piece),
    };
    parse_error(code, expr)
}

/// The repetition operator at the start of `s`, with its lazy `?` (`*`, `+?`, `{2,3}`).
fn operator(s: &str) -> &str {
    let len = if s.starts_with('{') {
        s.find('}').map_or(s.len(), |i| i + 1)
    } else {
        s.chars().next().map_or(0, char::len_utf8)
    };
    let lazy = usize::from(s[len..].starts_with('?'));
    &s[..len + lazy]
}

/// A Go repetition `{n}`, `{n,}` or `{n,m}` at the start of `s`: its length, or `None` when
/// the brace is a literal (Go reads a brace that starts no valid repetition as text).
fn repetition(s: &str) -> Option<(usize, u64, Option<u64>)> {
    let close = s.find('}')?;
    let body = &s[1..close];
    let (min, max) = match body.split_once(',') {
        Some((min, "")) => (min, None),
        Some((min, max)) => (min, Some(max)),
        None => (body, Some(body)),
    };
    let number = |t: &str| {
        if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        Some(t.parse::<u64>().unwrap_or(u64::MAX))
    };
    let min = number(min)?;
    let max = match max {
        Some(m) => Some(number(m)?),
        None => None,
    };
    Some((close + 1, min, max))
}

/// Rewrites Go's syntax into the `regex` crate's: Go's Perl classes and word boundaries are
/// ASCII-only where the crate's are Unicode-aware, and `\Q…\E` quotes literal text.
fn translate(pattern: &str) -> Result<String, FuncError> {
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut chars = pattern.chars().peekable();
    let mut in_class = false;
    let mut class_start = false;
    while let Some(c) = chars.next() {
        let at_class_start = std::mem::take(&mut class_start);
        match c {
            '\\' => {
                let Some(e) = chars.next() else {
                    return Err(FuncError::failed(
                        "error parsing regexp: trailing backslash at end of expression: ``",
                    ));
                };
                match (e, in_class) {
                    ('Q', _) => {
                        let mut literal = String::new();
                        while let Some(q) = chars.next() {
                            if q == '\\' && chars.peek() == Some(&'E') {
                                chars.next();
                                break;
                            }
                            literal.push(q);
                        }
                        if in_class {
                            for q in literal.chars() {
                                out.push_str(&regex::escape(&q.to_string()));
                            }
                        } else {
                            out.push_str(&regex::escape(&literal));
                        }
                    }
                    ('d', false) => out.push_str("[0-9]"),
                    ('D', false) => out.push_str("[^0-9]"),
                    ('w', false) => out.push_str("[0-9A-Za-z_]"),
                    ('W', false) => out.push_str("[^0-9A-Za-z_]"),
                    ('s', false) => out.push_str("[\\t\\n\\f\\r ]"),
                    ('S', false) => out.push_str("[^\\t\\n\\f\\r ]"),
                    ('d', true) => out.push_str("0-9"),
                    ('w', true) => out.push_str("0-9A-Za-z_"),
                    ('s', true) => out.push_str("\\t\\n\\f\\r "),
                    ('D', true) => out.push_str("[^0-9]"),
                    ('W', true) => out.push_str("[^0-9A-Za-z_]"),
                    ('S', true) => out.push_str("[^\\t\\n\\f\\r ]"),
                    ('b', false) => out.push_str("(?-u:\\b)"),
                    ('B', false) => out.push_str("(?-u:\\B)"),
                    (e, _) => {
                        out.push('\\');
                        out.push(e);
                    }
                }
            }
            '[' if !in_class => {
                in_class = true;
                class_start = true;
                out.push('[');
                if chars.peek() == Some(&'^') {
                    chars.next();
                    out.push('^');
                }
                // A `]` right after the opening bracket is a literal in Go.
                if chars.peek() == Some(&']') {
                    chars.next();
                    out.push_str("\\]");
                }
            }
            '[' if in_class && chars.peek() == Some(&':') => {
                // A POSIX class `[:alpha:]` inside a bracket expression.
                out.push('[');
                for p in chars.by_ref() {
                    out.push(p);
                    if p == ']' {
                        break;
                    }
                }
            }
            '[' => out.push_str("\\["),
            ']' if in_class && !at_class_start => {
                in_class = false;
                out.push(']');
            }
            '{' if !in_class => {
                let rest = &pattern
                    [pattern.len() - chars.clone().map(char::len_utf8).sum::<usize>() - 1..];
                match repetition(rest) {
                    Some((len, min, max)) => {
                        if min > MAX_REPEAT || max.is_some_and(|m| m > MAX_REPEAT || m < min) {
                            return Err(parse_error("invalid repeat count", &rest[..len]));
                        }
                        out.push_str(&rest[..len]);
                        for _ in 1..len {
                            chars.next();
                        }
                    }
                    None => out.push_str("\\{"),
                }
            }
            '}' if !in_class => out.push_str("\\}"),
            '&' | '~' if in_class => {
                // The crate reads `&&` and `~~` as set operations; Go has none.
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    Ok(out)
}

/// Go's `FindAllStringIndex(s, n)`: an empty match right after a previous match is skipped.
fn find_all(re: &Pattern, s: &str, n: i64) -> Vec<(usize, usize)> {
    let limit = if n < 0 {
        usize::MAX
    } else {
        usize::try_from(n).unwrap_or(usize::MAX)
    };
    let mut found = Vec::new();
    let mut pos = 0;
    let mut prev_end: Option<usize> = None;
    while found.len() < limit && pos <= s.len() {
        let Some(m) = re.find_at(s, pos) else {
            break;
        };
        let mut accept = true;
        if m.end == pos {
            if Some(m.start) == prev_end {
                accept = false;
            }
            pos += s[pos..].chars().next().map_or(1, char::len_utf8);
        } else {
            pos = m.end;
        }
        prev_end = Some(m.end);
        if accept {
            found.push((m.start, m.end));
        }
    }
    found
}

/// Go's `Regexp.Split(s, n)`.
fn split<'a>(re: &Pattern, s: &'a str, n: i64) -> Vec<&'a str> {
    if n == 0 {
        return Vec::new();
    }
    if re.empty && !s.is_empty() {
        // An empty pattern splits into characters (at most n parts, the rest in the last).
        return explode(s, n);
    }
    let matches = find_all(re, s, n);
    let mut parts = Vec::with_capacity(matches.len() + 1);
    let mut beg = 0;
    for (start, end) in matches {
        if n > 0 && parts.len() as i64 == n - 1 {
            break;
        }
        if end == 0 {
            continue;
        }
        parts.push(&s[beg..start]);
        beg = end;
    }
    parts.push(&s[beg..]);
    parts
}

/// Go's `ReplaceAllString`/`ReplaceAllLiteralString`.
fn replace_all(re: &Pattern, s: &str, repl: &str, literal: bool) -> FuncResult {
    let mut out = String::with_capacity(s.len());
    let mut last_end = 0;
    let mut search = 0;
    while search <= s.len() {
        let Some(caps) = re.captures_at(s, search) else {
            break;
        };
        let Some(m) = caps.get_match().map(|m| m.range()) else {
            break;
        };
        out.push_str(&s[last_end..m.start]);
        // No replacement for an empty match right after another match, as Go.
        if m.end > last_end || m.start == 0 {
            if literal {
                out.push_str(repl);
            } else {
                expand(s, &caps, repl, &mut out);
            }
            if out.len() > super::strings::MAX_OUTPUT {
                return Err(FuncError::failed(format!(
                    "output exceeds the limit of {} bytes",
                    super::strings::MAX_OUTPUT
                )));
            }
        }
        last_end = m.end;
        let width = s[search..].chars().next().map_or(1, char::len_utf8);
        search = if search + width > m.end {
            search + width
        } else if search + 1 > m.end {
            search + 1
        } else {
            m.end
        };
    }
    out.push_str(&s[last_end..]);
    Ok(Value::from(out))
}

/// Go's `Regexp.Expand`: `$name` takes the longest run of letters, digits and `_`; `${name}`
/// delimits it; `$$` is a dollar; a malformed reference stays literal text. `caps` are groups
/// of a match in `s`.
fn expand(s: &str, caps: &Captures, template: &str, out: &mut String) {
    let mut rest = template;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        rest = &rest[at + 1..];
        if let Some(after) = rest.strip_prefix('$') {
            out.push('$');
            rest = after;
            continue;
        }
        let Some((name, after)) = reference(rest) else {
            out.push('$');
            continue;
        };
        rest = after;
        let group = match group_number(name) {
            Some(i) => caps.get_group(i),
            None => caps.get_group_by_name(name),
        };
        if let Some(span) = group {
            out.push_str(&s[span.range()]);
        }
    }
    out.push_str(rest);
}

/// The name of a `$` reference at the start of `s` and what follows it.
fn reference(s: &str) -> Option<(&str, &str)> {
    let (braced, body) = match s.strip_prefix('{') {
        Some(body) => (true, body),
        None => (false, s),
    };
    let len = body
        .char_indices()
        .find(|&(_, c)| !(c.is_alphanumeric() || c == '_'))
        .map_or(body.len(), |(i, _)| i);
    if len == 0 {
        return None;
    }
    let name = &body[..len];
    if braced {
        let after = body[len..].strip_prefix('}')?;
        return Some((name, after));
    }
    Some((name, &body[len..]))
}

/// A reference's group number: decimal digits without a leading zero.
fn group_number(name: &str) -> Option<usize> {
    if !name.bytes().all(|b| b.is_ascii_digit()) || name.len() > 1 && name.starts_with('0') {
        return None;
    }
    name.parse().ok().filter(|&n: &usize| n < 100_000_000)
}

/// Go's `regexp.QuoteMeta`.
fn quote_meta(s: &str) -> String {
    let mut out = String::with_capacity(s.len() * 2);
    for c in s.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn re(p: &str) -> Pattern {
        compile(p).unwrap_or_else(|e| panic!("{p}: {e}"))
    }

    #[test]
    fn perl_classes_are_ascii_only() {
        assert!(!re(r"^\d$").is_match("٣"));
        assert!(re(r"^\D$").is_match("٣"));
        assert!(re(r"^[\w-]+$").is_match("a_b-9"));
        assert!(!re(r"^\w$").is_match("é"));
        assert!(re(r"\bfoo\b").is_match("a foo b"));
        assert!(re(r"\Qa.b\E").is_match("xa.by"));
        assert!(!re(r"\Qa.b\E").is_match("xacby"));
        assert!(re(r"^[]a]+$").is_match("]a"));
        assert!(re(r"^[a&&b~~]+$").is_match("a&b~"));
        assert!(re(r"^[a[b]+$").is_match("a[b"));
    }

    #[test]
    fn find_all_skips_empty_matches_after_a_match() {
        let found: Vec<&str> = find_all(&re("a*"), "baaab", -1)
            .into_iter()
            .map(|(f, t)| &"baaab"[f..t])
            .collect();
        assert_eq!(found, ["", "aaa", ""]);
        assert_eq!(find_all(&re("a"), "aaa", 2).len(), 2);
        assert!(find_all(&re("a"), "aaa", 0).is_empty());
    }

    #[test]
    fn replacement_expands_like_go() {
        let r = re("a(x*)b");
        let run = |repl: &str| {
            replace_all(&r, "-ab-axxb-", repl, false)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
        };
        assert_eq!(run("${1}W").as_deref(), Some("-W-xxW-"));
        assert_eq!(run("$1W").as_deref(), Some("---"));
        assert_eq!(run("$$1").as_deref(), Some("-$1-$1-"));
        assert_eq!(run("$").as_deref(), Some("-$-$-"));
        let empty = replace_all(&re("a*"), "baaac", "x", false).ok();
        assert_eq!(
            empty.as_ref().and_then(Value::as_str),
            Some("xbxcx"),
            "Go's empty-match rule"
        );
    }

    #[test]
    fn split_follows_go() {
        assert_eq!(split(&re("a"), "banana", -1), ["b", "n", "n", ""]);
        assert_eq!(split(&re("a"), "banana", 2), ["b", "nana"]);
        assert_eq!(split(&re(""), "abc", -1), ["a", "b", "c"]);
        assert_eq!(split(&re("z+"), "pizza", -1), ["pi", "a"]);
    }

    #[test]
    fn bad_patterns_report_go_messages() {
        let message = |p: &str| compile(p).err().map(|e| e.to_string());
        assert_eq!(
            message("[a").as_deref(),
            Some("error parsing regexp: missing closing ]: `[a`")
        );
        assert_eq!(
            message("a)").as_deref(),
            Some("error parsing regexp: unexpected ): `a)`")
        );
        for (pattern, want) in [
            ("a{1001}", "invalid repeat count: `{1001}`"),
            ("a{2,1}", "invalid repeat count: `{2,1}`"),
            ("*a", "missing argument to repetition operator: `*`"),
            (r"a\q", r"invalid escape sequence: `\q`"),
            ("(?=a)", "invalid or unsupported Perl syntax: `(?=`"),
            ("[z-a]", "invalid character class range: `z-a`"),
            ("x[ab", "missing closing ]: `[ab`"),
            ("(a", "missing closing ): `(a`"),
        ] {
            let got = message(pattern);
            assert_eq!(
                got.as_deref(),
                Some(format!("error parsing regexp: {want}").as_str()),
                "{pattern}"
            );
        }
    }

    #[test]
    fn braces_that_start_no_repetition_are_literal_as_in_go() {
        assert!(re("^a{$").is_match("a{"));
        assert!(re("^x{,3}$").is_match("x{,3}"));
        assert!(re("^a{2}}$").is_match("aa}"));
        assert!(re("^a{2,}$").is_match("aaaa"));
        let deep = format!("{}a{}", "(".repeat(300), ")".repeat(300));
        assert!(re(&deep).is_match("a"));
    }
}
