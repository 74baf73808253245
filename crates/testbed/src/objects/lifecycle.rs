//! Metadata bookkeeping on create and update: identity, timestamps, generation, status
//! separation and the finalizer rules.

use super::{finalizers, is_deleting, meta_mut, meta_str, names};
use crate::clock;
use crate::ids;
use crate::resources::{ResourceDef, Shape};
use crate::status::{ApiError, Cause};
use serde_json::{Map, Value, json};

/// Finalizer names kube-apiserver accepts without a domain.
const STANDARD_FINALIZERS: &[&str] = &["kubernetes", "orphan", "foregroundDeletion"];

/// Sets identity, timestamps and generation of a new object and checks its metadata.
/// The name stays empty when `generateName` is used; the caller draws it.
pub fn prepare_create(
    res: &ResourceDef,
    path_ns: Option<&str>,
    mut obj: Value,
) -> Result<Value, ApiError> {
    let status = obj.get("status").cloned();
    let meta = meta_mut(&mut obj);
    match (res.namespaced, path_ns) {
        (true, Some(ns)) => {
            let body_ns = meta
                .get("namespace")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if !body_ns.is_empty() && body_ns != ns {
                return Err(ApiError::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                ));
            }
            meta.insert("namespace".into(), ns.into());
        }
        _ => {
            meta.remove("namespace");
        }
    }
    for k in [
        "resourceVersion",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "selfLink",
        "generation",
    ] {
        meta.remove(k);
    }
    meta.insert("uid".into(), ids::new_uid().into());
    meta.insert("creationTimestamp".into(), clock::now_time().into());
    if res.shape != Shape::Data {
        meta.insert("generation".into(), 1.into());
    }
    if res.has_status() && res.kind != "Namespace" {
        // Status is written through the status subresource only; a create starts empty.
        if let Some(map) = obj.as_object_mut() {
            map.remove("status");
            if res.shape == Shape::SpecStatus && status.is_some() {
                map.insert("status".into(), json!({}));
            }
        }
    }
    Ok(obj)
}

/// Draws a name from `generateName` when the object has none.
pub fn fill_generated_name(obj: &mut Value) -> Result<(), ApiError> {
    if !meta_str(obj, "name").is_empty() {
        return Ok(());
    }
    let prefix = meta_str(obj, "generateName").to_string();
    if prefix.is_empty() {
        return Err(ApiError::invalid(
            obj.get("kind").and_then(Value::as_str).unwrap_or_default(),
            "",
            "",
            vec![Cause::new(
                "FieldValueRequired",
                "Required value: name or generateName is required",
                "metadata.name",
            )],
        ));
    }
    meta_mut(obj).insert("name".into(), ids::generated_name(&prefix).into());
    Ok(())
}

/// Why `name` cannot name an object of `res`'s kind (`None` when it can); a `generateName`
/// `prefix` is checked as Go's name validators check one.
fn name_error(res: &ResourceDef, name: &str, prefix: bool) -> Option<&'static str> {
    if matches!(
        res.kind.as_str(),
        "Role" | "ClusterRole" | "RoleBinding" | "ClusterRoleBinding"
    ) {
        // RBAC objects accept any path segment name (a prefix may be `.`).
        let illegal = name.contains('/') || name.contains('%');
        let dots = !prefix && (name == "." || name == "..");
        return (illegal || dots).then_some("may not contain '/' or '%'");
    }
    let checked = if prefix {
        names::masked_prefix(name)
    } else {
        name.to_owned()
    };
    if res.kind == "Namespace" {
        (!names::is_dns_label(&checked)).then_some(names::LABEL_MSG)
    } else {
        (!names::is_subdomain(&checked)).then_some(names::SUBDOMAIN_MSG)
    }
}

