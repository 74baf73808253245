//! Typing of composed nodes as go-yaml v2 decodes into `interface{}`: YAML 1.1 implicit
//! types, explicit `!!` tags, merge keys `<<`, keys of any scalar type, later duplicates win.

use std::collections::HashMap;

use base64::Engine as _;

use super::compose::{Mark, Node};
use super::error::{Stage, YamlError};
use super::resolve::{Resolved, resolve_plain};
use super::values::go_sharp_v;

const TAG_PREFIX: &str = "tag:yaml.org,2002:";

/// A YAML 1.1 value as go-yaml v2 returns it, before any JSON conversion.
#[derive(Debug, Clone, PartialEq)]
pub enum Yaml {
    /// `~`, `null` or empty.
    Null,
    /// A YAML 1.1 boolean.
    Bool(bool),
    /// An integer within `int64`.
    Int(i64),
    /// An integer above `int64` within `uint64`.
    Uint(u64),
    /// A float; also integers beyond 64 bits (which go-yaml keeps as big integers).
    Float(f64),
    /// A string; timestamps stay strings as go-yaml v2 leaves them in untyped targets.
    String(String),
    /// A sequence.
    Seq(Vec<Yaml>),
    /// A mapping with keys of any scalar type, in first-seen order.
    Map(Vec<(Yaml, Yaml)>),
}

/// Types a composed node tree, taking its strings over.
pub fn decode(node: Node) -> Result<Yaml, YamlError> {
    match node {
        Node::Scalar {
            value,
            plain,
            tag,
            mark,
        } => decode_scalar(value, plain, tag.as_deref(), mark),
        Node::Seq(items, _) => Ok(Yaml::Seq(
            items.into_iter().map(decode).collect::<Result<_, _>>()?,
        )),
        Node::Map(entries, _) => {
            let mut out = MapBuilder::with_capacity(entries.len());
            for (k, v) in entries {
                if is_merge_key(&k) {
                    merge(v, &mut out)?;
                    continue;
                }
                let key_mark = k.mark();
                let key = decode(k)?;
                if matches!(key, Yaml::Seq(_) | Yaml::Map(_)) {
                    let reason = format!("invalid map key: {}", go_sharp_v(&key));
                    return Err(YamlError::at(Stage::Syntax, key_mark, &reason));
                }
                out.set(key, decode(v)?);
            }
            Ok(out.finish())
        }
    }
}

/// A mapping under construction: entries in first-seen order, found again by key. Most
/// mappings are small and searched in place; one that outgrows [`LINEAR_SEARCH_MAX`] gets an
/// index, so that large mappings stay linear.
pub(super) struct MapBuilder {
    entries: Vec<(Yaml, Yaml)>,
    index: Option<HashMap<KeyId, usize, foldhash::fast::RandomState>>,
}

/// Most entries a mapping searches in place for an earlier duplicate: comparing a few keys
/// costs less than copying and hashing each one for an index.
const LINEAR_SEARCH_MAX: usize = 16;

/// The identity of a scalar key as Go's map compares it (NaN never equals itself, so it
/// gets no identity and every NaN key is a new entry).
#[derive(PartialEq, Eq, Hash)]
enum KeyId {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(u64),
    String(String),
}

impl KeyId {
    fn of(key: &Yaml) -> Option<KeyId> {
        Some(match key {
            Yaml::Null => KeyId::Null,
            Yaml::Bool(b) => KeyId::Bool(*b),
            Yaml::Int(i) => KeyId::Int(*i),
            Yaml::Uint(u) => KeyId::Uint(*u),
            Yaml::Float(f) if f.is_nan() => return None,
            // 0.0 and -0.0 are the same Go map key.
            Yaml::Float(f) => KeyId::Float((f + 0.0).to_bits()),
            Yaml::String(s) => KeyId::String(s.clone()),
            Yaml::Seq(_) | Yaml::Map(_) => return None,
        })
    }

