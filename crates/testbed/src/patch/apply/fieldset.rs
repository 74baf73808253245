//! Sets of field paths, as kept in `managedFields` (`FieldsV1`): `f:<field>`, `k:{<keys>}`,
//! `v:<value>` and `i:<index>` elements, with `.` marking a path that is itself owned.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

/// One step of a field path. The variant order is the order of elements in a serialized set.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PathElement {
    /// A field of a map: `f:name`.
    Field(String),
    /// An item of a map-list, by its key fields (sorted, values as compact JSON): `k:{...}`.
    Key(Vec<(String, String)>),
    /// An item of a set-list, by its value (compact JSON): `v:...`.
    Value(String),
    /// An item of a positional list: `i:n`.
    Index(usize),
}

impl PathElement {
    /// The element as kube-apiserver prints it in conflict messages: `.f`, `[k="v"]`, `[="v"]`.
    pub fn display(&self) -> String {
        match self {
            Self::Field(f) => format!(".{f}"),
            Self::Key(keys) => {
                let parts: Vec<String> = keys.iter().map(|(k, v)| format!("{k}={v}")).collect();
                format!("[{}]", parts.join(","))
            }
            Self::Value(v) => format!("[={v}]"),
            Self::Index(i) => format!("[{i}]"),
        }
    }

    fn encode(&self) -> String {
        match self {
            Self::Field(f) => format!("f:{f}"),
            Self::Key(keys) => {
                let obj: Map<String, Value> = keys
                    .iter()
                    .map(|(k, v)| (k.clone(), serde_json::from_str(v).unwrap_or(Value::Null)))
                    .collect();
                format!("k:{}", Value::Object(obj))
            }
            Self::Value(v) => format!("v:{v}"),
            Self::Index(i) => format!("i:{i}"),
        }
    }

    fn decode(text: &str) -> Option<Self> {
        let (tag, rest) = text.split_at_checked(2)?;
        match tag {
            "f:" => Some(Self::Field(rest.to_string())),
            "k:" => {
                let Value::Object(obj) = serde_json::from_str::<Value>(rest).ok()? else {
                    return None;
                };
                let mut keys: Vec<(String, String)> =
                    obj.into_iter().map(|(k, v)| (k, v.to_string())).collect();
                keys.sort();
                Some(Self::Key(keys))
            }
            "v:" => {
                let v: Value = serde_json::from_str(rest).ok()?;
                Some(Self::Value(v.to_string()))
            }
            "i:" => rest.parse().ok().map(Self::Index),
            _ => None,
        }
    }
}

/// A field path.
pub type Path = Vec<PathElement>;

/// Prints a path like kube-apiserver: `.spec.containers[name="a"].image`.
pub fn path_string(path: &[PathElement]) -> String {
    path.iter().map(PathElement::display).collect()
}

/// A set of field paths, as a tree.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSet {
    member: bool,
    children: BTreeMap<PathElement, FieldSet>,
}

impl FieldSet {
    /// The empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a path. Elements are cloned only for the nodes it creates: walks insert many
    /// paths that share their beginning.
    pub fn insert(&mut self, path: &[PathElement]) {
        let mut node = self;
        for element in path {
            if !node.children.contains_key(element) {
                node.children.insert(element.clone(), FieldSet::new());
            }
            node = node
                .children
                .get_mut(element)
                .expect("present or inserted above");
        }
        node.member = true;
    }

    #[cfg(test)]
    /// Whether the path itself is in the set.
    pub fn contains(&self, path: &[PathElement]) -> bool {
        match path.split_first() {
            None => self.member,
            Some((first, rest)) => self.children.get(first).is_some_and(|c| c.contains(rest)),
        }
    }

    /// The subtree below one element (paths relative to it).
    pub fn child(&self, element: &PathElement) -> Option<&FieldSet> {
        self.children.get(element)
    }

    /// Whether this node's own path is in the set.
    pub fn is_member(&self) -> bool {
        self.member
    }

    /// Whether no path is in the set.
    pub fn is_empty(&self) -> bool {
        !self.member && self.children.values().all(FieldSet::is_empty)
    }

    /// All paths of the set, in order.
    pub fn paths(&self) -> Vec<Path> {
        let mut out = Vec::new();
        self.collect(&mut Vec::new(), &mut out);
        out
    }

    fn collect(&self, prefix: &mut Path, out: &mut Vec<Path>) {
        if self.member {
            out.push(prefix.clone());
        }
        for (element, child) in &self.children {
            prefix.push(element.clone());
            child.collect(prefix, out);
            prefix.pop();
        }
    }

    #[cfg(test)]
    /// Paths in either set.
    pub fn union(&self, other: &FieldSet) -> FieldSet {
        let mut out = self.clone();
        out.add(other);
        out
    }

    /// Adds the paths of `other`, in place: only what this set lacks is copied.
    pub fn add(&mut self, other: &FieldSet) {
        self.member |= other.member;
        for (element, child) in &other.children {
            match self.children.get_mut(element) {
                Some(mine) => mine.add(child),
                None => {
                    self.children.insert(element.clone(), child.clone());
                }
            }
        }
        self.children.retain(|_, c| !c.is_empty());
    }

