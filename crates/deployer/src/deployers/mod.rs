//! The deployers built on the library alone: manifest (objects from the item's manifests) and
//! mock (the outcome its configuration asks for).

pub mod manifest;
pub mod mock;
