use super::*;

fn v(s: &str) -> Version {
    Version::parse(s).unwrap()
}

fn check(c: &str, ver: &str) -> bool {
    semver_compare(c, ver).unwrap()
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
}

#[test]
fn invalid_versions_are_refused_with_masterminds_messages() {
    for bad in [
        "",
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
            Version::parse(bad).unwrap_err().0,
            "invalid semantic version",
            "{bad:?}"
        );
    }
    assert_eq!(
        Version::parse("1.2.3-01").unwrap_err().0,
        "version segment starts with 0"
    );
    assert!(Version::parse("99999999999999999999.0.0").is_err());
}

#[test]
fn comparison_orders_prereleases_before_releases() {
    assert_eq!(v("1.2.3").compare(&v("1.2.3")), 0);
    assert_eq!(v("1.3.3").compare(&v("1.2.3")), 1);
    assert_eq!(v("1.2.3").compare(&v("1.4.3")), -1);
    assert_eq!(v("1.2.3-alpha").compare(&v("1.2.3")), -1);
    assert_eq!(v("1.2.3+a").compare(&v("1.2.3+b")), 0);
    assert_eq!(v("1.0.0-alpha.1").compare(&v("1.0.0-alpha")), 1);
    assert_eq!(v("1.0.0-alpha.beta").compare(&v("1.0.0-alpha")), 1);
    assert_eq!(v("1.0.0-2").compare(&v("1.0.0-10")), -1);
    assert_eq!(v("1.0.0-a").compare(&v("1.0.0-1")), 1);
}

#[test]
fn sprig_semver_compare_rows() {
    assert!(check("1.2.3", "1.2.3"));
    assert!(check("^1.2.0", "1.2.3"));
    assert!(!check("^1.2.0", "2.2.3"));
    assert_eq!(
        semver_compare("badConstraint", "1.2.3").unwrap_err().0,
        "improper constraint: badConstraint"
    );
    assert_eq!(
        semver_compare("1.2.0", "badVersion").unwrap_err().0,
        "invalid semantic version"
    );
}

#[test]
fn operators_and_wildcards() {
    let cases: &[(&str, &str, bool)] = &[
        (">=1.2 <3.0", "2.5.0", true),
        (">=1.2 <3.0", "3.0.0", false),
        (">=1.2, <3.0", "1.2.0", true),
        // A partial version is a range: above 1.2 means 1.3 or later.
        ("> 1.2", "1.3.0", true),
        (">1.2", "1.2.5", false),
        (">1", "1.9.0", false),
        (">1", "2.0.0", true),
        ("<=1.2", "1.2.9", true),
        ("<=1.2", "1.3.0", false),
        ("=<1.2.3", "1.2.3", true),
        ("=>1.2.3", "1.2.3", true),
        ("!=1.2.3", "1.2.4", true),
        ("!=1.2.x", "1.2.4", false),
        ("!=1.x", "2.0.0", true),
        ("1.2.x", "1.2.9", true),
        ("1.2.x", "1.3.0", false),
        ("*", "5.4.3", true),
        ("x", "0.0.1", true),
        ("~1.2.3", "1.2.9", true),
        ("~1.2.3", "1.3.0", false),
        ("~1", "1.9.0", true),
        ("~>1.2", "1.2.7", true),
        ("^0.2.3", "0.2.9", true),
        ("^0.2.3", "0.3.0", false),
        ("^0.0.3", "0.0.3", true),
        ("^0.0.3", "0.0.4", false),
        ("^0", "0.9.0", true),
        ("^1.x", "1.9.9", true),
        ("1.2 - 1.4.5", "1.4.5", true),
        ("1.2 - 1.4.5", "1.4.6", false),
        ("1 - 2", "2.9.0", true),
        ("<1 || >=3", "3.1.0", true),
        ("<1 || >=3", "2.0.0", false),
        ("v1.2.3", "1.2.3", true),
    ];
    for (c, ver, want) in cases {
        assert_eq!(check(c, ver), *want, "{c} vs {ver}");
    }
}

#[test]
fn prereleases_need_a_prerelease_in_the_same_and_group() {
    assert!(!check(">=1.0.0", "1.2.0-beta"));
    assert!(check(">=1.0.0-0", "1.2.0-beta"));
    assert!(check(">=1.20.0-0", "1.20.0-gke.1"));
    assert!(!check(">=1.20.0", "1.20.0-gke.1"));
    assert!(check(">=1.0.0-0 <2.0.0", "1.5.0-rc.1"));
    assert!(check(">=1.0.0-0 || <2.0.0", "3.0.0-rc.1"));
    assert!(!check("<2.0.0 || >=1.0.0", "1.5.0-rc.1"));
    assert!(!check("*", "1.0.0-rc.1"));
}

#[test]
fn improper_constraints() {
    for bad in [
        "",
        "1.0 ||",
        ">1.0<2.0",
        "a",
        ">= 1.2,, <2",
        "1.2.3.4",
        "> =1",
    ] {
        assert!(Constraints::parse(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn random_constraints_never_panic() {
    let alphabet: Vec<char> = "0123456789.xX*^~<>=!|, -+vab".chars().collect();
    let mut state: u64 = 0x1234_5678_9ABC_DEF1;
    for _ in 0..5000 {
        let mut text = String::new();
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        for k in 0..(state % 16) {
            text.push(alphabet[((state >> (k * 3)) % alphabet.len() as u64) as usize]);
        }
        if let Ok(c) = Constraints::parse(&text) {
            c.check(&v("1.2.3"));
        }
        let _ = Version::parse(&text);
    }
}
