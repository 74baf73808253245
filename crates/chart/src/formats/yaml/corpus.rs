//! Test support for the line-by-line readers of plain YAML (`plain` and `render::quick_head`):
//! the conformance corpus's YAML texts, and mutations of them, to compare those readers with
//! the full reader on.

use std::path::{Path, PathBuf};

/// Every YAML text of the conformance corpus (`shared/conformance/charts` and `helm`): each
/// `.yaml`, `.yml` and `.txt` file whole, and each of its documents as Helm splits rendered
/// output. The files are the charts' values, `Chart.yaml` and template sources (which the
/// readers mostly refuse), and the rendered output Helm gave.
pub(crate) fn conformance_texts() -> Vec<(PathBuf, String)> {
    fn walk(dir: &Path, found: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, found);
            } else if path
                .extension()
                .is_some_and(|e| e == "yaml" || e == "yml" || e == "txt")
            {
                found.push(path);
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance");
    let mut files = Vec::new();
    walk(&root.join("charts"), &mut files);
    walk(&root.join("helm"), &mut files);
    assert!(
        !files.is_empty(),
        "no conformance corpus at {}",
        root.display()
    );
    files.sort();
    let mut texts = Vec::new();
    for path in files {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        for doc in super::split_manifests(&text) {
            texts.push((path.clone(), doc));
        }
        texts.push((path, text));
    }
    texts
}

/// Whether `path` holds output Helm rendered.
pub(crate) fn is_rendered(path: &Path) -> bool {
    let path = path.to_string_lossy();
    path.contains("/expected/") || path.contains("/golden/")
}

/// How many mutants a reader read as the full reader does (`agrees`), of how many it was given:
/// 40 of each text, drawn from `seed`. `agrees` asserts that the two readers never differ, and
/// says whether the quick one read the mutant at all.
pub(crate) fn mutants_read<'t>(
    texts: impl IntoIterator<Item = &'t str>,
    seed: u64,
    mut agrees: impl FnMut(&str) -> bool,
) -> (usize, usize) {
    let mut random = numbers(seed);
    let mut accepted = 0;
    let mut tried = 0;
    for text in texts {
        for _ in 0..40 {
            tried += 1;
            accepted += usize::from(agrees(&mutate(text, &mut random)));
        }
    }
    (accepted, tried)
}

/// A deterministic source of numbers below `n` (xorshift), for mutations.
fn numbers(seed: u64) -> impl FnMut(usize) -> usize {
    let mut state = seed;
    move |n| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n.max(1) as u64) as usize
    }
}

/// Characters that change what YAML means.
const TRICKY: &[u8] = b":- #\"'|>[]{}&*!\n.x0%@`?,~\\+\t";

/// `text` changed at one to three places chosen by `random`: a tricky character inserted,
/// removed or put in place of another, a line indented one space more or less, a line repeated
/// or moved down by one.
fn mutate(text: &str, random: &mut impl FnMut(usize) -> usize) -> String {
    let mut mutant = mutate_once(text, random);
    for _ in 0..random(3) {
        mutant = mutate_once(&mutant, random);
    }
    mutant
}

fn mutate_once(text: &str, random: &mut impl FnMut(usize) -> usize) -> String {
    let mut bytes = text.as_bytes().to_vec();
    let at = random(bytes.len() + 1);
    match random(6) {
        0 => bytes.insert(at, TRICKY[random(TRICKY.len())]),
        1 if at < bytes.len() => {
            bytes.remove(at);
        }
        2 if at < bytes.len() => bytes[at] = TRICKY[random(TRICKY.len())],
        3 => {
            let line = bytes[..at]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |i| i + 1);
            if bytes.get(line) == Some(&b' ') && random(2) == 0 {
                bytes.remove(line);
            } else {
                bytes.insert(line, b' ');
            }
        }
        _ => {
            let lines: Vec<&str> = text.split('\n').collect();
            let i = random(lines.len());
            let mut out = lines.clone();
            if random(2) == 0 {
                out.insert(i, lines[i]);
            } else if i + 1 < lines.len() {
                out.swap(i, i + 1);
            }
            return out.join("\n");
        }
    }
    String::from_utf8(bytes).unwrap_or_default()
}
