//! `metav1.Status` error bodies, shaped exactly like kube-apiserver's.

use serde_json::{Map, Value, json};

/// One entry of `details.causes`.
#[derive(Debug, Clone, PartialEq)]
pub struct Cause {
    /// Machine-readable reason, e.g. `FieldValueInvalid`.
    pub reason: String,
    /// Human-readable message.
    pub message: String,
    /// The field path, e.g. `metadata.name`.
    pub field: String,
}

impl Cause {
    /// A cause with all three parts.
    pub fn new(reason: &str, message: impl Into<String>, field: impl Into<String>) -> Self {
        Self {
            reason: reason.into(),
            message: message.into(),
            field: field.into(),
        }
    }
}

/// An API error: everything a `metav1.Status` failure body carries.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    /// HTTP status code.
    pub code: u16,
    /// `reason` (`NotFound`, `Conflict`, ...); empty for plain internal errors.
    pub reason: &'static str,
    /// `message`.
    pub message: String,
    /// `details`; `None` omits the key, `Some(empty)` writes `{}`.
    pub details: Option<Box<Map<String, Value>>>,
    /// `Retry-After` header, in seconds.
    pub retry_after: Option<u64>,
}

/// What `details` names: the object's name, its API group and its kind (or resource).
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    /// The object name (empty: omitted).
    pub name: &'a str,
    /// The API group (empty: omitted).
    pub group: &'a str,
    /// Kind or plural resource, as kube-apiserver writes for that error.
    pub kind: &'a str,
}

fn details_of(t: Target<'_>) -> Map<String, Value> {
    let mut d = Map::new();
    if !t.name.is_empty() {
        d.insert("name".into(), t.name.into());
    }
    if !t.group.is_empty() {
        d.insert("group".into(), t.group.into());
    }
    if !t.kind.is_empty() {
        d.insert("kind".into(), t.kind.into());
    }
    d
}

fn boxed_details(t: Target<'_>) -> Box<Map<String, Value>> {
    Box::new(details_of(t))
}

fn qualified(resource: &str, group: &str) -> String {
    if group.is_empty() {
        resource.to_string()
    } else {
        format!("{resource}.{group}")
    }
}

