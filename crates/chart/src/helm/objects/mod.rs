//! Helm's typed objects in the render context: `.Files` and `.Capabilities`, with the fields
//! and methods templates call on them.

mod capabilities;
mod files;
mod glob;

pub use capabilities::{ApiVersions, Capabilities, HelmVersion, KubeVersion};
pub use files::Files;
pub use glob::Glob;
