//! The Masterminds/semver releases this crate follows, and their wording of errors.

use std::fmt;

/// The Masterminds/semver release whose behaviour to follow where releases differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Release {
    /// v3.2–v3.3, as Landscaper links Spiff: capitalised messages (`Invalid Semantic
    /// Version`), and a prerelease version satisfies only a constraint that names a
    /// prerelease itself (`!=` on a full version excepted).
    V3_3,
    /// v3.4, as Helm links Sprig: lower-case messages (`invalid semantic version`), and a
    /// prerelease version satisfies every constraint of an AND group in which any constraint
    /// names a prerelease; empty prerelease or metadata identifiers are refused when set.
    V3_4,
}

/// What went wrong, one variant for each error Masterminds defines.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Problem {
    /// `ErrInvalidSemVer`.
    InvalidVersion,
    /// `ErrSegmentStartsZero`.
    SegmentStartsZero,
    /// `ErrInvalidPrerelease`.
    InvalidPrerelease,
    /// `ErrInvalidMetadata`.
    InvalidMetadata,
    /// A constraint's version that its own pattern accepted but `NewVersion` refused.
    ConstraintParser,
}

impl Release {
    /// The error `problem` in this release's words.
    pub(crate) fn error(self, problem: Problem) -> SemverError {
        let text = match (self, problem) {
            (Release::V3_3, Problem::InvalidVersion) => "Invalid Semantic Version",
            (Release::V3_4, Problem::InvalidVersion) => "invalid semantic version",
            (Release::V3_3, Problem::SegmentStartsZero) => "Version segment starts with 0",
            (Release::V3_4, Problem::SegmentStartsZero) => "version segment starts with 0",
            (Release::V3_3, Problem::InvalidPrerelease) => "Invalid Prerelease string",
            (Release::V3_4, Problem::InvalidPrerelease) => "invalid prerelease string",
            (Release::V3_3, Problem::InvalidMetadata) => "Invalid Metadata string",
            (Release::V3_4, Problem::InvalidMetadata) => "invalid metadata string",
            (Release::V3_3, Problem::ConstraintParser) => "constraint Parser Error",
            (Release::V3_4, Problem::ConstraintParser) => "constraint parser error",
        };
        SemverError(text.to_owned())
    }

    /// A version number beyond `uint64`, as `strconv.ParseUint`'s error wrapped by this release.
    pub(crate) fn segment_out_of_range(self, digits: &str) -> SemverError {
        let lead = match self {
            Release::V3_3 => "Error",
            Release::V3_4 => "error",
        };
        SemverError(format!(
            "{lead} parsing version segment: strconv.ParseUint: parsing \"{digits}\": value out of range"
        ))
    }

    /// Whether empty identifiers are refused by `validatePrerelease` and `validateMetadata`.
    pub(crate) fn refuses_empty_identifiers(self) -> bool {
        self == Release::V3_4
    }
}

/// Why a version or constraint is not valid, in the words of the [`Release`] followed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SemverError(String);

impl SemverError {
    /// `improper constraint: <text>`, the same in every release.
    pub(crate) fn improper_constraint(text: &str) -> SemverError {
        SemverError(format!("improper constraint: {text}"))
    }
}

impl fmt::Display for SemverError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SemverError {}
