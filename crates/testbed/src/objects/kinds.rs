//! Defaulting and validation rules of individual built-in kinds.

use super::{meta_mut, meta_str, names};
use crate::resources::ResourceDef;
use crate::status::{ApiError, Cause};
use base64::Engine as _;
use serde_json::{Map, Value, json};

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

/// Applies a kind's defaults to a new or updated object; decoding errors are 400s.
pub fn default(res: &ResourceDef, obj: &mut Value) -> Result<(), ApiError> {
    if let Some(schema) = res.crd.as_ref().and_then(|c| c.schema(&res.version)) {
        super::schema::prune(obj, schema);
        super::schema::apply_defaults(obj, schema);
        return Ok(());
    }
    if let Some((field, what)) = type_error(res, obj) {
        return Err(ApiError::bad_request(format!(
            "{kind} in version \"{v}\" cannot be handled as a {kind}: {field}: {what}",
            kind = res.kind,
            v = res.version
        )));
    }
    match (res.group.as_str(), res.kind.as_str()) {
        ("", "Namespace") => default_namespace_label(obj),
        ("coordination.k8s.io", "Lease") => check_lease_times(obj)?,
        ("apps" | "batch", kind) => super::workloads::default(kind, obj),
        ("", "Secret") => default_secret(obj)?,
        ("apiextensions.k8s.io", "CustomResourceDefinition") => default_crd(obj),
        _ => {}
    }
    Ok(())
}

/// Checks a kind's rules; `old` is the stored object for updates.
pub fn validate(res: &ResourceDef, obj: &Value, old: Option<&Value>) -> Result<(), ApiError> {
    let causes = match (res.group.as_str(), res.kind.as_str()) {
        _ if res.crd.is_some() => res
            .crd
            .as_ref()
            .and_then(|c| c.schema(&res.version))
            .map(|schema| super::schema::validate(obj, schema))
            .unwrap_or_default(),
        ("", "ConfigMap") => validate_config_map(obj, old),
        ("", "Event") => validate_core_event(obj),
        ("events.k8s.io", "Event") => validate_events_event(obj),
        ("coordination.k8s.io", "Lease") => validate_lease(obj),
        ("apps" | "batch", kind) => super::workloads::validate(kind, obj),
        ("rbac.authorization.k8s.io", "RoleBinding") => {
            validate_role_ref(obj, &["Role", "ClusterRole"])
        }
        ("rbac.authorization.k8s.io", "ClusterRoleBinding") => {
            validate_role_ref(obj, &["ClusterRole"])
        }
        ("", "Secret") => validate_secret(obj, old),
        ("apiextensions.k8s.io", "CustomResourceDefinition") => super::crd_schema::validate(obj),
        _ => Vec::new(),
    };
    if causes.is_empty() {
        Ok(())
    } else if res.kind == "Event" {
        // Event validation errors name the kind without its group in either API.
        Err(ApiError::invalid(
            "Event",
            "",
            meta_str(obj, "name"),
            causes,
        ))
    } else {
        Err(ApiError::invalid(
            &res.kind,
            &res.group,
            meta_str(obj, "name"),
            causes,
        ))
    }
}

/// Fields that must be maps of strings, by kind.
fn string_maps(res: &ResourceDef) -> &'static [&'static str] {
    match (res.group.as_str(), res.kind.as_str()) {
        ("", "ConfigMap") => &["data", "binaryData"],
        ("", "Secret") => &["data", "stringData"],
        _ => &[],
    }
}

/// The first field whose JSON type cannot decode into the kind's Go type.
pub fn type_error(res: &ResourceDef, obj: &Value) -> Option<(String, String)> {
    let is_string_map = |v: &Value| {
        v.is_null()
            || v.as_object()
                .is_some_and(|m| m.values().all(Value::is_string))
    };
    for f in ["labels", "annotations"] {
        if let Some(v) = obj.get("metadata").and_then(|m| m.get(f))
            && !is_string_map(v)
        {
            return Some((format!("metadata.{f}"), "expected a map of strings".into()));
        }
    }
    string_maps(res)
        .iter()
        .find(|f| obj.get(**f).is_some_and(|v| !is_string_map(v)))
        .map(|f| (f.to_string(), "expected a map of strings".into()))
}

