//! The walks over objects that server-side apply is made of: the field set of a value, the
//! comparison of two values, merging an applied configuration into a live object, and removing
//! a set of fields from an object.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::fieldset::{FieldSet, Path, PathElement};
use super::shape::{ListType, Shape};
use crate::patch::json_equal;

/// The granular way a list is handled, or `None` when it is owned as a whole.
fn granular_list(shape: &Shape<'_>) -> Option<ListType> {
    match shape.list_type() {
        ListType::Atomic => None,
        ListType::Map(keys) if keys.is_empty() => None,
        other => Some(other.clone()),
    }
}

/// Whether a value at this position is a leaf for ownership.
fn is_leaf(value: &Value, shape: &Shape<'_>) -> bool {
    match value {
        Value::Object(_) => shape.is_atomic_map(),
        Value::Array(_) => granular_list(shape).is_none(),
        _ => true,
    }
}

/// The path element naming a list item; missing key fields take their schema defaults.
pub fn item_element(
    item: &Value,
    list: &ListType,
    item_shape: &Shape<'_>,
) -> Result<PathElement, String> {
    match list {
        ListType::Set => match item {
            Value::Object(_) | Value::Array(_) => {
                Err(format!("set items must be scalars, found {item}"))
            }
            scalar => Ok(PathElement::Value(scalar.to_string())),
        },
        ListType::Map(keys) => {
            let Value::Object(obj) = item else {
                return Err(format!("map-list items must be objects, found {item}"));
            };
            let mut pairs = Vec::with_capacity(keys.len());
            for key in keys {
                match obj
                    .get(key)
                    .cloned()
                    .or_else(|| item_shape.key_default(key))
                {
                    Some(v) if !v.is_object() && !v.is_array() && !v.is_null() => {
                        pairs.push((key.clone(), v.to_string()));
                    }
                    _ => {
                        return Err(format!(
                            "associative list with keys has an element that omits key field \"{key}\" (and doesn't have default value)"
                        ));
                    }
                }
            }
            pairs.sort();
            Ok(PathElement::Key(pairs))
        }
        ListType::Atomic => Err("atomic lists have no item paths".to_string()),
    }
}

/// The paths a value sets: leaves, atomic values and the items of map-lists.
pub fn field_set(value: &Value, shape: &Shape<'_>) -> Result<FieldSet, String> {
    let mut set = FieldSet::new();
    if let Value::Object(map) = value {
        visit_map(map, shape, &mut Vec::new(), &mut set)?;
    }
    Ok(set)
}

fn visit_map(
    map: &Map<String, Value>,
    shape: &Shape<'_>,
    path: &mut Path,
    set: &mut FieldSet,
) -> Result<(), String> {
    // A null field is no field, as in a typed object.
    for (key, value) in map.iter().filter(|(_, v)| !v.is_null()) {
        path.push(PathElement::Field(key.clone()));
        visit(value, &shape.field(key), path, set)?;
        path.pop();
    }
    Ok(())
}

