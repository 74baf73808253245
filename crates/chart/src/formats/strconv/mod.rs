//! Go's `strconv` quoting: string and rune literals as Go prints them, with Go's table of
//! printable characters.

mod printable;
mod quote;

pub use quote::{is_print, quote, quote_rune, quote_to_ascii};
