//! `--output-dir`: every rendered document appended to a file named after its template path
//! below the folder, as `helm template --output-dir` writes them, with helm's `wrote PATH`
//! line on stdout for each document.

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use landscaper_chart::helm::render::{Release, TemplateOptions};

/// Where the documents go.
pub struct OutputDir<'a> {
    /// `--output-dir`.
    pub dir: &'a Path,
    /// `--release-name`: templates (not CRDs, as in helm) go below `dir/<release name>`.
    pub release_dir: Option<&'a str>,
}

impl OutputDir<'_> {
    /// Writes the release; returns what helm prints on stdout, or its error after the
    /// `wrote` lines printed so far.
    pub fn write(
        &self,
        release: &Release,
        crds: &[(String, String)],
        options: &TemplateOptions,
    ) -> (String, Option<String>) {
        let mut stdout = String::new();
        match self.write_all(release, crds, options, &mut stdout) {
            Ok(()) => {}
            Err(e) => return (stdout, Some(e)),
        }
        // With --show-only helm looks for the templates in what is left of the manifest
        // (nothing) and fails; otherwise it prints that rest, an empty line.
        if let Some(wanted) = options.show_only.first() {
            return (
                stdout,
                Some(format!("could not find template {wanted} in chart")),
            );
        }
        stdout.push('\n');
        (stdout, None)
    }

    fn write_all(
        &self,
        release: &Release,
        crds: &[(String, String)],
        options: &TemplateOptions,
        stdout: &mut String,
    ) -> Result<(), String> {
        let templates_dir = match self.release_dir {
            Some(name) => self.dir.join(name),
            None => self.dir.to_path_buf(),
        };
        let mut written = HashSet::new();
        let mut rest = release.manifest.as_str();
        // helm writes these while rendering, so a failure gets its render error's hint.
        let hint = |e: String| format!("{e}\n\nUse --debug flag to render out invalid YAML");
        for (name, data) in crds {
            let block = format!("---\n# Source: {name}\n{data}\n");
            rest = rest.strip_prefix(block.as_str()).unwrap_or(rest);
            write_document(self.dir, name, data, &mut written, stdout).map_err(hint)?;
        }
        for (name, content) in documents(rest) {
            write_document(&templates_dir, name, content, &mut written, stdout).map_err(hint)?;
        }
        if options.disable_hooks {
            return Ok(());
        }
        // helm appends hooks to a file that already exists on disk, even from an earlier run.
        let mut hooks_written = HashSet::new();
        for hook in &release.hooks {
            if options.skip_tests && hook.is_test_hook() {
                continue;
            }
            if templates_dir.join(&hook.path).exists() {
                hooks_written.insert(hook.path.clone());
            }
            write_document(
                &templates_dir,
                &hook.path,
                &hook.content,
                &mut hooks_written,
                stdout,
            )?;
        }
        Ok(())
    }
}

/// The `(template path, content)` of each `---\n# Source: PATH\nCONTENT\n` block.
fn documents(manifest: &str) -> Vec<(&str, &str)> {
    manifest
        .split("---\n# Source: ")
        .filter(|block| !block.is_empty())
        .map(|block| {
            let (name, content) = block.split_once('\n').unwrap_or((block, ""));
            (name, content.strip_suffix('\n').unwrap_or(content))
        })
        .collect()
}

/// helm's `writeToFile`: create (first time in this run) or append, then `wrote PATH`.
fn write_document(
    dir: &Path,
    name: &str,
    content: &str,
    written: &mut HashSet<String>,
    stdout: &mut String,
) -> Result<(), String> {
    let path = PathBuf::from(format!("{}/{name}", dir.display()));
    if let Some(parent) = path.parent() {
        ensure_directory(parent)?;
    }
    let append = !written.insert(name.to_string());
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .append(append)
        .truncate(!append)
        .open(&path)
        .map_err(|e| format!("open {}: {}", path.display(), io_reason(&e)))?;
    file.write_all(format!("---\n# Source: {name}\n{content}\n").as_bytes())
        .map_err(|e| format!("write {}: {}", path.display(), io_reason(&e)))?;
    stdout.push_str(&format!("wrote {}\n", path.display()));
    Ok(())
}

/// helm's `ensureDirectoryForFile`: a folder that is missing is made, any other problem
/// reported as `stat`'s.
fn ensure_directory(dir: &Path) -> Result<(), String> {
    match std::fs::metadata(dir) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => std::fs::create_dir_all(dir)
            .map_err(|e| format!("mkdir {}: {}", dir.display(), io_reason(&e))),
        Err(e) => Err(format!("stat {}: {}", dir.display(), io_reason(&e))),
    }
}

/// Go's wording of the common I/O errors.
fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".to_string(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        std::io::ErrorKind::NotADirectory => "not a directory".to_string(),
        _ => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifests_split_into_documents_by_source() {
        let docs = documents(
            "---\n# Source: c/templates/a.yaml\na: 1\n---\n# Source: c/templates/b.yaml\nb: 2\n",
        );
        assert_eq!(
            docs,
            [
                ("c/templates/a.yaml", "a: 1"),
                ("c/templates/b.yaml", "b: 2")
            ]
        );
    }
}