    /// Whether `a` and `b` are the same Go map key, as their identities would compare.
    fn same(a: &Yaml, b: &Yaml) -> bool {
        match (a, b) {
            (Yaml::Null, Yaml::Null) => true,
            (Yaml::Bool(x), Yaml::Bool(y)) => x == y,
            (Yaml::Int(x), Yaml::Int(y)) => x == y,
            (Yaml::Uint(x), Yaml::Uint(y)) => x == y,
            (Yaml::Float(x), Yaml::Float(y)) => {
                !x.is_nan() && (x + 0.0).to_bits() == (y + 0.0).to_bits()
            }
            (Yaml::String(x), Yaml::String(y)) => x == y,
            _ => false,
        }
    }
}

impl MapBuilder {
    pub(super) fn with_capacity(n: usize) -> MapBuilder {
        MapBuilder {
            entries: Vec::with_capacity(n),
            index: None,
        }
    }

    /// Sets `key`, replacing an earlier value in its first position as go-yaml v2 does.
    pub(super) fn set(&mut self, key: Yaml, value: Yaml) {
        let Some(index) = &mut self.index else {
            match self.entries.iter().position(|(k, _)| KeyId::same(k, &key)) {
                Some(i) => self.entries[i].1 = value,
                None => {
                    self.entries.push((key, value));
                    if self.entries.len() > LINEAR_SEARCH_MAX {
                        self.index = Some(self.index_entries());
                    }
                }
            }
            return;
        };
        let id = KeyId::of(&key);
        if let Some(&i) = id.as_ref().and_then(|id| index.get(id)) {
            self.entries[i].1 = value;
            return;
        }
        if let Some(id) = id {
            index.insert(id, self.entries.len());
        }
        self.entries.push((key, value));
    }

    /// The mapping built.
    pub(super) fn finish(self) -> Yaml {
        Yaml::Map(self.entries)
    }

    /// The index of the entries so far (their keys are distinct).
    fn index_entries(&self) -> HashMap<KeyId, usize, foldhash::fast::RandomState> {
        let mut index = HashMap::with_capacity_and_hasher(
            self.entries.len() * 2,
            foldhash::fast::RandomState::default(),
        );
        for (i, (key, _)) in self.entries.iter().enumerate() {
            if let Some(id) = KeyId::of(key) {
                index.insert(id, i);
            }
        }
        index
    }
}

fn is_merge_key(node: &Node) -> bool {
    match node {
        Node::Scalar {
            value, plain, tag, ..
        } => {
            value == "<<"
                && match tag.as_deref() {
                    None => *plain,
                    Some(t) => t == "tag:yaml.org,2002:merge",
                }
        }
        _ => false,
    }
}

/// go-yaml v2 writes merged entries over what is already there; a list of maps is applied
/// from the last to the first so that earlier maps win.
fn merge(value: Node, out: &mut MapBuilder) -> Result<(), YamlError> {
    let mark = value.mark();
    let wrong = || {
        YamlError::at(
            Stage::Syntax,
            mark,
            "map merge requires map or sequence of maps as the value",
        )
    };
    let maps: Vec<Node> = match value {
        Node::Map(..) => vec![value],
        Node::Seq(items, _) => {
            if !items.iter().all(|i| matches!(i, Node::Map(..))) {
                return Err(wrong());
            }
            items.into_iter().rev().collect()
        }
        Node::Scalar { .. } => return Err(wrong()),
    };
    for m in maps {
        if let Yaml::Map(entries) = decode(m)? {
            for (k, v) in entries {
                out.set(k, v);
            }
        }
    }
    Ok(())
}

fn decode_scalar(
    value: String,
    plain: bool,
    tag: Option<&str>,
    mark: Mark,
) -> Result<Yaml, YamlError> {
    let short = match tag {
        None if plain => return Ok(from_resolved(resolve_plain(&value), value)),
        None => return Ok(Yaml::String(value)),
        Some(t) => match t.strip_prefix(TAG_PREFIX) {
            Some(short) => short,
            // Local and unknown tags are not resolvable: go-yaml keeps the text.
            None => return Ok(Yaml::String(value)),
        },
    };
    match short {
        "str" => Ok(Yaml::String(value)),
        "binary" => decode_binary(&value, mark),
        "null" | "bool" | "int" | "float" | "timestamp" => {
            let resolved = resolve_plain(&value);
            typed_scalar(value, short, resolved, mark)
        }
        _ => Ok(Yaml::String(value)),
    }
}

