//! Server-side apply and field ownership (`metadata.managedFields`).
//!
//! [`apply`] merges an applied configuration into the live object, removes fields its manager
//! stopped applying (unless another manager owns them) and refuses to change fields other
//! managers own unless forced. [`update_managed_fields`] records, for any other write (create,
//! update, patch), which fields the writing manager changed.
//!
//! Like kube-apiserver, call both with the object as the request wrote it (decoded and
//! defaulted), before the strategy resets what the endpoint may not change; the [`Scope`] says
//! which top-level fields those are, so their changes are not credited. The [`Shape`] comes
//! from `strategic::schema_for` for built-in kinds, [`Shape::builtin_untyped`] for reviews and
//! TokenRequests, and the CRD version's `openAPIV3Schema` for custom resources.

mod fieldset;
mod shape;
mod walk;

use serde_json::{Map, Value, json};

use crate::field_error::{FieldError, invalid_status};

pub use fieldset::{FieldSet, PathElement, path_string};
pub use shape::Shape;
pub use walk::{Comparison, compare, field_set};

/// The manager kube-apiserver credits with fields of objects that existed before their first
/// apply.
pub const BEFORE_FIRST_APPLY: &str = "before-first-apply";

/// The manager the oldest Update entries are merged into beyond [`MAX_UPDATE_MANAGERS`].
pub const ANCIENT_CHANGES: &str = "ancient-changes";

/// How many Update entries an object keeps before the oldest are merged.
pub const MAX_UPDATE_MANAGERS: usize = 10;

/// Whether a write is an apply or any other write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// A server-side apply patch.
    Apply,
    /// A create, update or non-apply patch.
    Update,
}

impl Operation {
    fn as_str(self) -> &'static str {
        match self {
            Self::Apply => "Apply",
            Self::Update => "Update",
        }
    }
}

/// Who writes, as recorded in a managedFields entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Manager<'a> {
    /// The field manager name (`fieldManager`, or the User-Agent's prefix).
    pub name: &'a str,
    /// Apply or Update.
    pub operation: Operation,
    /// The API version of the request, e.g. `v1` or `apps/v1`.
    pub api_version: &'a str,
    /// The subresource written, e.g. `status`, or "".
    pub subresource: &'a str,
}

/// Which part of an object a request can own: kube-apiserver's "reset fields" of the
/// strategy, top-level fields that the request cannot change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope<'a> {
    /// Everything (kinds without a status subresource).
    Whole,
    /// Everything but these top-level fields.
    Without(&'a [&'a str]),
}

impl Scope<'static> {
    /// The main resource of a kind with a status subresource.
    pub const MAIN_WITH_STATUS: Scope<'static> = Scope::Without(&["status"]);
    /// The status subresource of a custom resource (metadata changes stay owned).
    pub const CUSTOM_RESOURCE_STATUS: Scope<'static> = Scope::Without(&["spec"]);
    /// The status subresource of a built-in kind.
    pub const BUILTIN_STATUS: Scope<'static> = Scope::Without(&["spec", "metadata"]);
}

impl Scope<'_> {
    fn allows(&self, top_level: &str) -> bool {
        match self {
            Scope::Whole => true,
            Scope::Without(fields) => !fields.contains(&top_level),
        }
    }
}

/// Why an apply was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApplyError {
    /// Fields owned by other managers would change (409 unless forced).
    #[error("{}", conflict_message(.0))]
    Conflict(Vec<Conflict>),
    /// The applied configuration is not an object kube-apiserver accepts (400).
    #[error("{0}")]
    BadRequest(String),
    /// The configuration does not fit the type's list and map rules (500).
    #[error("{0}")]
    Invalid(String),
}

/// One field another manager owns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    /// The owner as kube-apiserver prints it: `"mgr"`, `"mgr" using v1`, with subresource.
    pub manager: String,
    /// The field, e.g. `.data.k1`.
    pub field: String,
}

