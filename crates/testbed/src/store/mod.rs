//! The object store of one cluster: objects per resource, one global resourceVersion
//! counter, and a bounded history of changes that watches and exact-revision lists read.

mod object;

pub use object::Stored;

use serde_json::Value;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::broadcast;

/// Kind of change a watch reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    /// Created.
    Added,
    /// Changed.
    Modified,
    /// Removed; the object is the last state with the deletion's resourceVersion.
    Deleted,
}

impl EventType {
    /// The wire name (`ADDED`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Added => "ADDED",
            Self::Modified => "MODIFIED",
            Self::Deleted => "DELETED",
        }
    }
}

/// One change of one object.
#[derive(Debug, Clone)]
pub struct Event {
    /// What happened.
    pub kind: EventType,
    /// The resource's storage key (`group/plural`).
    pub storage_key: Arc<str>,
    /// The object after the change (for deletions: its last state, re-stamped).
    pub object: Arc<Stored>,
    /// The object before the change (absent for creations).
    pub prev: Option<Arc<Stored>>,
    /// The watch line `{"type":…,"object":…}` in the stored version, made once and shared
    /// by every watcher that sends it unchanged.
    line: std::sync::OnceLock<bytes::Bytes>,
}

impl Event {
    /// A change of `object` (`prev` is its state before).
    pub fn new(
        kind: EventType,
        storage_key: Arc<str>,
        object: Arc<Stored>,
        prev: Option<Arc<Stored>>,
    ) -> Self {
        Self {
            kind,
            storage_key,
            object,
            prev,
            line: std::sync::OnceLock::new(),
        }
    }

    /// The revision this change created.
    pub fn rv(&self) -> u64 {
        self.object.rv
    }

    /// This change as one line of a watch stream, with the object in its stored version.
    pub fn watch_line(&self) -> &bytes::Bytes {
        self.line
            .get_or_init(|| watch_line(self.kind.as_str(), &self.object.json))
    }
}

/// One line of a watch stream: `{"type":"<kind>","object":<object>}` and a newline.
pub fn watch_line(kind: &str, object: &[u8]) -> bytes::Bytes {
    let mut out = Vec::with_capacity(object.len() + 32);
    out.extend_from_slice(b"{\"type\":\"");
    out.extend_from_slice(kind.as_bytes());
    out.extend_from_slice(b"\",\"object\":");
    out.extend_from_slice(object);
    out.extend_from_slice(b"}\n");
    bytes::Bytes::from(out)
}

/// Retained events after a revision and a receiver for what follows.
pub type WatchStart = (Vec<Arc<Event>>, broadcast::Receiver<Arc<Event>>);

/// Key of an object inside one resource: (namespace, name).
pub type ObjKey = (String, String);

#[derive(Default)]
struct Table {
    objects: BTreeMap<ObjKey, Arc<Stored>>,
    /// The revision when this resource started being served: watches from before get 410.
    since_rv: u64,
}

struct Inner {
    rv: u64,
    tables: HashMap<Arc<str>, Table>,
    history: VecDeque<Arc<Event>>,
    history_limit: usize,
    /// Events at or below this revision are no longer retained.
    compacted_rv: u64,
}

/// Why a past revision cannot be served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooOld {
    /// The oldest revision that can still be served.
    pub oldest: u64,
}

/// A function told of every change while the change is being made (under the store lock),
/// for state that must never lag behind the store, like the RBAC policy.
pub type Hook = Box<dyn Fn(&Event) + Send + Sync>;

/// The store: all objects of all resources of one cluster.
pub struct Store {
    inner: Mutex<Inner>,
    events: broadcast::Sender<Arc<Event>>,
    hooks: std::sync::RwLock<Vec<Hook>>,
}

/// Default number of retained changes (watch window).
pub const DEFAULT_HISTORY: usize = 100_000;

