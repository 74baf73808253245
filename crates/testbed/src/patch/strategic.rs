//! Kubernetes strategic merge patch (`application/strategic-merge-patch+json`) for the
//! built-in kinds: lists merge by their merge keys with kube's ordering rules (new patch items
//! first), scalar sets merge, and the directives `$patch` (replace, delete), `$retainKeys`,
//! `$setElementOrder/<list>` and `$deleteFromPrimitiveList/<list>` are honoured.
//!
//! One deliberate difference: a patch value for a field the object does not have yet is merged
//! into an empty value, so its directives and nulls are processed instead of being stored.

mod schema;

use serde_json::{Map, Value, json};

pub use schema::{ListStrategy, Ty};

use super::{PatchError, json_equal};

const PATCH: &str = "$patch";
const RETAIN_KEYS: &str = "$retainKeys";
const SET_ORDER: &str = "$setElementOrder/";
const DELETE_FROM: &str = "$deleteFromPrimitiveList/";

/// The patch schema of a built-in kind; `None` means kube-apiserver refuses strategic merge
/// patch for it (custom resources) with [`unsupported_media_type_status`].
pub fn schema_for(group: &str, kind: &str) -> Option<Ty> {
    schema::for_kind(group, kind)
}

/// The 415 Status kube-apiserver answers a strategic merge patch on a custom resource with.
pub fn unsupported_media_type_status() -> Value {
    json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
        "reason": "UnsupportedMediaType",
        "code": 415
    })
}

/// Applies a strategic merge patch given as raw request body bytes.
pub fn apply_bytes(original: &Value, body: &[u8], schema: Ty) -> Result<Value, PatchError> {
    let patch: Value =
        serde_json::from_slice(body).map_err(|e| PatchError::BadRequest(e.to_string()))?;
    apply(original, &patch, schema)
}

/// Applies a strategic merge patch (a JSON object) to an object of the given schema.
pub fn apply(original: &Value, patch: &Value, schema: Ty) -> Result<Value, PatchError> {
    let Value::Object(patch) = patch else {
        return Err(PatchError::BadRequest(
            "json: cannot unmarshal non-object into Go value of type map[string]interface {}"
                .to_string(),
        ));
    };
    let original = original.as_object().cloned().unwrap_or_default();
    merge_map(original, patch.clone(), schema).map(Value::Object)
}

fn bad_arg(expected: &str, actual: &Value) -> PatchError {
    PatchError::Internal(format!(
        "expected a {expected}, but received a {}",
        go_kind(actual)
    ))
}

fn go_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "invalid",
        Value::Bool(_) => "bool",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "slice",
        Value::Object(_) => "map",
    }
}

fn merge_map(
    mut original: Map<String, Value>,
    mut patch: Map<String, Value>,
    ty: Ty,
) -> Result<Map<String, Value>, PatchError> {
    if let Some(directive) = patch.get(PATCH) {
        return match directive.as_str() {
            Some("replace") => {
                patch.shift_remove(PATCH);
                merge_map(Map::new(), patch, ty)
            }
            Some("delete") => Ok(Map::new()),
            _ => Err(PatchError::Internal(format!(
                "unknown patch type: {} in map: {}",
                directive_text(directive),
                Value::Object(patch.clone())
            ))),
        };
    }
    apply_retain_keys(&mut original, &mut patch)?;
    merge_set_element_order(&mut original, &mut patch, ty)?;
    for (key, patch_value) in patch {
        let (key, delete_list) = match key.strip_prefix(DELETE_FROM) {
            Some(field) => (field.to_string(), true),
            None if key.starts_with(SET_ORDER) => continue,
            None => (key, false),
        };
        if patch_value.is_null() {
            original.shift_remove(&key);
            continue;
        }
        let (strategy, field_ty) = ty.field(&key);
        let Some(live) = original.get_mut(&key) else {
            if !delete_list {
                let fresh = merge_into_empty(patch_value, strategy, field_ty)?;
                original.insert(key, fresh);
            }
            continue;
        };
        match (live, patch_value) {
            (Value::Object(live_map), Value::Object(patch_map)) => {
                let merged = merge_map(std::mem::take(live_map), patch_map, field_ty)?;
                *live_map = merged;
            }
            (Value::Array(live_list), Value::Array(patch_list)) => {
                let merged = if delete_list || strategy != ListStrategy::Replace {
                    let merge_key = match strategy {
                        ListStrategy::Merge(k) => k,
                        ListStrategy::Replace => None,
                    };
                    merge_list(
                        std::mem::take(live_list),
                        patch_list,
                        merge_key,
                        delete_list,
                        field_ty,
                        &key,
                    )?
                } else {
                    prune_nulls_in_list(patch_list)
                };
                *live_list = merged;
            }
            (live, patch_value) => {
                if !delete_list {
                    *live = merge_into_empty(patch_value, strategy, field_ty)?;
                }
            }
        }
    }
    Ok(original)
}