fn default_event(obj: &mut Value) {
    let Some(map) = obj.as_object_mut() else {
        return;
    };
    map.entry("source").or_insert_with(|| json!({}));
    for k in ["eventTime", "firstTimestamp", "lastTimestamp"] {
        map.entry(k).or_insert(Value::Null);
    }
    for k in ["reportingComponent", "reportingInstance"] {
        map.entry(k).or_insert_with(|| "".into());
    }
}

fn validate_core_event(obj: &Value) -> Vec<Cause> {
    let ns = meta_str(obj, "namespace");
    let involved = obj
        .pointer("/involvedObject/namespace")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !involved.is_empty() && involved != ns {
        return vec![Cause::new(
            "FieldValueInvalid",
            format!("Invalid value: \"{involved}\": does not match event.namespace"),
            "involvedObject.namespace",
        )];
    }
    Vec::new()
}

fn validate_events_event(obj: &Value) -> Vec<Cause> {
    let mut causes = validate_core_event(obj);
    if obj.get("eventTime").is_none_or(Value::is_null) {
        causes.push(Cause::new(
            "FieldValueRequired",
            "Required value",
            "eventTime",
        ));
    }
    causes
}

/// MicroTime fields must carry exactly six fraction digits, or decoding fails (400).
fn check_lease_times(obj: &Value) -> Result<(), ApiError> {
    for f in ["acquireTime", "renewTime"] {
        let Some(t) = obj.pointer(&format!("/spec/{f}")).and_then(Value::as_str) else {
            continue;
        };
        let six_digits =
            t.len() == 27 && t.as_bytes()[19] == b'.' && crate::clock::parse_time(t).is_some();
        if !six_digits {
            return Err(ApiError::bad_request(format!(
                "Lease in version \"v1\" cannot be handled as a Lease: parsing time \"{t}\" as \"2006-01-02T15:04:05.000000Z07:00\": cannot parse \"{t}\" as a MicroTime"
            )));
        }
    }
    Ok(())
}

fn validate_lease(obj: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    for f in ["leaseDurationSeconds", "leaseTransitions"] {
        let Some(n) = obj.pointer(&format!("/spec/{f}")).and_then(Value::as_i64) else {
            continue;
        };
        let bad = if f == "leaseDurationSeconds" {
            n <= 0
        } else {
            n < 0
        };
        if bad {
            let rule = if f == "leaseDurationSeconds" {
                "must be greater than 0"
            } else {
                "must be greater than or equal to 0"
            };
            causes.push(Cause::new(
                "FieldValueInvalid",
                format!("Invalid value: {n}: {rule}"),
                format!("spec.{f}"),
            ));
        }
    }
    causes
}

fn validate_role_ref(obj: &Value, kinds: &[&str]) -> Vec<Cause> {
    let kind = obj
        .pointer("/roleRef/kind")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if kinds.contains(&kind) {
        return Vec::new();
    }
    let supported = kinds
        .iter()
        .map(|k| format!("\"{k}\""))
        .collect::<Vec<_>>()
        .join(", ");
    vec![Cause::new(
        "FieldValueNotSupported",
        format!("Unsupported value: \"{kind}\": supported values: {supported}"),
        "roleRef.kind",
    )]
}

/// What the server adds after recording field ownership (strategy preparation rather than
/// scheme defaulting), so no manager owns it.
pub fn finish(res: &ResourceDef, obj: &mut Value) {
    match (res.group.as_str(), res.kind.as_str()) {
        ("", "Namespace") => default_namespace(obj),
        (_, "Event") => default_event(obj),
        _ => {}
    }
}

fn default_namespace_label(obj: &mut Value) {
    let name = meta_str(obj, "name").to_string();
    let meta = meta_mut(obj);
    let labels = meta.entry("labels").or_insert_with(|| json!({}));
    if let Some(l) = labels.as_object_mut() {
        l.insert("kubernetes.io/metadata.name".into(), name.into());
    }
}

