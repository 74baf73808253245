//! Constraints (`semver.NewConstraint`, `Constraints.Check`): `=`, `!=`, `>`, `<`, `>=`,
//! `=>`, `<=`, `=<`, `~`, `~>`, `^`, wildcards `x`/`X`/`*`, hyphen ranges `1 - 2`, AND by
//! blanks or a comma and OR by `||`.

use std::cmp::Ordering;

use crate::release::{Problem, Release, SemverError};
use crate::scan::{RawVersion, is_wild, rewrite_ranges, scan_version};
use crate::version::{Version, compare_prerelease};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    TildeOrEqual,
    NotEqual,
    Greater,
    Less,
    GreaterEqual,
    LessEqual,
    Tilde,
    Caret,
}

/// Operators longest first, so `>=` wins over `>`.
const OPS: &[(&str, Op)] = &[
    ("!=", Op::NotEqual),
    (">=", Op::GreaterEqual),
    ("=>", Op::GreaterEqual),
    ("<=", Op::LessEqual),
    ("=<", Op::LessEqual),
    ("~>", Op::Tilde),
    (">", Op::Greater),
    ("<", Op::Less),
    ("=", Op::TildeOrEqual),
    ("~", Op::Tilde),
    ("^", Op::Caret),
];

/// One constraint: a version whose missing or wildcard parts make it "dirty".
#[derive(Debug, Clone)]
struct Constraint {
    op: Op,
    version: Version,
    dirty: bool,
    minor_dirty: bool,
    patch_dirty: bool,
}

/// A parsed constraint expression: OR groups of AND-ed constraints.
#[derive(Debug, Clone)]
pub struct Constraints {
    groups: Vec<Group>,
    release: Release,
}

#[derive(Debug, Clone)]
struct Group {
    constraints: Vec<Constraint>,
    has_prerelease: bool,
}

impl Constraints {
    /// `semver.NewConstraint`.
    pub fn parse(text: &str, release: Release) -> Result<Constraints, SemverError> {
        let rewritten = rewrite_ranges(text);
        let mut groups = Vec::new();
        for segment in rewritten.split("||") {
            let constraints = parse_group(segment, release)?;
            let has_prerelease = constraints.iter().any(|c| !c.version.prerelease.is_empty());
            groups.push(Group {
                constraints,
                has_prerelease,
            });
        }
        Ok(Constraints { groups, release })
    }

    /// `Constraints.Check`: whether `v` satisfies any OR group.
    pub fn check(&self, v: &Version) -> bool {
        self.groups.iter().any(|g| {
            g.constraints
                .iter()
                .all(|c| c.admits_prerelease_of(v, g, self.release) && c.check(v))
        })
    }
}

/// One AND group: constraints separated by blanks or a single comma.
fn parse_group(segment: &str, release: Release) -> Result<Vec<Constraint>, SemverError> {
    let mut out = Vec::new();
    let mut rest = segment.trim_start();
    loop {
        let (op, after_op) = OPS
            .iter()
            .find_map(|(text, op)| rest.strip_prefix(text).map(|r| (*op, r)))
            .unwrap_or((Op::TildeOrEqual, rest));
        let after_op = after_op.trim_start();
        let raw =
            scan_version(after_op).ok_or_else(|| SemverError::improper_constraint(segment))?;
        out.push(build(op, &raw, release)?);
        let after = &after_op[raw.text.len()..];
        let trimmed = after.trim_start();
        if trimmed.is_empty() {
            return Ok(out);
        }
        rest = match trimmed.strip_prefix(',') {
            Some(r) => r.trim_start(),
            None if trimmed.len() < after.len() => trimmed,
            None => return Err(SemverError::improper_constraint(segment)),
        };
    }
}

