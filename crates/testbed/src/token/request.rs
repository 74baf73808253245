//! TokenRequest (`serviceaccounts/<name>/token`): defaults, validation and the errors
//! kube-apiserver answers before a token is minted.

use serde_json::{Value, json};

use crate::field_error::{FieldError, invalid_status};

/// The lifetime of a token when the request gives none.
pub const DEFAULT_EXPIRATION_SECONDS: i64 = 3600;
/// The shortest lifetime a TokenRequest may ask for.
pub const MIN_EXPIRATION_SECONDS: i64 = 600;
/// The longest lifetime a TokenRequest may ask for (2^32 s).
pub const MAX_EXPIRATION_SECONDS: i64 = 1 << 32;

/// A reference to the object a token is bound to.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BoundObjectRef {
    /// `Secret`, `Pod` or `Node`.
    pub kind: String,
    /// Usually `v1`.
    pub api_version: String,
    /// The object's name.
    pub name: String,
    /// The expected uid, or "" for "whatever exists now".
    pub uid: String,
}

/// A TokenRequest spec after defaulting and validation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenRequestSpec {
    /// The token's audiences (the API audiences when none were asked for).
    pub audiences: Vec<String>,
    /// The lifetime in seconds.
    pub expiration_seconds: i64,
    /// The object to bind to.
    pub bound_object_ref: Option<BoundObjectRef>,
}

impl TokenRequestSpec {
    /// The defaulted `spec` to echo in the response (`boundObjectRef: null` when unbound).
    pub fn to_json(&self) -> Value {
        let bound = self.bound_object_ref.as_ref().map_or(Value::Null, |b| {
            let mut v = json!({"kind": b.kind, "apiVersion": b.api_version, "name": b.name});
            if !b.uid.is_empty() {
                v["uid"] = b.uid.clone().into();
            }
            v
        });
        json!({
            "audiences": self.audiences,
            "expirationSeconds": self.expiration_seconds,
            "boundObjectRef": bound,
        })
    }
}

/// Defaults and validates a TokenRequest body. Errors are complete Status bodies: 422 for a
/// bad lifetime, 400 for a bound object of a kind tokens cannot be bound to.
pub fn parse(body: &Value, api_audiences: &[String]) -> Result<TokenRequestSpec, Value> {
    let spec = body.get("spec").cloned().unwrap_or_else(|| json!({}));
    let expiration_seconds = spec
        .get("expirationSeconds")
        .and_then(Value::as_i64)
        .unwrap_or(DEFAULT_EXPIRATION_SECONDS);
    let mut errors = Vec::new();
    if expiration_seconds < MIN_EXPIRATION_SECONDS {
        errors.push(FieldError::invalid_raw(
            "spec.expirationSeconds",
            &expiration_seconds.to_string(),
            "may not specify a duration less than 10 minutes",
        ));
    }
    if expiration_seconds > MAX_EXPIRATION_SECONDS {
        errors.push(FieldError::invalid_raw(
            "spec.expirationSeconds",
            &expiration_seconds.to_string(),
            "may not specify a duration larger than 2^32 seconds",
        ));
    }
    if !errors.is_empty() {
        return Err(invalid_status(
            "authentication.k8s.io",
            "TokenRequest",
            "",
            &errors,
        ));
    }
    let mut audiences: Vec<String> = spec
        .get("audiences")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    if audiences.is_empty() {
        audiences = api_audiences.to_vec();
    }
    let bound_object_ref = match spec.get("boundObjectRef") {
        Some(r) if r.is_object() => Some(bound_ref(r)?),
        _ => None,
    };
    Ok(TokenRequestSpec {
        audiences,
        expiration_seconds,
        bound_object_ref,
    })
}

fn bound_ref(r: &Value) -> Result<BoundObjectRef, Value> {
    let s = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let reference = BoundObjectRef {
        kind: s("kind"),
        api_version: s("apiVersion"),
        name: s("name"),
        uid: s("uid"),
    };
    let (group, version) = match reference.api_version.split_once('/') {
        Some((g, v)) => (g, v),
        None => ("", reference.api_version.as_str()),
    };
    if group.is_empty() && matches!(reference.kind.as_str(), "Secret" | "Pod" | "Node") {
        return Ok(reference);
    }
    Err(json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": format!("cannot bind token to object of type {group}/{version}, Kind={}", reference.kind),
        "reason": "BadRequest",
        "code": 400
    }))
}

/// The 409 answer when the bound object's uid is not the one the request names.
pub fn bound_uid_conflict(reference: &BoundObjectRef) -> Value {
    json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": format!(
            "Operation cannot be fulfilled on {} \"{}\": the UID in the bound object reference ({}) does not match the UID in record. The object might have been deleted and then recreated",
            reference.kind, reference.name, reference.uid
        ),
        "reason": "Conflict",
        "details": {"name": reference.name, "kind": reference.kind},
        "code": 409
    })
}
