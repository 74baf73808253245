//! Field validation errors worded like apimachinery's `field.Error`, and the 422 Invalid
//! Status that carries them.

use serde_json::{Value, json};

/// The kind of a field error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorType {
    /// "Invalid value".
    Invalid,
    /// "Required value".
    Required,
    /// "Forbidden".
    Forbidden,
}

impl ErrorType {
    fn text(self) -> &'static str {
        match self {
            Self::Invalid => "Invalid value",
            Self::Required => "Required value",
            Self::Forbidden => "Forbidden",
        }
    }

    fn cause_reason(self) -> &'static str {
        match self {
            Self::Invalid => "FieldValueInvalid",
            Self::Required => "FieldValueRequired",
            Self::Forbidden => "FieldValueForbidden",
        }
    }
}

/// One problem with one field of a request body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// The field path, e.g. `spec.expirationSeconds`.
    pub field: String,
    /// The kind of problem.
    pub kind: ErrorType,
    /// The offending value as Go prints it (strings quoted), or `None` when not shown.
    pub value: Option<String>,
    /// The explanation after the value.
    pub detail: String,
}

impl FieldError {
    /// An invalid string value (printed quoted).
    pub fn invalid_str(field: &str, value: &str, detail: &str) -> Self {
        Self::invalid_raw(field, &quote(value), detail)
    }

    /// An invalid value printed as given (numbers, `"null"` for a missing object, ...).
    pub fn invalid_raw(field: &str, shown: &str, detail: &str) -> Self {
        Self {
            field: field.to_string(),
            kind: ErrorType::Invalid,
            value: Some(shown.to_string()),
            detail: detail.to_string(),
        }
    }

    /// A missing required value.
    pub fn required(field: &str, detail: &str) -> Self {
        Self {
            field: field.to_string(),
            kind: ErrorType::Required,
            value: None,
            detail: detail.to_string(),
        }
    }

    /// A value that may not be given here.
    pub fn forbidden(field: &str, detail: &str) -> Self {
        Self {
            field: field.to_string(),
            kind: ErrorType::Forbidden,
            value: None,
            detail: detail.to_string(),
        }
    }

    /// The entry of a Status's `details.causes` for this error.
    pub fn to_cause(&self) -> crate::status::Cause {
        crate::status::Cause::new(self.kind.cause_reason(), self.body(), self.field.clone())
    }

    /// The message without the field: `Invalid value: "x": detail`.
    pub fn body(&self) -> String {
        let mut s = self.kind.text().to_string();
        if let Some(v) = &self.value {
            s.push_str(&format!(": {v}"));
        }
        if !self.detail.is_empty() {
            s.push_str(&format!(": {}", self.detail));
        }
        s
    }
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.body())
    }
}

fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// The 422 Status `NewInvalid(group/kind, name, errors)` builds.
pub fn invalid_status(group: &str, kind: &str, name: &str, errors: &[FieldError]) -> Value {
    let qualified = if group.is_empty() {
        kind.to_string()
    } else {
        format!("{kind}.{group}")
    };
    let aggregate = match errors {
        [] => String::new(),
        [one] => format!(": {one}"),
        many => format!(
            ": [{}]",
            many.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let causes: Vec<Value> = errors
        .iter()
        .map(|e| json!({"reason": e.kind.cause_reason(), "message": e.body(), "field": e.field}))
        .collect();
    let mut details = serde_json::Map::new();
    if !name.is_empty() {
        details.insert("name".into(), name.into());
    }
    if !group.is_empty() {
        details.insert("group".into(), group.into());
    }
    if !kind.is_empty() {
        details.insert("kind".into(), kind.into());
    }
    if !causes.is_empty() {
        details.insert("causes".into(), causes.into());
    }
    json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": format!("{qualified} {} is invalid{aggregate}", quote(name)),
        "reason": "Invalid",
        "details": details,
        "code": 422
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn several_errors_are_bracketed() {
        let errs = [
            FieldError::required("fieldManager", "is required for apply patch"),
            FieldError::forbidden("force", "may not be specified for non-apply patch"),
        ];
        let status = invalid_status("meta.k8s.io", "PatchOptions", "", &errs);
        assert_eq!(
            status["message"],
            "PatchOptions.meta.k8s.io \"\" is invalid: [fieldManager: Required value: is required for apply patch, force: Forbidden: may not be specified for non-apply patch]"
        );
        assert_eq!(
            status["details"]["causes"][1]["reason"],
            "FieldValueForbidden"
        );
        assert!(status["details"].get("name").is_none());
    }

    #[test]
    fn raw_values_are_not_quoted() {
        let e = FieldError::invalid_raw(
            "spec.expirationSeconds",
            "599",
            "may not specify a duration less than 10 minutes",
        );
        assert_eq!(
            e.to_string(),
            "spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes"
        );
    }
}