    /// Paths of this set that are not in `other`.
    pub fn difference(&self, other: &FieldSet) -> FieldSet {
        let mut out = self.clone();
        out.remove(other);
        out
    }

    /// Removes the paths of `other`, in place.
    pub fn remove(&mut self, other: &FieldSet) {
        self.member &= !other.member;
        for (element, theirs) in &other.children {
            if let Some(mine) = self.children.get_mut(element) {
                mine.remove(theirs);
            }
        }
        self.children.retain(|_, c| !c.is_empty());
    }

    /// Paths in both sets.
    pub fn intersection(&self, other: &FieldSet) -> FieldSet {
        let mut out = FieldSet {
            member: self.member && other.member,
            children: BTreeMap::new(),
        };
        for (element, child) in &self.children {
            if let Some(theirs) = other.children.get(element) {
                out.children
                    .insert(element.clone(), child.intersection(theirs));
            }
        }
        out.pruned()
    }

    /// Drops branches without members.
    fn pruned(mut self) -> FieldSet {
        self.children.retain(|_, c| !c.is_empty());
        self
    }

    /// Keeps the paths whose first element passes `keep`.
    pub fn retain_top(&mut self, keep: impl Fn(&PathElement) -> bool) {
        self.children
            .retain(|e, child| keep(e) && !child.is_empty());
    }

    /// The set as `fieldsV1` JSON.
    pub fn to_fields_v1(&self) -> Value {
        let mut obj = Map::new();
        if self.member && !self.children.is_empty() {
            obj.insert(".".to_string(), Value::Object(Map::new()));
        }
        for (element, child) in &self.children {
            if !child.is_empty() {
                obj.insert(element.encode(), child.to_fields_v1());
            }
        }
        Value::Object(obj)
    }

    /// Reads `fieldsV1` JSON; `None` when it is malformed.
    pub fn from_fields_v1(value: &Value) -> Option<FieldSet> {
        let obj = value.as_object()?;
        let mut set = FieldSet::new();
        for (key, child) in obj {
            if key == "." {
                set.member = true;
                continue;
            }
            let element = PathElement::decode(key)?;
            let mut sub = FieldSet::from_fields_v1(child)?;
            // A leaf `{}` means the path itself is owned.
            if child.as_object().is_some_and(Map::is_empty) {
                sub.member = true;
            }
            set.children.insert(element, sub);
        }
        Some(set)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn f(name: &str) -> PathElement {
        PathElement::Field(name.to_string())
    }

    #[test]
    fn fields_v1_round_trips_with_dot_markers() {
        let v = json!({
            "f:data": {".": {}, "f:a": {}},
            "f:metadata": {"f:labels": {"f:app": {}}},
            "f:spec": {"f:containers": {"k:{\"name\":\"a\"}": {".": {}, "f:image": {}}}},
            "f:finalizers": {"v:\"example.com/a\"": {}},
            "f:list": {"i:0": {}}
        });
        let set = FieldSet::from_fields_v1(&v).unwrap();
        assert!(set.contains(&[f("data")]));
        assert!(set.contains(&[f("data"), f("a")]));
        assert!(!set.contains(&[f("metadata")]));
        assert!(set.contains(&[
            f("spec"),
            f("containers"),
            PathElement::Key(vec![("name".into(), "\"a\"".into())])
        ]));
        assert_eq!(set.to_fields_v1(), v);
    }

    #[test]
    fn malformed_fields_are_refused() {
        assert!(FieldSet::from_fields_v1(&json!({"x:y": {}})).is_none());
        assert!(FieldSet::from_fields_v1(&json!({"k:[1]": {}})).is_none());
        assert!(FieldSet::from_fields_v1(&json!({"i:x": {}})).is_none());
        assert!(FieldSet::from_fields_v1(&json!([])).is_none());
        assert!(FieldSet::from_fields_v1(&json!({"f:a": 1})).is_none());
    }

    #[test]
    fn set_algebra() {
        let mut a = FieldSet::new();
        a.insert(&[f("data"), f("a")]);
        a.insert(&[f("data"), f("b")]);
        let mut b = FieldSet::new();
        b.insert(&[f("data"), f("b")]);
        b.insert(&[f("data")]);
        assert_eq!(a.intersection(&b).paths(), vec![vec![f("data"), f("b")]]);
        assert_eq!(a.difference(&b).paths(), vec![vec![f("data"), f("a")]]);
        assert_eq!(a.union(&b).paths().len(), 3);
        assert!(a.difference(&a).is_empty());
        assert_eq!(a.difference(&a).to_fields_v1(), json!({}));
    }

    #[test]
    fn paths_print_like_kube() {
        let path = vec![
            f("spec"),
            f("containers"),
            PathElement::Key(vec![
                ("name".into(), "\"a\"".into()),
                ("port".into(), "80".into()),
            ]),
            f("image"),
        ];
        assert_eq!(
            path_string(&path),
            ".spec.containers[name=\"a\",port=80].image"
        );
        assert_eq!(
            path_string(&[f("f"), PathElement::Value("\"x\"".into())]),
            ".f[=\"x\"]"
        );
        assert_eq!(path_string(&[f("l"), PathElement::Index(3)]), ".l[3]");
    }
}
