//! The probe and metrics server of a process under test: started on a free loopback port, and
//! asked as the kubelet and Prometheus ask it (plain HTTP/1.1 GET).

use std::net::SocketAddr;
use std::sync::Arc;

use landscaper_process::probes::{Probes, bind, serve};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Serves `/healthz`, `/readyz` and `/metrics` for `probes` on a free loopback port until the
/// test ends; returns the address.
pub async fn serve_probes<P: Probes + 'static>(probes: Arc<P>) -> SocketAddr {
    let listener = bind("127.0.0.1:0").await.expect("a free loopback port");
    let address = listener.local_addr().expect("bound address");
    tokio::spawn(serve(listener, probes));
    address
}

/// The status code and body of `GET path` at `address`.
pub async fn get(address: SocketAddr, path: &str) -> (u16, String) {
    let mut stream = tokio::net::TcpStream::connect(address)
        .await
        .expect("the probe server accepts");
    let request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    stream
        .write_all(request.as_bytes())
        .await
        .expect("request sent");
    let mut response = String::new();
    stream
        .read_to_string(&mut response)
        .await
        .expect("response read");
    let (head, body) = response
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("an HTTP response: {response}"));
    let code = head
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("a status line: {head}"));
    (code, body.to_owned())
}
