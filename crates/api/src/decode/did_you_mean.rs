//! Which known field an unknown one was probably meant to be, from the type's JSON schema.
//!
//! The rule: a known field of the same object is suggested when it is at most one edit away
//! from the unknown name, or two edits when the known name has six or more characters
//! (`operation` → `operator`); an edit inserts, deletes or replaces one character or swaps two
//! neighbouring ones (`tpye` → `type`). The closest name wins; among equally close ones the
//! first in alphabetical order. Free-form objects (no declared properties) suggest nothing.

use serde_json::Value;

/// One step of a field path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    /// A key of an object.
    Key(String),
    /// An element of a list.
    Index,
}

/// The known field of `schema` (a schemars root schema) that the unknown field at `path`
/// (its last segment the unknown key) was probably meant to be.
pub fn suggestion(schema: &Value, path: &[Segment]) -> Option<String> {
    let (Segment::Key(unknown), parent) = path.split_last()? else {
        return None;
    };
    let mut nodes = expand(schema, schema);
    for segment in parent {
        nodes = nodes
            .into_iter()
            .filter_map(|node| child(node, segment))
            .flat_map(|node| expand(schema, node))
            .collect();
    }
    let mut known: Vec<&str> = nodes
        .iter()
        .filter_map(|node| node.get("properties").and_then(Value::as_object))
        .flat_map(|properties| properties.keys().map(String::as_str))
        .collect();
    known.sort_unstable();
    known.dedup();
    known
        .into_iter()
        .filter(|name| *name != unknown)
        .map(|name| (edit_distance(unknown, name), name))
        .filter(|(distance, name)| *distance <= allowed_distance(name))
        .min()
        .map(|(_, name)| name.to_owned())
}

/// How many edits a misspelling of `known` may be away from it.
fn allowed_distance(known: &str) -> usize {
    if known.chars().count() >= 6 { 2 } else { 1 }
}

/// The schema of `segment` inside `node`: a property, a map's values or a list's items.
fn child<'a>(node: &'a Value, segment: &Segment) -> Option<&'a Value> {
    match segment {
        Segment::Key(key) => node
            .get("properties")
            .and_then(|p| p.get(key))
            .or_else(|| node.get("additionalProperties").filter(|a| a.is_object())),
        Segment::Index => node.get("items").filter(|i| i.is_object()),
    }
}

/// `node` and the schemas it stands for: its `$ref` target and the branches of `allOf`,
/// `anyOf` and `oneOf` (an `Option` or an enum), recursively.
fn expand<'a>(root: &'a Value, node: &'a Value) -> Vec<&'a Value> {
    let mut out = Vec::new();
    let mut pending = vec![node];
    while let Some(node) = pending.pop() {
        if out.len() > 64 {
            break;
        }
        out.push(node);
        if let Some(target) = node
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix('#'))
            .and_then(|pointer| root.pointer(pointer))
        {
            pending.push(target);
        }
        for combinator in ["allOf", "anyOf", "oneOf"] {
            if let Some(branches) = node.get(combinator).and_then(Value::as_array) {
                pending.extend(branches);
            }
        }
    }
    out
}

/// The optimal-string-alignment distance: insertions, deletions, replacements and swaps of
/// neighbouring characters, each one edit.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut rows = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in rows[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (rows[i - 1][j] + 1)
                .min(rows[i][j - 1] + 1)
                .min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = best;
        }
    }
    rows[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn distances_count_swaps_as_one_edit() {
        assert_eq!(edit_distance("tpye", "type"), 1);
        assert_eq!(edit_distance("operation", "operator"), 2);
        assert_eq!(edit_distance("nmae", "name"), 1);
        assert_eq!(edit_distance("key", "values"), 5);
        assert_eq!(edit_distance("", "abc"), 3);
    }

    fn key(k: &str) -> Segment {
        Segment::Key(k.into())
    }

    #[test]
    fn suggests_through_refs_options_lists_and_maps() {
        let schema = json!({
            "type": "object",
            "properties": {
                "selectors": {"type": "array", "items": {"$ref": "#/$defs/Requirement"}},
                "byName": {"type": "object", "additionalProperties": {"$ref": "#/$defs/Requirement"}},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
            },
            "$defs": {
                "Requirement": {
                    "type": "object",
                    "properties": {
                        "key": {"type": "string"},
                        "operator": {"anyOf": [{"$ref": "#/$defs/Operator"}, {"type": "null"}]},
                        "values": {"type": "array", "items": {"type": "string"}}
                    }
                },
                "Operator": {"type": "string", "enum": ["=", "!="]}
            }
        });
        let at = |segments: Vec<Segment>| suggestion(&schema, &segments);
        assert_eq!(
            at(vec![key("selectors"), Segment::Index, key("operation")]),
            Some("operator".into())
        );
        assert_eq!(
            at(vec![key("byName"), key("x"), key("kye")]),
            Some("key".into())
        );
        assert_eq!(at(vec![key("selector")]), Some("selectors".into()));
        // One edit too many for a short name, and nothing is known in a free-form object.
        assert_eq!(
            at(vec![key("selectors"), Segment::Index, key("kry")]),
            Some("key".into())
        );
        assert_eq!(
            at(vec![key("selectors"), Segment::Index, key("kiy1")]),
            None
        );
        assert_eq!(at(vec![key("free"), key("valuse")]), None);
        assert_eq!(at(vec![key("completelyElse")]), None);
    }
}
