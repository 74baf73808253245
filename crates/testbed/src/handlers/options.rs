//! List and watch options: resourceVersion semantics, limits and continue tokens.

use crate::server::Request;
use crate::status::{ApiError, Cause};
use crate::store::ObjKey;
use base64::Engine as _;
use serde_json::{Value, json};

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// Parses a resourceVersion query parameter; kube answers garbage with a 500.
pub fn parse_rv_param(text: &str) -> Result<u64, ApiError> {
    text.parse::<u64>().map_err(|_| {
        ApiError::internal(format!("resourceVersion: Invalid value: \"{text}\": strconv.ParseUint: parsing \"{text}\": invalid syntax"))
    })
}

/// Parses `metadata.resourceVersion` of an update body.
pub fn parse_body_rv(text: &str) -> Result<u64, ApiError> {
    text.parse::<u64>().map_err(|_| {
        ApiError::internal(format!(
            "strconv.ParseUint: parsing \"{text}\": invalid syntax"
        ))
    })
}

/// Which state a list reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadAt {
    /// The newest state (no resourceVersion).
    Latest,
    /// Any state; kube serves its cache and ignores `limit` (resourceVersion=0).
    Any,
    /// A state no older than this revision.
    NotOlderThan(u64),
    /// Exactly this revision.
    Exact(u64),
}

/// Parsed list options.
#[derive(Debug, Clone)]
pub struct ListOptions {
    /// Which state to read.
    pub at: ReadAt,
    /// Page size (0: all).
    pub limit: usize,
    /// Where a continued list resumes.
    pub after: Option<ObjKey>,
}

fn options_error(reason: &str, message: String, field: &str) -> ApiError {
    ApiError::invalid_options("ListOptions", vec![Cause::new(reason, message, field)])
}

impl ListOptions {
    /// Reads `resourceVersion`, `resourceVersionMatch`, `limit` and `continue`.
    pub fn from_request(req: &Request) -> Result<Self, ApiError> {
        let rv = req.param("resourceVersion").filter(|s| !s.is_empty());
        let matching = req.param("resourceVersionMatch").unwrap_or("");
        let limit = req
            .param("limit")
            .and_then(|l| l.parse::<i64>().ok())
            .unwrap_or(0)
            .max(0) as usize;
        if let Some(token) = req.param("continue").filter(|s| !s.is_empty()) {
            if rv.is_some() {
                return Err(options_error(
                    "FieldValueForbidden",
                    "Forbidden: specifying resource version is not allowed when using continue"
                        .into(),
                    "resourceVersion",
                ));
            }
            let (rv, after) = decode_continue(token)?;
            return Ok(Self {
                at: ReadAt::Exact(rv),
                limit,
                after: Some(after),
            });
        }
        let at = match (rv, matching) {
            (None, "") => ReadAt::Latest,
            (None, _) => {
                return Err(options_error(
                    "FieldValueForbidden",
                    "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided".into(),
                    "resourceVersionMatch",
                ));
            }
            (Some(text), m) => {
                if !matches!(m, "" | "Exact" | "NotOlderThan") {
                    return Err(options_error(
                        "FieldValueNotSupported",
                        format!(
                            "Unsupported value: \"{m}\": supported values: \"Exact\", \"NotOlderThan\", \"\""
                        ),
                        "resourceVersionMatch",
                    ));
                }
                let n = parse_rv_param(text)?;
                match (n, m) {
                    (0, "Exact") => {
                        return Err(options_error(
                            "FieldValueForbidden",
                            "Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"".into(),
                            "resourceVersionMatch",
                        ));
                    }
                    (0, _) => ReadAt::Any,
                    (n, "Exact") => ReadAt::Exact(n),
                    (n, _) => ReadAt::NotOlderThan(n),
                }
            }
        };
        // resourceVersion=0 serves from the cache, which ignores limit.
        let limit = if at == ReadAt::Any { 0 } else { limit };
        Ok(Self {
            at,
            limit,
            after: None,
        })
    }
}

/// A continue token for the next page after `last`, read at revision `rv`.
pub fn encode_continue(rv: u64, last: &ObjKey) -> String {
    let start = if last.0.is_empty() {
        format!("{}\u{0}", last.1)
    } else {
        format!("{}/{}\u{0}", last.0, last.1)
    };
    B64.encode(json!({"v": "meta.k8s.io/v1", "rv": rv, "start": start}).to_string())
}

fn decode_continue(token: &str) -> Result<(u64, ObjKey), ApiError> {
    let bad = |why: String| ApiError::bad_request(format!("invalid continue token: {why}"));
    let raw = B64
        .decode(token.trim_end_matches('='))
        .map_err(|e| bad(e.to_string()))?;
    let v: Value = serde_json::from_slice(&raw).map_err(|e| bad(e.to_string()))?;
    if v.get("v").and_then(Value::as_str) != Some("meta.k8s.io/v1") {
        return Err(bad("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)".into()));
    }
    let rv = v
        .get("rv")
        .and_then(Value::as_u64)
        .ok_or_else(|| bad("missing revision".into()))?;
    let start = v
        .get("start")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("missing start".into()))?;
    let start = start.trim_end_matches('\u{0}');
    let key = match start.split_once('/') {
        Some((ns, name)) => (ns.to_string(), name.to_string()),
        None => (String::new(), start.to_string()),
    };
    Ok((rv, key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continue_tokens_round_trip() {
        let key = ("ns".to_string(), "s2".to_string());
        let token = encode_continue(42, &key);
        assert_eq!(decode_continue(&token).unwrap(), (42, key));
        assert!(decode_continue("bm90LWEtdG9rZW4").is_err());
        assert!(decode_continue("!!!").is_err());
    }

    #[test]
    fn garbage_resource_version_is_a_500() {
        let e = parse_rv_param("abc").unwrap_err();
        assert_eq!(e.code, 500);
        assert_eq!(
            e.message,
            "resourceVersion: Invalid value: \"abc\": strconv.ParseUint: parsing \"abc\": invalid syntax"
        );
    }
}
