//! spiff's semver functions (`semver`, `semverrelease`, `semvermajor`, `semverminor`,
//! `semverpatch`, `semverincmajor`, `semverincminor`, `semverincpatch`, `semverprerelease`,
//! `semvermetadata`, `semvercmp`, `semversort`) on versions parsed and printed as the
//! Masterminds semver package (v3) that spiff uses does: a leading `v`, missing minor and
//! patch parts allowed; results that keep the input's form keep its `v`.

use std::cmp::Ordering;

use crate::eval::{R, Stop, fail, simple_text};
use crate::node::{Node, Val};

/// The names of the functions of this module.
pub(crate) const FUNCTIONS: &[&str] = &[
    "semver",
    "semverrelease",
    "semvermajor",
    "semverminor",
    "semverpatch",
    "semverincmajor",
    "semverincminor",
    "semverincpatch",
    "semverprerelease",
    "semvermetadata",
    "semvercmp",
    "semversort",
];

/// A parsed version.
#[derive(Clone, Debug, PartialEq)]
struct Version {
    v_prefix: bool,
    major: u64,
    minor: u64,
    patch: u64,
    prerelease: String,
    metadata: String,
}

fn identifier_chars(s: &str) -> bool {
    s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
}

/// Masterminds' `validatePrerelease`.
fn check_prerelease(p: &str) -> Result<(), String> {
    for part in p.split('.') {
        if part.chars().all(|c| c.is_ascii_digit()) {
            if part.len() > 1 && part.starts_with('0') {
                return Err("Version segment starts with 0".into());
            }
        } else if !identifier_chars(part) {
            return Err("Invalid Prerelease string".into());
        }
    }
    Ok(())
}

/// Masterminds' `validateMetadata`.
fn check_metadata(m: &str) -> Result<(), String> {
    if m.split('.').all(identifier_chars) {
        Ok(())
    } else {
        Err("Invalid Metadata string".into())
    }
}

/// Dot-separated identifiers of `[0-9A-Za-z-]`, none empty (the regular expression's form).
fn identifiers(s: &str) -> bool {
    s.split('.').all(|p| !p.is_empty() && identifier_chars(p))
}

impl Version {
    /// Masterminds' `NewVersion`.
    fn parse(s: &str) -> Result<Version, String> {
        let invalid = || "Invalid Semantic Version".to_string();
        let (v_prefix, rest) = match s.strip_prefix('v') {
            Some(r) => (true, r),
            None => (false, s),
        };
        let (rest, metadata) = match rest.split_once('+') {
            Some((r, m)) if identifiers(m) => (r, m),
            Some(_) => return Err(invalid()),
            None => (rest, ""),
        };
        let (core, prerelease) = match rest.split_once('-') {
            Some((c, p)) if identifiers(p) => (c, p),
            Some(_) => return Err(invalid()),
            None => (rest, ""),
        };
        let numbers: Vec<&str> = core.split('.').collect();
        if numbers.len() > 3
            || numbers
                .iter()
                .any(|n| n.is_empty() || !n.chars().all(|c| c.is_ascii_digit()))
        {
            return Err(invalid());
        }
        let number = |i: usize| -> Result<u64, String> {
            numbers
                .get(i)
                .map_or(Ok(0), |n| n.parse::<u64>().map_err(|e| e.to_string()))
        };
        if !prerelease.is_empty() {
            check_prerelease(prerelease)?;
        }
        Ok(Version {
            v_prefix,
            major: number(0)?,
            minor: number(1)?,
            patch: number(2)?,
            prerelease: prerelease.into(),
            metadata: metadata.into(),
        })
    }

    /// The normalized form (`String()`), without `v`.
    fn normalized(&self) -> String {
        let mut s = format!("{}.{}.{}", self.major, self.minor, self.patch);
        if !self.prerelease.is_empty() {
            s.push('-');
            s.push_str(&self.prerelease);
        }
        if !self.metadata.is_empty() {
            s.push('+');
            s.push_str(&self.metadata);
        }
        s
    }