fn visit(
    value: &Value,
    shape: &Shape<'_>,
    path: &mut Path,
    set: &mut FieldSet,
) -> Result<(), String> {
    if is_leaf(value, shape) {
        set.insert(path);
        return Ok(());
    }
    match value {
        Value::Object(map) => visit_map(map, shape, path, set),
        Value::Array(items) => {
            let Some(list) = granular_list(shape) else {
                return Ok(());
            };
            let item_shape = shape.item();
            for item in items {
                path.push(item_element(item, &list, &item_shape)?);
                if matches!(list, ListType::Map(_)) {
                    set.insert(path);
                }
                visit(item, &item_shape, path, set)?;
                path.pop();
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// What changed between two versions of an object.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Comparison {
    /// Paths only in the new version.
    pub added: FieldSet,
    /// Leaves whose value changed.
    pub modified: FieldSet,
    /// Paths only in the old version.
    pub removed: FieldSet,
}

/// Compares two versions of an object.
pub fn compare(old: &Value, new: &Value, shape: &Shape<'_>) -> Comparison {
    let mut cmp = Comparison::default();
    compare_children(Some(old), Some(new), shape, &mut Vec::new(), &mut cmp);
    cmp
}

fn compare_value(
    old: Option<&Value>,
    new: Option<&Value>,
    shape: &Shape<'_>,
    path: &mut Path,
    cmp: &mut Comparison,
) {
    let leaf = |v: Option<&Value>| v.is_none_or(|v| is_leaf(v, shape));
    if leaf(old) && leaf(new) {
        match (old, new) {
            (None, Some(_)) => cmp.added.insert(path),
            (Some(_), None) => cmp.removed.insert(path),
            (Some(a), Some(b)) if !json_equal(a, b) => cmp.modified.insert(path),
            _ => {}
        }
        return;
    }
    let same_kind = match (old, new) {
        (Some(a), Some(b)) => {
            std::mem::discriminant(a) == std::mem::discriminant(b) && !leaf(old) && !leaf(new)
        }
        _ => true,
    };
    if same_kind {
        compare_children(old, new, shape, path, cmp);
    } else {
        // The value changed its kind: the old content is gone and the new one arrived.
        cmp.modified.insert(path);
        compare_children(old, None, shape, path, cmp);
        compare_children(None, new, shape, path, cmp);
    }
}

/// The granular items of a list value, borrowed, each with its path element.
fn items<'v>(v: Option<&'v Value>, shape: &Shape<'_>) -> Vec<(PathElement, &'v Value)> {
    let (Some(Value::Array(items)), Some(list)) = (v, granular_list(shape)) else {
        return Vec::new();
    };
    let item_shape = shape.item();
    items
        .iter()
        .filter_map(|i| item_element(i, &list, &item_shape).ok().map(|pe| (pe, i)))
        .collect()
}

/// Lists up to this long are searched rather than hashed: most lists of an object are
/// short, and hashing their items costs more than comparing them.
const SHORT: usize = 16;

/// Items by element, so long lists compare in linear time; a duplicate item counts once, as
/// its first occurrence.
enum Index<'a, 'v> {
    Short(&'a [(PathElement, &'v Value)]),
    Long(HashMap<&'a PathElement, &'v Value>),
}

impl<'a, 'v> Index<'a, 'v> {
    fn new(list: &'a [(PathElement, &'v Value)]) -> Self {
        if list.len() <= SHORT {
            return Self::Short(list);
        }
        let mut map = HashMap::with_capacity(list.len());
        for (pe, v) in list {
            map.entry(pe).or_insert(*v);
        }
        Self::Long(map)
    }

    fn get(&self, element: &PathElement) -> Option<&'v Value> {
        match self {
            Self::Short(list) => list.iter().find(|(pe, _)| pe == element).map(|(_, v)| *v),
            Self::Long(map) => map.get(element).copied(),
        }
    }
}

/// The distinct elements of two lists of items, in order (`old` first).
fn distinct<'a>(
    old: &'a [(PathElement, &Value)],
    new: &'a [(PathElement, &Value)],
) -> Vec<&'a PathElement> {
    let all = old.iter().chain(new).map(|(pe, _)| pe);
    if old.len() + new.len() <= 2 * SHORT {
        let mut out: Vec<&PathElement> = Vec::with_capacity(old.len() + new.len());
        for pe in all {
            if !out.contains(&pe) {
                out.push(pe);
            }
        }
        return out;
    }
    let mut seen = HashSet::with_capacity(old.len() + new.len());
    all.filter(|pe| seen.insert(*pe)).collect()
}

/// Compares the fields or items below a position, and records those that appear or vanish.
fn compare_children(
    old: Option<&Value>,
    new: Option<&Value>,
    shape: &Shape<'_>,
    path: &mut Path,
    cmp: &mut Comparison,
) {
    if matches!(old, Some(Value::Array(_))) || matches!(new, Some(Value::Array(_))) {
        compare_items(old, new, shape, path, cmp);
    } else if !shape.is_atomic_map() {
        compare_fields(
            old.and_then(Value::as_object),
            new.and_then(Value::as_object),
            shape,
            path,
            cmp,
        );
    }
}

