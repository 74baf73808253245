//! RFC 7386 JSON merge patch (`application/merge-patch+json`): objects merge key by key, `null`
//! deletes, everything else (lists included) replaces.

use serde_json::{Map, Value};

use super::PatchError;

/// Applies a merge patch given as raw request body bytes.
pub fn apply_bytes(document: &Value, body: &[u8]) -> Result<Value, PatchError> {
    let patch: Value = serde_json::from_slice(body)
        .map_err(|_| PatchError::BadRequest("Invalid JSON Patch".to_string()))?;
    apply(document, &patch)
}

/// Applies a merge patch to a document. The patch must be a JSON object, as kube-apiserver
/// only patches objects.
pub fn apply(document: &Value, patch: &Value) -> Result<Value, PatchError> {
    let Value::Object(patch) = patch else {
        return Err(PatchError::BadRequest("Invalid JSON Patch".to_string()));
    };
    let mut out = match document {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    merge_into(&mut out, patch);
    Ok(Value::Object(out))
}

fn merge_into(target: &mut Map<String, Value>, patch: &Map<String, Value>) {
    for (key, value) in patch {
        match value {
            Value::Null => {
                target.shift_remove(key);
            }
            Value::Object(sub) => match target.get_mut(key) {
                Some(Value::Object(existing)) => merge_into(existing, sub),
                _ => {
                    target.insert(key.clone(), prune_nulls(value));
                }
            },
            // Like the library kube-apiserver uses, a non-object replacing an object is taken
            // as is; anything else loses its nulls.
            _ => {
                let replacement = match target.get(key) {
                    Some(Value::Object(_)) => value.clone(),
                    _ => prune_nulls(value),
                };
                target.insert(key.clone(), replacement);
            }
        }
    }
}

/// A value that is taken over as a whole loses the nulls of its objects (also inside lists),
/// as in the merge-patch library kube-apiserver uses.
fn prune_nulls(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), prune_nulls(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(prune_nulls).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cm() -> Value {
        json!({
            "metadata": {"name": "pm", "labels": {"x": "1", "y": "2"}},
            "data": {"a": "1", "b": "2", "c": "3"}
        })
    }

    #[test]
    fn maps_merge_and_null_deletes() {
        let out = apply(&cm(), &json!({"data": {"a": "10", "b": null, "d": "4"}})).unwrap();
        assert_eq!(out["data"], json!({"a": "10", "c": "3", "d": "4"}));
        let out = apply(
            &out,
            &json!({"metadata": {"labels": {"y": null, "z": "3"}}}),
        )
        .unwrap();
        assert_eq!(out["metadata"]["labels"], json!({"x": "1", "z": "3"}));
        assert_eq!(out["metadata"]["name"], "pm");
    }

    #[test]
    fn lists_are_replaced_not_merged() {
        let out = apply(
            &cm(),
            &json!({"metadata": {"finalizers": ["example.com/a", "example.com/b"]}}),
        )
        .unwrap();
        let out = apply(
            &out,
            &json!({"metadata": {"finalizers": ["example.com/b"]}}),
        )
        .unwrap();
        assert_eq!(out["metadata"]["finalizers"], json!(["example.com/b"]));
        let out = apply(&out, &json!({"metadata": {"finalizers": null}})).unwrap();
        assert!(out["metadata"].get("finalizers").is_none());
    }

    #[test]
    fn empty_patch_and_whole_map_removal() {
        assert_eq!(apply(&cm(), &json!({})).unwrap(), cm());
        let out = apply(&cm(), &json!({"data": null})).unwrap();
        assert!(out.get("data").is_none());
    }

    #[test]
    fn new_values_lose_their_nulls() {
        let out = apply(&json!({}), &json!({"spec": {"a": null, "b": {"c": null, "d": 1}, "l": [{"x": null, "y": 2}, null]}})).unwrap();
        assert_eq!(out, json!({"spec": {"b": {"d": 1}, "l": [{"y": 2}, null]}}));
    }

    #[test]
    fn a_list_replacing_a_map_keeps_its_nulls() {
        let out = apply(&json!({"a": {"b": 1}}), &json!({"a": [{"x": null}]})).unwrap();
        assert_eq!(out, json!({"a": [{"x": null}]}));
        let out = apply(&json!({"a": [1]}), &json!({"a": [{"x": null}]})).unwrap();
        assert_eq!(out, json!({"a": [{}]}));
    }

    #[test]
    fn scalars_replace_maps_and_maps_replace_scalars() {
        let out = apply(
            &json!({"a": {"b": 1}, "c": 1}),
            &json!({"a": 2, "c": {"d": null, "e": 3}}),
        )
        .unwrap();
        assert_eq!(out, json!({"a": 2, "c": {"e": 3}}));
    }

    #[test]
    fn non_object_patches_are_bad_requests() {
        for patch in [json!(null), json!([1]), json!("x"), json!(3)] {
            assert_eq!(apply(&cm(), &patch).unwrap_err().code(), 400);
        }
        assert_eq!(apply_bytes(&cm(), b"{bad").unwrap_err().code(), 400);
        assert_eq!(
            apply_bytes(&cm(), br#"{"data": {"e": "5"}}"#).unwrap()["data"]["e"],
            "5"
        );
    }
}