impl ApiError {
    /// An error with empty `details`.
    pub fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            reason,
            message: message.into(),
            details: Some(Box::default()),
            retry_after: None,
        }
    }

    /// 404 for a named object of a resource.
    pub fn not_found(resource: &str, group: &str, name: &str) -> Self {
        Self::about_object(404, "NotFound", resource, group, name, "not found")
    }

    /// 404 for a path that names no resource.
    pub fn no_resource() -> Self {
        Self::new(
            404,
            "NotFound",
            "the server could not find the requested resource",
        )
    }

    /// 409 AlreadyExists on create.
    pub fn already_exists(resource: &str, group: &str, name: &str) -> Self {
        Self::about_object(
            409,
            "AlreadyExists",
            resource,
            group,
            name,
            "already exists",
        )
    }

    /// An error about a named object of a resource: `<resource>.<group> "<name>" <what>`,
    /// with the object in `details`.
    fn about_object(
        code: u16,
        reason: &'static str,
        resource: &str,
        group: &str,
        name: &str,
        what: &str,
    ) -> Self {
        let t = Target {
            name,
            group,
            kind: resource,
        };
        Self {
            details: Some(boxed_details(t)),
            ..Self::new(
                code,
                reason,
                format!("{} \"{name}\" {what}", qualified(resource, group)),
            )
        }
    }

    /// 409 for a stale resourceVersion.
    pub fn conflict_modified(resource: &str, group: &str, name: &str) -> Self {
        Self::conflict(
            Target {
                name,
                group,
                kind: resource,
            },
            &qualified(resource, group),
            "the object has been modified; please apply your changes to the latest version and try again",
        )
    }

    /// 409 Conflict naming `what` (a qualified resource or a kind) with a reason text.
    pub fn conflict(t: Target<'_>, what: &str, why: &str) -> Self {
        Self {
            details: Some(boxed_details(t)),
            ..Self::new(
                409,
                "Conflict",
                format!(
                    "Operation cannot be fulfilled on {what} \"{}\": {why}",
                    t.name
                ),
            )
        }
    }

    /// 400 BadRequest without details.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self {
            details: None,
            ..Self::new(400, "BadRequest", message)
        }
    }

    /// 422 Invalid for an object, with its causes.
    pub fn invalid(kind: &str, group: &str, name: &str, causes: Vec<Cause>) -> Self {
        // Like Go's field.ErrorList aggregate, identical messages are printed once.
        let mut texts: Vec<String> = Vec::new();
        for t in causes.iter().map(cause_text) {
            if !texts.contains(&t) {
                texts.push(t);
            }
        }
        let summary = if texts.len() == 1 {
            texts.remove(0)
        } else {
            format!("[{}]", texts.join(", "))
        };
        let message = format!(
            "{} \"{name}\" is invalid: {summary}",
            qualified(kind, group)
        );
        let mut d = details_of(Target { name, group, kind });
        d.insert("causes".into(), causes_json(&causes));
        Self {
            details: Some(Box::new(d)),
            ..Self::new(422, "Invalid", message)
        }
    }

    /// 422 for invalid list or watch options (`ListOptions.meta.k8s.io "" is invalid`).
    pub fn invalid_options(kind: &str, causes: Vec<Cause>) -> Self {
        let mut e = Self::invalid(kind, "meta.k8s.io", "", causes);
        if let Some(d) = e.details.as_mut() {
            d.remove("name");
        }
        e
    }

    /// 500 with only a message (kube's plain internal errors carry no reason or details).
    pub fn internal(message: impl Into<String>) -> Self {
        Self {
            details: None,
            ..Self::new(500, "", message)
        }
    }

    /// 500 InternalError, as kube wraps unexpected failures.
    pub fn internal_error(message: impl Into<String>) -> Self {
        let m = message.into();
        let mut d = Map::new();
        d.insert("causes".into(), json!([{"message": m}]));
        Self {
            details: Some(Box::new(d)),
            ..Self::new(
                500,
                "InternalError",
                format!("Internal error occurred: {m}"),
            )
        }
    }

    /// 401 Unauthorized.
    pub fn unauthorized() -> Self {
        Self {
            details: None,
            ..Self::new(401, "Unauthorized", "Unauthorized")
        }
    }

    /// 403 Forbidden with the given target in `details`.
    pub fn forbidden(message: impl Into<String>, t: Target<'_>) -> Self {
        Self {
            details: Some(boxed_details(t)),
            ..Self::new(403, "Forbidden", message)
        }
    }

    /// 405 MethodNotAllowed.
    pub fn method_not_supported(resource: &str, group: &str, verb: &str) -> Self {
        Self {
            details: Some(boxed_details(Target {
                name: "",
                group,
                kind: resource,
            })),
            ..Self::new(
                405,
                "MethodNotAllowed",
                format!(
                    "{verb} is not supported on resources of kind \"{}\"",
                    qualified(resource, group)
                ),
            )
        }
    }

    /// 415 UnsupportedMediaType.
    pub fn unsupported_media_type(accepted: &str) -> Self {
        Self {
            details: None,
            ..Self::new(
                415,
                "UnsupportedMediaType",
                format!(
                    "the body of the request was in an unknown format - accepted media types include: {accepted}"
                ),
            )
        }
    }

    /// 406 NotAcceptable: the response cannot take a form `Accept` lists.
    pub fn not_acceptable(message: impl Into<String>) -> Self {
        Self {
            details: None,
            ..Self::new(406, "NotAcceptable", message)
        }
    }

    /// 410 Expired.
    pub fn expired(message: impl Into<String>) -> Self {
        Self {
            details: None,
            ..Self::new(410, "Expired", message)
        }
    }

    /// 413 RequestEntityTooLarge.
    pub fn too_large(message: impl Into<String>) -> Self {
        Self {
            details: None,
            ..Self::new(413, "RequestEntityTooLarge", message)
        }
    }

    /// 429 TooManyRequests with a Retry-After.
    pub fn too_many_requests(retry_after: u64) -> Self {
        let mut d = Map::new();
        d.insert("retryAfterSeconds".into(), retry_after.into());
        Self {
            details: Some(Box::new(d)),
            retry_after: Some(retry_after),
            ..Self::new(
                429,
                "TooManyRequests",
                "Too many requests, please try again later.",
            )
        }
    }

    /// An error from a complete `metav1.Status` body built elsewhere.
    pub fn from_status(status: &Value) -> Self {
        const REASONS: &[&str] = &[
            "BadRequest",
            "Unauthorized",
            "Forbidden",
            "NotFound",
            "AlreadyExists",
            "Conflict",
            "Gone",
            "Expired",
            "Invalid",
            "Timeout",
            "TooManyRequests",
            "InternalError",
            "MethodNotAllowed",
            "UnsupportedMediaType",
            "RequestEntityTooLarge",
            "NotAcceptable",
            "ServiceUnavailable",
        ];
        let reason = status
            .get("reason")
            .and_then(Value::as_str)
            .unwrap_or_default();
        Self {
            code: status.get("code").and_then(Value::as_u64).unwrap_or(500) as u16,
            reason: REASONS
                .iter()
                .find(|r| **r == reason)
                .copied()
                .unwrap_or(""),
            message: status
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            details: status
                .get("details")
                .and_then(Value::as_object)
                .map(|d| Box::new(d.clone())),
            retry_after: None,
        }
    }

    /// The `metav1.Status` body.
    pub fn to_status(&self) -> Value {
        let mut m = Map::new();
        m.insert("kind".into(), "Status".into());
        m.insert("apiVersion".into(), "v1".into());
        m.insert("metadata".into(), json!({}));
        m.insert("status".into(), "Failure".into());
        m.insert("message".into(), self.message.clone().into());
        if !self.reason.is_empty() {
            m.insert("reason".into(), self.reason.into());
        }
        if let Some(d) = &self.details {
            m.insert("details".into(), Value::Object((**d).clone()));
        }
        m.insert("code".into(), self.code.into());
        Value::Object(m)
    }
}

