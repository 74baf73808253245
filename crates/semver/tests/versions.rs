//! Versions: lenient parsing, each release's error wording, ordering and derived versions.

use std::cmp::Ordering;

use landscaper_semver::{Release, Version};

fn v(s: &str) -> Version {
    Version::parse(s, Release::V3_4).unwrap()
}

fn error(s: &str, release: Release) -> String {
    Version::parse(s, release).unwrap_err().to_string()
}

#[test]
fn lenient_versions_fill_missing_parts() {
    let x = v("v1.2");
    assert_eq!((x.major, x.minor, x.patch), (1, 2, 0));
    assert_eq!(x.original, "v1.2");
    assert_eq!(x.to_string(), "1.2.0");
    let y = v("1.2.3-beta.1+c0ff33");
    assert_eq!(y.prerelease, "beta.1");
    assert_eq!(y.metadata, "c0ff33");
    assert_eq!(v("01.02.03").to_string(), "1.2.3");
    assert_eq!(v("1").to_string(), "1.0.0");
    assert_eq!(v("v1.2-beta.1").to_string(), "1.2.0-beta.1");
    assert_eq!(v("1.2.3+demo.x-y").metadata, "demo.x-y");
}

#[test]
fn invalid_versions_are_refused_in_each_releases_words() {
    for bad in [
        "",
        "x",
        "badVersion",
        "1.2.3.4",
        "1..2",
        "v",
        "1.2.3-",
        "1.2.3+",
        "1.2.3-a..b",
        "V1.2",
    ] {
        assert_eq!(
            error(bad, Release::V3_4),
            "invalid semantic version",
            "{bad:?}"
        );
        assert_eq!(
            error(bad, Release::V3_3),
            "Invalid Semantic Version",
            "{bad:?}"
        );
    }
    assert_eq!(
        error("1.2.3-01", Release::V3_4),
        "version segment starts with 0"
    );
    assert_eq!(
        error("1.2.3-01", Release::V3_3),
        "Version segment starts with 0"
    );
    let huge = "99999999999999999999.0.0";
    let range = "parsing version segment: strconv.ParseUint: parsing \"99999999999999999999\": value out of range";
    assert_eq!(error(huge, Release::V3_4), format!("error {range}"));
    assert_eq!(error(huge, Release::V3_3), format!("Error {range}"));
    // Masterminds reads the numbers before it checks the prerelease.
    assert_eq!(
        error("1.99999999999999999999-01", Release::V3_4)
            .split(':')
            .next(),
        Some("error parsing version segment")
    );
}

#[test]
fn comparison_orders_prereleases_before_releases() {
    assert_eq!(v("1.2.3").compare(&v("1.2.3")), Ordering::Equal);
    assert_eq!(v("1.3.3").compare(&v("1.2.3")), Ordering::Greater);
    assert_eq!(v("1.2.3").compare(&v("1.4.3")), Ordering::Less);
    assert_eq!(v("1.2.3-alpha").compare(&v("1.2.3")), Ordering::Less);
    assert_eq!(v("1.2.3+a").compare(&v("v1.2.3+b")), Ordering::Equal);
    assert_eq!(v("1.0.0-2").compare(&v("1.0.0-10")), Ordering::Less);
    assert_eq!(v("1.0.0-a").compare(&v("1.0.0-1")), Ordering::Greater);
    let order = [
        "1.0.0-alpha",
        "1.0.0-alpha.1",
        "1.0.0-alpha.beta",
        "1.0.0-beta",
        "1.0.0-beta.2",
        "1.0.0-beta.11",
        "1.0.0-rc.1",
        "1.0.0",
        "1.0.1",
        "1.1.0",
        "2.0.0",
    ];
    for pair in order.windows(2) {
        let (a, b) = (v(pair[0]), v(pair[1]));
        assert_eq!(a.compare(&b), Ordering::Less, "{} < {}", pair[0], pair[1]);
        assert_eq!(
            b.compare(&a),
            Ordering::Greater,
            "{} > {}",
            pair[1],
            pair[0]
        );
    }
}

#[test]
fn derived_versions_keep_the_sources_v() {
    let pre = v("v1.2.3-rc.1+build");
    assert_eq!(pre.inc_patch().original, "v1.2.3");
    assert_eq!(pre.inc_minor().original, "v1.3.0");
    assert_eq!(pre.inc_major().original, "v2.0.0");
    // Only a prerelease keeps the patch number; metadata alone does not.
    assert_eq!(v("1.2.3+build").inc_patch().original, "1.2.4");
    assert_eq!(v("1.2.3").inc_patch().to_string(), "1.2.4");
    let set = pre.set_prerelease("beta.2", Release::V3_4).unwrap();
    assert_eq!(set.original, "v1.2.3-beta.2+build");
    let cleared = pre.set_metadata("", Release::V3_4).unwrap();
    assert_eq!(cleared.original, "v1.2.3-rc.1");
}

#[test]
fn set_parts_are_checked_in_each_releases_words() {
    let base = v("1.2.3");
    let prerelease = |text: &str, release| {
        base.set_prerelease(text, release)
            .map_err(|e| e.to_string())
    };
    let metadata =
        |text: &str, release| base.set_metadata(text, release).map_err(|e| e.to_string());
    assert_eq!(
        prerelease("a_b", Release::V3_3).unwrap_err(),
        "Invalid Prerelease string"
    );
    assert_eq!(
        prerelease("a_b", Release::V3_4).unwrap_err(),
        "invalid prerelease string"
    );
    assert_eq!(
        prerelease("01", Release::V3_3).unwrap_err(),
        "Version segment starts with 0"
    );
    assert_eq!(
        metadata("a_b", Release::V3_3).unwrap_err(),
        "Invalid Metadata string"
    );
    assert_eq!(
        metadata("a_b", Release::V3_4).unwrap_err(),
        "invalid metadata string"
    );
    // Empty identifiers: v3.3 lets them through, v3.4 refuses them.
    assert_eq!(
        prerelease("a..b", Release::V3_3).unwrap().to_string(),
        "1.2.3-a..b"
    );
    assert_eq!(
        prerelease("a..b", Release::V3_4).unwrap_err(),
        "invalid prerelease string"
    );
    assert_eq!(
        metadata("a..b", Release::V3_3).unwrap().to_string(),
        "1.2.3+a..b"
    );
    assert_eq!(
        metadata("a..b", Release::V3_4).unwrap_err(),
        "invalid metadata string"
    );
}
