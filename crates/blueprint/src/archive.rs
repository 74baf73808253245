//! Reading tar archives: every regular file with its content, for the blueprint and CTF
//! readers.

use std::io::Read as _;

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
