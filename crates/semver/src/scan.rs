//! Reading constraint text as Masterminds' regular expressions do: the version pattern
//! (`cvRegex`) at the start of a text, and the rewriting of hyphen ranges.

use crate::version::is_ident_char;

/// The text of one constraint version (`cvRegex`) from the start of a text, as its pieces.
pub(crate) struct RawVersion<'a> {
    /// All of it, from the optional `v` to the end of the metadata.
    pub(crate) text: &'a str,
    /// The major part: digits or wildcards.
    pub(crate) major: &'a str,
    /// The minor part without its dot, if any.
    pub(crate) minor: Option<&'a str>,
    /// The patch part without its dot, if any.
    pub(crate) patch: Option<&'a str>,
    /// The prerelease without its `-`, if any.
    pub(crate) pre: Option<&'a str>,
}

/// Whether a version part is a wildcard.
pub(crate) fn is_wild(s: &str) -> bool {
    matches!(s, "x" | "X" | "*")
}

/// The longest version `cvRegex` matches at the start of `s`, or `None` when it matches none.
pub(crate) fn scan_version(s: &str) -> Option<RawVersion<'_>> {
    let b = s.as_bytes();
    let mut i = usize::from(b.first() == Some(&b'v'));
    // `[0-9|x|X|\*]+`: the pattern's class holds `|` too.
    let num_part = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && matches!(b[*i], b'0'..=b'9' | b'|' | b'x' | b'X' | b'*') {
            *i += 1;
        }
        (*i > start).then(|| &s[start..*i])
    };
    let major = num_part(&mut i)?;
    let mut parts = [None, None];
    for slot in &mut parts {
        if b.get(i) != Some(&b'.') {
            break;
        }
        let save = i;
        i += 1;
        match num_part(&mut i) {
            Some(p) => *slot = Some(p),
            None => {
                i = save;
                break;
            }
        }
    }
    // Dot-separated identifiers; a dot not followed by one is left unread.
    let ident_run = |i: &mut usize| {
        let start = *i;
        let mut end = *i;
        loop {
            let seg = *i;
            while *i < b.len() && is_ident_char(char::from(b[*i])) {
                *i += 1;
            }
            if *i == seg {
                *i = end;
                break;
            }
            end = *i;
            if b.get(*i) == Some(&b'.') {
                *i += 1;
            } else {
                break;
            }
        }
        (end > start).then(|| &s[start..end])
    };
    let mut pre = None;
    if b.get(i) == Some(&b'-') {
        let save = i;
        i += 1;
        match ident_run(&mut i) {
            Some(p) => pre = Some(p),
            None => i = save,
        }
    }
    if b.get(i) == Some(&b'+') {
        let save = i;
        i += 1;
        if ident_run(&mut i).is_none() {
            i = save;
        }
    }
    Some(RawVersion {
        text: &s[..i],
        major,
        minor: parts[0],
        patch: parts[1],
        pre,
    })
}

/// `rewriteRange`: hyphen ranges `A - B` become `>= A, <= B `, the blanks around them
/// swallowed as the pattern swallows them.
pub(crate) fn rewrite_ranges(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    'outer: while !rest.is_empty() {
        for (start, _) in rest.char_indices() {
            let candidate = &rest[start..];
            let Some(first) = scan_version(candidate) else {
                continue;
            };
            let after = &candidate[first.text.len()..];
            let trimmed = after.trim_start();
            if trimmed.len() == after.len() || !trimmed.starts_with('-') {
                continue;
            }
            let second_text = &trimmed[1..];
            let spaced = second_text.trim_start();
            if spaced.len() == second_text.len() {
                continue;
            }
            let Some(second) = scan_version(spaced) else {
                continue;
            };
            out.push_str(rest[..start].trim_end());
            out.push_str(&format!(">= {}, <= {} ", first.text, second.text));
            rest = spaced[second.text.len()..].trim_start();
            continue 'outer;
        }
        out.push_str(rest);
        break;
    }
    out
}
