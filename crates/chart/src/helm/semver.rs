//! Semantic versions and constraints as Helm reads them (Sprig's `semver`/`semverCompare`,
//! Chart.yaml `kubeVersion`, dependency and repository version ranges): Masterminds/semver
//! v3.4, the release Helm links, from `landscaper-semver`.

use landscaper_semver::Release;
pub use landscaper_semver::{Constraints, SemverError, Version};

/// The Masterminds/semver release Helm links.
pub const HELM_SEMVER: Release = Release::V3_4;

/// `semver.NewVersion` as Helm's semver release parses it.
pub fn parse_version(text: &str) -> Result<Version, SemverError> {
    Version::parse(text, HELM_SEMVER)
}

/// `semver.NewConstraint` as Helm's semver release parses it.
pub fn parse_constraints(text: &str) -> Result<Constraints, SemverError> {
    Constraints::parse(text, HELM_SEMVER)
}

/// Sprig's `semverCompare`: parses both and checks the version against the constraint.
pub fn semver_compare(constraint: &str, version: &str) -> Result<bool, SemverError> {
    let c = parse_constraints(constraint)?;
    let v = parse_version(version)?;
    Ok(c.check(&v))
}
