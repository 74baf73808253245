//! go-yaml v2's order for string map keys: a "natural" order where runs of digits compare
//! by value ("a2" < "a10") and a non-letter sorts before a letter.

use std::cmp::Ordering;

fn is_letter(c: char) -> bool {
    c.is_alphabetic()
}

fn is_digit(c: char) -> bool {
    c.is_ascii_digit() || (!c.is_ascii() && c.is_numeric())
}

/// The value Go's loop accumulates for a digit rune (`r - '0'`, wrapping like int64).
fn digit_value(c: char) -> i64 {
    i64::from(c as u32) - i64::from('0' as u32)
}

/// go-yaml v2's `keyList.Less` for two string keys.
pub fn key_less(a: &str, b: &str) -> bool {
    less(a, b, false)
}

/// go-yaml v3's `keyList.Less`: as v2, except that right after a shared digit a letter sorts
/// before a non-letter.
pub fn key_less_v3(a: &str, b: &str) -> bool {
    less(a, b, true)
}

fn less(a: &str, b: &str, v3: bool) -> bool {
    let ar: Vec<char> = a.chars().collect();
    let br: Vec<char> = b.chars().collect();
    less_chars(&ar, &br, v3)
}

fn less_chars(ar: &[char], br: &[char], v3: bool) -> bool {
    let mut after_digit = false;
    for i in 0..ar.len().min(br.len()) {
        if ar[i] == br[i] {
            after_digit = is_digit(ar[i]);
            continue;
        }
        let al = is_letter(ar[i]);
        let bl = is_letter(br[i]);
        if al && bl {
            return ar[i] < br[i];
        }
        if al || bl {
            return if v3 && after_digit { al } else { bl };
        }
        let (mut an, mut bn) = (0i64, 0i64);
        if ar[i] == '0' || br[i] == '0' {
            // A zero after other digits is part of a number, not a leading zero.
            let mut j = i;
            while j > 0 && is_digit(ar[j - 1]) {
                j -= 1;
                if ar[j] != '0' {
                    an = 1;
                    bn = 1;
                    break;
                }
            }
        }
        let mut ai = i;
        while ai < ar.len() && is_digit(ar[ai]) {
            an = an.wrapping_mul(10).wrapping_add(digit_value(ar[ai]));
            ai += 1;
        }
        let mut bi = i;
        while bi < br.len() && is_digit(br[bi]) {
            bn = bn.wrapping_mul(10).wrapping_add(digit_value(br[bi]));
            bi += 1;
        }
        if an != bn {
            return an < bn;
        }
        if ai != bi {
            return ai < bi;
        }
        return ar[i] < br[i];
    }
    ar.len() < br.len()
}

/// Sorts keys with [`key_less`] (or [`key_less_v3`]). A merge sort of our own: the
/// comparison is not a total order for some keys (`017` < `0x1F` < `1_0` < `017`), and this
/// sort never panics on that. For such keys Helm's own order is not fixed either: Go starts
/// from a map's random iteration order, so the same chart renders differently run to run.
pub fn sort_keys<T>(items: Vec<T>, key: impl Fn(&T) -> &str, v3: bool) -> Vec<T> {
    // Each key is decoded to characters once, not at every comparison.
    let decorated: Vec<(Vec<char>, T)> = items
        .into_iter()
        .map(|item| (key(&item).chars().collect(), item))
        .collect();
    merge_sort(decorated, v3)
        .into_iter()
        .map(|(_, item)| item)
        .collect()
}

fn merge_sort<T>(mut items: Vec<(Vec<char>, T)>, v3: bool) -> Vec<(Vec<char>, T)> {
    if items.len() <= 1 {
        return items;
    }
    let right = items.split_off(items.len() / 2);
    let left = merge_sort(items, v3);
    let right = merge_sort(right, v3);
    let mut out = Vec::with_capacity(left.len() + right.len());
    let mut l = left.into_iter().peekable();
    let mut r = right.into_iter().peekable();
    while let (Some(a), Some(b)) = (l.peek(), r.peek()) {
        if less_chars(&b.0, &a.0, v3) {
            out.extend(r.next());
        } else {
            out.extend(l.next());
        }
    }
    out.extend(l);
    out.extend(r);
    out
}

/// [`key_less`] as an ordering, for callers that need one.
pub fn key_cmp(a: &str, b: &str) -> Ordering {
    if key_less(a, b) {
        Ordering::Less
    } else if key_less(b, a) {
        Ordering::Greater
    } else {
        Ordering::Equal
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(keys: &[&str]) -> Vec<String> {
        sort_keys(
            keys.iter().map(|s| s.to_string()).collect(),
            |s| s.as_str(),
            false,
        )
    }

    #[test]
    fn digit_runs_compare_by_value() {
        assert_eq!(sorted(&["a10", "a2", "a1"]), ["a1", "a2", "a10"]);
        assert_eq!(sorted(&["port10", "port9"]), ["port9", "port10"]);
    }

    #[test]
    fn non_letters_sort_before_letters() {
        assert_eq!(
            sorted(&["b", "_a", "a", "A", "1"]),
            ["_a", "1", "A", "a", "b"]
        );
        assert_eq!(sorted(&["a-b", "ab", "a.b"]), ["a-b", "a.b", "ab"]);
    }

    #[test]
    fn prefixes_sort_first_and_leading_zeros_count() {
        assert_eq!(sorted(&["abc", "ab"]), ["ab", "abc"]);
        assert_eq!(sorted(&["a01", "a1", "a001"]), ["a1", "a01", "a001"]);
        assert_eq!(key_cmp("x", "x"), Ordering::Equal);
    }

    #[test]
    fn v3_puts_letters_first_after_a_shared_digit() {
        assert!(key_less("a1-", "a1b"));
        assert!(key_less_v3("a1b", "a1-"));
        assert!(key_less_v3("-", "b"));
    }
}