fn directive_text(v: &Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_string)
}

/// A patch value for a field the object lacks, with its directives and nulls processed.
fn merge_into_empty(value: Value, strategy: ListStrategy, ty: Ty) -> Result<Value, PatchError> {
    match value {
        Value::Object(patch) => merge_map(Map::new(), patch, ty).map(Value::Object),
        Value::Array(items) => match strategy {
            ListStrategy::Merge(key) => {
                merge_list(Vec::new(), items, key, false, ty, "").map(Value::Array)
            }
            ListStrategy::Replace => Ok(Value::Array(prune_nulls_in_list(items))),
        },
        other => Ok(other),
    }
}

fn prune_nulls_in_list(items: Vec<Value>) -> Vec<Value> {
    items.into_iter().map(prune_nulls).collect()
}

fn prune_nulls(v: Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, prune_nulls(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(prune_nulls_in_list(items)),
        other => other,
    }
}

/// `$retainKeys`: drop every live key not listed; the patch may only set listed keys.
fn apply_retain_keys(
    original: &mut Map<String, Value>,
    patch: &mut Map<String, Value>,
) -> Result<(), PatchError> {
    let Some(retain) = patch.shift_remove(RETAIN_KEYS) else {
        return Ok(());
    };
    let bad = || PatchError::BadRequest("invalid patch format of retainKeys".to_string());
    let Value::Array(keys) = retain else {
        return Err(bad());
    };
    let keep = |k: &str| keys.iter().any(|x| x.as_str() == Some(k));
    let unlisted = patch.iter().any(|(k, v)| {
        !v.is_null() && !k.starts_with(DELETE_FROM) && !k.starts_with(SET_ORDER) && !keep(k)
    });
    if unlisted {
        return Err(bad());
    }
    original.retain(|k, _| keep(k));
    Ok(())
}

/// `$setElementOrder/<list>`: merge that list now and order it as the directive says.
fn merge_set_element_order(
    original: &mut Map<String, Value>,
    patch: &mut Map<String, Value>,
    ty: Ty,
) -> Result<(), PatchError> {
    let directives: Vec<(String, Value)> = patch
        .iter()
        .filter(|(k, _)| k.starts_with(SET_ORDER))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for (directive, order) in directives {
        let field = &directive[SET_ORDER.len()..];
        let Value::Array(order) = order else {
            return Err(bad_arg("slice", &order));
        };
        let (strategy, field_ty) = ty.field(field);
        let merge_key = match strategy {
            ListStrategy::Merge(k) => k,
            ListStrategy::Replace => None,
        };
        let live = match original.get(field) {
            None => None,
            Some(Value::Array(items)) => Some(items.clone()),
            Some(other) => return Err(bad_arg("slice", other)),
        };
        let patch_list = match patch.get(field) {
            None => None,
            Some(Value::Array(items)) => Some(items.clone()),
            Some(other) => return Err(bad_arg("slice", other)),
        };
        check_order_matches_patch(patch_list.as_deref().unwrap_or_default(), &order, merge_key)?;
        let merged = match (live.clone(), patch_list) {
            (None, None) => continue,
            (Some(live), None) => live,
            (None, Some(p)) => merge_list(Vec::new(), p, merge_key, false, field_ty, field)?,
            (Some(live), Some(p)) => {
                if strategy == ListStrategy::Replace {
                    prune_nulls_in_list(p)
                } else {
                    merge_list(live, p, merge_key, false, field_ty, field)?
                }
            }
        };
        let (in_order, server_only) = partition(merged, &order, merge_key)?;
        let ordered = normalize_element_order(
            in_order,
            server_only,
            &order,
            live.as_deref().unwrap_or_default(),
            merge_key,
        );
        original.insert(field.to_string(), Value::Array(ordered));
        patch.shift_remove(field);
    }
    Ok(())
}

