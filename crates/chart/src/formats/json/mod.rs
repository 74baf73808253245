//! JSON as Go's `encoding/json` writes and reads it, for Sprig's `toJson`, `toPrettyJson`,
//! `toRawJson` and Helm's `fromJson`/`fromJsonArray`.

mod decode;
mod encode;

use std::fmt;

use crate::formats::tree::{Data, Map};

/// Pieces of the encoder for writers of Go structs, whose fields keep declaration order.
pub(crate) use encode::{Options as EncodeOptions, newline, write_string, write_value};

/// Deepest nesting read or written; deeper data is an error instead of a stack overflow.
pub use decode::MAX_DEPTH;

/// A JSON error with Go's wording and, for syntax errors, the byte offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError {
    /// The message as Go prints it.
    pub message: String,
    /// Byte offset of the problem in the input, when reading.
    pub offset: Option<usize>,
}

impl JsonError {
    fn new(message: String) -> JsonError {
        JsonError {
            message,
            offset: None,
        }
    }

    fn at(message: String, offset: usize) -> JsonError {
        JsonError {
            message,
            offset: Some(offset),
        }
    }
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for JsonError {}

/// `json.Marshal`: compact, keys sorted, `<`, `>`, `&` escaped (Sprig's `toJson`).
pub fn to_json(data: &Data) -> Result<String, JsonError> {
    encode::encode(
        data,
        encode::Options {
            escape_html: true,
            pretty: false,
        },
    )
}

/// `json.MarshalIndent(v, "", "  ")` (Sprig's `toPrettyJson`).
pub fn to_pretty_json(data: &Data) -> Result<String, JsonError> {
    encode::encode(
        data,
        encode::Options {
            escape_html: true,
            pretty: true,
        },
    )
}

/// An encoder with HTML escaping off, trailing newline trimmed (Sprig's `toRawJson`).
pub fn to_raw_json(data: &Data) -> Result<String, JsonError> {
    encode::encode(
        data,
        encode::Options {
            escape_html: false,
            pretty: false,
        },
    )
}

/// `json.Unmarshal` into `interface{}`.
pub fn parse(src: &str) -> Result<Data, JsonError> {
    decode::parse(src)
}

/// `json.Decoder.Decode` of the first value in `src`: the value and the bytes it used.
pub fn parse_prefix(src: &str) -> Result<(Data, usize), JsonError> {
    decode::parse_prefix(src)
}

/// `json.Unmarshal` into `map[string]interface{}` (Helm's `fromJson`; `null` gives an
/// empty map).
pub fn parse_object(src: &str) -> Result<Map, JsonError> {
    match decode::parse(src)? {
        Data::Map(m) => Ok(m),
        Data::Null => Ok(Map::default()),
        other => Err(JsonError::new(format!(
            "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
            other.json_kind()
        ))),
    }
}

/// `json.Unmarshal` into `[]interface{}` (Helm's `fromJsonArray`; `null` gives an empty list).
pub fn parse_array(src: &str) -> Result<Vec<Data>, JsonError> {
    match decode::parse(src)? {
        Data::List(items) => Ok(items),
        Data::Null => Ok(Vec::new()),
        other => Err(JsonError::new(format!(
            "json: cannot unmarshal {} into Go value of type []interface {{}}",
            other.json_kind()
        ))),
    }
}

#[cfg(test)]
mod tests;
