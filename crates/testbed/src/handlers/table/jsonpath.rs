//! The simple JSONPaths of CRD printer columns, read as client-go's JSONPath reads them:
//! `.field` steps (a backslash escapes the next character, `\.` included, and is dropped),
//! `['key']` steps (the key read like dotted fields) and `[N]` indexes (negative from the end).

use serde_json::Value;

/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// A key of an object.
    Field(String),
    /// An element of a list; negative counts from the end.
    Index(i64),
}

/// The steps of `path`; `None` for what is not a simple path (wildcards, filters, unions).
pub fn parse(path: &str) -> Option<Vec<Step>> {
    let mut steps = Vec::new();
    let mut rest = path.trim();
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('.') {
            let (fields, tail) = dotted_field(after);
            steps.push(Step::Field(fields));
            rest = tail;
        } else if let Some(after) = rest.strip_prefix('[') {
            let end = after.find(']')?;
            let inside = &after[..end];
            rest = &after[end + 1..];
            if let Some(key) = inside.strip_prefix('\'').and_then(|k| k.strip_suffix('\'')) {
                if key.contains('\'') {
                    return None;
                }
                steps.extend(parse(&format!(".{key}"))?);
            } else {
                steps.push(Step::Index(inside.trim().parse().ok()?));
            }
        } else {
            return None;
        }
    }
    if steps
        .iter()
        .any(|s| matches!(s, Step::Field(f) if f.is_empty() || f == "*"))
    {
        return None;
    }
    Some(steps)
}

/// A field name up to the next unescaped terminator, backslashes dropped; and what follows.
fn dotted_field(text: &str) -> (String, &str) {
    let mut name = String::new();
    let mut chars = text.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => {
                if let Some((_, escaped)) = chars.next() {
                    name.push(escaped);
                }
            }
            '.' | '[' | ']' | ',' | '$' | '@' | '{' | '}' | ' ' | '\t' => {
                return (name, &text[i..]);
            }
            c => name.push(c),
        }
    }
    (name, "")
}

/// The value at `steps` inside `root`, if there is one.
pub fn find<'a>(root: &'a Value, steps: &[Step]) -> Option<&'a Value> {
    steps.iter().try_fold(root, |value, step| match step {
        Step::Field(key) => value.as_object()?.get(key),
        Step::Index(index) => {
            let items = value.as_array()?;
            let at = if *index < 0 {
                items.len().checked_sub(index.unsigned_abs() as usize)?
            } else {
                *index as usize
            };
            items.get(at)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn field(f: &str) -> Step {
        Step::Field(f.into())
    }

    #[test]
    fn parses_dotted_bracketed_and_escaped_steps() {
        assert_eq!(
            parse(".status.phase"),
            Some(vec![field("status"), field("phase")])
        );
        assert_eq!(
            parse(r".metadata.labels['data\.landscaper\.gardener\.cloud\/context']"),
            Some(vec![
                field("metadata"),
                field("labels"),
                field("data.landscaper.gardener.cloud/context")
            ])
        );
        assert_eq!(
            parse(r".metadata.annotations.app\.kubernetes\.io/name"),
            Some(vec![
                field("metadata"),
                field("annotations"),
                field("app.kubernetes.io/name")
            ])
        );
        assert_eq!(
            parse(".status.conditions[-1].type"),
            Some(vec![
                field("status"),
                field("conditions"),
                Step::Index(-1),
                field("type")
            ])
        );
        assert_eq!(parse(".items[*].name"), None);
        assert_eq!(parse(".spec.*"), None);
    }

    #[test]
    fn finds_keys_and_indexes() {
        let object = json!({"metadata": {"labels": {"a.b/c": "x"}}, "list": [1, 2, 3]});
        let at = |path: &str| find(&object, &parse(path).unwrap()).cloned();
        assert_eq!(at(r".metadata.labels['a\.b\/c']"), Some(json!("x")));
        assert_eq!(at(".list[0]"), Some(json!(1)));
        assert_eq!(at(".list[-1]"), Some(json!(3)));
        assert_eq!(at(".list[3]"), None);
        assert_eq!(at(".list.name"), None);
        assert_eq!(at(".missing.deeper"), None);
    }
}