fn check_order_matches_patch(
    patch_list: &[Value],
    order: &[Value],
    merge_key: Option<&str>,
) -> Result<(), PatchError> {
    let items: Vec<&Value> = patch_list
        .iter()
        .filter(|v| v.get(PATCH).is_none())
        .collect();
    let (mut p, mut o) = (0, 0);
    while p < items.len() && o < order.len() {
        if same_item(items[p], &order[o], merge_key) {
            p += 1;
        }
        o += 1;
    }
    if p < items.len() {
        return Err(PatchError::Internal(format!(
            "The order in patch list:\n{}\n doesn't match {SET_ORDER} list:\n{}\n",
            Value::Array(patch_list.to_vec()),
            Value::Array(order.to_vec())
        )));
    }
    Ok(())
}

fn same_item(a: &Value, b: &Value, merge_key: Option<&str>) -> bool {
    match merge_key {
        Some(k) => match (a.get(k), b.get(k)) {
            (Some(x), Some(y)) => json_equal(x, y),
            _ => false,
        },
        None => json_equal(a, b),
    }
}

fn position(list: &[Value], item: &Value, merge_key: Option<&str>) -> Option<usize> {
    list.iter().position(|x| same_item(x, item, merge_key))
}

/// Splits items into those the reference list names and the others, keeping their order.
fn partition(
    items: Vec<Value>,
    by: &[Value],
    merge_key: Option<&str>,
) -> Result<(Vec<Value>, Vec<Value>), PatchError> {
    let mut named = Vec::new();
    let mut rest = Vec::new();
    for item in items {
        if let Some(k) = merge_key
            && item.get(k).is_none()
        {
            return Err(no_merge_key(&item, k));
        }
        if position(by, &item, merge_key).is_some() {
            named.push(item);
        } else {
            rest.push(item);
        }
    }
    Ok((named, rest))
}

fn no_merge_key(item: &Value, key: &str) -> PatchError {
    PatchError::Internal(format!(
        "map: {item} does not contain declared merge key: {key}"
    ))
}

fn element_kind(live: &[Value], patch: &[Value]) -> Result<Option<bool>, PatchError> {
    let mut is_map = None;
    for v in live.iter().chain(patch) {
        if v.is_array() {
            return Err(PatchError::Invalid(
                "lists of lists are not supported".into(),
            ));
        }
        match is_map {
            None => is_map = Some(v.is_object()),
            Some(m) if m != v.is_object() => {
                return Err(PatchError::Internal(format!(
                    "list element types are not identical: {} {}",
                    Value::Array(live.to_vec()),
                    Value::Array(patch.to_vec())
                )));
            }
            Some(_) => {}
        }
    }
    Ok(is_map)
}