    /// A derived version as Masterminds writes it (`Original()` of a changed version): the
    /// normalized form with the input's `v`.
    fn derived(&self) -> String {
        let v = if self.v_prefix { "v" } else { "" };
        format!("{v}{}", self.normalized())
    }

    fn release(&self) -> Version {
        Version {
            prerelease: String::new(),
            metadata: String::new(),
            ..self.clone()
        }
    }

    fn compare(&self, o: &Version) -> Ordering {
        (self.major, self.minor, self.patch)
            .cmp(&(o.major, o.minor, o.patch))
            .then_with(|| compare_prerelease(&self.prerelease, &o.prerelease))
    }
}

/// Masterminds' `comparePrerelease`: a version without prerelease is greater; parts compare
/// numerically when both are numbers, numbers before strings, a missing part first.
fn compare_prerelease(a: &str, b: &str) -> Ordering {
    match (a.is_empty(), b.is_empty()) {
        (true, true) => return Ordering::Equal,
        (true, false) => return Ordering::Greater,
        (false, true) => return Ordering::Less,
        _ => {}
    }
    let (pa, pb): (Vec<&str>, Vec<&str>) = (a.split('.').collect(), b.split('.').collect());
    for i in 0..pa.len().max(pb.len()) {
        let (x, y) = (
            pa.get(i).copied().unwrap_or(""),
            pb.get(i).copied().unwrap_or(""),
        );
        let order = match (x, y) {
            _ if x == y => Ordering::Equal,
            ("", _) => Ordering::Less,
            (_, "") => Ordering::Greater,
            _ => match (x.parse::<u64>(), y.parse::<u64>()) {
                (Ok(m), Ok(n)) => m.cmp(&n),
                (Ok(_), Err(_)) => Ordering::Less,
                (Err(_), Ok(_)) => Ordering::Greater,
                (Err(_), Err(_)) => x.cmp(y),
            },
        };
        if order != Ordering::Equal {
            return order;
        }
    }
    Ordering::Equal
}

fn parse_arg(name: &str, n: &Node) -> Result<(Version, String), Stop> {
    let Val::Str(s) = &n.val else {
        return fail(format!(
            "{name} requires one string argument, but got {}",
            n.type_name()
        ));
    };
    match Version::parse(s) {
        Ok(v) => Ok((v, s.to_string())),
        Err(e) => fail(format!("{name}: {s:?}: {e}")),
    }
}

/// Runs the semver function `name` on its evaluated arguments.
pub(crate) fn call(name: &str, args: &[Node]) -> R {
    match name {
        "semvercmp" => {
            let [a, b] = args else {
                return fail(format!("{name} requires two arguments"));
            };
            let order = parse_arg(name, a)?.0.compare(&parse_arg(name, b)?.0);
            Ok(Node::int(order as i64))
        }
        "semversort" => sort(name, args),
        "semverprerelease" | "semvermetadata" | "semverrelease" => with_setter(name, args),
        _ => {
            let [arg] = args else {
                return fail(format!("{name} requires one semver argument"));
            };
            let (v, _) = parse_arg(name, arg)?;
            Ok(match name {
                "semver" => Node::str(v.normalized()),
                "semvermajor" => Node::int(v.major as i64),
                "semverminor" => Node::int(v.minor as i64),
                "semverpatch" => Node::int(v.patch as i64),
                "semverincmajor" => Node::str(
                    Version {
                        major: v.major + 1,
                        minor: 0,
                        patch: 0,
                        ..v.release()
                    }
                    .derived(),
                ),
                "semverincminor" => Node::str(
                    Version {
                        minor: v.minor + 1,
                        patch: 0,
                        ..v.release()
                    }
                    .derived(),
                ),
                _ => {
                    // Masterminds' IncPatch: a prerelease or metadata is dropped instead.
                    let patch = if v.prerelease.is_empty() && v.metadata.is_empty() {
                        v.patch + 1
                    } else {
                        v.patch
                    };
                    Node::str(
                        Version {
                            patch,
                            ..v.release()
                        }
                        .derived(),
                    )
                }
            })
        }
    }
}

