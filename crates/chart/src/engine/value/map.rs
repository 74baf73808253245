//! Go's `map[string]interface{}`: shared by reference, iterated in sorted key order.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::rc::Rc;

use foldhash::fast::RandomState;

use super::Value;

/// A map shared by reference: clones see each other's writes, as Go maps do.
///
/// Borrows of the inner cell never outlive a method call, so template code that writes to a
/// map while ranging over it cannot trip a borrow conflict.
///
/// Entries are hashed, and sorted only when they are listed: templates look keys up far more
/// often than they list them, and a search of a sorted tree compared the key with several
/// others at every step of a `.Values.a.b.c` chain (a seventh of a large chart's execution).
#[derive(Clone, Default)]
pub struct Map(Rc<RefCell<HashMap<String, Value, RandomState>>>);

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
        let mut keys: Vec<String> = self.0.borrow().keys().cloned().collect();
        keys.sort_unstable();
        keys
    }

    /// The entries in sorted key order (a snapshot).
    pub fn entries(&self) -> Vec<(String, Value)> {
        let mut entries: Vec<(String, Value)> = self
            .0
            .borrow()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        entries.sort_unstable_by(|(a, _), (b, _)| a.cmp(b));
        entries
    }

    /// A new map with the same entries (a shallow copy, not shared).
    pub fn shallow_copy(&self) -> Map {
        Map(Rc::new(RefCell::new(self.0.borrow().clone())))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_entries_are_listed_in_byte_order_whatever_the_insertion_order() {
        let map = Map::new();
        for key in ["b", "a", "B", "ab", "", "é", "a0"] {
            map.insert(key, Value::from(key));
        }
        let sorted = ["", "B", "a", "a0", "ab", "b", "é"];
        assert_eq!(map.keys(), sorted);
        let entries = map.entries();
        let keys: Vec<&str> = entries.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, sorted);
        assert!(matches!(map.get("é"), Some(Value::String(s)) if &*s == "é"));
        assert!(map.get("c").is_none());
    }

    #[test]
    fn a_shallow_copy_is_a_map_of_its_own() {
        let map = Map::from_entries([("a".to_string(), Value::Int(1))]);
        let copy = map.shallow_copy();
        copy.insert("b", Value::Int(2));
        assert_eq!(map.keys(), ["a"]);
        assert_eq!(copy.keys(), ["a", "b"]);
        assert!(!copy.ptr_eq(&map));
        assert!(map.clone().ptr_eq(&map));
    }
}
