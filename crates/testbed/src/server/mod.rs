//! HTTPS serving: accepting TLS connections on loopback, reading requests, and handing
//! them to a cluster's router.

pub mod path;
pub mod reply;
pub mod tls;

use bytes::Bytes;
use http::{HeaderMap, Method};
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use reply::{Body, Reply};
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio_rustls::TlsAcceptor;

/// Largest accepted request body, like kube-apiserver's 3 MiB limit.
pub const MAX_BODY: usize = 3 * 1024 * 1024;

/// A parsed HTTP request, body read in full.
#[derive(Debug, Clone)]
pub struct Request {
    /// Method.
    pub method: Method,
    /// Path without query.
    pub path: String,
    /// Decoded query parameters, in order.
    pub query: Vec<(String, String)>,
    /// Headers.
    pub headers: HeaderMap,
    /// Body.
    pub body: Bytes,
}

impl Request {
    /// A query parameter.
    pub fn param(&self, key: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// A header as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// Signals that control the connections of one listener.
#[derive(Clone)]
pub struct Control {
    /// Bumped to close every open connection (a "restart").
    pub epoch: watch::Sender<u64>,
    /// Set to stop accepting and close everything.
    pub stop: watch::Sender<bool>,
}

impl Default for Control {
    fn default() -> Self {
        Self {
            epoch: watch::channel(0).0,
            stop: watch::channel(false).0,
        }
    }
}

/// What answers the requests a listener accepts (a cluster's request pipeline).
pub trait Handler: Send + Sync + 'static {
    /// Answers one request.
    fn handle(&self, request: Request) -> impl Future<Output = Reply> + Send;
}

/// Accepts connections until stopped, answering each request with `handler`.
pub async fn serve<H: Handler>(
    listener: TcpListener,
    acceptor: TlsAcceptor,
    handler: Arc<H>,
    control: Control,
) {
    let mut stop = control.stop.subscribe();
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = stop.wait_for(|s| *s) => return,
        };
        let (tcp, peer) = match accepted {
            Ok(x) => x,
            Err(e) => {
                tracing::warn!(error = %e, "accept failed");
                continue;
            }
        };
        let _ = tcp.set_nodelay(true);
        let acceptor = acceptor.clone();
        let handler = handler.clone();
        let mut epoch = control.epoch.subscribe();
        let mut stop = control.stop.subscribe();
        tokio::spawn(async move {
            let tls = match acceptor.accept(tcp).await {
                Ok(s) => s,
                Err(e) => {
                    tracing::debug!(%peer, error = %e, "TLS handshake failed");
                    return;
                }
            };
            let service = hyper::service::service_fn(move |req| {
                let handler = handler.clone();
                async move { Ok::<_, std::convert::Infallible>(handle(&*handler, req).await) }
            });
            let builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
            let conn = builder.serve_connection(TokioIo::new(tls), service);
            epoch.mark_unchanged();
            tokio::select! {
                r = conn => if let Err(e) = r { tracing::debug!(%peer, error = %e, "connection ended with error") },
                _ = epoch.changed() => tracing::debug!(%peer, "connection closed by restart"),
                _ = stop.wait_for(|s| *s) => {}
            }
        });
    }
}

async fn handle<H: Handler>(handler: &H, req: http::Request<Incoming>) -> http::Response<Body> {
    let (parts, body) = req.into_parts();
    let body = match Limited::new(body, MAX_BODY).collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => {
            let reply = if e.is::<http_body_util::LengthLimitError>() {
                Reply::Error(crate::status::ApiError::too_large(
                    "the request body is too large",
                ))
            } else {
                Reply::Error(crate::status::ApiError::bad_request(format!(
                    "reading the request body: {e}"
                )))
            };
            return reply.into_response();
        }
    };
    let query = parts
        .uri
        .query()
        .map(|q| form_urlencoded::parse(q.as_bytes()).into_owned().collect())
        .unwrap_or_default();
    let request = Request {
        method: parts.method,
        path: parts.uri.path().to_string(),
        query,
        headers: parts.headers,
        body,
    };
    handler.handle(request).await.into_response()
}