impl Store {
    /// An empty store whose first write gets revision `first_rv`... counting starts at 1.
    pub fn new(history_limit: usize) -> Self {
        let (events, _) = broadcast::channel(16_384);
        Self {
            inner: Mutex::new(Inner {
                rv: 1,
                tables: HashMap::new(),
                history: VecDeque::new(),
                history_limit: history_limit.max(1),
                compacted_rv: 0,
            }),
            events,
            hooks: std::sync::RwLock::new(Vec::new()),
        }
    }

    /// Registers a hook called synchronously for every change.
    pub fn add_hook(&self, hook: Hook) {
        self.hooks
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .push(hook);
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `f` as one atomic transaction.
    pub fn write<T>(&self, f: impl FnOnce(&mut Txn<'_>) -> T) -> T {
        let mut guard = self.lock();
        let hooks = self.hooks.read().unwrap_or_else(|e| e.into_inner());
        let mut txn = Txn {
            inner: &mut guard,
            events: &self.events,
            hooks: &hooks,
        };
        f(&mut txn)
    }

    /// The current revision.
    pub fn current_rv(&self) -> u64 {
        self.lock().rv
    }

    /// One object.
    pub fn get(&self, key: &str, ns: &str, name: &str) -> Option<Arc<Stored>> {
        let g = self.lock();
        g.tables
            .get(key)?
            .objects
            .get(&(ns.to_string(), name.to_string()))
            .cloned()
    }

    /// The objects of a resource (in one namespace, or all when `ns` is `None`), sorted by
    /// (namespace, name), starting after `after`, with the revision they were read at.
    pub fn list(
        &self,
        key: &str,
        ns: Option<&str>,
        after: Option<&ObjKey>,
    ) -> (Vec<Arc<Stored>>, u64) {
        let g = self.lock();
        let items = g
            .tables
            .get(key)
            .map(|t| select(&t.objects, ns, after))
            .unwrap_or_default();
        (items, g.rv)
    }

    /// The objects of a resource as they were at revision `rv`.
    pub fn list_at(
        &self,
        key: &str,
        ns: Option<&str>,
        after: Option<&ObjKey>,
        rv: u64,
    ) -> Result<Vec<Arc<Stored>>, TooOld> {
        let g = self.lock();
        if rv < g.compacted_rv {
            return Err(TooOld {
                oldest: g.compacted_rv,
            });
        }
        let mut objects = g
            .tables
            .get(key)
            .map(|t| t.objects.clone())
            .unwrap_or_default();
        for ev in g.history.iter().rev().take_while(|e| e.rv() > rv) {
            if *ev.storage_key != *key {
                continue;
            }
            let k = (ev.object.namespace.clone(), ev.object.name.clone());
            match (&ev.kind, &ev.prev) {
                (EventType::Added, _) => {
                    objects.remove(&k);
                }
                (_, Some(prev)) => {
                    objects.insert(k, prev.clone());
                }
                (_, None) => {}
            }
        }
        Ok(select(&objects, ns, after))
    }

    /// Subscribes to changes of resource `key` after revision `rv`: the retained events
    /// after `rv`, then a live receiver for what follows (deduplicate by revision).
    pub fn watch_from(&self, key: &str, rv: u64) -> Result<WatchStart, TooOld> {
        let g = self.lock();
        let since = g.tables.get(key).map_or(0, |t| t.since_rv);
        let oldest = g.compacted_rv.max(since);
        if rv < oldest {
            return Err(TooOld {
                oldest: g.rv.max(oldest),
            });
        }
        let past = g
            .history
            .iter()
            .skip_while(|e| e.rv() <= rv)
            .filter(|e| *e.storage_key == *key)
            .cloned()
            .collect();
        Ok((past, self.events.subscribe()))
    }

    /// The current objects and a receiver for every later change, read atomically.
    pub fn snapshot_and_subscribe(
        &self,
        key: &str,
        ns: Option<&str>,
    ) -> (Vec<Arc<Stored>>, u64, broadcast::Receiver<Arc<Event>>) {
        let g = self.lock();
        let items = g
            .tables
            .get(key)
            .map(|t| select(&t.objects, ns, None))
            .unwrap_or_default();
        (items, g.rv, self.events.subscribe())
    }

    /// Subscribes to every change from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Event>> {
        self.events.subscribe()
    }

    /// Forgets all history: watches and exact lists from older revisions get 410.
    pub fn compact(&self) {
        let mut g = self.lock();
        g.history.clear();
        g.compacted_rv = g.rv;
    }

    /// Marks a resource as served from now on (e.g. a CRD became established).
    pub fn start_serving(&self, key: &str) {
        let mut g = self.lock();
        let rv = g.rv;
        let t = g.tables.entry(Arc::from(key)).or_default();
        if t.objects.is_empty() {
            t.since_rv = rv;
        }
    }

    /// Number of objects across all resources.
    pub fn len(&self) -> usize {
        self.lock().tables.values().map(|t| t.objects.len()).sum()
    }

    /// Whether the store holds no object.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Keys of all resources that hold objects.
    pub fn storage_keys(&self) -> Vec<String> {
        self.lock()
            .tables
            .iter()
            .filter(|(_, t)| !t.objects.is_empty())
            .map(|(k, _)| k.to_string())
            .collect()
    }
}

fn select(
    objects: &BTreeMap<ObjKey, Arc<Stored>>,
    ns: Option<&str>,
    after: Option<&ObjKey>,
) -> Vec<Arc<Stored>> {
    use std::ops::Bound;
    let lower = match after {
        Some(k) => Bound::Excluded(k.clone()),
        None => match ns {
            Some(ns) => Bound::Included((ns.to_string(), String::new())),
            None => Bound::Unbounded,
        },
    };
    objects
        .range((lower, Bound::Unbounded))
        .take_while(|((n, _), _)| ns.is_none_or(|ns| n == ns))
        .map(|(_, v)| v.clone())
        .collect()
}

/// A write transaction: reads and writes under the store lock.
pub struct Txn<'a> {
    inner: &'a mut Inner,
    events: &'a broadcast::Sender<Arc<Event>>,
    hooks: &'a [Hook],
}

