//! Constraints: operators, wildcards, ranges, the prerelease rule of each release, and
//! improper constraints.

use landscaper_semver::{Constraints, Release, Version};

fn check_in(release: Release, constraint: &str, version: &str) -> bool {
    Constraints::parse(constraint, release)
        .unwrap()
        .check(&Version::parse(version, release).unwrap())
}

/// Rows both releases answer alike.
const ROWS: &[(&str, &str, bool)] = &[
    ("1.2.3", "1.2.3", true),
    ("^1.2.0", "1.2.3", true),
    ("^1.2.0", "2.2.3", false),
    (">=1.2 <3.0", "2.5.0", true),
    (">=1.2 <3.0", "3.0.0", false),
    (">=1.2, <3.0", "1.2.0", true),
    // A partial version is a range: above 1.2 means 1.3 or later.
    ("> 1.2", "1.3.0", true),
    (">1.2", "1.2.5", false),
    (">1", "1.9.0", false),
    (">11", "11.1.0", false),
    (">1", "2.0.0", true),
    ("<=1.2", "1.2.9", true),
    ("<=1.2", "1.3.0", false),
    ("=<1.2.3", "1.2.3", true),
    ("=>1.2.3", "1.2.3", true),
    ("= 1.2.3", "1.2.3", true),
    ("1.2.3", "1.2.4", false),
    ("!=1.2.3", "1.2.4", true),
    ("!=1.2.x", "1.2.4", false),
    ("!=1.x", "2.0.0", true),
    ("1.2.x", "1.2.9", true),
    ("1.2.x", "1.3.0", false),
    ("*", "5.4.3", true),
    ("x", "0.0.1", true),
    ("~1.2", "1.2.3", true),
    ("~1.2", "1.3.0", false),
    ("~1.2.3", "1.2.9", true),
    ("~1.2.3", "1.2.2", false),
    ("~1.2.3", "1.3.0", false),
    ("~1", "1.9.0", true),
    ("~>1.2", "1.2.7", true),
    ("^0.2.3", "0.2.9", true),
    ("^0.2.3", "0.3.0", false),
    ("^0.0.3", "0.0.3", true),
    ("^0.0.3", "0.0.4", false),
    ("^0.0.3", "0.1.3", false),
    ("^0", "0.9.0", true),
    ("^1.x", "1.9.9", true),
    ("1.2 - 1.4.5", "1.4.5", true),
    ("1.2 - 1.4.5", "1.4.6", false),
    ("1 - 2", "2.9.0", true),
    ("<1 || >=3", "3.1.0", true),
    ("<1 || >=3", "2.0.0", false),
    (">= 1.2, < 3.0.0 || >= 4.2.3", "1.4.0", true),
    (">= 1.2, < 3.0.0 || >= 4.2.3", "3.1.0", false),
    (">= 1.2, < 3.0.0 || >= 4.2.3", "4.3.0", true),
    ("v1.2.3", "1.2.3", true),
    (">=v1.2.0 <2", "v1.2.3", true),
    (">=1.0.0", "1.2.0-beta", false),
    (">=1.0.0-0", "1.2.0-beta", true),
    (">=1.2.3-alpha", "1.2.3-beta.1", true),
    (">=1.20.0-0", "1.20.0-gke.1", true),
    (">=1.20.0", "1.20.0-gke.1", false),
    (">=1.0.0-0 || <2.0.0", "3.0.0-rc.1", true),
    ("<2.0.0 || >=1.0.0", "1.5.0-rc.1", false),
    ("*", "1.0.0-rc.1", false),
];

#[test]
fn both_releases_match_the_common_rows() {
    for release in [Release::V3_3, Release::V3_4] {
        for (constraint, version, want) in ROWS {
            assert_eq!(
                check_in(release, constraint, version),
                *want,
                "{release:?}: {constraint} vs {version}"
            );
        }
    }
}

#[test]
fn a_prerelease_satisfies_a_group_in_v3_4_and_a_constraint_in_v3_3() {
    // v3.4: one constraint naming a prerelease admits prereleases to the whole AND group.
    assert!(check_in(Release::V3_4, ">=1.0.0-0 <2.0.0", "1.5.0-rc.1"));
    assert!(!check_in(Release::V3_3, ">=1.0.0-0 <2.0.0", "1.5.0-rc.1"));
    // v3.3: `!=` on a full version does not look at prereleases.
    assert!(check_in(Release::V3_3, "!=1.2.3", "1.2.4-beta"));
    assert!(!check_in(Release::V3_4, "!=1.2.3", "1.2.4-beta"));
    assert!(!check_in(Release::V3_3, "!=1.2.x", "1.3.0-beta"));
}

#[test]
fn improper_constraints_are_refused_in_each_releases_words() {
    for release in [Release::V3_3, Release::V3_4] {
        for bad in [
            "",
            ">= ",
            "1.0 ||",
            ">1.0<2.0",
            "a",
            "abc",
            ">= 1.2,, <2",
            "1.2.3.4",
            "> =1",
            "~> x.y",
        ] {
            assert!(
                Constraints::parse(bad, release).is_err(),
                "{release:?}: {bad:?}"
            );
        }
        assert_eq!(
            Constraints::parse("badConstraint", release)
                .unwrap_err()
                .to_string(),
            "improper constraint: badConstraint"
        );
    }
    // A pattern-valid version NewVersion refuses (a number beyond uint64).
    let huge = "99999999999999999999";
    assert_eq!(
        Constraints::parse(huge, Release::V3_3)
            .unwrap_err()
            .to_string(),
        "constraint Parser Error"
    );
    assert_eq!(
        Constraints::parse(huge, Release::V3_4)
            .unwrap_err()
            .to_string(),
        "constraint parser error"
    );
}

#[test]
fn random_constraints_never_panic() {
    let alphabet: Vec<char> = "0123456789.xX*^~<>=!|, -+vab".chars().collect();
    let version = Version::parse("1.2.3", Release::V3_4).unwrap();
    let mut state: u64 = 0x1234_5678_9ABC_DEF1;
    for _ in 0..5000 {
        let mut text = String::new();
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        for k in 0..(state % 16) {
            text.push(alphabet[((state >> (k * 3)) % alphabet.len() as u64) as usize]);
        }
        for release in [Release::V3_3, Release::V3_4] {
            if let Ok(c) = Constraints::parse(&text, release) {
                c.check(&version);
            }
            let _ = Version::parse(&text, release);
        }
    }
}