/// Compares the fields of two maps in place (a null field is no field). A field a typed
/// object always has (see [`Shape::field_always_present`]) that only one side holds is
/// there, empty, on the other side too, when both are maps.
fn compare_fields(
    old: Option<&Map<String, Value>>,
    new: Option<&Map<String, Value>>,
    shape: &Shape<'_>,
    path: &mut Path,
    cmp: &mut Comparison,
) {
    let empty = Empty::new();
    let both = old.is_some() && new.is_some();
    let always = |key: &str| both && shape.field_always_present(key);
    for (key, o) in fields(old) {
        let n = present(new, key).or_else(|| always(key).then(|| empty.like(o)));
        compare_field(key, Some(o), n, shape, path, cmp);
    }
    for (key, n) in fields(new) {
        if present(old, key).is_none() {
            let o = always(key).then(|| empty.like(n));
            compare_field(key, o, Some(n), shape, path, cmp);
        }
    }
}

/// The fields of a map that are set (not null).
fn fields(map: Option<&Map<String, Value>>) -> impl Iterator<Item = (&str, &Value)> {
    map.into_iter()
        .flatten()
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| (k.as_str(), v))
}

/// A field of a map when it is set (not null).
fn present<'v>(map: Option<&'v Map<String, Value>>, key: &str) -> Option<&'v Value> {
    map?.get(key).filter(|v| !v.is_null())
}

/// The empty values a typed object has for fields it always has.
struct Empty {
    map: Value,
    list: Value,
}

impl Empty {
    fn new() -> Self {
        Self {
            map: Value::Object(Map::new()),
            list: Value::Array(Vec::new()),
        }
    }

    /// The empty value of the kind of `other`.
    fn like(&self, other: &Value) -> &Value {
        match other {
            Value::Array(_) => &self.list,
            _ => &self.map,
        }
    }
}

fn compare_field(
    key: &str,
    old: Option<&Value>,
    new: Option<&Value>,
    shape: &Shape<'_>,
    path: &mut Path,
    cmp: &mut Comparison,
) {
    path.push(PathElement::Field(key.to_string()));
    compare_value(old, new, &shape.field(key), path, cmp);
    record_presence(old, new, path, cmp);
    path.pop();
}

/// Records a position that only the new or only the old version has.
fn record_presence(old: Option<&Value>, new: Option<&Value>, path: &Path, cmp: &mut Comparison) {
    match (old, new) {
        (None, Some(_)) => cmp.added.insert(path),
        (Some(_), None) => cmp.removed.insert(path),
        _ => {}
    }
}

/// Compares the granular items of two lists, matched by their path elements.
fn compare_items(
    old: Option<&Value>,
    new: Option<&Value>,
    shape: &Shape<'_>,
    path: &mut Path,
    cmp: &mut Comparison,
) {
    let (old_items, new_items) = (items(old, shape), items(new, shape));
    let (old_index, new_index) = (Index::new(&old_items), Index::new(&new_items));
    let item_shape = shape.item();
    for element in distinct(&old_items, &new_items) {
        let (o, n) = (old_index.get(element), new_index.get(element));
        path.push(element.clone());
        compare_value(o, n, &item_shape, path, cmp);
        record_presence(o, n, path, cmp);
        path.pop();
    }
}

/// Merges an applied configuration into a live object.
pub fn merge(live: &Value, config: &Value, shape: &Shape<'_>) -> Result<Value, String> {
    match (live, config) {
        (Value::Object(l), Value::Object(c)) if !shape.is_atomic_map() => {
            let mut out = l.clone();
            for (key, cv) in c {
                if cv.is_null() {
                    out.shift_remove(key);
                    continue;
                }
                let merged = match l.get(key) {
                    Some(lv) => merge(lv, cv, &shape.field(key))?,
                    None => cv.clone(),
                };
                out.insert(key.clone(), merged);
            }
            Ok(Value::Object(out))
        }
        (Value::Array(l), Value::Array(c)) => match granular_list(shape) {
            Some(list) => merge_list(l, c, &list, &shape.item()).map(Value::Array),
            None => Ok(config.clone()),
        },
        _ => Ok(config.clone()),
    }
}

