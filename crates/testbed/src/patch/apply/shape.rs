//! What server-side apply needs to know about a value's type: whether a list is atomic, a set
//! or a map keyed by some fields, and whether a map is atomic. Built-in kinds take this from
//! the strategic-merge tables (a merge key makes a map-list, a merged scalar list is a set);
//! custom resources from their OpenAPI schema's `x-kubernetes-*` extensions.

use serde_json::Value;

use crate::patch::strategic::{ListStrategy, Ty};

/// How a list value is owned and merged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListType {
    /// Owned and replaced as a whole.
    Atomic,
    /// Items are scalars, owned one by one.
    Set,
    /// Items are maps identified by these key fields.
    Map(Vec<String>),
}

#[derive(Debug, Clone, Copy)]
enum Source<'a> {
    Builtin(Ty),
    Schema(&'a Value),
    Deduced,
}

/// The type information at one position of an object.
#[derive(Debug, Clone)]
pub struct Shape<'a> {
    source: Source<'a>,
    list: ListType,
    atomic_map: bool,
    atomic_items: bool,
    root: bool,
}

/// Built-in map fields that are owned as a whole (`+mapType=atomic`, `+structType=atomic`):
/// label selectors, node selectors, object references and role references.
const ATOMIC_BUILTIN_MAPS: &[&str] = &[
    "selector",
    "nodeSelector",
    "involvedObject",
    "regarding",
    "related",
    "roleRef",
];

/// `metav1.ObjectMeta` as custom resources embed it.
fn object_meta() -> Ty {
    crate::patch::strategic::schema_for("", "ConfigMap")
        .map_or(Ty::Opaque, |t| t.field("metadata").1)
}

impl<'a> Shape<'a> {
    fn new(source: Source<'a>, root: bool) -> Self {
        Self {
            source,
            list: ListType::Atomic,
            atomic_map: false,
            atomic_items: false,
            root,
        }
    }

    /// The shape of a built-in kind's objects (see `strategic::schema_for`).
    pub fn builtin(ty: Ty) -> Self {
        Self::new(Source::Builtin(ty), true)
    }

    /// A built-in kind without list metadata of its own, such as TokenRequest or the access
    /// reviews: only `metadata`, `spec` and `status` are known (as plain structs).
    pub fn builtin_untyped() -> Self {
        Self::builtin(Ty::Opaque)
    }

    /// The shape of a custom resource, from its version's `openAPIV3Schema`.
    pub fn custom_resource(schema: &'a Value) -> Self {
        Self::new(Source::Schema(schema), true)
    }

    /// No type information: maps are granular, lists atomic.
    pub fn deduced() -> Self {
        Self::new(Source::Deduced, true)
    }

    /// How this position's list is merged.
    pub fn list_type(&self) -> &ListType {
        &self.list
    }

    /// Whether this position's map is owned as a whole.
    pub fn is_atomic_map(&self) -> bool {
        self.atomic_map
    }

    /// Whether a typed object always has this field of the map (a plain Go struct, or a list
    /// without `omitempty`), so that it is never added or removed as a whole.
    pub fn field_always_present(&self, name: &str) -> bool {
        match self.source {
            Source::Builtin(ty) => {
                (self.root && matches!(name, "metadata" | "spec" | "status"))
                    || ty.is_always_present(name)
            }
            Source::Schema(_) | Source::Deduced => false,
        }
    }

    /// The shape of a map field.
    pub fn field(&self, name: &str) -> Shape<'a> {
        if self.root && name == "metadata" && !matches!(self.source, Source::Builtin(_)) {
            return Self::new(Source::Builtin(object_meta()), false);
        }
        match self.source {
            Source::Builtin(ty) => {
                let (strategy, field_ty) = ty.field(name);
                let list = match strategy {
                    ListStrategy::Merge(Some(key)) => ListType::Map(builtin_list_keys(name, key)),
                    ListStrategy::Merge(None) => ListType::Set,
                    ListStrategy::Replace => ListType::Atomic,
                };
                Shape {
                    source: Source::Builtin(field_ty),
                    list,
                    atomic_map: ATOMIC_BUILTIN_MAPS.contains(&name),
                    // Owner references are `+structType=atomic` items of a map-list.
                    atomic_items: name == "ownerReferences",
                    root: false,
                }
            }
            Source::Schema(schema) => {
                let sub = schema
                    .get("properties")
                    .and_then(|p| p.get(name))
                    .or_else(|| schema.get("additionalProperties").filter(|a| a.is_object()));
                match sub {
                    Some(sub) => schema_shape(sub),
                    None => Self::new(Source::Deduced, false),
                }
            }
            Source::Deduced => Self::new(Source::Deduced, false),
        }
    }

    /// The default of a key field of this (list item) type, used when an item omits it.
    pub fn key_default(&self, key: &str) -> Option<Value> {
        match self.source {
            // Ports are keyed by number and protocol, which defaults to TCP.
            Source::Builtin(_) => (key == "protocol").then(|| Value::from("TCP")),
            Source::Schema(schema) => schema.get("properties")?.get(key)?.get("default").cloned(),
            Source::Deduced => None,
        }
    }

    /// The shape of this list's items.
    pub fn item(&self) -> Shape<'a> {
        match self.source {
            Source::Builtin(ty) => Shape {
                atomic_map: self.atomic_items,
                ..Self::new(Source::Builtin(ty), false)
            },
            Source::Schema(schema) => match schema.get("items") {
                Some(items) => schema_shape(items),
                None => Self::new(Source::Deduced, false),
            },
            Source::Deduced => Self::new(Source::Deduced, false),
        }
    }
}

/// The `+listMapKey`s of built-in lists whose identity is more than their strategic merge key.
fn builtin_list_keys(field: &str, merge_key: &str) -> Vec<String> {
    let keys: &[&str] = match (field, merge_key) {
        ("ports", "containerPort") => &["containerPort", "protocol"],
        ("ports", "port") => &["port", "protocol"],
        ("topologySpreadConstraints", _) => &["topologyKey", "whenUnsatisfiable"],
        _ => return vec![merge_key.to_string()],
    };
    keys.iter().map(|k| k.to_string()).collect()
}

fn schema_shape(schema: &Value) -> Shape<'_> {
    let ext = |k: &str| schema.get(k).and_then(Value::as_str);
    let list = match ext("x-kubernetes-list-type") {
        Some("set") => ListType::Set,
        Some("map") => ListType::Map(
            schema
                .get("x-kubernetes-list-map-keys")
                .and_then(Value::as_array)
                .map(|keys| {
                    keys.iter()
                        .filter_map(|k| k.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default(),
        ),
        _ => ListType::Atomic,
    };
    Shape {
        source: Source::Schema(schema),
        list,
        atomic_map: ext("x-kubernetes-map-type") == Some("atomic"),
        atomic_items: false,
        root: false,
    }
}