/// Checks object metadata: the name (and `generateName`) on create, labels, annotation keys,
/// owner references and finalizers.
pub fn validate_meta(res: &ResourceDef, obj: &Value, is_create: bool) -> Vec<Cause> {
    let mut causes = Vec::new();
    let invalid = |field: &str, value: &str, msg: &str| {
        Cause::new(
            "FieldValueInvalid",
            format!("Invalid value: {}: {msg}", Value::from(value)),
            field,
        )
    };
    let generate_name = meta_str(obj, "generateName");
    if is_create
        && !generate_name.is_empty()
        && let Some(msg) = name_error(res, generate_name, true)
    {
        causes.push(invalid("metadata.generateName", generate_name, msg));
    }
    let name = meta_str(obj, "name");
    if is_create
        && !name.is_empty()
        && let Some(msg) = name_error(res, name, false)
    {
        causes.push(invalid("metadata.name", name, msg));
    }
    causes.extend(label_causes(obj));
    causes.extend(owner_reference_causes(obj));
    for (i, f) in finalizers(obj).iter().enumerate() {
        if !names::is_qualified_name(f) {
            causes.push(Cause::new(
                "FieldValueInvalid",
                format!("Invalid value: \"{f}\": {}", names::QUALIFIED_MSG),
                "metadata.finalizers",
            ));
        } else if !f.contains('/') && !STANDARD_FINALIZERS.contains(&f.as_str()) && !f.contains('.')
        {
            causes.push(Cause::new(
                "FieldValueInvalid",
                format!("Invalid value: \"{f}\": name is neither a standard finalizer name nor is it fully qualified"),
                format!("metadata.finalizers[{i}]"),
            ));
        }
    }
    causes
}

/// Label keys must be qualified names and values label values; annotation keys qualified
/// names in any case, and all annotations together at most 256 KiB (kube's `ValidateLabels`
/// and `ValidateAnnotations`).
fn label_causes(obj: &Value) -> Vec<Cause> {
    let invalid = |field: &str, value: &str, msg: String| {
        Cause::new(
            "FieldValueInvalid",
            format!("Invalid value: {}: {msg}", Value::from(value)),
            field,
        )
    };
    let map = |key: &str| {
        obj.pointer(&format!("/metadata/{key}"))
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    };
    let mut causes = Vec::new();
    for (key, value) in &map("labels") {
        for msg in names::qualified_name_errors(key) {
            causes.push(invalid("metadata.labels", key, msg));
        }
        let value = value.as_str().unwrap_or_default();
        for msg in names::label_value_errors(value) {
            causes.push(invalid("metadata.labels", value, msg));
        }
    }
    let annotations = map("annotations");
    for key in annotations.keys() {
        for msg in names::qualified_name_errors(&key.to_lowercase()) {
            causes.push(invalid("metadata.annotations", key, msg));
        }
    }
    let size: usize = annotations
        .iter()
        .map(|(key, value)| key.len() + value.as_str().map_or(0, str::len))
        .sum();
    if size > TOTAL_ANNOTATION_SIZE_LIMIT {
        causes.push(Cause::new(
            "FieldValueTooLong",
            format!("Too long: may not be more than {TOTAL_ANNOTATION_SIZE_LIMIT} bytes"),
            "metadata.annotations",
        ));
    }
    causes
}

/// kube's `TotalAnnotationSizeLimitB`: the most bytes an object's annotation keys and values
/// may have together.
const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;

fn owner_reference_causes(obj: &Value) -> Vec<Cause> {
    let refs = obj
        .pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut causes = Vec::new();
    for r in &refs {
        let text = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or_default();
        for (key, what) in [
            ("apiVersion", "version"),
            ("kind", "kind"),
            ("name", "name"),
            ("uid", "uid"),
        ] {
            if text(key).is_empty() {
                causes.push(Cause::new(
                    "FieldValueInvalid",
                    format!("Invalid value: \"\": {what} must not be empty"),
                    format!("metadata.ownerReferences.{key}"),
                ));
            }
        }
    }
    let controllers: Vec<String> = refs
        .iter()
        .filter(|r| r.get("controller") == Some(&Value::Bool(true)))
        .map(|r| {
            format!(
                "{}/{}",
                r["kind"].as_str().unwrap_or_default(),
                r["name"].as_str().unwrap_or_default()
            )
        })
        .collect();
    if controllers.len() > 1 {
        causes.push(Cause::new(
            "FieldValueInvalid",
            format!(
                "Invalid value: {}: Only one reference can have Controller set to true. Found \"true\" in references for {}",
                Value::Array(refs.clone()),
                controllers.join(" and ")
            ),
            "metadata.ownerReferences",
        ));
    }
    causes
}

