//! RFC 6902 JSON patch (`application/json-patch+json`) with the quirks of the library
//! kube-apiserver uses: `replace` of a missing object key adds it, negative array indices count
//! from the end, and `test` of a missing path passes when the expected value is `null`.

use serde_json::Value;

use super::{PatchError, json_equal};

/// kube-apiserver refuses patches with more operations than this (413).
pub const MAX_OPERATIONS: usize = 10_000;

/// Bound on the bytes all `copy` operations of one patch may add, so a hostile patch cannot
/// double a document until memory runs out.
const MAX_ACCUMULATED_COPY_BYTES: usize = 3 * 1024 * 1024;

/// Applies a JSON patch given as raw request body bytes.
pub fn apply_bytes(document: &Value, body: &[u8]) -> Result<Value, PatchError> {
    let patch: Value = serde_json::from_slice(body)
        .map_err(|e| PatchError::BadRequest(format!("invalid JSON patch document: {e}")))?;
    apply(document, &patch)
}

/// Applies a JSON patch (an array of operation objects) to a document, returning the result.
pub fn apply(document: &Value, patch: &Value) -> Result<Value, PatchError> {
    let Value::Array(ops) = patch else {
        return Err(PatchError::BadRequest(format!(
            "json: cannot unmarshal {} into Go value of type jsonpatch.Patch",
            go_json_type(patch)
        )));
    };
    if let Some(bad) = ops.iter().find(|op| !op.is_object()) {
        return Err(PatchError::BadRequest(format!(
            "json: cannot unmarshal {} into Go value of type jsonpatch.Operation",
            go_json_type(bad)
        )));
    }
    if ops.len() > MAX_OPERATIONS {
        return Err(PatchError::TooLarge(format!(
            "The allowed maximum operations in a JSON patch is {MAX_OPERATIONS}, got {}",
            ops.len()
        )));
    }
    let mut doc = document.clone();
    let mut copied = 0usize;
    for (i, op) in ops.iter().enumerate() {
        apply_op(&mut doc, op, &mut copied)
            .map_err(|e| PatchError::Invalid(format!("operation {i}: {e}")))?;
    }
    Ok(doc)
}

fn go_json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn apply_op(doc: &mut Value, op: &Value, copied: &mut usize) -> Result<(), String> {
    let kind = op.get("op").and_then(Value::as_str).unwrap_or("unknown");
    // The pointer in `field` (`path` or `from`), which the operation must have.
    let pointer = |field: &str| -> Result<Vec<String>, String> {
        let p = op
            .get(field)
            .and_then(Value::as_str)
            .ok_or_else(|| format!("operation {kind} is missing {field}"))?;
        parse_pointer(p)
    };
    // A missing value reads as null, as in the library kube-apiserver uses.
    let value = || op.get("value").cloned().unwrap_or(Value::Null);
    match kind {
        "add" => put(doc, &pointer("path")?, value(), Put::Add),
        "remove" => remove(doc, &pointer("path")?).map(drop),
        "replace" => put(doc, &pointer("path")?, value(), Put::Replace),
        "move" => {
            let from = pointer("from")?;
            let to = pointer("path")?;
            if to.len() > from.len() && to[..from.len()] == from[..] {
                return Err("cannot move a value into one of its children".into());
            }
            let v = remove(doc, &from)?;
            put(doc, &to, v, Put::Add)
        }
        "copy" => {
            let v = get(doc, &pointer("from")?)
                .ok_or("copy from a path that does not exist")?
                .clone();
            *copied += serde_json::to_vec(&v).map(|b| b.len()).unwrap_or(0);
            if *copied > MAX_ACCUMULATED_COPY_BYTES {
                return Err(format!(
                    "unable to complete the copy, the accumulated size increase of copy is {copied}, exceeding the limit {MAX_ACCUMULATED_COPY_BYTES}"
                ));
            }
            put(doc, &pointer("path")?, v, Put::Add)
        }
        "test" => {
            let expected = value();
            match get(doc, &pointer("path")?) {
                Some(actual) if json_equal(actual, &expected) => Ok(()),
                None if expected.is_null() => Ok(()),
                _ => Err("testing value failed".into()),
            }
        }
        other => Err(format!("unexpected kind: {other}")),
    }
}

