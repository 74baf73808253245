//! Comparisons of object metadata that controllers use to skip writes that would change
//! nothing.

use std::collections::BTreeMap;

/// Whether `existing` holds every key of `wanted` with the same value (extra keys, which
/// others may have added, do not matter); an absent `wanted` is always held.
pub fn contains_all(
    existing: Option<&BTreeMap<String, String>>,
    wanted: Option<&BTreeMap<String, String>>,
) -> bool {
    wanted
        .into_iter()
        .flatten()
        .all(|(key, value)| existing.and_then(|map| map.get(key)) == Some(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn extra_keys_in_existing_do_not_matter() {
        let existing = map(&[("a", "1"), ("b", "2")]);
        assert!(contains_all(Some(&existing), Some(&map(&[("a", "1")]))));
        assert!(contains_all(Some(&existing), None));
        assert!(contains_all(None, None));
    }

    #[test]
    fn a_missing_key_or_other_value_is_not_held() {
        let existing = map(&[("a", "1")]);
        assert!(!contains_all(Some(&existing), Some(&map(&[("a", "2")]))));
        assert!(!contains_all(Some(&existing), Some(&map(&[("b", "1")]))));
        assert!(!contains_all(None, Some(&map(&[("a", "1")]))));
    }
}