fn conflict_message(conflicts: &[Conflict]) -> String {
    if let [one] = conflicts {
        return format!(
            "Apply failed with 1 conflict: conflict with {}: {}",
            one.manager, one.field
        );
    }
    let mut lines = Vec::new();
    let mut current: Option<&str> = None;
    for c in conflicts {
        if current != Some(c.manager.as_str()) {
            lines.push(format!("conflicts with {}:", c.manager));
            current = Some(&c.manager);
        }
        lines.push(format!("- {}", c.field));
    }
    format!(
        "Apply failed with {} conflicts: {}",
        conflicts.len(),
        lines.join("\n")
    )
}

impl ApplyError {
    /// The complete `metav1.Status` body kube-apiserver answers with.
    pub fn status(&self) -> Value {
        let (code, reason) = match self {
            Self::Conflict(_) => (409, Some("Conflict")),
            Self::BadRequest(_) => (400, Some("BadRequest")),
            Self::Invalid(_) => (500, None),
        };
        let mut status = json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": self.to_string(),
        });
        if let Some(reason) = reason {
            status["reason"] = reason.into();
        }
        if let Self::Conflict(conflicts) = self {
            let causes: Vec<Value> = conflicts
                .iter()
                .map(|c| {
                    json!({"reason": "FieldManagerConflict",
                           "message": format!("conflict with {}", c.manager), "field": c.field})
                })
                .collect();
            status["details"] = json!({"causes": causes});
        }
        status["code"] = code.into();
        status
    }
}

/// The default field manager of a request without `fieldManager`: the User-Agent up to the
/// first `/`, printable characters only, at most 128 bytes.
pub fn default_field_manager(user_agent: &str) -> String {
    let prefix = user_agent.split('/').next().unwrap_or_default();
    let mut out = String::new();
    for c in prefix.chars().filter(|c| !c.is_control()) {
        if out.len() + c.len_utf8() > 128 {
            break;
        }
        out.push(c);
    }
    out
}

/// The 422 Status for PatchOptions kube-apiserver refuses: apply without `fieldManager`,
/// `force` on another patch type, or a manager name over 128 bytes.
pub fn patch_options_error(is_apply: bool, field_manager: &str, force: bool) -> Option<Value> {
    let mut errors = Vec::new();
    if is_apply && field_manager.is_empty() {
        errors.push(FieldError::required(
            "fieldManager",
            "is required for apply patch",
        ));
    }
    if !is_apply && force {
        errors.push(FieldError::forbidden(
            "force",
            "may not be specified for non-apply patch",
        ));
    }
    if field_manager.len() > 128 {
        errors.push(FieldError {
            field: "fieldManager".to_string(),
            kind: crate::field_error::ErrorType::Invalid,
            value: None,
            detail: "may not be more than 128 bytes".to_string(),
        });
    }
    (!errors.is_empty()).then(|| invalid_status("meta.k8s.io", "PatchOptions", "", &errors))
}

/// One managedFields entry.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    manager: String,
    operation: Operation,
    api_version: String,
    time: Option<String>,
    subresource: String,
    set: FieldSet,
}

impl Entry {
    /// Entries are told apart by manager, operation, subresource and (for updates) version.
    fn same_identity(&self, m: &Manager<'_>) -> bool {
        self.manager == m.name
            && self.operation == m.operation
            && self.subresource == m.subresource
            && (m.operation == Operation::Apply || self.api_version == m.api_version)
    }

    fn printed(&self) -> String {
        let mut s = format!("\"{}\"", self.manager);
        if !self.subresource.is_empty() {
            s.push_str(&format!(" with subresource \"{}\"", self.subresource));
        }
        if self.operation == Operation::Update {
            s.push_str(&format!(" using {}", self.api_version));
        }
        s
    }

    fn decode(v: &Value) -> Option<Entry> {
        let s = |k: &str| v.get(k).and_then(Value::as_str);
        let operation = match s("operation")? {
            "Apply" => Operation::Apply,
            "Update" => Operation::Update,
            _ => return None,
        };
        if s("fieldsType") != Some("FieldsV1") {
            return None;
        }
        Some(Entry {
            manager: s("manager").unwrap_or_default().to_string(),
            operation,
            api_version: s("apiVersion").unwrap_or_default().to_string(),
            time: s("time").map(str::to_string),
            subresource: s("subresource").unwrap_or_default().to_string(),
            set: FieldSet::from_fields_v1(v.get("fieldsV1").unwrap_or(&json!({})))?,
        })
    }

