//! Helm's split of a YAML stream into its documents (`releaseutil.SplitManifests`).

/// Splits a rendered file into its non-empty documents, each trimmed (`SplitManifests`).
pub fn split_manifests(text: &str) -> Vec<String> {
    let text = text.trim();
    let mut docs = Vec::new();
    let mut push = |doc: &str| {
        if !doc.is_empty() {
            docs.push(doc.trim().to_string());
        }
    };
    let mut begin = 0;
    while let Some((start, end)) = next_separator(text, begin) {
        push(&text[begin..start]);
        begin = end;
    }
    push(&text[begin..]);
    docs
}

/// Go's `\s`, the whitespace of Helm's separator.
fn is_separator_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | b'\x0C' | b'\r' | b' ')
}

/// The next match at or after `from` of Helm's document separator `(?:^|\s*\n)---\s*` (`---`
/// at the start of a line, with the whitespace around it), as Go's leftmost-first search
/// finds it: start and end. Written out rather than compiled: building the regular expression
/// cost every render a third of a millisecond.
fn next_separator(text: &str, from: usize) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    let (start, dashes_end) = if from == 0 && bytes.starts_with(b"---") {
        (0, 3)
    } else {
        // The first `\n---` gives the leftmost match: a whitespace run leading to a later one
        // cannot reach back past this one's dashes. The match starts where the whitespace
        // before that newline does (not before `from`, which a previous match consumed).
        let newline = from + memchr::memmem::find(&bytes[from..], b"\n---")?;
        let start = bytes[from..newline]
            .iter()
            .rposition(|&b| !is_separator_space(b))
            .map_or(from, |last| from + last + 1);
        (start, newline + 4)
    };
    let spaces = bytes[dashes_end..]
        .iter()
        .take_while(|&&b| is_separator_space(b))
        .count();
    Some((start, dashes_end + spaces))
}