impl Txn<'_> {
    /// One object.
    pub fn get(&self, key: &str, ns: &str, name: &str) -> Option<Arc<Stored>> {
        self.inner
            .tables
            .get(key)?
            .objects
            .get(&(ns.to_string(), name.to_string()))
            .cloned()
    }

    /// All objects of a resource in a namespace (or everywhere).
    pub fn list(&self, key: &str, ns: Option<&str>) -> Vec<Arc<Stored>> {
        self.inner
            .tables
            .get(key)
            .map(|t| select(&t.objects, ns, None))
            .unwrap_or_default()
    }

    /// The current revision.
    pub fn current_rv(&self) -> u64 {
        self.inner.rv
    }

    /// Keys of every resource with a table.
    pub fn keys(&self) -> Vec<String> {
        self.inner.tables.keys().map(|k| k.to_string()).collect()
    }

    /// Every object (of any resource) with an ownerReference to `owner_uid`.
    pub fn dependents_of(&self, owner_uid: &str) -> Vec<(Arc<str>, Arc<Stored>)> {
        self.inner
            .tables
            .iter()
            .flat_map(|(k, t)| {
                t.objects
                    .values()
                    .filter(|o| o.owners.iter().any(|u| u == owner_uid))
                    .map(move |o| (k.clone(), o.clone()))
            })
            .collect()
    }

    /// Every object in a namespace, of any resource.
    pub fn in_namespace(&self, ns: &str) -> Vec<(Arc<str>, Arc<Stored>)> {
        self.inner
            .tables
            .iter()
            .flat_map(|(k, t)| {
                select(&t.objects, Some(ns), None)
                    .into_iter()
                    .map(move |o| (k.clone(), o))
            })
            .collect()
    }

    /// Creates or replaces an object (identity from its metadata) at a new revision.
    pub fn put(&mut self, key: &str, obj: Value) -> Arc<Stored> {
        self.inner.rv += 1;
        let stored = Arc::new(Stored::from_value(obj, self.inner.rv));
        let k = (stored.namespace.clone(), stored.name.clone());
        let table = self.table(key);
        let prev = table.objects.insert(k, stored.clone());
        let kind = if prev.is_some() {
            EventType::Modified
        } else {
            EventType::Added
        };
        self.record(key, kind, stored.clone(), prev);
        stored
    }

    /// Removes an object; returns its last state stamped with the deletion revision.
    pub fn delete(&mut self, key: &str, ns: &str, name: &str) -> Option<Arc<Stored>> {
        let prev = self
            .inner
            .tables
            .get_mut(key)?
            .objects
            .remove(&(ns.to_string(), name.to_string()))?;
        self.inner.rv += 1;
        let last = Arc::new(prev.with_rv(self.inner.rv));
        self.record(key, EventType::Deleted, last.clone(), Some(prev));
        Some(last)
    }

    fn table(&mut self, key: &str) -> &mut Table {
        if !self.inner.tables.contains_key(key) {
            self.inner.tables.insert(Arc::from(key), Table::default());
        }
        self.inner.tables.get_mut(key).expect("inserted above")
    }

    fn record(
        &mut self,
        key: &str,
        kind: EventType,
        object: Arc<Stored>,
        prev: Option<Arc<Stored>>,
    ) {
        let storage_key = self
            .inner
            .tables
            .get_key_value(key)
            .map_or_else(|| Arc::from(key), |(k, _)| k.clone());
        let ev = Arc::new(Event::new(kind, storage_key, object, prev));
        if self.inner.history.len() >= self.inner.history_limit
            && let Some(old) = self.inner.history.pop_front()
        {
            self.inner.compacted_rv = old.rv();
        }
        for hook in self.hooks {
            hook(&ev);
        }
        self.inner.history.push_back(ev.clone());
        // No receivers is fine: nobody watches.
        let _ = self.events.send(ev);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cm(name: &str, v: &str) -> Value {
        json!({"metadata": {"name": name, "namespace": "ns", "uid": name}, "data": {"v": v}})
    }

    #[test]
    fn every_write_gets_a_new_revision() {
        let s = Store::new(DEFAULT_HISTORY);
        let a = s.write(|t| t.put("/configmaps", cm("a", "1")));
        let b = s.write(|t| t.put("/configmaps", cm("b", "1")));
        assert!(b.rv > a.rv);
        assert_eq!(s.current_rv(), b.rv);
        let (items, rv) = s.list("/configmaps", Some("ns"), None);
        assert_eq!(items.len(), 2);
        assert_eq!(rv, b.rv);
    }

    #[test]
    fn list_at_a_past_revision_undoes_later_changes() {
        let s = Store::new(DEFAULT_HISTORY);
        let a1 = s.write(|t| t.put("/configmaps", cm("a", "1")));
        s.write(|t| t.put("/configmaps", cm("a", "2")));
        s.write(|t| t.put("/configmaps", cm("b", "1")));
        s.write(|t| t.delete("/configmaps", "ns", "a"));
        let past = s.list_at("/configmaps", Some("ns"), None, a1.rv).unwrap();
        assert_eq!(past.len(), 1);
        assert_eq!(past[0].value()["data"]["v"], "1");
    }

    #[test]
    fn compaction_makes_old_revisions_expire() {
        let s = Store::new(DEFAULT_HISTORY);
        let a = s.write(|t| t.put("/configmaps", cm("a", "1")));
        s.write(|t| t.put("/configmaps", cm("a", "2")));
        s.compact();
        assert!(s.list_at("/configmaps", None, None, a.rv).is_err());
        assert!(s.watch_from("/configmaps", a.rv).is_err());
    }

    #[test]
    fn watch_replays_retained_events_of_its_resource() {
        let s = Store::new(DEFAULT_HISTORY);
        let a = s.write(|t| t.put("/configmaps", cm("a", "1")));
        s.write(|t| t.put("/secrets", cm("x", "1")));
        s.write(|t| t.put("/configmaps", cm("a", "2")));
        let (past, _rx) = s.watch_from("/configmaps", a.rv).unwrap();
        assert_eq!(past.len(), 1);
        assert_eq!(past[0].kind, EventType::Modified);
    }
}