fn default_namespace(obj: &mut Value) {
    let Some(map) = obj.as_object_mut() else {
        return;
    };
    let spec = map.entry("spec").or_insert_with(|| json!({}));
    if spec.get("finalizers").is_none()
        && let Some(s) = spec.as_object_mut()
    {
        s.insert("finalizers".into(), json!(["kubernetes"]));
    }
    let status = map.entry("status").or_insert_with(|| json!({}));
    if status.get("phase").is_none()
        && let Some(s) = status.as_object_mut()
    {
        s.insert("phase".into(), "Active".into());
    }
}

fn default_crd(obj: &mut Value) {
    let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    spec.entry("conversion")
        .or_insert_with(|| json!({"strategy": "None"}));
    let storage: Vec<Value> = spec
        .get("versions")
        .and_then(Value::as_array)
        .map(|vs| {
            vs.iter()
                .filter(|v| v.get("storage") == Some(&Value::Bool(true)))
                .filter_map(|v| v.get("name").cloned())
                .collect()
        })
        .unwrap_or_default();
    if let Some(names) = spec.get_mut("names").and_then(Value::as_object_mut) {
        let kind = names
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        names
            .entry("singular")
            .or_insert_with(|| kind.to_ascii_lowercase().into());
        names
            .entry("listKind")
            .or_insert_with(|| format!("{kind}List").into());
    }
    let Some(map) = obj.as_object_mut() else {
        return;
    };
    let status = map.entry("status").or_insert_with(|| json!({}));
    // A new storage version joins the stored ones: objects written before keep the old one.
    if let Some(stored) = status
        .as_object_mut()
        .map(|st| st.entry("storedVersions").or_insert_with(|| json!([])))
        .and_then(Value::as_array_mut)
    {
        for version in storage {
            if !stored.contains(&version) {
                stored.push(version);
            }
        }
    }
}

fn default_secret(obj: &mut Value) -> Result<(), ApiError> {
    let Some(map) = obj.as_object_mut() else {
        return Ok(());
    };
    if let Some(data) = map.get("data").and_then(Value::as_object) {
        for v in data.values() {
            let text = v.as_str().unwrap_or_default();
            if let Err(e) = B64.decode(text) {
                let pos = match e {
                    base64::DecodeError::InvalidByte(p, _)
                    | base64::DecodeError::InvalidLastSymbol(p, _) => p,
                    _ => text.len(),
                };
                return Err(ApiError::bad_request(format!(
                    "Secret in version \"v1\" cannot be handled as a Secret: illegal base64 data at input byte {pos}"
                )));
            }
        }
    }
    if let Some(Value::Object(sd)) = map.remove("stringData") {
        let data = map
            .entry("data")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(d) = data.as_object_mut() {
            for (k, v) in sd {
                d.insert(k, B64.encode(v.as_str().unwrap_or_default()).into());
            }
        }
    }
    if map
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .is_empty()
    {
        map.insert("type".into(), "Opaque".into());
    }
    Ok(())
}