/// Splits an RFC 6901 pointer into unescaped reference tokens.
fn parse_pointer(pointer: &str) -> Result<Vec<String>, String> {
    if pointer.is_empty() {
        return Ok(Vec::new());
    }
    let Some(rest) = pointer.strip_prefix('/') else {
        return Err(format!("invalid JSON pointer {pointer:?}"));
    };
    rest.split('/')
        .map(|t| {
            if t.replace("~0", "").replace("~1", "").contains('~') {
                return Err(format!("invalid escape in JSON pointer {pointer:?}"));
            }
            Ok(t.replace("~1", "/").replace("~0", "~"))
        })
        .collect()
}

/// Resolves an array index token; `allow_end` admits `len` and `-` (insertion points).
fn array_index(token: &str, len: usize, allow_end: bool) -> Result<usize, String> {
    if token == "-" {
        return if allow_end {
            Ok(len)
        } else {
            Err("index \"-\" is only valid for add".into())
        };
    }
    let idx: i64 = token
        .parse()
        .map_err(|_| format!("invalid array index {token:?}"))?;
    let max = if allow_end {
        len
    } else {
        len.saturating_sub(1)
    };
    let resolved = if idx < 0 {
        let back = usize::try_from(idx.unsigned_abs()).map_err(|_| "index out of range")?;
        len.checked_sub(back).ok_or("index out of range")?
    } else {
        usize::try_from(idx).map_err(|_| "index out of range")?
    };
    if resolved > max || (!allow_end && len == 0) {
        return Err(format!("index {token} out of range"));
    }
    Ok(resolved)
}

fn get<'a>(doc: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter().try_fold(doc, |cur, token| match cur {
        Value::Object(map) => map.get(token),
        Value::Array(items) => array_index(token, items.len(), false)
            .ok()
            .and_then(|i| items.get(i)),
        _ => None,
    })
}

/// The container holding the last token of `path`, and that token.
fn parent<'a, 'p>(
    doc: &'a mut Value,
    path: &'p [String],
) -> Result<(&'a mut Value, &'p str), String> {
    let Some((last, init)) = path.split_last() else {
        return Err("the document root has no parent".into());
    };
    let mut cur = doc;
    for token in init {
        cur = match cur {
            Value::Object(map) => map.get_mut(token),
            Value::Array(items) => {
                let i = array_index(token, items.len(), false)?;
                items.get_mut(i)
            }
            _ => None,
        }
        .ok_or_else(|| format!("missing value at /{}", init.join("/")))?;
    }
    Ok((cur, last))
}

/// How `add` and `replace` write into an array: `add` inserts at the index (or at the end,
/// `-`), `replace` overwrites the item there. Into an object both set the key.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Put {
    Add,
    Replace,
}

/// Writes `value` at `path` as an `add` or `replace` does; at the root both replace the
/// document, and the library kube-apiserver uses lets `replace` add a missing key.
fn put(doc: &mut Value, path: &[String], value: Value, how: Put) -> Result<(), String> {
    if path.is_empty() {
        *doc = value;
        return Ok(());
    }
    let (container, token) = parent(doc, path)?;
    match container {
        Value::Object(map) => {
            map.insert(token.to_string(), value);
        }
        Value::Array(items) => {
            let i = array_index(token, items.len(), how == Put::Add)?;
            match how {
                Put::Add => items.insert(i, value),
                Put::Replace => items[i] = value,
            }
        }
        _ => {
            return Err(match how {
                Put::Add => format!("cannot add {token:?} to a scalar"),
                Put::Replace => format!("cannot replace {token:?} in a scalar"),
            });
        }
    }
    Ok(())
}

