//! A content-addressed cache of chart archives: `DIR/sha256-HEX.tgz`, optionally bounded in
//! bytes (least recently used archives go first).

use std::path::PathBuf;
use std::time::SystemTime;

use sha2::{Digest, Sha256};

/// Chart archives by sha256 digest.
#[derive(Debug, Clone)]
pub struct Cache {
    dir: PathBuf,
    max_bytes: Option<u64>,
}

impl Cache {
    /// An unbounded cache in `dir` (created on first write).
    pub fn new(dir: PathBuf) -> Cache {
        Cache {
            dir,
            max_bytes: None,
        }
    }

    /// The same cache, holding at most `max_bytes` of archives (unbounded when `None`).
    pub fn with_max_bytes(self, max_bytes: Option<u64>) -> Cache {
        Cache { max_bytes, ..self }
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
        let data = std::fs::read(&path).ok()?;
        let want = digest
            .strip_prefix("sha256:")
            .unwrap_or(digest)
            .to_ascii_lowercase();
        if Cache::digest(&data) != want {
            return None;
        }
        if self.max_bytes.is_some() {
            // The modification time orders eviction: a hit makes an archive recent again.
            let _ = std::fs::File::options()
                .append(true)
                .open(&path)
                .and_then(|f| f.set_modified(SystemTime::now()));
        }
        Some(data)
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
        self.evict();
        hex
    }

    /// Removes the least recently used archives until the cache fits its bound.
    fn evict(&self) {
        let Some(max) = self.max_bytes else {
            return;
        };
        let Ok(dir) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let mut files: Vec<(SystemTime, u64, PathBuf)> = dir
            .flatten()
            .filter(|e| {
                let name = e.file_name();
                let name = name.to_string_lossy();
                name.starts_with("sha256-") && name.ends_with(".tgz")
            })
            .filter_map(|e| {
                let meta = e.metadata().ok()?;
                Some((meta.modified().ok()?, meta.len(), e.path()))
            })
            .collect();
        let mut total: u64 = files.iter().map(|f| f.1).sum();
        files.sort();
        for (_, len, path) in files {
            if total <= max {
                break;
            }
            if std::fs::remove_file(&path).is_ok() {
                total -= len;
            }
        }
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

    #[test]
    fn a_bounded_cache_evicts_the_least_recently_used() {
        let dir = std::env::temp_dir().join(format!("landscaper-cache-lru-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let cache = Cache::new(dir.clone()).with_max_bytes(Some(20));
        let old = cache.put(b"first archive");
        let set_age = |digest: &str, secs: u64| {
            std::fs::File::options()
                .append(true)
                .open(dir.join(format!("sha256-{digest}.tgz")))
                .and_then(|f| {
                    f.set_modified(SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(secs))
                })
                .unwrap();
        };
        set_age(&old, 1_000);
        let new = cache.put(b"second one");
        assert!(cache.get(&old).is_none(), "oldest archive evicted");
        assert_eq!(cache.get(&new).as_deref(), Some(&b"second one"[..]));
        let _ = std::fs::remove_dir_all(dir);
    }
}