/// Merges list items by identity. Live-only items keep their place, items of both follow the
/// configuration's order and configuration-only items come where the configuration puts them.
fn merge_list(
    live: &[Value],
    config: &[Value],
    list: &ListType,
    item_shape: &Shape<'_>,
) -> Result<Vec<Value>, String> {
    let config_pes = config
        .iter()
        .map(|i| item_element(i, list, item_shape))
        .collect::<Result<Vec<_>, _>>()?;
    let mut dup = HashSet::new();
    if let Some(pe) = config_pes.iter().find(|pe| !dup.insert((*pe).clone())) {
        return Err(format!("duplicate entries for key {}", pe.display()));
    }
    let live_pes: Vec<Option<PathElement>> = live
        .iter()
        .map(|i| item_element(i, list, item_shape).ok())
        .collect();
    // Index both sides so long lists merge in linear time.
    let config_set: HashSet<&PathElement> = config_pes.iter().collect();
    let mut live_index: HashMap<&PathElement, usize> = HashMap::new();
    for (i, pe) in live_pes.iter().enumerate() {
        if let Some(pe) = pe {
            live_index.entry(pe).or_insert(i);
        }
    }
    let in_config = |pe: &PathElement| config_set.contains(pe);
    let mut shared: std::collections::VecDeque<&PathElement> = config_pes
        .iter()
        .filter(|pe| live_index.contains_key(pe))
        .collect();
    let mut next_shared = shared.pop_front();
    let mut merged_config: HashSet<&PathElement> = HashSet::new();
    let mut out = Vec::with_capacity(live.len().max(config.len()));
    let merge_item = |pe: &PathElement, ci: usize| -> Result<Value, String> {
        match live_index.get(pe) {
            Some(&li) => merge(&live[li], &config[ci], item_shape),
            None => Ok(config[ci].clone()),
        }
    };
    let (mut li, mut ri) = (0, 0);
    while li < live.len() || ri < config.len() {
        if li < live.len() && ri < config.len() {
            if live_pes[li].as_ref() == Some(&config_pes[ri]) {
                merged_config.insert(&config_pes[ri]);
                out.push(merge_item(&config_pes[ri], ri)?);
                li += 1;
                ri += 1;
                next_shared = shared.pop_front();
                continue;
            }
            // A shared item whose turn has not come yet in the configuration's order.
            if let (Some(pe), Some(next)) = (&live_pes[li], next_shared)
                && in_config(pe)
                && pe != next
            {
                li += 1;
                continue;
            }
        }
        if li < live.len() {
            match &live_pes[li] {
                Some(pe) if in_config(pe) => {
                    if merged_config.contains(pe) {
                        li += 1;
                        continue;
                    }
                }
                _ => {
                    out.push(live[li].clone());
                    li += 1;
                    continue;
                }
            }
        }
        if ri < config.len() {
            let pe = &config_pes[ri];
            merged_config.insert(pe);
            out.push(merge_item(pe, ri)?);
            ri += 1;
            if next_shared == Some(pe) {
                next_shared = shared.pop_front();
            }
        }
    }
    Ok(out)
}

/// Removes the paths of `set` from a value. Returns true when the value became empty through
/// removals and should go too.
pub fn remove(value: &mut Value, set: &FieldSet, shape: &Shape<'_>) -> bool {
    if set.is_empty() {
        return false;
    }
    match value {
        Value::Object(map) if !shape.is_atomic_map() => {
            let keys: Vec<String> = map.keys().cloned().collect();
            for key in keys {
                let element = PathElement::Field(key.clone());
                let Some(sub) = set.child(&element) else {
                    continue;
                };
                let drop = sub.is_member()
                    || map
                        .get_mut(&key)
                        .is_some_and(|child| remove(child, sub, &shape.field(&key)));
                if drop {
                    map.shift_remove(&key);
                }
            }
            map.is_empty()
        }
        Value::Array(items) => {
            let Some(list) = granular_list(shape) else {
                return false;
            };
            let item_shape = shape.item();
            items.retain_mut(|item| {
                let Ok(element) = item_element(item, &list, &item_shape) else {
                    return true;
                };
                match set.child(&element) {
                    None => true,
                    Some(sub) => !(sub.is_member() || remove(item, sub, &item_shape)),
                }
            });
            items.is_empty()
        }
        _ => false,
    }
}
