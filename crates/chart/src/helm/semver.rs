//! Semantic versions and constraints with Masterminds/semver v3 behaviour, as Sprig's
//! `semver`/`semverCompare`, Chart.yaml `kubeVersion` and dependency resolution use them.
//!
//! Parsing is lenient like `semver.NewVersion`: a leading `v`, missing minor or patch
//! (`1`, `v1.2`) and leading zeros in numbers are accepted; prerelease and metadata are
//! checked. Constraints accept `=`, `!=`, `>`, `<`, `>=`, `=>`, `<=`, `=<`, `~`, `~>`, `^`,
//! wildcards `x`/`X`/`*`, hyphen ranges `1 - 2`, AND by space or comma and OR by `||`.
//! A prerelease version only satisfies an AND group in which some constraint names a
//! prerelease itself.

use std::cmp::Ordering;
use std::fmt;

/// Why a version or constraint is not valid; messages are Masterminds' own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SemverError(pub String);

impl fmt::Display for SemverError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SemverError {}

fn invalid_version() -> SemverError {
    SemverError("invalid semantic version".into())
}

/// A parsed version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    /// Major number.
    pub major: u64,
    /// Minor number (0 when omitted).
    pub minor: u64,
    /// Patch number (0 when omitted).
    pub patch: u64,
    /// Prerelease without the `-`, empty when none.
    pub prerelease: String,
    /// Build metadata without the `+`, empty when none.
    pub metadata: String,
    /// The text the version was parsed from.
    pub original: String,
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-'
}

/// Splits `s` at the first `-` or `+` that starts the prerelease or metadata.
fn split_suffixes(s: &str) -> Result<(&str, &str, &str), SemverError> {
    let (rest, metadata) = match s.split_once('+') {
        Some((r, m)) => (r, m),
        None => (s, ""),
    };
    let (core, pre) = match rest.split_once('-') {
        Some((c, p)) => (c, p),
        None => (rest, ""),
    };
    let dotted_ok = |part: &str| {
        !part.is_empty()
            && part
                .split('.')
                .all(|id| !id.is_empty() && id.chars().all(is_ident_char))
    };
    if (s.contains('+') && !dotted_ok(metadata)) || (rest.contains('-') && !dotted_ok(pre)) {
        return Err(invalid_version());
    }
    Ok((core, pre, metadata))
}

impl Version {
    /// `semver.NewVersion`: lenient parsing of a version.
    pub fn parse(text: &str) -> Result<Version, SemverError> {
        let body = text.strip_prefix('v').unwrap_or(text);
        let (core, pre, metadata) = split_suffixes(body)?;
        let parts: Vec<&str> = core.split('.').collect();
        if parts.len() > 3
            || parts
                .iter()
                .any(|p| p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()))
        {
            return Err(invalid_version());
        }
        let number = |i: usize| -> Result<u64, SemverError> {
            match parts.get(i) {
                None => Ok(0),
                Some(p) => p.parse::<u64>().map_err(|_| {
                    SemverError(format!(
                        "error parsing version segment: strconv.ParseUint: parsing \"{p}\": value out of range"
                    ))
                }),
            }
        };
        for id in pre.split('.').filter(|_| !pre.is_empty()) {
            if id.len() > 1 && id.starts_with('0') && id.bytes().all(|b| b.is_ascii_digit()) {
                return Err(SemverError("version segment starts with 0".into()));
            }
        }
        Ok(Version {
            major: number(0)?,
            minor: number(1)?,
            patch: number(2)?,
            prerelease: pre.to_owned(),
            metadata: metadata.to_owned(),
            original: text.to_owned(),
        })
    }

    /// `Version.Compare`: -1, 0 or 1; metadata is ignored, a prerelease sorts before its release.
    pub fn compare(&self, other: &Version) -> i32 {
        match self.cmp_precedence(other) {
            Ordering::Less => -1,
            Ordering::Equal => 0,
            Ordering::Greater => 1,
        }
    }

    fn cmp_precedence(&self, o: &Version) -> Ordering {
        let core = (self.major, self.minor, self.patch).cmp(&(o.major, o.minor, o.patch));
        if core != Ordering::Equal {
            return core;
        }
        match (self.prerelease.is_empty(), o.prerelease.is_empty()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            (false, false) => compare_prerelease(&self.prerelease, &o.prerelease),
        }
    }
}

