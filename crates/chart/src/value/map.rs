//! Go's `map[string]interface{}`: shared by reference, iterated in sorted key order.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;
use std::rc::Rc;

use super::Value;

/// A map shared by reference: clones see each other's writes, as Go maps do.
///
/// Borrows of the inner cell never outlive a method call, so template code that writes to a
/// map while ranging over it cannot trip a borrow conflict.
#[derive(Clone, Default)]
pub struct Map(Rc<RefCell<BTreeMap<String, Value>>>);

impl Map {
    /// A new, empty map.
    pub fn new() -> Map {
        Map::default()
    }

    /// A new map holding these entries.
    pub fn from_entries(entries: impl IntoIterator<Item = (String, Value)>) -> Map {
        Map(Rc::new(RefCell::new(entries.into_iter().collect())))
    }

    /// The value under `key`, if present.
    pub fn get(&self, key: &str) -> Option<Value> {
        self.0.borrow().get(key).cloned()
    }

    /// Whether `key` is present.
    pub fn contains_key(&self, key: &str) -> bool {
        self.0.borrow().contains_key(key)
    }

    /// Sets `key` to `value`, returning the previous value.
    pub fn insert(&self, key: impl Into<String>, value: Value) -> Option<Value> {
        self.0.borrow_mut().insert(key.into(), value)
    }

    /// Removes `key`, returning its value.
    pub fn remove(&self, key: &str) -> Option<Value> {
        self.0.borrow_mut().remove(key)
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.0.borrow().len()
    }

    /// Whether the map has no entries.
    pub fn is_empty(&self) -> bool {
        self.0.borrow().is_empty()
    }

    /// The keys in sorted order (a snapshot).
    pub fn keys(&self) -> Vec<String> {
        self.0.borrow().keys().cloned().collect()
    }

    /// The entries in sorted key order (a snapshot).
    pub fn entries(&self) -> Vec<(String, Value)> {
        self.0
            .borrow()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    /// A new map with the same entries (a shallow copy, not shared).
    pub fn shallow_copy(&self) -> Map {
        Map::from_entries(self.entries())
    }

    /// Whether both handles refer to the same map.
    pub fn ptr_eq(&self, other: &Map) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

impl fmt::Debug for Map {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A map may contain itself (Sprig `set $m "self" $m`); print one level only.
        f.debug_map()
            .entries(
                self.entries()
                    .iter()
                    .map(|(k, v)| (k.clone(), v.type_name())),
            )
            .finish()
    }
}
