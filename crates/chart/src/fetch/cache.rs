//! A content-addressed cache of chart archives: `DIR/sha256-HEX.tgz`.

use std::path::PathBuf;

use sha2::{Digest, Sha256};

/// Chart archives by sha256 digest.
#[derive(Debug, Clone)]
pub struct Cache {
    dir: PathBuf,
}

impl Cache {
    /// A cache in `dir` (created on first write).
    pub fn new(dir: PathBuf) -> Cache {
        Cache { dir }
    }

    /// The hex sha256 of `data`.
    pub fn digest(data: &[u8]) -> String {
        Sha256::digest(data)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    fn path(&self, hex: &str) -> Option<PathBuf> {
        // Only well-formed digests name files, so a hostile index cannot point outside.
        let hex = hex.strip_prefix("sha256:").unwrap_or(hex);
        (hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit())).then(|| {
            self.dir
                .join(format!("sha256-{}.tgz", hex.to_ascii_lowercase()))
        })
    }

    /// The archive with this digest (`HEX` or `sha256:HEX`), if cached and intact.
    pub fn get(&self, digest: &str) -> Option<Vec<u8>> {
        let path = self.path(digest)?;
        let data = std::fs::read(path).ok()?;
        let want = digest
            .strip_prefix("sha256:")
            .unwrap_or(digest)
            .to_ascii_lowercase();
        (Cache::digest(&data) == want).then_some(data)
    }

    /// Stores an archive under its digest; a failed write only costs a later download.
    pub fn put(&self, data: &[u8]) -> String {
        let hex = Cache::digest(data);
        if let Some(path) = self.path(&hex)
            && std::fs::create_dir_all(&self.dir).is_ok()
        {
            let tmp = path.with_extension(format!("tmp{}", std::process::id()));
            if std::fs::write(&tmp, data).is_ok() {
                let _ = std::fs::rename(&tmp, &path);
            }
        }
        hex
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stores_and_verifies_by_digest() {
        let dir =
            std::env::temp_dir().join(format!("landscaper-cache-test-{}", std::process::id()));
        let cache = Cache::new(dir.clone());
        let digest = cache.put(b"chart bytes");
        assert_eq!(cache.get(&digest).as_deref(), Some(&b"chart bytes"[..]));
        assert_eq!(
            cache.get(&format!("sha256:{digest}")).as_deref(),
            Some(&b"chart bytes"[..])
        );
        assert!(cache.get("../../etc/passwd").is_none());
        std::fs::write(dir.join(format!("sha256-{digest}.tgz")), b"tampered").unwrap();
        assert!(cache.get(&digest).is_none());
        let _ = std::fs::remove_dir_all(dir);
    }
}