impl fmt::Display for Version {
    /// The normalised form (`1.2.0-beta+meta`), without any leading `v`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        if !self.prerelease.is_empty() {
            write!(f, "-{}", self.prerelease)?;
        }
        if !self.metadata.is_empty() {
            write!(f, "+{}", self.metadata)?;
        }
        Ok(())
    }
}

fn compare_prerelease(a: &str, b: &str) -> Ordering {
    let ap: Vec<&str> = a.split('.').collect();
    let bp: Vec<&str> = b.split('.').collect();
    for i in 0..ap.len().max(bp.len()) {
        let x = ap.get(i).copied().unwrap_or("");
        let y = bp.get(i).copied().unwrap_or("");
        let d = compare_pre_part(x, y);
        if d != Ordering::Equal {
            return d;
        }
    }
    Ordering::Equal
}

/// One prerelease identifier against another: numbers by value and below words, words
/// by bytes, and a missing identifier (the shorter prerelease) first.
fn compare_pre_part(s: &str, o: &str) -> Ordering {
    if s == o {
        return Ordering::Equal;
    }
    if o.is_empty() {
        return Ordering::Greater;
    }
    if s.is_empty() {
        return Ordering::Less;
    }
    match (s.parse::<u64>().ok(), o.parse::<u64>().ok()) {
        (None, None) => s.cmp(o),
        (None, Some(_)) => Ordering::Greater,
        (Some(_), None) => Ordering::Less,
        (Some(a), Some(b)) => a.cmp(&b),
    }
}

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
}

#[derive(Debug, Clone)]
struct Group {
    constraints: Vec<Constraint>,
    has_prerelease: bool,
}

fn is_wild(s: &str) -> bool {
    matches!(s, "x" | "X" | "*")
}

/// The text of one constraint version (`cvRegex`) from the start of `s`, as its pieces.
struct RawVersion<'a> {
    text: &'a str,
    major: &'a str,
    minor: Option<&'a str>,
    patch: Option<&'a str>,
    pre: Option<&'a str>,
}

fn scan_version(s: &str) -> Option<RawVersion<'_>> {
    let b = s.as_bytes();
    let mut i = usize::from(b.first() == Some(&b'v'));
    let num_part = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && matches!(b[*i], b'0'..=b'9' | b'|' | b'x' | b'X' | b'*') {
            *i += 1;
        }
        (*i > start).then(|| &s[start..*i])
    };
    let major = num_part(&mut i)?;
    let mut parts = [None, None];
    for slot in &mut parts {
        if b.get(i) != Some(&b'.') {
            break;
        }
        let save = i;
        i += 1;
        match num_part(&mut i) {
            Some(p) => *slot = Some(p),
            None => {
                i = save;
                break;
            }
        }
    }
    let ident_run = |i: &mut usize| {
        let start = *i;
        let mut end = *i;
        loop {
            let seg = *i;
            while *i < b.len() && is_ident_char(char::from(b[*i])) {
                *i += 1;
            }
            if *i == seg {
                *i = end;
                break;
            }
            end = *i;
            if b.get(*i) == Some(&b'.') {
                *i += 1;
            } else {
                break;
            }
        }
        (end > start).then(|| &s[start..end])
    };
    let mut pre = None;
    if b.get(i) == Some(&b'-') {
        let save = i;
        i += 1;
        match ident_run(&mut i) {
            Some(p) => pre = Some(p),
            None => i = save,
        }
    }
    if b.get(i) == Some(&b'+') {
        let save = i;
        i += 1;
        if ident_run(&mut i).is_none() {
            i = save;
        }
    }
    Some(RawVersion {
        text: &s[..i],
        major,
        minor: parts[0],
        patch: parts[1],
        pre,
    })
}

fn improper(text: &str) -> SemverError {
    SemverError(format!("improper constraint: {text}"))
}

/// Rewrites hyphen ranges `A - B` into `>= A, <= B`, as Masterminds does before parsing.
fn rewrite_ranges(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    'outer: while !rest.is_empty() {
        for (start, _) in rest.char_indices() {
            let candidate = &rest[start..];
            let Some(first) = scan_version(candidate) else {
                continue;
            };
            let after = &candidate[first.text.len()..];
            let trimmed = after.trim_start();
            if trimmed.len() == after.len() || !trimmed.starts_with('-') {
                continue;
            }
            let second_text = &trimmed[1..];
            let spaced = second_text.trim_start();
            if spaced.len() == second_text.len() {
                continue;
            }
            let Some(second) = scan_version(spaced) else {
                continue;
            };
            // The regex also swallows the whitespace around the range.
            let prefix = rest[..start].trim_end();
            out.push_str(prefix);
            out.push_str(&format!(">= {}, <= {} ", first.text, second.text));
            rest = spaced[second.text.len()..].trim_start();
            continue 'outer;
        }
        out.push_str(rest);
        break;
    }
    out
}