/// Builds the stored form of an update from the current object and the new one.
///
/// `subresource` is `Some("status")` for status writes, which change only status.
pub fn prepare_update(
    res: &ResourceDef,
    old: &Value,
    mut new: Value,
    subresource: Option<&str>,
) -> Result<Value, ApiError> {
    if subresource == Some("status") {
        let mut merged = old.clone();
        let status = new.get("status").cloned();
        // Ownership computed for the status write (by server-side apply) is kept.
        let managed = new.pointer("/metadata/managedFields").cloned();
        if let Some(map) = merged.as_object_mut() {
            match status {
                Some(s) => map.insert("status".into(), s),
                None => map.remove("status"),
            };
        }
        if let Some(mf) = managed {
            meta_mut(&mut merged).insert("managedFields".into(), mf);
        }
        return Ok(merged);
    }
    let null = Value::Null;
    let old_meta = old.get("metadata").unwrap_or(&null);
    let meta = meta_mut(&mut new);
    for k in [
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "namespace",
        "generation",
    ] {
        match old_meta.get(k) {
            Some(v) => meta.insert(k.into(), v.clone()),
            None => meta.remove(k),
        };
    }
    meta.remove("resourceVersion");
    meta.remove("selfLink");
    // An update that leaves managedFields out keeps the recorded ownership.
    if !meta.contains_key("managedFields")
        && let Some(mf) = old_meta.get("managedFields")
    {
        meta.insert("managedFields".into(), mf.clone());
    }
    if res.has_status()
        && let Some(map) = new.as_object_mut()
    {
        match old.get("status") {
            Some(s) => map.insert("status".into(), s.clone()),
            None => map.remove("status"),
        };
    }
    check_finalizers_while_deleting(res, old, &new)?;
    Ok(new)
}

/// Sets `metadata.generation` of `new`: one more than `old` when what it tracks changed.
pub fn bump_generation(res: &ResourceDef, old: &Value, new: &mut Value) {
    let tracked = |v: &Value| -> Value {
        match res.shape {
            Shape::Data => Value::Null,
            Shape::SpecStatus => v.get("spec").cloned().unwrap_or(Value::Null),
            Shape::Custom => {
                let mut c = v.clone();
                if let Some(map) = c.as_object_mut() {
                    map.remove("metadata");
                    if res.has_status() {
                        map.remove("status");
                    }
                }
                c
            }
        }
    };
    if res.shape == Shape::Data {
        return;
    }
    let generation = old
        .pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .unwrap_or(1);
    let next = if tracked(old) != tracked(new) {
        generation + 1
    } else {
        generation
    };
    meta_mut(new).insert("generation".into(), next.into());
}

fn check_finalizers_while_deleting(
    res: &ResourceDef,
    old: &Value,
    new: &Value,
) -> Result<(), ApiError> {
    if !is_deleting(old) {
        return Ok(());
    }
    let before = finalizers(old);
    let added: Vec<String> = finalizers(new)
        .into_iter()
        .filter(|f| !before.contains(f))
        .collect();
    if added.is_empty() {
        return Ok(());
    }
    let list = added
        .iter()
        .map(|f| format!("{f:?}"))
        .collect::<Vec<_>>()
        .join(", ");
    let msg = format!(
        "Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{{{list}}}"
    );
    // kube-apiserver checks this twice (generic and strategy validation): two causes.
    let cause = Cause::new("FieldValueForbidden", msg, "metadata.finalizers");
    Err(ApiError::invalid(
        &res.kind,
        &res.group,
        meta_str(old, "name"),
        vec![cause.clone(), cause],
    ))
}

/// Metadata that follows changes rather than makes them.
const FOLLOWING_META: [&str; 3] = ["resourceVersion", "managedFields", "generation"];

/// Whether an update changed nothing a client could see: the objects are equal but for
/// resourceVersion, managedFields and generation. Compared in place, without copies.
pub fn unchanged(old: &Value, new: &Value) -> bool {
    let empty = Map::new();
    let (old, new) = (fields(old, &empty), fields(new, &empty));
    let (old_meta, new_meta) = (
        fields(old.get("metadata").unwrap_or(&Value::Null), &empty),
        fields(new.get("metadata").unwrap_or(&Value::Null), &empty),
    );
    same_except(old, new, &["metadata"]) && same_except(old_meta, new_meta, &FOLLOWING_META)
}

