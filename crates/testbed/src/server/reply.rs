//! Responses: JSON documents, plain text, Status errors and watch streams.

use crate::status::ApiError;
use bytes::Bytes;
use futures::stream::{Stream, StreamExt};
use http::{HeaderValue, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, StreamBody, combinators::BoxBody};
use hyper::body::Frame;
use serde_json::Value;
use std::convert::Infallible;
use std::pin::Pin;

/// The response body type of the server.
pub type Body = BoxBody<Bytes, Infallible>;

/// A handler's answer before it becomes an HTTP response.
#[derive(Debug)]
pub enum Reply {
    /// A JSON document with a status code and `Warning` headers.
    Json {
        /// HTTP status.
        status: u16,
        /// The serialized document.
        body: Bytes,
        /// `Warning: 299 - "..."` texts.
        warnings: Vec<String>,
    },
    /// Plain text.
    Text(u16, &'static str),
    /// A JSON document of a negotiated media type (aggregated discovery), which varies with
    /// `Accept`.
    Document {
        /// HTTP status.
        status: u16,
        /// `Content-Type`.
        content_type: &'static str,
        /// The serialized document.
        body: Bytes,
    },
    /// A Status error.
    Error(ApiError),
    /// A stream of newline-separated JSON watch events.
    Stream(EventStream),
}

impl Reply {
    /// A JSON value with a status code.
    pub fn json(status: u16, value: &Value) -> Self {
        Self::Json {
            status,
            body: Bytes::from(serde_json::to_vec(value).unwrap_or_default()),
            warnings: Vec::new(),
        }
    }

    /// A complete `metav1.Status` body; the HTTP status is its `code`.
    pub fn status_value(status: &Value) -> Self {
        let code = status.get("code").and_then(Value::as_u64).unwrap_or(500) as u16;
        Self::json(code, status)
    }

    /// A JSON value served as `content_type`.
    pub fn document(status: u16, content_type: &'static str, value: &Value) -> Self {
        Self::Document {
            status,
            content_type,
            body: Bytes::from(serde_json::to_vec(value).unwrap_or_default()),
        }
    }

    /// Already serialized JSON.
    pub fn raw(status: u16, body: Bytes) -> Self {
        Self::Json {
            status,
            body,
            warnings: Vec::new(),
        }
    }

    /// Adds warnings to a JSON reply.
    pub fn with_warnings(self, extra: Vec<String>) -> Self {
        match self {
            Self::Json {
                status,
                body,
                mut warnings,
            } => {
                warnings.extend(extra);
                Self::Json {
                    status,
                    body,
                    warnings,
                }
            }
            other => other,
        }
    }

    /// The HTTP status this reply will have.
    pub fn status(&self) -> u16 {
        match self {
            Self::Json { status, .. } | Self::Text(status, _) | Self::Document { status, .. } => {
                *status
            }
            Self::Error(e) => e.code,
            Self::Stream(_) => 200,
        }
    }

    /// Converts into an HTTP response.
    pub fn into_response(self) -> Response<Body> {
        match self {
            Self::Json {
                status,
                body,
                warnings,
            } => {
                let mut r = response(status, "application/json", full(body));
                for w in warnings {
                    let escaped = w.replace('\\', "\\\\").replace('"', "\\\"");
                    if let Ok(v) = HeaderValue::from_str(&format!("299 - \"{escaped}\"")) {
                        r.headers_mut().append(header::WARNING, v);
                    }
                }
                r
            }
            Self::Document {
                status,
                content_type,
                body,
            } => {
                let mut r = response(status, content_type, full(body));
                r.headers_mut()
                    .insert(header::VARY, HeaderValue::from_static("Accept"));
                r
            }
            Self::Text(status, text) => response(
                status,
                "text/plain; charset=utf-8",
                full(Bytes::from_static(text.as_bytes())),
            ),
            Self::Error(e) => {
                let body = Bytes::from(serde_json::to_vec(&e.to_status()).unwrap_or_default());
                let mut r = response(e.code, "application/json", full(body));
                if let Some(secs) = e.retry_after {
                    r.headers_mut()
                        .insert(header::RETRY_AFTER, HeaderValue::from(secs));
                }
                r
            }
            Self::Stream(events) => {
                let stream = events
                    .0
                    .map(|chunk| Ok::<_, Infallible>(Frame::data(chunk)));
                let mut r = response(
                    200,
                    "application/json",
                    BodyExt::boxed(StreamBody::new(stream)),
                );
                r.headers_mut().insert(
                    header::CACHE_CONTROL,
                    HeaderValue::from_static("no-cache, private"),
                );
                r
            }
        }
    }
}

/// The body of a watch: pieces of newline-separated events, ending when the watch ends.
pub struct EventStream(Pin<Box<dyn Stream<Item = Bytes> + Send + Sync>>);

impl EventStream {
    /// A body made of `pieces`.
    pub fn new(pieces: impl Stream<Item = Bytes> + Send + Sync + 'static) -> Self {
        Self(Box::pin(pieces))
    }
}

impl std::fmt::Debug for EventStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EventStream")
    }
}

impl From<ApiError> for Reply {
    fn from(e: ApiError) -> Self {
        Self::Error(e)
    }
}

fn full(bytes: Bytes) -> Body {
    BodyExt::boxed(Full::new(bytes))
}

fn response(status: u16, content_type: &'static str, body: Body) -> Response<Body> {
    let mut r = Response::new(body);
    *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    r
}