fn data_keys(obj: &Value, field: &str) -> Vec<String> {
    obj.get(field)
        .and_then(Value::as_object)
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

fn key_causes(obj: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    for field in ["data", "binaryData"] {
        for k in data_keys(obj, field) {
            if !names::is_config_key(&k) {
                causes.push(Cause::new(
                    "FieldValueInvalid",
                    format!("Invalid value: \"{k}\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"),
                    format!("{field}[{k}]"),
                ));
            }
        }
    }
    causes
}

fn immutable_causes(obj: &Value, old: Option<&Value>) -> Vec<Cause> {
    let Some(old) = old else { return Vec::new() };
    if old.get("immutable").and_then(Value::as_bool) != Some(true) {
        return Vec::new();
    }
    let mut causes = Vec::new();
    if obj.get("immutable").and_then(Value::as_bool) != Some(true) {
        causes.push(Cause::new(
            "FieldValueForbidden",
            "Forbidden: field is immutable when `immutable` is set",
            "immutable",
        ));
    }
    for field in ["data", "binaryData"] {
        if obj.get(field) != old.get(field) {
            causes.push(Cause::new(
                "FieldValueForbidden",
                "Forbidden: field is immutable when `immutable` is set",
                field,
            ));
        }
    }
    causes
}

fn validate_config_map(obj: &Value, old: Option<&Value>) -> Vec<Cause> {
    let mut causes = key_causes(obj);
    causes.extend(immutable_causes(obj, old));
    causes
}

fn validate_secret(obj: &Value, old: Option<&Value>) -> Vec<Cause> {
    let mut causes = Vec::new();
    let ty = obj.get("type").and_then(Value::as_str).unwrap_or("Opaque");
    if let Some(old_ty) = old.and_then(|o| o.get("type")).and_then(Value::as_str)
        && old_ty != ty
    {
        causes.push(Cause::new(
            "FieldValueInvalid",
            format!("Invalid value: \"{ty}\": field is immutable"),
            "type",
        ));
    }
    causes.extend(key_causes(obj));
    let data = obj.get("data").and_then(Value::as_object);
    let has = |k: &str| data.is_some_and(|d| d.contains_key(k));
    let required = |k: &str, causes: &mut Vec<Cause>| {
        if !has(k) {
            causes.push(Cause::new(
                "FieldValueRequired",
                "Required value",
                format!("data[{k}]"),
            ));
        }
    };
    match ty {
        "kubernetes.io/tls" => {
            required("tls.crt", &mut causes);
            required("tls.key", &mut causes);
        }
        "kubernetes.io/dockerconfigjson" => {
            required(".dockerconfigjson", &mut causes);
            let raw = data
                .and_then(|d| d.get(".dockerconfigjson"))
                .and_then(Value::as_str)
                .and_then(|s| B64.decode(s).ok());
            if let Some(raw) = raw
                && let Err(e) = serde_json::from_slice::<Value>(&raw)
            {
                causes.push(Cause::new(
                    "FieldValueInvalid",
                    format!("Invalid value: \"<secret contents redacted>\": {e}"),
                    "data[.dockerconfigjson]",
                ));
            }
        }
        "kubernetes.io/service-account-token"
            if obj
                .pointer("/metadata/annotations/kubernetes.io~1service-account.name")
                .is_none() =>
        {
            causes.push(Cause::new(
                "FieldValueRequired",
                "Required value",
                "metadata.annotations[kubernetes.io/service-account.name]",
            ));
        }
        _ => {}
    }
    causes.extend(immutable_causes(obj, old));
    causes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::builtin_resources;

    fn res(kind: &str) -> ResourceDef {
        builtin_resources()
            .into_iter()
            .find(|r| r.kind == kind && r.group.is_empty())
            .unwrap()
    }

    #[test]
    fn secret_string_data_is_merged_and_type_defaulted() {
        let mut s =
            json!({"metadata": {"name": "s"}, "data": {"a": "MQ=="}, "stringData": {"b": "2"}});
        default(&res("Secret"), &mut s).unwrap();
        assert_eq!(s["data"], json!({"a": "MQ==", "b": "Mg=="}));
        assert_eq!(s["type"], "Opaque");
        assert!(s.get("stringData").is_none());
    }

    #[test]
    fn tls_secret_needs_both_keys() {
        let s = json!({"metadata": {"name": "tls1"}, "type": "kubernetes.io/tls", "data": {"tls.crt": "eA=="}});
        let e = validate(&res("Secret"), &s, None).unwrap_err();
        assert_eq!(
            e.message,
            "Secret \"tls1\" is invalid: data[tls.key]: Required value"
        );
    }

    #[test]
    fn namespace_gets_name_label_finalizer_and_phase() {
        let mut ns = json!({"metadata": {"name": "n1"}});
        default(&res("Namespace"), &mut ns).unwrap();
        finish(&res("Namespace"), &mut ns);
        assert_eq!(
            ns["metadata"]["labels"]["kubernetes.io/metadata.name"],
            "n1"
        );
        assert_eq!(ns["spec"]["finalizers"], json!(["kubernetes"]));
        assert_eq!(ns["status"]["phase"], "Active");
    }
}
