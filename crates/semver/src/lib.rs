//! Semantic versions and constraints as Masterminds/semver v3 parses, prints, orders and
//! matches them, for the two Go libraries Landscaper templates reach it through: Sprig (Helm
//! links semver v3.4) and Spiff (Landscaper links it with semver v3.3). The releases differ
//! in their error wording and in which constraints a prerelease version may satisfy, so every
//! parse names the [`Release`] to follow. No I/O, no dependencies.
//!
//! ```
//! use landscaper_semver::{Constraints, Release, Version};
//! let v = Version::parse("v1.2-beta.1", Release::V3_4).unwrap();
//! assert_eq!(v.to_string(), "1.2.0-beta.1");
//! assert!(Constraints::parse(">= 1.2.0-0", Release::V3_4).unwrap().check(&v));
//! assert_eq!(
//!     Version::parse("1.2.x", Release::V3_3).unwrap_err().to_string(),
//!     "Invalid Semantic Version"
//! );
//! ```

mod constraint;
mod release;
mod scan;
mod version;

pub use constraint::Constraints;
pub use release::{Release, SemverError};
pub use version::Version;
