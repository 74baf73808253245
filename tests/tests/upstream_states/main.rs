//! Upstream Landscaper's controller test state (`../shared/conformance/landscaper/states/`),
//! loaded as upstream's envtest and fake-client loaders load it (`landscaper_e2e::states`), with
//! one Rust test per Go test of `states/cases.md`. One module per state folder; where we differ
//! from upstream on purpose, the test asserts our behaviour and says why.

mod controllers_execution;
mod controllers_installations;
mod executions;
mod exports;
mod imports;
mod subinstallations;
mod support;