    fn encode(&self) -> Value {
        let mut e = Map::new();
        e.insert("manager".into(), self.manager.clone().into());
        e.insert("operation".into(), self.operation.as_str().into());
        e.insert("apiVersion".into(), self.api_version.clone().into());
        if let Some(t) = &self.time {
            e.insert("time".into(), t.clone().into());
        }
        e.insert("fieldsType".into(), "FieldsV1".into());
        e.insert("fieldsV1".into(), self.set.to_fields_v1());
        if !self.subresource.is_empty() {
            e.insert("subresource".into(), self.subresource.clone().into());
        }
        Value::Object(e)
    }
}

/// Merges the oldest Update entries into one `ancient-changes` entry per API version until at
/// most [`MAX_UPDATE_MANAGERS`] Update entries remain.
fn cap_update_managers(entries: &mut Vec<Entry>) {
    let mut updaters: Vec<usize> = (0..entries.len())
        .filter(|&i| entries[i].operation == Operation::Update)
        .collect();
    if updaters.len() <= MAX_UPDATE_MANAGERS {
        return;
    }
    // RFC 3339 times in UTC sort as text; entries without a time count as oldest.
    updaters.sort_by(|&a, &b| {
        let key = |i: usize| {
            (
                entries[i].time.clone().unwrap_or_default(),
                entries[i].manager.clone(),
            )
        };
        key(a).cmp(&key(b))
    });
    let mut remaining = updaters.len();
    let mut first_of_version: Vec<(String, usize)> = Vec::new();
    let mut merged_away: Vec<usize> = Vec::new();
    for &i in &updaters {
        if remaining <= MAX_UPDATE_MANAGERS {
            break;
        }
        let version = entries[i].api_version.clone();
        let Some(&(_, bucket)) = first_of_version.iter().find(|(v, _)| *v == version) else {
            first_of_version.push((version, i));
            continue;
        };
        let (set, time) = (entries[i].set.clone(), entries[i].time.clone());
        let target = &mut entries[bucket];
        target.manager = ANCIENT_CHANGES.to_string();
        target.subresource = String::new();
        target.set.add(&set);
        target.time = time;
        merged_away.push(i);
        remaining -= 1;
    }
    merged_away.sort_unstable();
    for i in merged_away.into_iter().rev() {
        entries.remove(i);
    }
}

fn managed_fields_of(object: &Value) -> Option<&Value> {
    object.get("metadata")?.get("managedFields")
}

/// Reads managedFields; `None` when they are malformed.
fn decode_entries(list: Option<&Value>) -> Option<Vec<Entry>> {
    match list {
        None | Some(Value::Null) => Some(Vec::new()),
        Some(Value::Array(items)) => items.iter().map(Entry::decode).collect(),
        Some(_) => None,
    }
}

/// `managedFields: []` or `[{}]` in a write asks to drop all ownership records.
fn is_reset(list: Option<&Value>) -> bool {
    match list.and_then(Value::as_array).map(Vec::as_slice) {
        Some([]) => true,
        Some([only]) => only.as_object().is_some_and(Map::is_empty),
        _ => false,
    }
}

fn without_managed_fields(object: &Value) -> Value {
    let mut copy = object.clone();
    if let Some(meta) = copy.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.shift_remove("managedFields");
    }
    copy
}

fn write_entries(object: &mut Value, entries: &[Entry]) {
    let Some(obj) = object.as_object_mut() else {
        return;
    };
    let meta = obj
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(meta) = meta.as_object_mut() else {
        return;
    };
    if entries.is_empty() {
        meta.shift_remove("managedFields");
    } else {
        meta.insert(
            "managedFields".into(),
            Value::Array(entries.iter().map(Entry::encode).collect()),
        );
    }
}

fn field(name: &str) -> PathElement {
    PathElement::Field(name.to_string())
}

