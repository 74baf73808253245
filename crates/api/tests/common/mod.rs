//! Helpers shared by the conformance tests: where the truth data lives and how to read it.
//! Each test file uses a part of them.

#![allow(dead_code)]

use std::path::PathBuf;

use serde_json::Value;

/// `../shared/conformance/landscaper` beside the repository.
pub fn landscaper_conformance_dir() -> PathBuf {
    let dir =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/landscaper");
    assert!(
        dir.is_dir(),
        "conformance data not found at {}: the repository must be checked out with shared/ beside it",
        dir.display()
    );
    dir
}

/// Parses YAML into JSON values, one per non-empty document.
pub fn yaml_documents(text: &str) -> Result<Vec<Value>, String> {
    landscaper_api::decode::yaml_documents(text, "test").map_err(|error| error.to_string())
}
