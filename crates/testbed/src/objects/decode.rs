//! Decoding request bodies into objects, with kube's errors and unknown-field handling.

use crate::resources::ResourceDef;
use crate::server::Request;
use crate::status::{ApiError, Cause};
use serde_json::Value;

/// The fields of `metadata` (Go's `ObjectMeta`) in declaration order, the order Go serializes
/// them in: what a client may send, and what a metadata-only answer holds.
pub const OBJECT_META: &[&str] = &[
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];

/// Top-level fields of the built-in kinds, for unknown-field detection.
fn known_top_level(kind: &str) -> Option<&'static [&'static str]> {
    Some(match kind {
        "ConfigMap" => &["data", "binaryData", "immutable"],
        "Secret" => &["data", "stringData", "type", "immutable"],
        "Namespace"
        | "Service"
        | "Pod"
        | "Deployment"
        | "StatefulSet"
        | "DaemonSet"
        | "ReplicaSet"
        | "Job"
        | "CustomResourceDefinition"
        | "Lease" => &["spec", "status"],
        "ServiceAccount" => &[
            "secrets",
            "imagePullSecrets",
            "automountServiceAccountToken",
        ],
        "Role" | "ClusterRole" => &["rules", "aggregationRule"],
        "RoleBinding" | "ClusterRoleBinding" => &["subjects", "roleRef"],
        _ => return None,
    })
}

/// How unknown fields are treated (`fieldValidation`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldValidation {
    /// Drop silently.
    Ignore,
    /// Drop with a `Warning` header per field (the default).
    Warn,
    /// Refuse with 400.
    Strict,
}

impl FieldValidation {
    /// From the query parameter.
    pub fn from_request(req: &Request) -> Result<Self, ApiError> {
        match req.param("fieldValidation").unwrap_or("") {
            "" | "Warn" => Ok(Self::Warn),
            "Ignore" => Ok(Self::Ignore),
            "Strict" => Ok(Self::Strict),
            other => Err(ApiError::bad_request(format!(
                "fieldValidation must be one of \"Ignore\", \"Warn\", or \"Strict\", got {other:?}"
            ))),
        }
    }
}

/// Parses a request body as JSON, or YAML when the content type says so.
pub fn parse_body(req: &Request) -> Result<Value, String> {
    let ct = req.header("content-type").unwrap_or("application/json");
    if ct.starts_with(super::protobuf::MEDIA_TYPE) {
        super::protobuf::decode(&req.body).map_err(|e| e.to_string())
    } else if ct.contains("yaml") {
        serde_yaml_ng::from_slice::<Value>(&req.body).map_err(|e| e.to_string())
    } else {
        serde_json::from_slice::<Value>(&req.body).map_err(|e| e.to_string())
    }
}

/// The body of a POST that is answered rather than stored (a review, a TokenRequest, an
/// AdminKubeconfigRequest): an empty body reads as `{}`, one that does not parse is
/// kube-apiserver's error for a body that is no `kind`.
pub fn parse_request_body(req: &Request, kind: &str) -> Result<Value, ApiError> {
    if req.body.is_empty() {
        return Ok(Value::Object(serde_json::Map::new()));
    }
    parse_body(req).map_err(|e| unrecognized(kind, e))
}

/// kube-apiserver's 400 for a body that does not decode as an object of `kind`.
fn unrecognized(kind: &str, cause: impl std::fmt::Display) -> ApiError {
    ApiError::bad_request(format!(
        "the object provided is unrecognized (must be of type {kind}): couldn't get version/kind; json parse error: {cause}"
    ))
}

/// Whether a content type can carry an object for create or update.
pub fn check_object_content_type(req: &Request) -> Result<(), ApiError> {
    let ct = req.header("content-type").unwrap_or("application/json");
    let base = ct.split(';').next().unwrap_or_default().trim();
    match base {
        "application/json" | "application/yaml" | "" => Ok(()),
        super::protobuf::MEDIA_TYPE => match super::protobuf::decode(&req.body) {
            Err(super::protobuf::ProtoError::Unsupported(_)) => Err(
                ApiError::unsupported_media_type("application/json, application/yaml"),
            ),
            _ => Ok(()),
        },
        other => Err(ApiError::unsupported_media_type(&format!(
            "application/json, application/yaml, application/vnd.kubernetes.protobuf (got {other})"
        ))),
    }
}