/// Drops the paths nobody owns: type and object identity, and bookkeeping fields.
fn strip_meta(set: &mut FieldSet) {
    // Built once: every write strips the same paths.
    static UNOWNED: std::sync::LazyLock<FieldSet> = std::sync::LazyLock::new(|| {
        let mut strip = FieldSet::new();
        strip.insert(&[field("apiVersion")]);
        strip.insert(&[field("kind")]);
        strip.insert(&[field("metadata")]);
        for f in [
            "name",
            "namespace",
            "creationTimestamp",
            "selfLink",
            "uid",
            "clusterName",
            "generation",
            "managedFields",
            "resourceVersion",
        ] {
            strip.insert(&[field("metadata"), field(f)]);
        }
        strip
    });
    set.remove(&UNOWNED);
}

/// `set` without what a request in `scope` cannot write.
fn scoped(mut set: FieldSet, scope: Scope<'_>) -> FieldSet {
    set.retain_top(|element| match element {
        PathElement::Field(name) => scope.allows(name),
        _ => true,
    });
    set
}

/// What a comparison found added or modified, in `scope`.
fn changes(cmp: Comparison, scope: Scope<'_>) -> (FieldSet, FieldSet) {
    let Comparison {
        mut added,
        modified,
        removed,
    } = cmp;
    added.add(&modified);
    (scoped(added, scope), scoped(removed, scope))
}

/// Records the fields a non-apply write changed as owned by its manager, in `new`'s
/// `metadata.managedFields`. `old` is `None` for a create; `now` is the RFC 3339 time.
pub fn update_managed_fields(
    old: Option<&Value>,
    new: &mut Value,
    manager: &Manager<'_>,
    shape: &Shape<'_>,
    scope: Scope<'_>,
    now: &str,
) {
    let empty = json!({});
    let old = old.unwrap_or(&empty);
    let requested = managed_fields_of(new);
    // The request may rewrite managedFields directly, except through a subresource.
    let entries = if !manager.subresource.is_empty() {
        decode_entries(managed_fields_of(old))
    } else if is_reset(requested) {
        Some(Vec::new())
    } else {
        match decode_entries(requested) {
            Some(e) if !e.is_empty() => Some(e),
            _ => decode_entries(managed_fields_of(old)),
        }
    };
    let mut entries = entries.unwrap_or_default();
    // A managedFields list is an atomic leaf to the comparison, and strip_meta drops it
    // from every set below, so the objects compare as they are, without copies; anything
    // else there could yield nested paths, so it is left out first.
    let listed = |v: &Value| managed_fields_of(v).is_none_or(Value::is_array);
    let cmp = if listed(old) && listed(new) {
        compare(old, new, shape)
    } else {
        compare(
            &without_managed_fields(old),
            &without_managed_fields(new),
            shape,
        )
    };
    let (mut own, removed) = changes(cmp, scope);
    for entry in &mut entries {
        entry.set.remove(&own);
        entry.set.remove(&removed);
        strip_meta(&mut entry.set);
    }
    strip_meta(&mut own);
    if !own.is_empty() {
        match entries.iter_mut().find(|e| e.same_identity(manager)) {
            Some(entry) => {
                entry.set.add(&own);
                entry.time = Some(now.to_string());
            }
            None => entries.push(Entry {
                manager: manager.name.to_string(),
                operation: Operation::Update,
                api_version: manager.api_version.to_string(),
                time: Some(now.to_string()),
                subresource: manager.subresource.to_string(),
                set: own,
            }),
        }
    }
    entries.retain(|e| !e.set.is_empty());
    cap_update_managers(&mut entries);
    write_entries(new, &entries);
}

/// The result of an apply.
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    /// The object to store, with updated managedFields.
    pub object: Value,
    /// Whether anything but managedFields differs from the live object.
    pub changed: bool,
}

