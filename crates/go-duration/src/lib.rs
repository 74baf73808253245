//! Go's `time.Duration` as text, exactly as Go reads and writes it: `time.ParseDuration` and
//! `Duration.String`, in nanoseconds (Go's `int64`). It owns the syntax and Go's wording of
//! errors; callers add their own rules on top (the API rejects negative durations) and their
//! own quoting of Go strings. No I/O, no dependencies.

mod format;
mod parse;

pub use format::{format, format_unsigned};
pub use parse::{ParseError, parse};