/// The decoded object of a create or update, with unknown-field warnings.
pub struct Decoded {
    /// The object.
    pub object: Value,
    /// `Warning` texts.
    pub warnings: Vec<String>,
}

/// Decodes an object of kind `kind` (the resource's, or a subresource's) from the body.
pub fn decode_object(
    req: &Request,
    res: &ResourceDef,
    kind: &str,
    api_version: &str,
) -> Result<Decoded, ApiError> {
    check_object_content_type(req)?;
    let mut obj = parse_body(req).map_err(|e| unrecognized(kind, e))?;
    let Some(map) = obj.as_object_mut() else {
        return Err(unrecognized(kind, "expected an object"));
    };
    let body_kind = map
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let body_version = map
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if !body_kind.is_empty() && body_kind != kind && res.crd.is_some() {
        let name = map
            .get("metadata")
            .and_then(|m| m.get("name"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        return Err(ApiError::invalid(
            &body_kind,
            &res.group,
            name,
            vec![Cause::new(
                "FieldValueInvalid",
                format!("Invalid value: \"{body_kind}\": must be {kind}"),
                "kind",
            )],
        ));
    }
    if !body_kind.is_empty() && body_kind != kind {
        return Err(ApiError::bad_request(format!(
            "{body_kind} in version \"{}\" cannot be handled as a {kind}: no kind \"{body_kind}\" is registered for version \"{body_version}\"",
            body_version.rsplit('/').next().unwrap_or_default()
        )));
    }
    if !body_version.is_empty() && !versions_compatible(&body_version, api_version, res) {
        return Err(ApiError::bad_request(format!(
            "the API version in the data ({body_version}) does not match the expected API version ({api_version})"
        )));
    }
    map.insert("kind".into(), kind.into());
    map.insert("apiVersion".into(), api_version.into());
    let validation = FieldValidation::from_request(req)?;
    let schema = res.crd.as_ref().and_then(|c| c.schema(&res.version));
    let unknown = match schema {
        Some(schema) => super::schema::prune(&mut obj, schema),
        None => {
            let unknown = unknown_fields(&obj, kind);
            strip(&mut obj, &unknown);
            unknown
        }
    };
    let warnings = match validation {
        FieldValidation::Ignore => Vec::new(),
        FieldValidation::Warn => unknown
            .iter()
            .map(|f| format!("unknown field \"{f}\""))
            .collect(),
        FieldValidation::Strict if unknown.is_empty() => Vec::new(),
        FieldValidation::Strict => {
            let list = unknown
                .iter()
                .map(|f| format!("unknown field \"{f}\""))
                .collect::<Vec<_>>()
                .join(", ");
            return Err(ApiError::bad_request(format!(
                "{kind} in version \"{}\" cannot be handled as a {kind}: strict decoding error: {list}",
                res.version
            )));
        }
    };
    Ok(Decoded {
        object: obj,
        warnings,
    })
}

fn versions_compatible(body: &str, expected: &str, res: &ResourceDef) -> bool {
    body == expected
        // Events are served by two groups over one storage; both decode either version.
        || (res.kind == "Event" && (body == "v1" || body == "events.k8s.io/v1"))
        || (res.crd.is_some() && body.rsplit_once('/').map(|(g, _)| g) == Some(res.group.as_str()))
}

fn unknown_fields(obj: &Value, kind: &str) -> Vec<String> {
    let mut out = Vec::new();
    let Some(map) = obj.as_object() else {
        return out;
    };
    if let Some(meta) = map.get("metadata").and_then(Value::as_object) {
        out.extend(
            meta.keys()
                .filter(|k| !OBJECT_META.contains(&k.as_str()))
                .map(|k| format!("metadata.{k}")),
        );
    }
    if let Some(known) = known_top_level(kind) {
        out.extend(
            map.keys()
                .filter(|k| {
                    !matches!(k.as_str(), "apiVersion" | "kind" | "metadata")
                        && !known.contains(&k.as_str())
                })
                .cloned(),
        );
    }
    out
}

fn strip(obj: &mut Value, fields: &[String]) {
    for f in fields {
        match f.strip_prefix("metadata.") {
            Some(k) => {
                if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
                    m.remove(k);
                }
            }
            None => {
                if let Some(m) = obj.as_object_mut() {
                    m.remove(f);
                }
            }
        }
    }
}
