//! A chart file's contents: bytes in memory, or a file held open and read on first use.

use std::fmt;
use std::fs;
use std::sync::{Arc, OnceLock};

use bytes::Bytes;

use super::LoadError;

/// The bytes of a chart file. Most are read while the chart loads; the loader may defer a
/// file that a render seldom reads (a folder's `crds/` files, which only `--include-crds`,
/// installs and templates that ask for them read: 4.4 of kube-prometheus-stack's 7.2 MB). A
/// deferred file was opened and checked when the chart loaded, so it fails to load as Helm's
/// would, and is read from that same open file, which stays open while the chart is held.
#[derive(Clone)]
pub struct Contents(Repr);

#[derive(Clone)]
enum Repr {
    Read(Bytes),
    Deferred(Arc<Deferred>),
}

/// A file opened and checked while its chart loaded, not yet read.
struct Deferred {
    /// The path in the chart, for errors.
    name: String,
    /// The open file.
    file: fs::File,
    /// Its size when it was opened.
    len: u64,
    read: OnceLock<Result<Bytes, LoadError>>,
}

impl Contents {
    /// Contents read later from `file`, the chart's `name`, `len` bytes when it was opened.
    pub(super) fn deferred(name: String, file: fs::File, len: u64) -> Contents {
        Contents(Repr::Deferred(Arc::new(Deferred {
            name,
            file,
            len,
            read: OnceLock::new(),
        })))
    }

    /// The bytes, read now if they were deferred (once: later calls share them, or the error).
    pub fn read(&self) -> Result<&Bytes, LoadError> {
        match &self.0 {
            Repr::Read(data) => Ok(data),
            Repr::Deferred(deferred) => deferred.read().as_ref().map_err(LoadError::clone),
        }
    }

    /// The bytes, or none where a deferred file could not be read: for readers that cannot
    /// fail (a template's `.Files`). A render reports such a failure when it ends
    /// ([`super::Chart::deferred_read_failure`]).
    pub fn bytes_or_empty(&self) -> &[u8] {
        self.read().map_or(&[], |data| &data[..])
    }

    /// Why a deferred file could not be read, if it was read and could not be.
    pub fn read_failure(&self) -> Option<&LoadError> {
        match &self.0 {
            Repr::Read(_) => None,
            Repr::Deferred(deferred) => deferred.read.get()?.as_ref().err(),
        }
    }
}

impl Deferred {
    fn read(&self) -> &Result<Bytes, LoadError> {
        self.read
            .get_or_init(|| super::load::read_open_file(&self.file, self.len, &self.name))
    }
}

impl Default for Contents {
    fn default() -> Contents {
        Contents(Repr::Read(Bytes::new()))
    }
}

impl From<Bytes> for Contents {
    fn from(data: Bytes) -> Contents {
        Contents(Repr::Read(data))
    }
}

impl From<Vec<u8>> for Contents {
    fn from(data: Vec<u8>) -> Contents {
        Contents(Repr::Read(data.into()))
    }
}

impl From<String> for Contents {
    fn from(data: String) -> Contents {
        Contents(Repr::Read(data.into()))
    }
}

impl From<&'static [u8]> for Contents {
    fn from(data: &'static [u8]) -> Contents {
        Contents(Repr::Read(Bytes::from_static(data)))
    }
}

impl From<&'static str> for Contents {
    fn from(data: &'static str) -> Contents {
        Contents(Repr::Read(Bytes::from_static(data.as_bytes())))
    }
}

/// Equal when the bytes are (deferred files are read to compare them).
impl PartialEq for Contents {
    fn eq(&self, other: &Contents) -> bool {
        match (self.read(), other.read()) {
            (Ok(a), Ok(b)) => a == b,
            (Err(a), Err(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for Contents {}

impl fmt::Debug for Contents {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Read(data) => fmt::Debug::fmt(data, f),
            Repr::Deferred(deferred) => f
                .debug_struct("Deferred")
                .field("name", &deferred.name)
                .field("len", &deferred.len)
                .field("read", &deferred.read.get())
                .finish(),
        }
    }
}