fn merge_list(
    live: Vec<Value>,
    patch: Vec<Value>,
    merge_key: Option<&str>,
    delete_list: bool,
    item_ty: Ty,
    field: &str,
) -> Result<Vec<Value>, PatchError> {
    let Some(is_map) = element_kind(&live, &patch)? else {
        return Ok(live);
    };
    let (merged, live_order, patch_order) = if is_map {
        let Some(key) = merge_key else {
            return Err(PatchError::Internal(format!(
                "cannot merge lists without merge key for {field}"
            )));
        };
        let (live, patch) = apply_list_directives(live, patch, key)?;
        let merged = merge_maps_by_key(live.clone(), &patch, key, item_ty)?;
        (merged, live, patch)
    } else {
        if delete_list {
            return Ok(live
                .into_iter()
                .filter(|v| !patch.iter().any(|p| json_equal(p, v)))
                .collect());
        }
        let mut merged: Vec<Value> = Vec::new();
        for v in live.iter().chain(&patch) {
            if !merged.iter().any(|m| json_equal(m, v)) {
                merged.push(v.clone());
            }
        }
        (merged, live, patch)
    };
    let key = if is_map { merge_key } else { None };
    let (from_patch, server_only) = partition(merged, &patch_order, key)?;
    Ok(normalize_element_order(
        from_patch,
        server_only,
        &patch_order,
        &live_order,
        key,
    ))
}

/// Handles `$patch: delete` (drop live items with that key) and `$patch: replace` (the patch
/// items become the list) inside a merging list; returns the live and patch items left.
fn apply_list_directives(
    mut live: Vec<Value>,
    patch: Vec<Value>,
    key: &str,
) -> Result<(Vec<Value>, Vec<Value>), PatchError> {
    let mut plain = Vec::new();
    let mut replace = false;
    for item in patch {
        let Some(directive) = item.get(PATCH) else {
            plain.push(item);
            continue;
        };
        match directive.as_str() {
            Some("delete") => {
                let Some(value) = item.get(key) else {
                    return Err(no_merge_key(&item, key));
                };
                live.retain(|l| !l.get(key).is_some_and(|v| json_equal(v, value)));
            }
            Some("replace") => replace = true,
            Some("merge") => {
                return Err(PatchError::Internal(
                    "merging lists cannot yet be specified in the patch".into(),
                ));
            }
            _ => {
                return Err(PatchError::Internal(format!(
                    "unknown patch type: {} in map: {item}",
                    directive_text(directive)
                )));
            }
        }
    }
    if replace {
        return Ok((plain, Vec::new()));
    }
    Ok((live, plain))
}

fn merge_maps_by_key(
    mut live: Vec<Value>,
    patch: &[Value],
    key: &str,
    item_ty: Ty,
) -> Result<Vec<Value>, PatchError> {
    for item in patch {
        let Value::Object(item_map) = item else {
            return Err(bad_arg("map", item));
        };
        let Some(value) = item_map.get(key) else {
            return Err(no_merge_key(item, key));
        };
        let found = live
            .iter_mut()
            .find(|l| l.get(key).is_some_and(|v| json_equal(v, value)));
        match found {
            Some(Value::Object(existing)) => {
                let merged = merge_map(std::mem::take(existing), item_map.clone(), item_ty)?;
                *existing = merged;
            }
            _ => live.push(Value::Object(merge_map(
                Map::new(),
                item_map.clone(),
                item_ty,
            )?)),
        }
    }
    Ok(live)
}

/// Orders patch items by the patch (or `$setElementOrder`) order and server-only items by
/// the live order, then interleaves them: a server-only item goes before a patch item only
/// when both are live and it came first there, so new patch items lead.
fn normalize_element_order(
    mut from_patch: Vec<Value>,
    mut server_only: Vec<Value>,
    patch_order: &[Value],
    live_order: &[Value],
    key: Option<&str>,
) -> Vec<Value> {
    let rank = |list: &[Value], v: &Value| position(list, v, key).unwrap_or(usize::MAX);
    from_patch.sort_by_key(|v| rank(patch_order, v));
    server_only.sort_by_key(|v| rank(live_order, v));
    let mut out = Vec::with_capacity(from_patch.len() + server_only.len());
    let mut left = server_only.into_iter().peekable();
    let mut right = from_patch.into_iter().peekable();
    loop {
        let take_left = match (left.peek(), right.peek()) {
            (None, None) => break,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(l), Some(r)) => {
                match (position(live_order, l, key), position(live_order, r, key)) {
                    (Some(li), Some(ri)) => li < ri,
                    _ => false,
                }
            }
        };
        let next = if take_left { left.next() } else { right.next() };
        out.extend(next);
    }
    out
}

#[cfg(test)]
mod tests;