/// `parseConstraint`: wildcard or missing parts become zeros and mark the constraint dirty.
fn build(op: Op, raw: &RawVersion<'_>, release: Release) -> Result<Constraint, SemverError> {
    let pre = raw.pre.map(|p| format!("-{p}")).unwrap_or_default();
    let minor_wild = raw.minor.is_none_or(is_wild);
    let patch_wild = raw.patch.is_none_or(is_wild);
    let (text, dirty, minor_dirty, patch_dirty) = if is_wild(raw.major) {
        (format!("0.0.0{pre}"), true, false, false)
    } else if minor_wild {
        (format!("{}.0.0{pre}", raw.major), true, true, false)
    } else if patch_wild {
        let minor = raw.minor.unwrap_or("");
        (format!("{}.{minor}.0{pre}", raw.major), true, false, true)
    } else {
        (raw.text.to_owned(), false, false, false)
    };
    let version =
        Version::parse(&text, release).map_err(|_| release.error(Problem::ConstraintParser))?;
    Ok(Constraint {
        op,
        version,
        dirty,
        minor_dirty,
        patch_dirty,
    })
}

impl Constraint {
    /// Whether a prerelease `v` may satisfy this constraint at all (always, for a release).
    fn admits_prerelease_of(&self, v: &Version, group: &Group, release: Release) -> bool {
        if v.prerelease.is_empty() {
            return true;
        }
        match release {
            Release::V3_4 => group.has_prerelease,
            // v3.3's `!=` checks prereleases only when the constraint is dirty.
            Release::V3_3 => {
                !self.version.prerelease.is_empty() || (self.op == Op::NotEqual && !self.dirty)
            }
        }
    }

    fn check(&self, v: &Version) -> bool {
        let order = v.compare(&self.version);
        match self.op {
            Op::NotEqual => self.not_equal(v),
            Op::Greater => self.greater(v),
            Op::Less => order == Ordering::Less,
            Op::GreaterEqual => order != Ordering::Less,
            Op::LessEqual => self.less_equal(v),
            Op::Tilde => self.tilde(v),
            Op::TildeOrEqual if self.dirty => self.tilde(v),
            Op::TildeOrEqual => order == Ordering::Equal,
            Op::Caret => self.caret(v),
        }
    }

    fn not_equal(&self, v: &Version) -> bool {
        let c = &self.version;
        if self.dirty {
            if c.major != v.major {
                return true;
            }
            if c.minor != v.minor && !self.minor_dirty {
                return true;
            }
            if self.minor_dirty {
                return false;
            }
            if c.patch != v.patch && !self.patch_dirty {
                return true;
            }
            if self.patch_dirty {
                return (!v.prerelease.is_empty() || !c.prerelease.is_empty())
                    && compare_prerelease(&v.prerelease, &c.prerelease) != Ordering::Equal;
            }
        }
        v.compare(c) != Ordering::Equal
    }

    fn greater(&self, v: &Version) -> bool {
        let c = &self.version;
        if !self.dirty {
            return v.compare(c) == Ordering::Greater;
        }
        if v.major != c.major {
            return v.major > c.major;
        }
        if self.minor_dirty {
            return false;
        }
        if self.patch_dirty {
            return v.minor > c.minor;
        }
        v.compare(c) == Ordering::Greater
    }

    fn less_equal(&self, v: &Version) -> bool {
        let c = &self.version;
        if !self.dirty {
            return v.compare(c) != Ordering::Greater;
        }
        !(v.major > c.major || (v.major == c.major && v.minor > c.minor && !self.minor_dirty))
    }

    fn tilde(&self, v: &Version) -> bool {
        let c = &self.version;
        if v.compare(c) == Ordering::Less {
            return false;
        }
        // ~0.0.0 accepts every version.
        if (c.major, c.minor, c.patch) == (0, 0, 0) && !self.minor_dirty && !self.patch_dirty {
            return true;
        }
        v.major == c.major && (v.minor == c.minor || self.minor_dirty)
    }

    fn caret(&self, v: &Version) -> bool {
        let c = &self.version;
        if v.compare(c) == Ordering::Less {
            return false;
        }
        if c.major > 0 || self.minor_dirty {
            return v.major == c.major;
        }
        if v.major > 0 {
            return false;
        }
        if c.minor > 0 || self.patch_dirty {
            return v.minor == c.minor;
        }
        v.minor == 0 && c.patch == v.patch
    }
}