/// The fields of an object; `empty` for anything else, like `meta_mut` treats it.
fn fields<'a>(v: &'a Value, empty: &'a Map<String, Value>) -> &'a Map<String, Value> {
    v.as_object().unwrap_or(empty)
}

/// Whether two maps hold the same entries, leaving out the keys in `skip`.
fn same_except(a: &Map<String, Value>, b: &Map<String, Value>, skip: &[&str]) -> bool {
    let kept = |m: &Map<String, Value>| m.keys().filter(|k| !skip.contains(&k.as_str())).count();
    kept(a) == kept(b)
        && a.iter()
            .filter(|(k, _)| !skip.contains(&k.as_str()))
            .all(|(k, v)| b.get(k) == Some(v))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::builtin_resources;

    fn res(kind: &str) -> ResourceDef {
        builtin_resources()
            .into_iter()
            .find(|r| r.kind == kind)
            .unwrap()
    }

    #[test]
    fn unchanged_ignores_only_what_follows_changes() {
        let old = json!({"metadata": {"name": "a", "resourceVersion": "1", "generation": 1,
            "managedFields": [{"manager": "x"}], "labels": {"k": "v"}}, "data": {"a": "1"}});
        let same = json!({"data": {"a": "1"}, "metadata": {"labels": {"k": "v"}, "name": "a",
            "resourceVersion": "2", "generation": 2}});
        assert!(unchanged(&old, &same));
        let relabelled =
            json!({"metadata": {"name": "a", "labels": {"k": "w"}}, "data": {"a": "1"}});
        assert!(!unchanged(&old, &relabelled));
        let more = json!({"metadata": {"name": "a", "labels": {"k": "v"}}, "data": {"a": "1"}, "binaryData": {}});
        assert!(!unchanged(&old, &more));
        assert!(!unchanged(&more, &old));
        let annotated = json!({"metadata": {"name": "a", "labels": {"k": "v"}, "annotations": {}}, "data": {"a": "1"}});
        assert!(!unchanged(&old, &annotated));
        assert!(unchanged(
            &json!({}),
            &json!({"metadata": {"resourceVersion": "3"}})
        ));
    }

    #[test]
    fn generation_follows_spec_only() {
        let d = res("Deployment");
        let old = json!({"metadata": {"generation": 3}, "spec": {"replicas": 1}});
        let mut same = json!({"metadata": {"labels": {"a": "b"}}, "spec": {"replicas": 1}});
        bump_generation(&d, &old, &mut same);
        assert_eq!(same["metadata"]["generation"], 3);
        let mut changed = json!({"metadata": {}, "spec": {"replicas": 2}});
        bump_generation(&d, &old, &mut changed);
        assert_eq!(changed["metadata"]["generation"], 4);
    }

    #[test]
    fn main_resource_update_keeps_status() {
        let d = res("Deployment");
        let old = json!({"metadata": {"uid": "u"}, "spec": {}, "status": {"replicas": 1}});
        let new = prepare_update(
            &d,
            &old,
            json!({"metadata": {"uid": "x"}, "spec": {}, "status": {"replicas": 9}}),
            None,
        )
        .unwrap();
        assert_eq!(new["status"]["replicas"], 1);
        assert_eq!(new["metadata"]["uid"], "u");
    }

    #[test]
    fn no_new_finalizers_while_deleting() {
        let cm = res("ConfigMap");
        let old = json!({"metadata": {"name": "f1", "deletionTimestamp": "2024-01-01T00:00:00Z", "finalizers": ["example.com/a"]}});
        let new = json!({"metadata": {"name": "f1", "finalizers": ["example.com/a", "example.com/second"]}});
        let err = prepare_update(&cm, &old, new, None).unwrap_err();
        assert_eq!(err.code, 422);
        assert!(
            err.message
                .contains("found new finalizers []string{\"example.com/second\"}")
        );
    }
}