/// A plain (unquoted, untagged) scalar's value, typed as `decode` types it.
pub fn plain_scalar(text: &str) -> Yaml {
    from_resolved(resolve_plain(text), text.to_string())
}

fn from_resolved(r: Resolved, text: String) -> Yaml {
    match r {
        Resolved::Null => Yaml::Null,
        Resolved::Bool(b) => Yaml::Bool(b),
        Resolved::Int(i) => Yaml::Int(i),
        Resolved::Uint(u) => Yaml::Uint(u),
        Resolved::BigInt(f) | Resolved::Float(f) => Yaml::Float(f),
        Resolved::Timestamp | Resolved::Str => Yaml::String(text),
    }
}

/// An explicitly tagged scalar must resolve to its tag; `!!float` also accepts integers.
fn typed_scalar(value: String, tag: &str, r: Resolved, mark: Mark) -> Result<Yaml, YamlError> {
    let got = match &r {
        Resolved::Null => "null",
        Resolved::Bool(_) => "bool",
        Resolved::Int(_) | Resolved::Uint(_) | Resolved::BigInt(_) => "int",
        Resolved::Float(_) => "float",
        Resolved::Timestamp => "timestamp",
        Resolved::Str => "str",
    };
    if got == tag {
        return Ok(from_resolved(r, value));
    }
    if tag == "float" {
        match r {
            Resolved::Int(i) => return Ok(Yaml::Float(i as f64)),
            Resolved::Uint(u) => return Ok(Yaml::Float(u as f64)),
            _ => {}
        }
    }
    Err(YamlError::at(
        Stage::Syntax,
        mark,
        &format!("cannot decode !!{got} `{value}` as a !!{tag}"),
    ))
}

fn decode_binary(value: &str, mark: Mark) -> Result<Yaml, YamlError> {
    let compact: String = value.chars().filter(|c| !c.is_whitespace()).collect();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(compact)
        .map_err(|e| {
            YamlError::at(
                Stage::Syntax,
                mark,
                &format!("!!binary value contains invalid base64 data: {e}"),
            )
        })?;
    Ok(Yaml::String(String::from_utf8_lossy(&bytes).into_owned()))
}

#[cfg(test)]
mod tests {
    use super::super::compose::compose_first;
    use super::*;

    fn typed(src: &str) -> Yaml {
        decode(compose_first(src).unwrap().unwrap()).unwrap()
    }

    fn map(entries: &[(&str, Yaml)]) -> Yaml {
        Yaml::Map(
            entries
                .iter()
                .map(|(k, v)| (Yaml::String((*k).into()), v.clone()))
                .collect(),
        )
    }

    #[test]
    fn quoted_scalars_stay_strings() {
        assert_eq!(typed("'yes'"), Yaml::String("yes".into()));
        assert_eq!(typed("\"1\""), Yaml::String("1".into()));
        assert_eq!(typed("|\n  on\n"), Yaml::String("on\n".into()));
    }

    #[test]
    fn explicit_tags_are_honoured() {
        assert_eq!(typed("!!str 123"), Yaml::String("123".into()));
        assert_eq!(typed("!!float 3"), Yaml::Float(3.0));
        assert_eq!(typed("!!int \"12\""), Yaml::Int(12));
        assert_eq!(typed("!custom 1"), Yaml::String("1".into()));
        assert_eq!(typed("!!binary aGVsbG8="), Yaml::String("hello".into()));
        let err = decode(compose_first("!!int abc").unwrap().unwrap()).unwrap_err();
        assert_eq!(err.reason, "cannot decode !!str `abc` as a !!int");
    }

