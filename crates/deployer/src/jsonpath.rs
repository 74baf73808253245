//! The subset of Kubernetes JSONPath that readiness checks and exports use: `.a.b`,
//! `{.a.b}`, `$.a`, `['key.with.dots']`, `[0]` and `[*]`.

use serde_json::Value;

/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    Field(String),
    Index(usize),
    All,
}

/// Parses a path; the error says where it went wrong.
fn parse(path: &str) -> Result<Vec<Step>, String> {
    let mut p = path.trim();
    if let Some(inner) = p.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
        p = inner.trim();
    }
    p = p.strip_prefix('$').unwrap_or(p);
    let chars: Vec<char> = p.chars().collect();
    let mut steps = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '.' => {
                i += 1;
                let start = i;
                while i < chars.len() && chars[i] != '.' && chars[i] != '[' {
                    i += 1;
                }
                let name: String = chars[start..i].iter().collect();
                if name.is_empty() {
                    if i >= chars.len() && steps.is_empty() {
                        // `.` alone is the whole object.
                        break;
                    }
                    return Err(format!("empty field name at offset {start} in {path:?}"));
                }
                if name == "*" {
                    steps.push(Step::All);
                } else {
                    steps.push(Step::Field(name));
                }
            }
            '[' => {
                let end = chars[i..]
                    .iter()
                    .position(|c| *c == ']')
                    .map(|e| e + i)
                    .ok_or_else(|| format!("unclosed [ at offset {i} in {path:?}"))?;
                let inner: String = chars[i + 1..end].iter().collect();
                let inner = inner.trim();
                if inner == "*" {
                    steps.push(Step::All);
                } else if let Some(q) = inner
                    .strip_prefix('\'')
                    .and_then(|s| s.strip_suffix('\''))
                    .or_else(|| inner.strip_prefix('"').and_then(|s| s.strip_suffix('"')))
                {
                    steps.push(Step::Field(q.to_string()));
                } else {
                    let n: usize = inner
                        .parse()
                        .map_err(|_| format!("invalid index [{inner}] in {path:?}"))?;
                    steps.push(Step::Index(n));
                }
                i = end + 1;
            }
            c => {
                // A path may start without a dot (`status.phase`).
                if steps.is_empty() && i == 0 {
                    let start = i;
                    while i < chars.len() && chars[i] != '.' && chars[i] != '[' {
                        i += 1;
                    }
                    steps.push(Step::Field(chars[start..i].iter().collect()));
                } else {
                    return Err(format!("unexpected {c:?} at offset {i} in {path:?}"));
                }
            }
        }
    }
    Ok(steps)
}

/// Every value the path selects (none when a step is missing).
pub fn select(root: &Value, path: &str) -> Result<Vec<Value>, String> {
    let steps = parse(path)?;
    let mut current = vec![root];
    for step in &steps {
        let mut next = Vec::new();
        for v in current {
            match (step, v) {
                (Step::Field(f), Value::Object(m)) => next.extend(m.get(f)),
                (Step::Index(n), Value::Array(a)) => next.extend(a.get(*n)),
                (Step::All, Value::Array(a)) => next.extend(a.iter()),
                (Step::All, Value::Object(m)) => next.extend(m.values()),
                _ => {}
            }
        }
        current = next;
    }
    Ok(current.into_iter().cloned().collect())
}

/// The single value a path selects: `None` when nothing matches, a list when several do.
pub fn get(root: &Value, path: &str) -> Result<Option<Value>, String> {
    let mut found = select(root, path)?;
    Ok(match found.len() {
        0 => None,
        1 => found.pop(),
        _ => Some(Value::Array(found)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_in_every_spelling_select_the_same_value() {
        let v = json!({"status": {"phase": "Running"}});
        for p in [
            ".status.phase",
            "{.status.phase}",
            "$.status.phase",
            "status.phase",
            "['status']['phase']",
        ] {
            assert_eq!(get(&v, p).unwrap(), Some(json!("Running")), "{p}");
        }
    }

    #[test]
    fn quoted_keys_indexes_and_wildcards() {
        let v = json!({
            "metadata": {"annotations": {"a.b/c": "x"}},
            "items": [{"n": 1}, {"n": 2}]
        });
        assert_eq!(
            get(&v, ".metadata.annotations['a.b/c']").unwrap(),
            Some(json!("x"))
        );
        assert_eq!(get(&v, ".items[1].n").unwrap(), Some(json!(2)));
        assert_eq!(get(&v, ".items[*].n").unwrap(), Some(json!([1, 2])));
        assert_eq!(get(&v, ".missing.deeper").unwrap(), None);
        assert_eq!(get(&v, ".").unwrap(), Some(v.clone()));
    }

    #[test]
    fn malformed_paths_are_errors() {
        assert!(get(&json!({}), ".a[").unwrap_err().contains("unclosed"));
        assert!(
            get(&json!({}), ".a[x]")
                .unwrap_err()
                .contains("invalid index")
        );
        assert!(
            get(&json!({}), ".a..b")
                .unwrap_err()
                .contains("empty field")
        );
    }
}
