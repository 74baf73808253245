//! spiff's semver functions (`semver`, `semverrelease`, `semvermajor`, `semverminor`,
//! `semverpatch`, `semverincmajor`, `semverincminor`, `semverincpatch`, `semverprerelease`,
//! `semvermetadata`, `semvercmp`, `semversort`, `semvermatch`) on versions and constraints of
//! `landscaper-semver`, following the Masterminds/semver release Landscaper links spiff with
//! (v3.3): a leading `v`, missing minor and patch parts allowed; results that keep the input's
//! form keep its `v`.

use landscaper_semver::{Constraints, Release, Version};

use crate::eval::{R, Stop, fail, simple_text};
use crate::node::{Node, Val};

/// The Masterminds/semver release spiff runs on in Landscaper.
const SPIFF_SEMVER: Release = Release::V3_3;

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
    "semvermatch",
];

fn parse_arg(name: &str, n: &Node) -> Result<(Version, String), Stop> {
    let Val::Str(s) = &n.val else {
        return fail(format!(
            "{name} requires one string argument, but got {}",
            n.type_name()
        ));
    };
    match Version::parse(s, SPIFF_SEMVER) {
        Ok(v) => Ok((v, s.to_string())),
        Err(e) => fail(format!("{name}: {s:?}: {e}")),
    }
}

/// A number of a version as spiff's `int64`.
fn int(n: u64) -> Node {
    Node::int(n as i64)
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
        "semvermatch" => {
            let Some((version, constraints)) = args.split_first() else {
                return fail(format!("{name} requires at least one arguments"));
            };
            let (v, _) = parse_arg(name, version)?;
            for (i, c) in constraints.iter().enumerate() {
                let Val::Str(text) = &c.val else {
                    return fail(format!("{name}: constraint argument {i} must be string"));
                };
                let parsed = Constraints::parse(text, SPIFF_SEMVER).map_err(|e| {
                    Stop::Fail(format!("{name}: invalid constraint {text:?}[{i}]: {e}"))
                })?;
                if !parsed.check(&v) {
                    return Ok(Node::bool(false));
                }
            }
            Ok(Node::bool(true))
        }
        "semverprerelease" | "semvermetadata" | "semverrelease" => with_setter(name, args),
        _ => {
            let [arg] = args else {
                return fail(format!("{name} requires one semver argument"));
            };
            let (v, _) = parse_arg(name, arg)?;
            Ok(match name {
                "semver" => Node::str(v.to_string()),
                "semvermajor" => int(v.major),
                "semverminor" => int(v.minor),
                "semverpatch" => int(v.patch),
                "semverincmajor" => Node::str(v.inc_major().original),
                "semverincminor" => Node::str(v.inc_minor().original),
                _ => Node::str(v.inc_patch().original),
            })
        }
    }
}

/// `v` without prerelease and metadata, as spiff's `semverrelease` derives it.
fn release(v: &Version) -> Result<Version, Stop> {
    v.set_metadata("", SPIFF_SEMVER)
        .and_then(|r| r.set_prerelease("", SPIFF_SEMVER))
        .map_err(|e| Stop::Fail(e.to_string()))
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
            _ => release(&v)?.original,
        }));
    };
    let attr = name.trim_start_matches("semver");
    let Some(text) = simple_text(value) else {
        return fail(format!("{name}: {attr} must be a string"));
    };
    let invalid = |e: landscaper_semver::SemverError| {
        Stop::Fail(format!("{name}: invalid {attr} {text:?}: {e}"))
    };
    let changed = match name {
        "semverprerelease" => v.set_prerelease(&text, SPIFF_SEMVER).map_err(invalid)?,
        "semvermetadata" => v.set_metadata(&text, SPIFF_SEMVER).map_err(invalid)?,
        // The new release keeps the version's prerelease and metadata.
        _ => Version::parse(&text, SPIFF_SEMVER)
            .and_then(|n| n.set_metadata(&v.metadata, SPIFF_SEMVER))
            .and_then(|n| n.set_prerelease(&v.prerelease, SPIFF_SEMVER))
            .map_err(invalid)?,
    };
    Ok(Node::str(changed.original))
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