fn remove(doc: &mut Value, path: &[String]) -> Result<Value, String> {
    let (container, token) = parent(doc, path)?;
    match container {
        Value::Object(map) => map
            .shift_remove(token)
            .ok_or_else(|| format!("unable to remove nonexistent key: {token}")),
        Value::Array(items) => {
            let i = array_index(token, items.len(), false)?;
            Ok(items.remove(i))
        }
        _ => Err(format!("cannot remove {token:?} from a scalar")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cm() -> Value {
        json!({"metadata": {"name": "jp", "labels": {"app": "x"}}, "data": {"a": "1"}})
    }

    fn invalid(doc: &Value, patch: Value) -> bool {
        matches!(apply(doc, &patch), Err(PatchError::Invalid(_)))
    }

    #[test]
    fn add_replace_remove_in_one_patch() {
        let out = apply(
            &cm(),
            &json!([
                {"op": "add", "path": "/data/b", "value": "2"},
                {"op": "replace", "path": "/data/a", "value": "10"},
                {"op": "add", "path": "/data/tmp", "value": "t"},
                {"op": "remove", "path": "/data/tmp"}
            ]),
        )
        .unwrap();
        assert_eq!(out["data"], json!({"a": "10", "b": "2"}));
    }

    #[test]
    fn test_op_gates_the_patch() {
        let doc = json!({"data": {"a": "10"}});
        let ok = apply(
            &doc,
            &json!([{"op": "test", "path": "/data/a", "value": "10"}, {"op": "replace", "path": "/data/a", "value": "11"}]),
        )
        .unwrap();
        assert_eq!(ok["data"]["a"], "11");
        assert!(invalid(
            &doc,
            json!([{"op": "test", "path": "/data/a", "value": "wrong"}, {"op": "replace", "path": "/data/a", "value": "12"}])
        ));
        assert!(
            apply(
                &doc,
                &json!([{"op": "test", "path": "/data/zz", "value": null}])
            )
            .is_ok()
        );
        assert!(
            apply(
                &json!({"n": 1}),
                &json!([{"op": "test", "path": "/n", "value": 1.0}])
            )
            .is_ok()
        );
    }

    #[test]
    fn missing_paths_follow_the_recorded_behaviour() {
        assert!(invalid(
            &cm(),
            json!([{"op": "remove", "path": "/data/zzz"}])
        ));
        let out = apply(
            &cm(),
            &json!([{"op": "replace", "path": "/data/zzz", "value": "1"}]),
        )
        .unwrap();
        assert_eq!(out["data"]["zzz"], "1");
        assert!(invalid(
            &cm(),
            json!([{"op": "add", "path": "/metadata/annotations/x", "value": "y"}])
        ));
    }

    #[test]
    fn escaped_tokens_address_keys_with_slashes_and_tildes() {
        let out = apply(
            &cm(),
            &json!([
                {"op": "add", "path": "/metadata/labels/app.kubernetes.io~1name", "value": "v"},
                {"op": "add", "path": "/metadata/labels/a~0b", "value": "w"}
            ]),
        )
        .unwrap();
        assert_eq!(
            out["metadata"]["labels"],
            json!({"app": "x", "app.kubernetes.io/name": "v", "a~b": "w"})
        );
        assert!(invalid(
            &cm(),
            json!([{"op": "add", "path": "/data/a~2", "value": "1"}])
        ));
        assert!(invalid(
            &cm(),
            json!([{"op": "add", "path": "data", "value": "1"}])
        ));
    }

    #[test]
    fn copy_and_move() {
        let doc = json!({"data": {"a": "11", "b": "2", "zzz": "1"}});
        let out = apply(
            &doc,
            &json!([{"op": "copy", "from": "/data/a", "path": "/data/c"}, {"op": "move", "from": "/data/b", "path": "/data/d"}]),
        )
        .unwrap();
        assert_eq!(
            out["data"],
            json!({"a": "11", "zzz": "1", "c": "11", "d": "2"})
        );
        assert!(invalid(
            &doc,
            json!([{"op": "move", "from": "/data", "path": "/data/x"}])
        ));
        assert!(invalid(
            &doc,
            json!([{"op": "copy", "from": "/nope", "path": "/x"}])
        ));
    }

    #[test]
    fn array_append_insert_and_remove() {
        let out = apply(
            &cm(),
            &json!([
                {"op": "add", "path": "/metadata/finalizers", "value": ["example.com/a"]},
                {"op": "add", "path": "/metadata/finalizers/-", "value": "example.com/b"},
                {"op": "add", "path": "/metadata/finalizers/0", "value": "example.com/first"}
            ]),
        )
        .unwrap();
        assert_eq!(
            out["metadata"]["finalizers"],
            json!(["example.com/first", "example.com/a", "example.com/b"])
        );
        let out = apply(
            &out,
            &json!([{"op": "remove", "path": "/metadata/finalizers/1"}]),
        )
        .unwrap();
        assert_eq!(
            out["metadata"]["finalizers"],
            json!(["example.com/first", "example.com/b"])
        );
        let out2 = apply(
            &out,
            &json!([{"op": "remove", "path": "/metadata/finalizers/-1"}]),
        )
        .unwrap();
        assert_eq!(out2["metadata"]["finalizers"], json!(["example.com/first"]));
        assert!(invalid(
            &out,
            json!([{"op": "add", "path": "/metadata/finalizers/3", "value": "x"}])
        ));
        assert!(invalid(
            &out,
            json!([{"op": "replace", "path": "/metadata/finalizers/2", "value": "x"}])
        ));
        assert!(invalid(
            &out,
            json!([{"op": "remove", "path": "/metadata/finalizers/-"}])
        ));
        assert!(invalid(
            &out,
            json!([{"op": "remove", "path": "/metadata/finalizers/-9"}])
        ));
        let out = apply(
            &out,
            &json!([{"op": "remove", "path": "/metadata/finalizers"}]),
        )
        .unwrap();
        assert!(out["metadata"].get("finalizers").is_none());
    }

    #[test]
    fn malformed_documents_are_bad_requests() {
        assert!(matches!(
            apply(&cm(), &json!({"op": "add"})),
            Err(PatchError::BadRequest(_))
        ));
        assert!(matches!(
            apply(&cm(), &json!([1])),
            Err(PatchError::BadRequest(_))
        ));
        assert!(matches!(
            apply_bytes(&cm(), b"[{"),
            Err(PatchError::BadRequest(_))
        ));
        assert!(invalid(
            &cm(),
            json!([{"op": "frobnicate", "path": "/data/a"}])
        ));
        let out = apply(&cm(), &json!([{"op": "add", "path": "/data/x"}])).unwrap();
        assert_eq!(out["data"]["x"], Value::Null);
        assert!(invalid(&cm(), json!([{"op": "add", "value": 1}])));
    }

    #[test]
    fn an_empty_patch_changes_nothing() {
        assert_eq!(apply(&cm(), &json!([])).unwrap(), cm());
    }

    #[test]
    fn too_many_operations_are_refused() {
        let ops: Vec<Value> = (0..=MAX_OPERATIONS)
            .map(|_| json!({"op": "test", "path": "/data/a", "value": "1"}))
            .collect();
        let err = apply(&cm(), &Value::Array(ops)).unwrap_err();
        assert_eq!(err.code(), 413);
    }

    #[test]
    fn runaway_copies_are_bounded() {
        let ops: Vec<Value> = (0..64)
            .map(|i| json!({"op": "copy", "from": "/d", "path": format!("/d/x{i}")}))
            .collect();
        let doc = json!({"d": {"seed": "0123456789"}});
        assert!(invalid(&doc, Value::Array(ops)));
    }
}