impl Constraints {
    /// `semver.NewConstraint`.
    pub fn parse(text: &str) -> Result<Constraints, SemverError> {
        let rewritten = rewrite_ranges(text);
        let mut groups = Vec::new();
        for segment in rewritten.split("||") {
            let constraints = parse_group(segment)?;
            let has_prerelease = constraints.iter().any(|c| !c.version.prerelease.is_empty());
            groups.push(Group {
                constraints,
                has_prerelease,
            });
        }
        Ok(Constraints { groups })
    }

    /// `Constraints.Check`: whether `v` satisfies any OR group.
    pub fn check(&self, v: &Version) -> bool {
        self.groups
            .iter()
            .any(|g| g.constraints.iter().all(|c| c.check(v, g.has_prerelease)))
    }
}

/// One AND group: constraints separated by whitespace or a single comma.
fn parse_group(segment: &str) -> Result<Vec<Constraint>, SemverError> {
    let mut out = Vec::new();
    let mut rest = segment.trim_start();
    loop {
        let (op, after_op) = OPS
            .iter()
            .find_map(|(text, op)| rest.strip_prefix(text).map(|r| (*op, r)))
            .unwrap_or((Op::TildeOrEqual, rest));
        let after_op = after_op.trim_start();
        let raw = scan_version(after_op).ok_or_else(|| improper(segment))?;
        out.push(build(op, &raw)?);
        let after = &after_op[raw.text.len()..];
        let trimmed = after.trim_start();
        if trimmed.is_empty() {
            return Ok(out);
        }
        rest = match trimmed.strip_prefix(',') {
            Some(r) => r.trim_start(),
            None if trimmed.len() < after.len() => trimmed,
            None => return Err(improper(segment)),
        };
    }
}

fn build(op: Op, raw: &RawVersion<'_>) -> Result<Constraint, SemverError> {
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
        Version::parse(&text).map_err(|_| SemverError("constraint parser error".into()))?;
    Ok(Constraint {
        op,
        version,
        dirty,
        minor_dirty,
        patch_dirty,
    })
}

impl Constraint {
    fn check(&self, v: &Version, include_pre: bool) -> bool {
        if !v.prerelease.is_empty() && !include_pre {
            return false;
        }
        let c = &self.version;
        match self.op {
            Op::NotEqual => self.not_equal(v),
            Op::Greater => self.greater(v),
            Op::Less => v.compare(c) < 0,
            Op::GreaterEqual => v.compare(c) >= 0,
            Op::LessEqual => self.less_equal(v),
            Op::Tilde => self.tilde(v),
            Op::TildeOrEqual if self.dirty => self.tilde(v),
            Op::TildeOrEqual => v.compare(c) == 0,
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
        v.compare(c) != 0
    }

    fn greater(&self, v: &Version) -> bool {
        let c = &self.version;
        if !self.dirty {
            return v.compare(c) == 1;
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
        v.compare(c) == 1
    }

    fn less_equal(&self, v: &Version) -> bool {
        let c = &self.version;
        if !self.dirty {
            return v.compare(c) <= 0;
        }
        !(v.major > c.major || (v.major == c.major && v.minor > c.minor && !self.minor_dirty))
    }

    fn tilde(&self, v: &Version) -> bool {
        let c = &self.version;
        if v.compare(c) < 0 {
            return false;
        }
        if c.major == 0 && c.minor == 0 && c.patch == 0 && !self.minor_dirty && !self.patch_dirty {
            return true;
        }
        v.major == c.major && (v.minor == c.minor || self.minor_dirty)
    }

    fn caret(&self, v: &Version) -> bool {
        let c = &self.version;
        if v.compare(c) < 0 {
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
        if v.minor > 0 {
            return false;
        }
        c.patch == v.patch
    }
}

/// Sprig's `semverCompare`: parses both and checks the version against the constraint.
pub fn semver_compare(constraint: &str, version: &str) -> Result<bool, SemverError> {
    let c = Constraints::parse(constraint)?;
    let v = Version::parse(version)?;
    Ok(c.check(&v))
}

#[cfg(test)]
mod tests;