fn cause_text(c: &Cause) -> String {
    format!("{}: {}", c.field, c.message)
}

fn causes_json(causes: &[Cause]) -> Value {
    Value::Array(
        causes
            .iter()
            .map(|c| json!({"reason": c.reason, "message": c.message, "field": c.field}))
            .collect(),
    )
}

/// The success Status returned by a DELETE that removed the object at once.
pub fn success(name: &str, group: &str, resource: &str, uid: &str) -> Value {
    let mut d = details_of(Target {
        name,
        group,
        kind: resource,
    });
    d.insert("uid".into(), uid.into());
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": d})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_found_matches_kube_apiserver() {
        let body = ApiError::not_found("configmaps", "", "cm1").to_status();
        assert_eq!(
            body,
            json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                   "message": "configmaps \"cm1\" not found", "reason": "NotFound",
                   "details": {"name": "cm1", "kind": "configmaps"}, "code": 404})
        );
    }

    #[test]
    fn invalid_lists_several_causes_in_brackets() {
        let e = ApiError::invalid(
            "Secret",
            "",
            "s1",
            vec![
                Cause::new("FieldValueRequired", "Required value", "data[tls.crt]"),
                Cause::new("FieldValueRequired", "Required value", "data[tls.key]"),
            ],
        );
        assert_eq!(
            e.message,
            "Secret \"s1\" is invalid: [data[tls.crt]: Required value, data[tls.key]: Required value]"
        );
    }

    #[test]
    fn unauthorized_has_no_details() {
        let body = ApiError::unauthorized().to_status();
        assert!(body.get("details").is_none());
        assert_eq!(body["code"], 401);
    }
}