    #[test]
    fn merge_keys_follow_go_yaml_v2_precedence() {
        let src = "base: &b {a: 1, b: 2}\nother: &o {b: 3, c: 4}\nm:\n  <<: [*b, *o]\n  c: 5\n";
        let Yaml::Map(top) = typed(src) else {
            panic!("not a map")
        };
        assert_eq!(
            top[2].1,
            // The later map is applied first, so its keys come first in insertion order.
            map(&[
                ("b", Yaml::Int(2)),
                ("c", Yaml::Int(5)),
                ("a", Yaml::Int(1))
            ])
        );
        let quoted = typed("'<<': {a: 1}");
        assert_eq!(quoted, map(&[("<<", map(&[("a", Yaml::Int(1))]))]));
    }

    #[test]
    fn later_duplicate_keys_win_in_first_position() {
        assert_eq!(
            typed("a: 1\nb: 2\na: 3\n"),
            map(&[("a", Yaml::Int(3)), ("b", Yaml::Int(2))])
        );
    }

    #[test]
    fn keys_are_the_same_as_go_map_keys_whether_searched_or_indexed() {
        let keys = |v: [&str; 10]| {
            format!(
                "~: {}\nnull: {}\n0.0: {}\n-0.0: {}\n.nan: {}\n.nan: {}\n1: {}\n'1': {}\ntrue: {}\nyes: {}\n",
                v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9]
            )
        };
        let lower = keys(["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"]);
        let upper = keys(["A", "B", "C", "D", "E", "F", "G", "H", "I", "J"]);
        let padding: String = (0..=LINEAR_SEARCH_MAX)
            .map(|i| format!("pad{i}: 0\n"))
            .collect();
        let entry = |k: Yaml, v: &str| format!("{k:?}={:?}", Yaml::String(v.into()));
        let once = vec![
            entry(Yaml::Null, "b"),
            entry(Yaml::Float(0.0), "d"),
            entry(Yaml::Float(f64::NAN), "e"),
            entry(Yaml::Float(f64::NAN), "f"),
            entry(Yaml::Int(1), "g"),
            entry(Yaml::String("1".into()), "h"),
            entry(Yaml::Bool(true), "j"),
        ];
        // Set again once the mapping has outgrown the search with them in it: found through
        // the index, but for the NaN keys, which are new entries again.
        let twice = vec![
            entry(Yaml::Null, "B"),
            entry(Yaml::Float(0.0), "D"),
            entry(Yaml::Float(f64::NAN), "e"),
            entry(Yaml::Float(f64::NAN), "f"),
            entry(Yaml::Int(1), "G"),
            entry(Yaml::String("1".into()), "H"),
            entry(Yaml::Bool(true), "J"),
            entry(Yaml::Float(f64::NAN), "E"),
            entry(Yaml::Float(f64::NAN), "F"),
        ];
        let cases = [
            (lower.clone(), &once),
            (format!("{padding}{lower}"), &once),
            (format!("{lower}{padding}{upper}"), &twice),
        ];
        for (src, want) in cases {
            let Yaml::Map(entries) = typed(&src) else {
                panic!("not a map")
            };
            let keys: Vec<String> = entries
                .iter()
                .filter(|(k, _)| !matches!(k, Yaml::String(s) if s.starts_with("pad")))
                .map(|(k, v)| format!("{k:?}={v:?}"))
                .collect();
            assert_eq!(&keys, want, "{src}");
        }
    }

    #[test]
    fn large_mappings_stay_fast_and_keep_first_positions() {
        let mut src = String::new();
        for i in 0..20000 {
            src.push_str(&format!("k{i}: {i}\n"));
        }
        src.push_str("k0: last\n");
        let Yaml::Map(entries) = typed(&src) else {
            panic!("not a map")
        };
        assert_eq!(entries.len(), 20000);
        assert_eq!(entries[0].1, Yaml::String("last".into()));
    }

    #[test]
    fn non_string_keys_keep_their_type() {
        assert_eq!(
            typed("1: a\ntrue: b\n"),
            Yaml::Map(vec![
                (Yaml::Int(1), Yaml::String("a".into())),
                (Yaml::Bool(true), Yaml::String("b".into())),
            ])
        );
    }

    #[test]
    fn bad_merge_value_is_an_error() {
        let err = decode(compose_first("a:\n  <<: 1\n").unwrap().unwrap()).unwrap_err();
        assert_eq!(
            err.reason,
            "map merge requires map or sequence of maps as the value"
        );
    }
}
