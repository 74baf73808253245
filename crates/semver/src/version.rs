//! A version: `NewVersion`'s lenient parsing, `String`, `Compare`, and the `Inc…` and `Set…`
//! methods that derive one version from another.

use std::cmp::Ordering;
use std::fmt;

use crate::release::{Problem, Release, SemverError};

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
    /// `Original()`: the text the version was parsed from, or for a derived version its
    /// normalised form behind the source's `v`.
    pub original: String,
}

/// A character of a prerelease or metadata identifier (`[0-9A-Za-z-]`).
pub(crate) fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-'
}

/// Dot-separated identifiers, none empty: the form the version pattern accepts.
fn identifiers(s: &str) -> bool {
    s.split('.')
        .all(|id| !id.is_empty() && id.chars().all(is_ident_char))
}

/// `validatePrerelease`: numeric identifiers without leading zeros, the others of `[0-9A-Za-z-]`.
fn validate_prerelease(text: &str, release: Release) -> Result<(), SemverError> {
    for id in text.split('.') {
        if id.is_empty() && release.refuses_empty_identifiers() {
            return Err(release.error(Problem::InvalidPrerelease));
        }
        if id.bytes().all(|b| b.is_ascii_digit()) {
            if id.len() > 1 && id.starts_with('0') {
                return Err(release.error(Problem::SegmentStartsZero));
            }
        } else if !id.chars().all(is_ident_char) {
            return Err(release.error(Problem::InvalidPrerelease));
        }
    }
    Ok(())
}

/// `validateMetadata`: identifiers of `[0-9A-Za-z-]`.
fn validate_metadata(text: &str, release: Release) -> Result<(), SemverError> {
    let valid = text.split('.').all(|id| {
        !(id.is_empty() && release.refuses_empty_identifiers()) && id.chars().all(is_ident_char)
    });
    if valid {
        Ok(())
    } else {
        Err(release.error(Problem::InvalidMetadata))
    }
}

impl Version {
    /// `semver.NewVersion`: a leading `v`, a missing minor or patch (`1`, `v1.2`) and
    /// leading zeros in numbers are accepted; the prerelease and metadata are checked.
    pub fn parse(text: &str, release: Release) -> Result<Version, SemverError> {
        let invalid = || release.error(Problem::InvalidVersion);
        let body = text.strip_prefix('v').unwrap_or(text);
        let (rest, metadata) = match body.split_once('+') {
            Some((rest, metadata)) if identifiers(metadata) => (rest, metadata),
            Some(_) => return Err(invalid()),
            None => (body, ""),
        };
        let (core, prerelease) = match rest.split_once('-') {
            Some((core, prerelease)) if identifiers(prerelease) => (core, prerelease),
            Some(_) => return Err(invalid()),
            None => (rest, ""),
        };
        let numbers: Vec<&str> = core.split('.').collect();
        if numbers.len() > 3
            || numbers
                .iter()
                .any(|n| n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()))
        {
            return Err(invalid());
        }
        let number = |i: usize| match numbers.get(i) {
            None => Ok(0),
            Some(digits) => digits
                .parse::<u64>()
                .map_err(|_| release.segment_out_of_range(digits)),
        };
        let (major, minor, patch) = (number(0)?, number(1)?, number(2)?);
        if !prerelease.is_empty() {
            validate_prerelease(prerelease, release)?;
        }
        Ok(Version {
            major,
            minor,
            patch,
            prerelease: prerelease.to_owned(),
            metadata: metadata.to_owned(),
            original: text.to_owned(),
        })
    }

    /// `Version.Compare`: metadata is ignored, a prerelease sorts before its release.
    pub fn compare(&self, other: &Version) -> Ordering {
        (self.major, self.minor, self.patch)
            .cmp(&(other.major, other.minor, other.patch))
            .then_with(|| compare_prerelease(&self.prerelease, &other.prerelease))
    }

    /// `IncMajor`: the next major version, without prerelease and metadata.
    pub fn inc_major(&self) -> Version {
        self.derive(self.major.wrapping_add(1), 0, 0, "", "")
    }

    /// `IncMinor`: the next minor version, without prerelease and metadata.
    pub fn inc_minor(&self) -> Version {
        self.derive(self.major, self.minor.wrapping_add(1), 0, "", "")
    }

    /// `IncPatch`: the next patch version; a prerelease's is its release.
    pub fn inc_patch(&self) -> Version {
        let patch = if self.prerelease.is_empty() {
            self.patch.wrapping_add(1)
        } else {
            self.patch
        };
        self.derive(self.major, self.minor, patch, "", "")
    }

    /// `SetPrerelease`: this version with another prerelease (checked unless empty).
    pub fn set_prerelease(
        &self,
        prerelease: &str,
        release: Release,
    ) -> Result<Version, SemverError> {
        if !prerelease.is_empty() {
            validate_prerelease(prerelease, release)?;
        }
        Ok(self.derive(
            self.major,
            self.minor,
            self.patch,
            prerelease,
            &self.metadata,
        ))
    }

    /// `SetMetadata`: this version with other metadata (checked unless empty).
    pub fn set_metadata(&self, metadata: &str, release: Release) -> Result<Version, SemverError> {
        if !metadata.is_empty() {
            validate_metadata(metadata, release)?;
        }
        Ok(self.derive(
            self.major,
            self.minor,
            self.patch,
            &self.prerelease,
            metadata,
        ))
    }

    /// A version derived from this one; its `original` keeps this one's `v`, as Masterminds'
    /// `originalVPrefix` does.
    fn derive(
        &self,
        major: u64,
        minor: u64,
        patch: u64,
        prerelease: &str,
        metadata: &str,
    ) -> Version {
        let mut next = Version {
            major,
            minor,
            patch,
            prerelease: prerelease.to_owned(),
            metadata: metadata.to_owned(),
            original: String::new(),
        };
        let prefix = if self.original.starts_with('v') {
            "v"
        } else {
            ""
        };
        next.original = format!("{prefix}{next}");
        next
    }
}

impl fmt::Display for Version {
    /// `String()`: the normalised form (`1.2.0-beta+meta`), without any leading `v`.
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

/// `comparePrerelease`: no prerelease sorts after any; otherwise identifier by identifier.
pub(crate) fn compare_prerelease(a: &str, b: &str) -> Ordering {
    match (a.is_empty(), b.is_empty()) {
        (true, true) => return Ordering::Equal,
        (true, false) => return Ordering::Greater,
        (false, true) => return Ordering::Less,
        (false, false) => {}
    }
    let (ap, bp): (Vec<&str>, Vec<&str>) = (a.split('.').collect(), b.split('.').collect());
    for i in 0..ap.len().max(bp.len()) {
        let x = ap.get(i).copied().unwrap_or("");
        let y = bp.get(i).copied().unwrap_or("");
        let order = compare_identifier(x, y);
        if order != Ordering::Equal {
            return order;
        }
    }
    Ordering::Equal
}

/// `comparePrePart`: numbers by value and below words, words by bytes, and a missing
/// identifier (the shorter prerelease) first.
fn compare_identifier(s: &str, o: &str) -> Ordering {
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
