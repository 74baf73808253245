//! spiff's semver functions (`semver`, `semverrelease`, `semvermajor`, `semverminor`,
//! `semverpatch`, `semverincmajor`, `semverincminor`, `semverincpatch`, `semverprerelease`,
//! `semvermetadata`, `semvercmp`, `semversort`, `semvermatch`) on versions parsed, printed and
//! matched against constraints as the Masterminds semver package (v3) that spiff uses does: a
//! leading `v`, missing minor and patch parts allowed; results that keep the input's form keep
//! its `v`.

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
    "semvermatch",
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
        "semvermatch" => {
            let Some((version, constraints)) = args.split_first() else {
                return fail(format!("{name} requires at least one arguments"));
            };
            let (v, _) = parse_arg(name, version)?;
            for (i, c) in constraints.iter().enumerate() {
                let Val::Str(text) = &c.val else {
                    return fail(format!("{name}: constraint argument {i} must be string"));
                };
                let parsed = Constraints::parse(text).map_err(|e| {
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

/// A constraint's operator.
#[derive(Clone, Copy, Debug, PartialEq)]
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

/// The operators in the order they are tried (longest first).
const OPERATORS: &[(&str, Op)] = &[
    ("!=", Op::NotEqual),
    (">=", Op::GreaterEqual),
    ("=>", Op::GreaterEqual),
    ("<=", Op::LessEqual),
    ("=<", Op::LessEqual),
    ("~>", Op::Tilde),
    (">", Op::Greater),
    ("<", Op::Less),
    ("~", Op::Tilde),
    ("^", Op::Caret),
    ("=", Op::TildeOrEqual),
];

/// One constraint (Masterminds' `constraint`): a version whose missing or wildcard parts make
/// it "dirty".
#[derive(Debug)]
struct Constraint {
    op: Op,
    version: Version,
    dirty: bool,
    minor_dirty: bool,
    patch_dirty: bool,
}

fn wildcard(part: &str) -> bool {
    matches!(part, "x" | "X" | "*")
}

impl Constraint {
    /// Masterminds' `parseConstraint` for `<op><version>` (the operator may be followed by
    /// blanks).
    fn parse(text: &str) -> Result<Constraint, String> {
        let improper = || format!("improper constraint: {text}");
        let (op, rest) = OPERATORS
            .iter()
            .find_map(|(sym, op)| text.strip_prefix(sym).map(|r| (*op, r)))
            .unwrap_or((Op::TildeOrEqual, text));
        let rest = rest.trim_start();
        let body = rest.strip_prefix('v').unwrap_or(rest);
        let (body, _metadata) = body.split_once('+').unwrap_or((body, ""));
        let (core, prerelease) = match body.split_once('-') {
            Some((c, p)) if identifiers(p) => (c, format!("-{p}")),
            Some(_) => return Err(improper()),
            None => (body, String::new()),
        };
        let parts: Vec<&str> = core.split('.').collect();
        if parts.len() > 3
            || parts.iter().any(|p| {
                p.is_empty()
                    || !p
                        .chars()
                        .all(|c| c.is_ascii_digit() || wildcard(&c.to_string()))
            })
        {
            return Err(improper());
        }
        let part = |i: usize| parts.get(i).copied().unwrap_or("");
        let missing = |p: &str| p.is_empty() || wildcard(p);
        let (text_version, dirty, minor_dirty, patch_dirty) = if missing(part(0)) {
            (format!("0.0.0{prerelease}"), true, false, false)
        } else if missing(part(1)) {
            (format!("{}.0.0{prerelease}", part(0)), true, true, false)
        } else if missing(part(2)) {
            (
                format!("{}.{}.0{prerelease}", part(0), part(1)),
                true,
                false,
                true,
            )
        } else {
            (format!("{core}{prerelease}"), false, false, false)
        };
        let version = Version::parse(&text_version)?;
        Ok(Constraint {
            op,
            version,
            dirty,
            minor_dirty,
            patch_dirty,
        })
    }

    /// Whether `v` satisfies the constraint (Masterminds' `constraint*` functions).
    fn check(&self, v: &Version) -> bool {
        let c = &self.version;
        // A prerelease only satisfies constraints that name one.
        if !v.prerelease.is_empty() && c.prerelease.is_empty() {
            return false;
        }
        let order = v.compare(c);
        match self.op {
            Op::TildeOrEqual if self.dirty => self.tilde(v),
            Op::TildeOrEqual => order == Ordering::Equal,
            Op::NotEqual => self.not_equal(v),
            Op::Greater if !self.dirty => order == Ordering::Greater,
            Op::Greater => match v.major.cmp(&c.major) {
                Ordering::Greater => true,
                Ordering::Less => false,
                Ordering::Equal if self.minor_dirty => false,
                Ordering::Equal if self.patch_dirty => v.minor > c.minor,
                Ordering::Equal => order == Ordering::Greater,
            },
            Op::Less => order == Ordering::Less,
            Op::GreaterEqual => order != Ordering::Less,
            Op::LessEqual if !self.dirty => order != Ordering::Greater,
            Op::LessEqual => {
                !(v.major > c.major || v.major == c.major && v.minor > c.minor && !self.minor_dirty)
            }
            Op::Tilde => self.tilde(v),
            Op::Caret => self.caret(v),
        }
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
        v.minor == 0 && v.patch == c.patch
    }

    fn not_equal(&self, v: &Version) -> bool {
        let c = &self.version;
        if self.dirty {
            if c.major != v.major {
                return true;
            }
            if self.minor_dirty {
                return false;
            }
            if c.minor != v.minor {
                return true;
            }
            if self.patch_dirty {
                return (!v.prerelease.is_empty() || !c.prerelease.is_empty())
                    && compare_prerelease(&v.prerelease, &c.prerelease) != Ordering::Equal;
            }
        }
        v.compare(c) != Ordering::Equal
    }
}

/// Constraints joined by `||` (any group) of constraints joined by commas or blanks (all of
/// a group); `a - b` is `>= a, <= b`.
#[derive(Debug)]
struct Constraints(Vec<Vec<Constraint>>);

impl Constraints {
    fn parse(text: &str) -> Result<Constraints, String> {
        let mut groups = Vec::new();
        for group in text.split("||") {
            let tokens: Vec<&str> = group
                .split(|c: char| c == ',' || c.is_whitespace())
                .filter(|t| !t.is_empty())
                .collect();
            let mut constraints = Vec::new();
            let mut i = 0;
            while i < tokens.len() {
                if tokens.get(i + 1) == Some(&"-") && i + 2 < tokens.len() {
                    constraints.push(Constraint::parse(&format!(">={}", tokens[i]))?);
                    constraints.push(Constraint::parse(&format!("<={}", tokens[i + 2]))?);
                    i += 3;
                    continue;
                }
                let mut token = tokens[i].to_string();
                // An operator alone takes the next token as its version.
                if OPERATORS.iter().any(|(sym, _)| *sym == token) && i + 1 < tokens.len() {
                    i += 1;
                    token.push_str(tokens[i]);
                }
                constraints.push(Constraint::parse(&token)?);
                i += 1;
            }
            if constraints.is_empty() {
                return Err(format!("improper constraint: {group}"));
            }
            groups.push(constraints);
        }
        Ok(Constraints(groups))
    }

    fn check(&self, v: &Version) -> bool {
        self.0.iter().any(|group| group.iter().all(|c| c.check(v)))
    }
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

    fn matches(version: &str, constraint: &str) -> bool {
        Constraints::parse(constraint)
            .unwrap()
            .check(&Version::parse(version).unwrap())
    }

    #[test]
    fn constraints_match_as_masterminds_documents_them() {
        let cases = [
            ("1.2.3", "~1.2", true),
            ("1.3.0", "~1.2", false),
            ("1.2.3", "~1.2.3", true),
            ("1.2.2", "~1.2.3", false),
            ("1.9.0", "~1", true),
            ("1.9.0", "^1.2.3", true),
            ("2.0.0", "^1.2.3", false),
            ("0.2.9", "^0.2.3", true),
            ("0.3.0", "^0.2.3", false),
            ("0.0.3", "^0.0.3", true),
            ("0.0.4", "^0.0.3", false),
            ("1.2.9", "1.2.x", true),
            ("1.3.0", "1.2.x", false),
            ("5.0.0", "*", true),
            ("1.2.3", "= 1.2.3", true),
            ("1.2.4", "1.2.3", false),
            ("1.2.4", "!= 1.2.3", true),
            ("1.4.0", ">= 1.2, < 3.0.0 || >= 4.2.3", true),
            ("3.1.0", ">= 1.2, < 3.0.0 || >= 4.2.3", false),
            ("4.3.0", ">= 1.2, < 3.0.0 || >= 4.2.3", true),
            ("1.2.0", ">1.2", false),
            ("1.3.0", ">1.2", true),
            ("11.1.0", ">11", false),
            ("1.5.0", "1.2 - 1.4.5", false),
            ("1.4.5", "1.2 - 1.4.5", true),
            ("1.2.3", "<=1.2", true),
            ("1.3.0", "<=1.2", false),
            ("1.2.3-beta.1", ">=1.2.0", false),
            ("1.2.3-beta.1", ">=1.2.3-alpha", true),
            ("v1.2.3", ">=v1.2.0 <2", true),
        ];
        for (version, constraint, expected) in cases {
            assert_eq!(
                matches(version, constraint),
                expected,
                "{version} {constraint}"
            );
        }
        for bad in ["", ">= ", "1.2.3.4", "abc", "~> x.y"] {
            assert!(Constraints::parse(bad).is_err(), "{bad:?}");
        }
    }
}
