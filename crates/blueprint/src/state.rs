//! The state an execution keeps between runs: stored by its key (`deploy<name>`,
//! `export<name>`), in memory for tests and tools, in Secrets in the controllers.

use std::collections::HashMap;
use std::sync::Mutex;

use sha1::{Digest, Sha1};

use crate::Error;

/// Where executions keep their state.
pub trait StateHandler {
    /// The state stored under `key`, if any.
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, Error>;
    /// Stores `data` under `key`.
    fn set(&self, key: &str, data: Vec<u8>) -> Result<(), Error>;
}

/// State held in memory.
#[derive(Debug, Default)]
pub struct MemoryState(Mutex<HashMap<String, Vec<u8>>>);

impl MemoryState {
    /// A handler holding `entries`.
    pub fn with(entries: impl IntoIterator<Item = (String, Vec<u8>)>) -> Self {
        Self(Mutex::new(entries.into_iter().collect()))
    }

    /// A copy of everything stored, by key (for a caller that persists the state elsewhere).
    pub fn entries(&self) -> HashMap<String, Vec<u8>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

impl StateHandler for MemoryState {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, Error> {
        Ok(self
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(key)
            .cloned())
    }

    fn set(&self, key: &str, data: Vec<u8>) -> Result<(), Error> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key.to_string(), data);
        Ok(())
    }
}

/// The name of the Secret holding an installation's state for `key`: the lower-case,
/// unpadded base32 of `sha1("<installation>/<key>")`, as upstream names it.
pub fn secret_name(installation: &str, key: &str) -> String {
    let digest = Sha1::digest(format!("{installation}/{key}").as_bytes());
    data_encoding::BASE32_NOPAD
        .encode(&digest)
        .to_ascii_lowercase()
}

/// The data key of a state Secret.
pub const SECRET_DATA_KEY: &str = "config";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names_are_upstreams() {
        assert_eq!(
            secret_name("test", "my-exec"),
            "wq4vtne435jczah6borg33z4gga5bx3k"
        );
    }
}
