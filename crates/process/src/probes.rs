//! The HTTP server for the kubelet's probes and for Prometheus: `/healthz` answers whether the
//! process is alive (a dead one is restarted), `/readyz` whether it should get work, `/metrics`
//! the process's metrics ([`crate::metrics`]). What each probe reports is the binary's to say,
//! through [`Probes`].

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tracing::{debug, info, warn};

/// What a process reports to the probes.
pub trait Probes: Send + Sync {
    /// `Ok` while the process is alive, else why it counts as dead.
    fn live(&self) -> Result<(), String>;
    /// `Ok` while the process should get work, else why not.
    fn ready(&self) -> Result<(), String>;
}

/// The `Content-Type` of the probes' answers.
const TEXT: &str = "text/plain; charset=utf-8";

/// The status, content type and body that answer a request of `path`.
fn answer<P: Probes + ?Sized>(probes: &P, path: &str) -> (StatusCode, &'static str, String) {
    let state = match path {
        "/healthz" => probes.live(),
        "/readyz" => probes.ready(),
        "/metrics" => {
            return (
                StatusCode::OK,
                crate::metrics::CONTENT_TYPE,
                crate::metrics::encode(),
            );
        }
        _ => return (StatusCode::NOT_FOUND, TEXT, "not found\n".to_owned()),
    };
    match state {
        Ok(()) => (StatusCode::OK, TEXT, "ok\n".to_owned()),
        Err(reason) => (StatusCode::SERVICE_UNAVAILABLE, TEXT, format!("{reason}\n")),
    }
}

/// Binds the probe address, naming it when that fails. `:PORT` means every address: IPv6
/// and IPv4 where the host has IPv6 (a single-stack IPv6 pod is probed over IPv6), else IPv4.
pub async fn bind(address: &str) -> anyhow::Result<TcpListener> {
    let bound = match address.strip_prefix(':') {
        Some(port) => match TcpListener::bind(format!("[::]:{port}")).await {
            Err(e) if e.kind() == std::io::ErrorKind::AddrNotAvailable || is_unsupported(&e) => {
                TcpListener::bind(format!("0.0.0.0:{port}")).await
            }
            bound => bound,
        },
        None => TcpListener::bind(address).await,
    };
    bound.map_err(|e| anyhow::anyhow!("health probe address {address}: {e}"))
}

/// Whether the host has no IPv6 at all (`EAFNOSUPPORT`).
fn is_unsupported(error: &std::io::Error) -> bool {
    const EAFNOSUPPORT: i32 = 97;
    error.raw_os_error() == Some(EAFNOSUPPORT)
}

/// Answers probes on `listener` until the task is dropped or aborted.
pub async fn serve<P: Probes + ?Sized + 'static>(listener: TcpListener, probes: Arc<P>) {
    if let Ok(address) = listener.local_addr() {
        info!(%address, "serving /healthz, /readyz and /metrics");
    }
    loop {
        match listener.accept().await {
            Ok((stream, peer)) => {
                tokio::spawn(answer_connection(stream, peer, probes.clone()));
            }
            Err(error) => {
                warn!(%error, "health probe connection not accepted");
                // Out of file descriptors, say: do not spin.
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

async fn answer_connection<P: Probes + ?Sized + 'static>(
    stream: tokio::net::TcpStream,
    peer: SocketAddr,
    probes: Arc<P>,
) {
    let service = hyper::service::service_fn(move |request: Request<hyper::body::Incoming>| {
        let (status, content_type, body) = answer(probes.as_ref(), request.uri().path());
        let response = Response::builder()
            .status(status)
            .header("content-type", content_type)
            .body(Full::new(Bytes::from(body)))
            .unwrap_or_default();
        async move { Ok::<_, Infallible>(response) }
    });
    let connection = hyper::server::conn::http1::Builder::new()
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(Duration::from_secs(10))
        .serve_connection(TokioIo::new(stream), service);
    if let Err(error) = connection.await {
        debug!(%peer, %error, "health probe connection ended");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Probes with fixed answers.
    struct Fixed {
        live: Result<(), String>,
        ready: Result<(), String>,
    }

    impl Probes for Fixed {
        fn live(&self) -> Result<(), String> {
            self.live.clone()
        }
        fn ready(&self) -> Result<(), String> {
            self.ready.clone()
        }
    }

    #[test]
    fn each_path_answers_its_probe() {
        let probes = Fixed {
            live: Ok(()),
            ready: Err("not registered".to_owned()),
        };
        assert_eq!(
            answer(&probes, "/healthz"),
            (StatusCode::OK, TEXT, "ok\n".to_owned())
        );
        assert_eq!(
            answer(&probes, "/readyz"),
            (
                StatusCode::SERVICE_UNAVAILABLE,
                TEXT,
                "not registered\n".to_owned()
            )
        );
        assert_eq!(answer(&probes, "/other").0, StatusCode::NOT_FOUND);
        let (status, content_type, _) = answer(&probes, "/metrics");
        assert_eq!(status, StatusCode::OK);
        assert!(content_type.starts_with("text/plain; version=0.0.4"));
    }

    #[tokio::test]
    async fn a_port_alone_serves_on_every_address() {
        let listener = bind(":0").await.unwrap();
        let address = listener.local_addr().unwrap();
        assert!(address.ip().is_unspecified(), "{address}");
        let probes = Arc::new(Fixed {
            live: Ok(()),
            ready: Ok(()),
        });
        let server = tokio::spawn(serve(listener, probes));
        // IPv4 reaches it too (the IPv6 socket is dual-stack).
        let stream = tokio::net::TcpStream::connect(("127.0.0.1", address.port())).await;
        assert!(stream.is_ok(), "{stream:?}");
        server.abort();
        assert!(
            bind("nonsense")
                .await
                .unwrap_err()
                .to_string()
                .contains("nonsense")
        );
    }
}