/// Drops what a request in this scope cannot write from an applied configuration; the
/// object's identity (apiVersion, kind, metadata.name) always stays.
fn scope_config(config: &Map<String, Value>, scope: Scope<'_>) -> Map<String, Value> {
    let mut out: Map<String, Value> = config
        .iter()
        .filter(|(k, _)| scope.allows(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if !scope.allows("metadata")
        && let Some(name) = config.get("metadata").and_then(|m| m.get("name"))
    {
        out.insert("metadata".into(), json!({"name": name}));
    }
    out
}

/// Server-side apply of `config` by `manager` onto `live` (`None` when the object does not
/// exist yet). `now` is the RFC 3339 time recorded for the manager when the object changes.
pub fn apply(
    live: Option<&Value>,
    config: &Value,
    manager: &Manager<'_>,
    force: bool,
    shape: &Shape<'_>,
    scope: Scope<'_>,
    now: &str,
) -> Result<Applied, ApplyError> {
    let Value::Object(config) = config else {
        return Err(ApplyError::BadRequest(
            "the applied configuration must be an object".to_string(),
        ));
    };
    if managed_fields_of(&Value::Object(config.clone())).is_some_and(|m| !m.is_null()) {
        return Err(ApplyError::BadRequest(
            "metadata.managedFields must be nil".to_string(),
        ));
    }
    let config = Value::Object(scope_config(config, scope));
    let live_full = live.cloned().unwrap_or_else(|| json!({}));
    let live_plain = without_managed_fields(&live_full);
    let mut entries = decode_entries(managed_fields_of(&live_full)).unwrap_or_default();
    if live.is_some() && entries.is_empty() {
        let mut existing = field_set(&live_plain, shape).map_err(ApplyError::Invalid)?;
        strip_meta(&mut existing);
        let existing = scoped(existing, scope);
        if !existing.is_empty() {
            entries.push(Entry {
                manager: BEFORE_FIRST_APPLY.to_string(),
                operation: Operation::Update,
                api_version: manager.api_version.to_string(),
                time: Some(now.to_string()),
                subresource: String::new(),
                set: existing,
            });
        }
    }
    let mut new_set = field_set(&config, shape).map_err(ApplyError::Invalid)?;
    strip_meta(&mut new_set);
    let new_set = scoped(new_set, scope);
    let own_index = entries.iter().position(|e| e.same_identity(manager));
    let last_set = own_index
        .map(|i| entries[i].set.clone())
        .unwrap_or_default();
    let others = entries
        .iter()
        .enumerate()
        .filter(|(i, _)| Some(*i) != own_index)
        .fold(FieldSet::new(), |mut acc, (_, e)| {
            acc.add(&e.set);
            acc
        });

    let mut merged = walk::merge(&live_plain, &config, shape).map_err(ApplyError::Invalid)?;
    let prune = last_set.difference(&new_set).difference(&others);
    walk::remove(&mut merged, &prune, shape);

    let cmp = compare(&live_plain, &merged, shape);
    let (changes, removed) = changes(cmp, scope);
    if !force {
        let mut conflicts: Vec<(String, Conflict)> = Vec::new();
        for (i, e) in entries.iter().enumerate() {
            if Some(i) == own_index {
                continue;
            }
            for p in e.set.intersection(&changes).paths() {
                conflicts.push((
                    e.manager.clone(),
                    Conflict {
                        manager: e.printed(),
                        field: path_string(&p),
                    },
                ));
            }
        }
        if !conflicts.is_empty() {
            conflicts.sort_by(|a, b| (&a.0, &a.1.manager).cmp(&(&b.0, &b.1.manager)));
            return Err(ApplyError::Conflict(
                conflicts.into_iter().map(|(_, c)| c).collect(),
            ));
        }
    }
    for (i, e) in entries.iter_mut().enumerate() {
        if Some(i) != own_index {
            e.set.remove(&changes);
            e.set.remove(&removed);
            strip_meta(&mut e.set);
        }
    }
    let changed = !crate::patch::json_equal(&live_plain, &merged);
    let previous_time = own_index.and_then(|i| entries[i].time.clone());
    let own = Entry {
        manager: manager.name.to_string(),
        operation: Operation::Apply,
        api_version: manager.api_version.to_string(),
        time: if changed {
            Some(now.to_string())
        } else {
            previous_time
        },
        subresource: manager.subresource.to_string(),
        set: new_set,
    };
    match own_index {
        Some(i) => entries[i] = own,
        None => entries.push(own),
    }
    entries.retain(|e| !e.set.is_empty());
    cap_update_managers(&mut entries);
    write_entries(&mut merged, &entries);
    Ok(Applied {
        object: merged,
        changed,
    })
}

#[cfg(test)]
mod tests;
