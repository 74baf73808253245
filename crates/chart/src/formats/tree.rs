//! The plain data tree shared by the format layer (YAML, JSON, strvals).
//!
//! It mirrors what Go code in Helm holds in `interface{}` after decoding: `nil`, `bool`,
//! `int64`, `uint64`, `float64`, `string`, `[]interface{}` and `map[string]interface{}`.
//! Maps keep insertion order so diagnostics can follow the source, while every encoder that
//! Go sorts (JSON, YAML, iteration in templates) uses [`sorted_entries`] or its own order.

use indexmap::IndexMap;

/// A string-keyed map that remembers insertion order, hashed with foldhash: values trees are
/// built and looked up key by key, and SipHash was a visible part of reading values files.
pub type Map = IndexMap<String, Data, foldhash::fast::RandomState>;

/// One value of the data tree.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Data {
    /// Go `nil`.
    #[default]
    Null,
    /// Go `bool`.
    Bool(bool),
    /// Go `int64` (also `int`).
    Int(i64),
    /// Go `uint64`, only for values above `i64::MAX` that YAML decoding produces.
    Uint(u64),
    /// Go `float64`.
    Float(f64),
    /// Go `string`.
    String(String),
    /// Go `[]interface{}`.
    List(Vec<Data>),
    /// Go `map[string]interface{}`.
    Map(Map),
}

impl Data {
    /// The map inside, if this is a map.
    pub fn as_map(&self) -> Option<&Map> {
        match self {
            Data::Map(m) => Some(m),
            _ => None,
        }
    }

    /// The string inside, if this is a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Data::String(s) => Some(s),
            _ => None,
        }
    }

    /// Whether lists and maps nest deeper than `limit` (checked without recursion, so that
    /// encoders can refuse such data before recursing into it).
    pub fn nests_deeper_than(&self, limit: usize) -> bool {
        let mut stack = vec![(self, 0usize)];
        while let Some((d, depth)) = stack.pop() {
            if depth > limit {
                return true;
            }
            match d {
                Data::List(items) => stack.extend(items.iter().map(|i| (i, depth + 1))),
                Data::Map(m) => stack.extend(m.values().map(|v| (v, depth + 1))),
                _ => {}
            }
        }
        false
    }

    /// The JSON kind name `encoding/json` uses in "cannot unmarshal X into Go value" errors.
    pub fn json_kind(&self) -> &'static str {
        match self {
            Data::Null => "null",
            Data::Bool(_) => "bool",
            Data::Int(_) | Data::Uint(_) | Data::Float(_) => "number",
            Data::String(_) => "string",
            Data::List(_) => "array",
            Data::Map(_) => "object",
        }
    }

    /// The Go type name Helm's errors use for this kind of value.
    pub fn go_type_name(&self) -> &'static str {
        match self {
            Data::Null => "nil",
            Data::Bool(_) => "bool",
            Data::Int(_) => "int64",
            Data::Uint(_) => "uint64",
            Data::Float(_) => "float64",
            Data::String(_) => "string",
            Data::List(_) => "[]interface {}",
            Data::Map(_) => "map[string]interface {}",
        }
    }
}

impl From<&str> for Data {
    fn from(s: &str) -> Self {
        Data::String(s.to_owned())
    }
}

impl From<String> for Data {
    fn from(s: String) -> Self {
        Data::String(s)
    }
}

/// The entries of `map` in Go's order for sorted map keys (byte-wise string order).
pub fn sorted_entries(map: &Map) -> Vec<(&String, &Data)> {
    let mut entries: Vec<_> = map.iter().collect();
    entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    entries
}

/// Short constructors of data trees for the format layer's tests.
#[cfg(test)]
pub(crate) mod build {
    use super::{Data, Map};

    /// A string.
    pub(crate) fn s(v: &str) -> Data {
        Data::String(v.to_owned())
    }

    /// A map of `entries`, in their order.
    pub(crate) fn map(entries: Vec<(&str, Data)>) -> Data {
        Data::Map(
            entries
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect::<Map>(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_depth_counts_collections_only() {
        let mut d = Data::Int(1);
        for _ in 0..3 {
            d = Data::List(vec![d]);
        }
        assert!(!d.nests_deeper_than(3));
        assert!(d.nests_deeper_than(2));
    }

    #[test]
    fn sorted_entries_use_byte_order_not_insertion_order() {
        let mut m = Map::default();
        m.insert("b".into(), Data::Int(1));
        m.insert("B".into(), Data::Int(2));
        m.insert("a".into(), Data::Int(3));
        let keys: Vec<_> = sorted_entries(&m)
            .into_iter()
            .map(|(k, _)| k.as_str())
            .collect();
        assert_eq!(keys, ["B", "a", "b"]);
    }
}
