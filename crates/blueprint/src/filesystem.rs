//! A blueprint's filesystem: `blueprint.yaml` and the files its executions read.

use std::collections::BTreeMap;

use serde_json::Value as Json;

use crate::Error;

/// The file of a filesystem that holds the blueprint.
pub const BLUEPRINT_FILE: &str = "blueprint.yaml";

/// Files by path (relative to the root, `/`-separated, without `.` or `..`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Filesystem {
    files: BTreeMap<String, Vec<u8>>,
}

/// One entry of a directory listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirEntry {
    /// The entry's own name.
    pub name: String,
    /// Whether it is a directory.
    pub is_dir: bool,
    /// The file's size in bytes (0 for directories).
    pub size: usize,
}

impl Filesystem {
    /// An empty filesystem.
    pub fn new() -> Self {
        Self::default()
    }

    /// The filesystem of `spec.blueprint.inline.filesystem`: a map from file names to their
    /// text, where a nested map is a directory.
    pub fn from_inline(inline: &Json) -> Result<Self, Error> {
        let mut fs = Self::new();
        fs.add_inline("", inline)?;
        Ok(fs)
    }

    /// The files under a directory on disk, by their paths relative to it.
    pub fn from_dir(root: &std::path::Path) -> Result<Self, Error> {
        let mut fs = Self::new();
        let mut pending = vec![root.to_path_buf()];
        while let Some(dir) = pending.pop() {
            let entries = std::fs::read_dir(&dir)
                .map_err(|e| Error::Filesystem(format!("{}: {e}", dir.display())))?;
            for entry in entries {
                let path = entry
                    .map_err(|e| Error::Filesystem(format!("{}: {e}", dir.display())))?
                    .path();
                if path.is_dir() {
                    pending.push(path);
                } else {
                    let data = std::fs::read(&path)
                        .map_err(|e| Error::Filesystem(format!("{}: {e}", path.display())))?;
                    let relative = path.strip_prefix(root).unwrap_or(&path);
                    fs.insert(&relative.to_string_lossy().replace('\\', "/"), data);
                }
            }
        }
        Ok(fs)
    }

    fn add_inline(&mut self, dir: &str, value: &Json) -> Result<(), Error> {
        let Json::Object(entries) = value else {
            return Err(Error::Filesystem(format!(
                "{}: expected a map of file names to contents, got {}",
                if dir.is_empty() { "filesystem" } else { dir },
                json_kind(value)
            )));
        };
        for (name, content) in entries {
            let path = if dir.is_empty() {
                name.clone()
            } else {
                format!("{dir}/{name}")
            };
            match content {
                Json::String(text) => self.insert(&path, text.as_bytes().to_vec()),
                Json::Object(_) => self.add_inline(&path, content)?,
                other => {
                    return Err(Error::Filesystem(format!(
                        "{path}: expected the file's text or a directory, got {}",
                        json_kind(other)
                    )));
                }
            }
        }
        Ok(())
    }

    /// Adds or replaces a file.
    pub fn insert(&mut self, path: &str, data: Vec<u8>) {
        self.files.insert(normalize(path), data);
    }

    /// A file's bytes; `/x`, `./x` and `x` name the same file.
    pub fn read(&self, path: &str) -> Option<&[u8]> {
        self.files.get(&normalize(path)).map(Vec::as_slice)
    }

    /// A file's text, with an error naming it when it is missing or not UTF-8.
    pub fn read_text(&self, path: &str) -> Result<&str, Error> {
        let data = self
            .read(path)
            .ok_or_else(|| Error::Filesystem(format!("{path}: no such file in the blueprint")))?;
        std::str::from_utf8(data).map_err(|_| Error::Filesystem(format!("{path}: not UTF-8 text")))
    }

    /// The entries of a directory, sorted by name; `None` when there is no such directory.
    pub fn read_dir(&self, path: &str) -> Option<Vec<DirEntry>> {
        let dir = normalize(path);
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        let mut entries: BTreeMap<String, DirEntry> = BTreeMap::new();
        for (file, data) in self.files.range(prefix.clone()..) {
            let Some(rest) = file.strip_prefix(&prefix) else {
                break;
            };
            let (name, is_dir) = match rest.split_once('/') {
                Some((name, _)) => (name, true),
                None => (rest, false),
            };
            entries.entry(name.to_string()).or_insert(DirEntry {
                name: name.to_string(),
                is_dir,
                size: if is_dir { 0 } else { data.len() },
            });
        }
        (!entries.is_empty() || dir.is_empty()).then(|| entries.into_values().collect())
    }

    /// Every file's path, sorted.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.files.keys().map(String::as_str)
    }
}

/// A path relative to the root: leading `/` and `./`, `.` segments and empty segments gone,
/// `..` resolved (never above the root).
fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            part => parts.push(part),
        }
    }
    parts.join("/")
}

fn json_kind(value: &Json) -> &'static str {
    match value {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "a list",
        Json::Object(_) => "a map",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn inline_maps_nest_as_directories_and_paths_are_normalized() {
        let fs = Filesystem::from_inline(&json!({
            "blueprint.yaml": "kind: Blueprint",
            "templates": {"a.yaml": "a", "sub": {"b.yaml": "bb"}}
        }))
        .unwrap();
        assert_eq!(fs.read("/blueprint.yaml"), Some(&b"kind: Blueprint"[..]));
        assert_eq!(fs.read("./templates/sub/../a.yaml"), Some(&b"a"[..]));
        let names: Vec<(String, bool)> = fs
            .read_dir("templates")
            .unwrap()
            .into_iter()
            .map(|e| (e.name, e.is_dir))
            .collect();
        assert_eq!(
            names,
            [("a.yaml".to_string(), false), ("sub".to_string(), true)]
        );
        assert!(fs.read_dir("missing").is_none());
    }

    #[test]
    fn a_file_that_is_not_text_is_named_in_the_error() {
        let err = Filesystem::from_inline(&json!({"dir": {"x": 1}})).unwrap_err();
        assert_eq!(
            err.to_string(),
            "blueprint filesystem: dir/x: expected the file's text or a directory, got a number"
        );
    }
}
