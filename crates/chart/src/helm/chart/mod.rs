//! Helm charts as loaded from a folder or a `.tgz`: metadata, default values, schema,
//! templates, other files and subcharts, with Helm's loading rules and error messages.

mod ahead;
mod contents;
pub mod ignore;
mod load;
pub mod metadata;
pub mod pattern;

pub use ahead::{ParsedAhead, can_be_late};
pub use contents::Contents;
pub use load::{
    MAX_DECOMPRESSED_CHART_SIZE, MAX_DECOMPRESSED_FILE_SIZE, archive_folder, check_api_version,
    load, load_archive, load_archive_to_render, load_dir, load_files,
};
pub use metadata::{Dependency, Maintainer, Metadata};

use std::fmt;

use bytes::Bytes;
use bytestring::ByteString;

use crate::formats::tree::Map;

/// One file of a chart: its path inside the chart (with `/`) and its bytes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct File {
    /// The path relative to the chart root, e.g. `templates/deployment.yaml`.
    pub name: String,
    /// The contents, without a UTF-8 byte order mark; shared, so cloning a chart (as every
    /// render does) and serving `.Files` copy no file contents.
    pub data: Contents,
    /// When it was last modified (the archive entry's or the file system's time), which Helm
    /// records in releases; `None` for files made in code.
    pub modified: Option<jiff::Timestamp>,
}

/// A loaded chart and, recursively, its subcharts.
#[derive(Debug, Clone, Default)]
pub struct Chart {
    /// `Chart.yaml` (and, for v1 charts, the dependencies of `requirements.yaml`).
    pub metadata: Metadata,
    /// `values.yaml`.
    pub values: Map,
    /// `values.schema.json`, raw.
    pub schema: Option<Vec<u8>>,
    /// When `values.schema.json` was last modified (Helm's `SchemaModTime`).
    pub schema_modified: Option<jiff::Timestamp>,
    /// When `Chart.yaml` was last modified (Helm's `ModTime` of the chart).
    pub modified: Option<jiff::Timestamp>,
    /// Files under `templates/`.
    pub templates: Vec<File>,
    /// Every other file (what `.Files` serves), including `crds/` and `.helmignore`.
    pub files: Vec<File>,
    /// Subcharts from `charts/` (folders and archives), in name order.
    pub dependencies: Vec<Chart>,
    /// Template files of this chart and its subcharts parsed while it loaded, for its first
    /// render (the root chart's only, and only when loaded to render).
    pub parsed_ahead: ParsedAhead,
}

impl Chart {
    /// The chart's name.
    pub fn name(&self) -> &str {
        &self.metadata.name
    }

    /// The files of `crds/` with a manifest extension (`.yaml`, `.yml`, `.json`), each with
    /// its path as `--include-crds` prints it, this chart's first, then the subcharts'.
    pub fn crd_objects(&self, full_path: &str) -> Vec<(String, &File)> {
        let mut out: Vec<(String, &File)> = self
            .files
            .iter()
            .filter(|f| f.name.starts_with("crds/") && has_manifest_extension(&f.name))
            .map(|f| (format!("{full_path}/{}", f.name), f))
            .collect();
        for dep in &self.dependencies {
            out.extend(dep.crd_objects(&format!("{full_path}/charts/{}", dep.name())));
        }
        out
    }

    /// Why a file that loading left to be read on first use could not be read, if one was
    /// read and could not be: a render that read it as empty reports this instead of its
    /// output.
    pub fn deferred_read_failure(&self) -> Option<&LoadError> {
        self.files
            .iter()
            .find_map(|f| f.data.read_failure())
            .or_else(|| {
                self.dependencies
                    .iter()
                    .find_map(Chart::deferred_read_failure)
            })
    }
}

/// A chart file's text as the template engine and the YAML reader here take it: invalid UTF-8
/// replaced by U+FFFD (checked with the fast validator first: almost every file is valid, and
/// `from_utf8_lossy` validates slowly).
pub(crate) fn file_text(data: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(data) {
        Ok(text) => std::borrow::Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(data),
    }
}

/// The text of a chart file as a template's source: the file's own bytes where they are
/// UTF-8 (as [`file_text`] reads them otherwise).
pub(crate) fn source_text(data: &Bytes) -> ByteString {
    ByteString::try_from(data.clone())
        .unwrap_or_else(|_| ByteString::from(String::from_utf8_lossy(data).into_owned()))
}

/// Whether `a` and `b` are the same bytes in memory (not merely equal contents).
pub(crate) fn same_bytes(a: &Bytes, b: &Bytes) -> bool {
    a.as_ptr() == b.as_ptr() && a.len() == b.len()
}

fn has_manifest_extension(name: &str) -> bool {
    let base = name.rsplit('/').next().unwrap_or(name);
    match base.rfind('.') {
        Some(i) => {
            let ext = &base[i..];
            [".yaml", ".yml", ".json"]
                .iter()
                .any(|e| ext.eq_ignore_ascii_case(e))
        }
        None => false,
    }
}

/// Why a chart could not be loaded, worded as Helm words it (e.g. `cannot load Chart.yaml:
/// error converting YAML to JSON: yaml: line 4: …`, `validation: chart.metadata.name is
/// required`, `error unpacking subchart x in y: …`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError(pub String);

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LoadError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_extensions_ignore_case() {
        assert!(has_manifest_extension("crds/a.YAML"));
        assert!(has_manifest_extension("crds/a.json"));
        assert!(!has_manifest_extension("crds/README.md"));
        assert!(!has_manifest_extension("crds/noext"));
    }
}