/// The getters with an optional value to set: `semverprerelease(v)` reads, and
/// `semverprerelease(v, "beta.2")` writes, the part.
fn with_setter(name: &str, args: &[Node]) -> R {
    let (v, value) = match args {
        [v] => (parse_arg(name, v)?.0, None),
        [v, value] => (parse_arg(name, v)?.0, Some(value)),
        [] => return fail(format!("{name} requires one semver argument")),
        _ => {
            return fail(format!(
                "{name} requires one semver argument and an optional value"
            ));
        }
    };
    let Some(value) = value else {
        return Ok(Node::str(match name {
            "semverprerelease" => v.prerelease,
            "semvermetadata" => v.metadata,
            _ => v.release().derived(),
        }));
    };
    let attr = name.trim_start_matches("semver");
    let Some(text) = simple_text(value) else {
        return fail(format!("{name}: {attr} must be a string"));
    };
    let invalid = |e: String| Stop::Fail(format!("{name}: invalid {attr} {text:?}: {e}"));
    let changed = match name {
        "semverprerelease" => {
            if !text.is_empty() {
                check_prerelease(&text).map_err(invalid)?;
            }
            Version {
                prerelease: text.clone(),
                ..v
            }
        }
        "semvermetadata" => {
            if !text.is_empty() {
                check_metadata(&text).map_err(invalid)?;
            }
            Version {
                metadata: text.clone(),
                ..v
            }
        }
        _ => {
            let release = Version::parse(&text).map_err(invalid)?;
            Version {
                prerelease: v.prerelease,
                metadata: v.metadata,
                ..release
            }
        }
    };
    Ok(Node::str(changed.derived()))
}

/// `semversort(v, …)` or `semversort(list)`: the versions in ascending order, as given.
fn sort(name: &str, args: &[Node]) -> R {
    let items: Vec<Node> = match args {
        [
            Node {
                val: Val::List(l), ..
            },
        ] => l.to_vec(),
        _ => args.to_vec(),
    };
    let mut versions = items
        .iter()
        .map(|n| parse_arg(name, n))
        .collect::<Result<Vec<_>, _>>()?;
    versions.sort_by(|a, b| a.0.compare(&b.0));
    Ok(Node::list(
        versions.into_iter().map(|(_, s)| Node::str(s)).collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_loosely_and_print_normalized() {
        let v = Version::parse("v1.2-beta.1").unwrap();
        assert_eq!(v.normalized(), "1.2.0-beta.1");
        assert_eq!(v.derived(), "v1.2.0-beta.1");
        assert_eq!(Version::parse("1").unwrap().normalized(), "1.0.0");
        assert_eq!(
            Version::parse("1.2.3+demo.x-y").unwrap().metadata,
            "demo.x-y"
        );
        for bad in [
            "",
            "x",
            "1.2.3.4",
            "1..2",
            "1.2.3-",
            "1.2.3-a..b",
            "v",
            "1.2.3-01",
        ] {
            assert!(Version::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn precedence_follows_semver() {
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
            let (a, b) = (
                Version::parse(pair[0]).unwrap(),
                Version::parse(pair[1]).unwrap(),
            );
            assert_eq!(a.compare(&b), Ordering::Less, "{} < {}", pair[0], pair[1]);
            assert_eq!(b.compare(&a), Ordering::Greater);
        }
        let plain = Version::parse("1.0.0+a").unwrap();
        assert_eq!(
            plain.compare(&Version::parse("v1.0.0+b").unwrap()),
            Ordering::Equal
        );
    }
}
