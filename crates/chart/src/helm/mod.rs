//! The Helm layer: Helm's and Sprig's template functions, chart loading, values as Helm
//! computes them, the objects a template sees (`.Files`, `.Capabilities`), semantic versions,
//! and the `helm template` render pipeline. It builds on the engine and the format layer.

pub mod chart;
pub mod funcs;
pub mod objects;
pub mod render;
pub mod semver;
pub mod values;
