//! What the randomised and live differential tests share: finding the reference helm binary,
//! and a small deterministic generator (xorshift), so a failure can be replayed.

use std::path::PathBuf;

/// The reference helm binary ($HELM or `helm` on PATH). Without one the caller skips its
/// test, except under CI=true, where a missing helm fails it.
#[allow(dead_code, reason = "each test binary uses a subset of the helpers")]
pub fn helm_or_skip() -> Option<PathBuf> {
    let found = match std::env::var("HELM") {
        Ok(path) => Some(PathBuf::from(path)),
        Err(_) => std::env::var_os("PATH").and_then(|path| {
            std::env::split_paths(&path)
                .map(|dir| dir.join("helm"))
                .find(|candidate| candidate.is_file())
        }),
    };
    if found.is_none() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true but no helm binary"
        );
        eprintln!("skipped: no helm binary ($HELM or PATH)");
    }
    found
}

/// A xorshift generator seeded by the test, so a failure can be replayed.
pub struct Rng(pub u64);

#[allow(dead_code, reason = "each test binary uses a subset of the helpers")]
impl Rng {
    /// The next number.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number below `n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// One of `items`.
    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}
