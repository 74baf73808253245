//! The agent's health for the kubelet's probes: `/healthz` answers whether the agent's loop
//! still comes round (a wedged agent is restarted), `/readyz` whether its environment is
//! registered. An unreachable landscaper makes the agent unready, never dead: the loop keeps
//! coming round while it retries, so a fenced cluster's agent does not crash-loop.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tracing::{debug, info, warn};

/// What the probes report, updated by the agent's loop.
#[derive(Debug)]
pub struct Health {
    started: Instant,
    /// Milliseconds after `started` at which the loop last came round.
    last_round: AtomicU64,
    registered: AtomicBool,
    stall_after: Duration,
}

impl Health {
    /// A health record that calls the agent dead once its loop has not come round for
    /// `stall_after`.
    pub fn new(stall_after: Duration) -> Arc<Self> {
        Arc::new(Self {
            started: Instant::now(),
            last_round: AtomicU64::new(0),
            registered: AtomicBool::new(false),
            stall_after,
        })
    }

    /// The loop came round: a registration attempt or a heartbeat period ended, whether it
    /// succeeded or not.
    pub fn round_done(&self) {
        let now = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_round.store(now, Ordering::Relaxed);
    }

    /// Whether the environment is registered (and not being deleted).
    pub fn set_registered(&self, registered: bool) {
        self.registered.store(registered, Ordering::Relaxed);
    }

    /// How long ago the loop last came round (or the record was made, before its first round).
    pub fn quiet_for(&self) -> Duration {
        let last = Duration::from_millis(self.last_round.load(Ordering::Relaxed));
        self.started.elapsed().saturating_sub(last)
    }

    /// `Ok` while the loop comes round, else why the agent counts as dead.
    pub fn live(&self) -> Result<(), String> {
        let quiet = self.quiet_for();
        if quiet > self.stall_after {
            return Err(format!(
                "the agent's loop has not come round for {}s (limit {}s)",
                quiet.as_secs(),
                self.stall_after.as_secs()
            ));
        }
        Ok(())
    }

    /// `Ok` once the environment is registered, else why not.
    pub fn ready(&self) -> Result<(), String> {
        self.live()?;
        if !self.registered.load(Ordering::Relaxed) {
            return Err("the environment is not registered (yet, or any more)".to_owned());
        }
        Ok(())
    }

    fn answer(&self, path: &str) -> (StatusCode, String) {
        let state = match path {
            "/healthz" => self.live(),
            "/readyz" => self.ready(),
            _ => return (StatusCode::NOT_FOUND, "not found\n".to_owned()),
        };
        match state {
            Ok(()) => (StatusCode::OK, "ok\n".to_owned()),
            Err(reason) => (StatusCode::SERVICE_UNAVAILABLE, format!("{reason}\n")),
        }
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
pub async fn serve(listener: TcpListener, health: Arc<Health>) {
    if let Ok(address) = listener.local_addr() {
        info!(%address, "serving /healthz and /readyz");
    }
    loop {
        match listener.accept().await {
            Ok((stream, peer)) => {
                tokio::spawn(answer_connection(stream, peer, health.clone()));
            }
            Err(error) => {
                warn!(%error, "health probe connection not accepted");
                // Out of file descriptors, say: do not spin.
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

async fn answer_connection(stream: tokio::net::TcpStream, peer: SocketAddr, health: Arc<Health>) {
    let service = hyper::service::service_fn(move |request: Request<hyper::body::Incoming>| {
        let (status, body) = health.answer(request.uri().path());
        let response = Response::builder()
            .status(status)
            .header("content-type", "text/plain; charset=utf-8")
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

    #[test]
    fn a_loop_that_stops_coming_round_is_dead_and_unready() {
        let health = Health::new(Duration::from_millis(50));
        health.round_done();
        assert_eq!(health.live(), Ok(()));
        assert!(health.ready().unwrap_err().contains("not registered"));
        health.set_registered(true);
        assert_eq!(health.ready(), Ok(()));
        std::thread::sleep(Duration::from_millis(120));
        assert!(health.live().unwrap_err().contains("not come round"));
        assert!(health.ready().is_err());
        health.round_done();
        assert_eq!(health.ready(), Ok(()));
        assert_eq!(health.answer("/other").0, StatusCode::NOT_FOUND);
    }

    #[tokio::test]
    async fn a_port_alone_serves_on_every_address() {
        let listener = bind(":0").await.unwrap();
        let address = listener.local_addr().unwrap();
        assert!(address.ip().is_unspecified(), "{address}");
        let health = Health::new(Duration::from_secs(60));
        let server = tokio::spawn(serve(listener, health));
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
