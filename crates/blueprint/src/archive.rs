//! Tar archives: every regular file with its content, for the blueprint and CTF readers; a
//! component descriptor's layer; a blueprint folder packed for a registry.

use std::io::Read as _;
use std::path::Path;

use crate::Error;
use crate::filesystem::Filesystem;

/// The file in a descriptor layer's tar that holds the descriptor.
pub(crate) const DESCRIPTOR_FILE: &str = "component-descriptor.yaml";

/// Every regular file of a tar archive, by its path without a leading `./`.
pub(crate) fn files(reader: impl std::io::Read) -> Result<Vec<(String, Vec<u8>)>, String> {
    let mut archive = tar::Archive::new(reader);
    let mut files = Vec::new();
    for entry in archive
        .entries()
        .map_err(|e| format!("not a tar archive: {e}"))?
    {
        let mut entry = entry.map_err(|e| format!("reading the archive: {e}"))?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let path = entry
            .path()
            .map_err(|e| format!("reading the archive: {e}"))?
            .to_string_lossy()
            .trim_start_matches("./")
            .to_string();
        let mut data = Vec::new();
        entry
            .read_to_end(&mut data)
            .map_err(|e| format!("reading {path}: {e}"))?;
        files.push((path, data));
    }
    Ok(files)
}

/// A tar+gzip archive of a blueprint folder on disk.
pub fn archive_blueprint(dir: &Path) -> Result<Vec<u8>, Error> {
    let fs = Filesystem::from_dir(dir)?;
    let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::default(),
    ));
    for path in fs.paths() {
        let data = fs.read(path).unwrap_or_default();
        append_file(&mut builder, path, data)
            .map_err(|e| Error::Filesystem(format!("archiving {path}: {e}")))?;
    }
    builder
        .into_inner()
        .and_then(|gz| gz.finish())
        .map_err(|e| Error::Filesystem(format!("archiving {}: {e}", dir.display())))
}

/// A tar archive of the one file `name` holding `data` (a component descriptor's layer).
pub(crate) fn tar_of(name: &str, data: &[u8]) -> Result<Vec<u8>, Error> {
    let mut builder = tar::Builder::new(Vec::new());
    append_file(&mut builder, name, data)
        .and_then(|()| builder.into_inner())
        .map_err(|e| Error::Component(format!("archiving {name}: {e}")))
}

/// Appends the regular file `path` holding `data`, mode 0644.
fn append_file<W: std::io::Write>(
    builder: &mut tar::Builder<W>,
    path: &str,
    data: &[u8],
) -> std::io::Result<()> {
    let mut header = tar::Header::new_gnu();
    header.set_size(data.len() as u64);
    header.set_mode(0o644);
    header.set_cksum();
    builder.append_data(&mut header, path, data)
}

/// The text of `name` in a tar archive.
pub(crate) fn tar_file(data: &[u8], name: &str) -> Result<String, String> {
    let mut archive = tar::Archive::new(data);
    for entry in archive.entries().map_err(|e| e.to_string())? {
        let mut entry = entry.map_err(|e| e.to_string())?;
        let path = entry
            .path()
            .map_err(|e| e.to_string())?
            .to_string_lossy()
            .into_owned();
        if path.trim_start_matches("./") == name {
            let mut text = String::new();
            entry
                .read_to_string(&mut text)
                .map_err(|e| format!("{name}: {e}"))?;
            return Ok(text);
        }
    }
    Err(format!("the descriptor layer has no {name}"))
}
