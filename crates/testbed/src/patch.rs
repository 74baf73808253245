//! The patch formats of a PATCH request, applied to an object held as JSON.
//!
//! Each format is a pure function from (live object, patch body) to the patched object. Errors
//! say which HTTP status and reason kube-apiserver answers them with; validation of the result
//! (names, kinds, immutable fields) stays with the handler.

pub mod apply;
pub mod json_patch;
pub mod merge_patch;
pub mod strategic;

use serde_json::Value;

/// Why a patch could not be applied, classified the way kube-apiserver answers it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatchError {
    /// 400 BadRequest: the patch body is not a document of the expected shape.
    #[error("{0}")]
    BadRequest(String),
    /// 422 Invalid: the patch is well-formed but cannot be applied to this object. The detail is
    /// for logs; kube-apiserver answers with a generic message (see [`PatchError::message`]).
    #[error("{0}")]
    Invalid(String),
    /// 413 RequestEntityTooLarge: too many operations in one JSON patch.
    #[error("{0}")]
    TooLarge(String),
    /// 500 without a reason: strategic merge patch failures kube-apiserver does not classify.
    #[error("{0}")]
    Internal(String),
}

impl PatchError {
    /// The HTTP status code of the Status body.
    pub fn code(&self) -> u16 {
        match self {
            Self::BadRequest(_) => 400,
            Self::Invalid(_) => 422,
            Self::TooLarge(_) => 413,
            Self::Internal(_) => 500,
        }
    }

    /// The `reason` of the Status body; `None` where kube-apiserver leaves it out.
    pub fn reason(&self) -> Option<&'static str> {
        match self {
            Self::BadRequest(_) => Some("BadRequest"),
            Self::Invalid(_) => Some("Invalid"),
            Self::TooLarge(_) => Some("RequestEntityTooLarge"),
            Self::Internal(_) => None,
        }
    }

    /// The `message` of the Status body, exactly as kube-apiserver words it.
    pub fn message(&self) -> String {
        match self {
            Self::Invalid(_) => {
                "the server rejected our request due to an error in our request".to_string()
            }
            Self::BadRequest(m) | Self::TooLarge(m) | Self::Internal(m) => m.clone(),
        }
    }

    #[cfg(test)]
    /// The complete `metav1.Status` body kube-apiserver sends for this error.
    pub fn status(&self) -> Value {
        let mut status = serde_json::json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message(),
        });
        if let Some(reason) = self.reason() {
            status["reason"] = reason.into();
        }
        // Errors built by NewGenericServerResponse carry an empty details object.
        if matches!(self, Self::Invalid(_)) {
            status["details"] = serde_json::json!({});
        }
        status["code"] = self.code().into();
        status
    }
}

/// JSON equality as Go sees decoded JSON: all numbers compare as float64.
pub(crate) fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_equal(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod robustness;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn invalid_patches_answer_with_the_generic_422_body() {
        let err = PatchError::Invalid("remove of a missing key".into());
        assert_eq!(
            err.status(),
            json!({
                "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "the server rejected our request due to an error in our request",
                "reason": "Invalid", "details": {}, "code": 422
            })
        );
    }

    #[test]
    fn internal_errors_carry_no_reason() {
        let body = PatchError::Internal("unknown patch type".into()).status();
        assert_eq!(body["code"], 500);
        assert!(body.get("reason").is_none());
        assert!(body.get("details").is_none());
    }

    #[test]
    fn numbers_compare_by_value() {
        assert!(json_equal(&json!({"a": [1, 2.0]}), &json!({"a": [1.0, 2]})));
        assert!(!json_equal(&json!({"a": 1}), &json!({"a": 1, "b": 2})));
        assert!(!json_equal(&json!("1"), &json!(1)));
    }
}
