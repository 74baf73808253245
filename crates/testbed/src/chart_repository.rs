//! A Helm chart repository on loopback, for tests of chart fetching: `index.yaml` (with each
//! archive's digest) and the packaged charts, over plain HTTP or over HTTPS with a fresh
//! self-signed CA, optionally behind basic auth. It counts the requests it answers, so a
//! test can see retries and cache hits.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread;

use base64::Engine as _;

use crate::server::tls::Tls;

/// One packaged chart the repository serves.
#[derive(Debug, Clone)]
pub struct RepoChart {
    /// The chart's name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// The `.tgz`.
    pub archive: Vec<u8>,
}

/// How the repository is served.
#[derive(Debug, Clone, Default)]
pub struct RepoOptions {
    /// User and password every request must carry.
    pub basic_auth: Option<(String, String)>,
    /// Serve HTTPS with a fresh CA ([`ChartRepository::ca_pem`]).
    pub tls: bool,
    /// List the archives in `index.yaml` by absolute URL below this base (e.g. another
    /// repository's URL) instead of relative to the repository.
    pub archive_base: Option<String>,
}

/// A running repository; dropping it stops accepting connections.
pub struct ChartRepository {
    url: String,
    address: SocketAddr,
    ca_pem: Option<String>,
    index: String,
    requests: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
}

struct Content {
    index: String,
    archives: BTreeMap<String, Vec<u8>>,
    authorization: Option<String>,
    requests: Arc<AtomicUsize>,
}

impl ChartRepository {
    /// Serves `charts` on a loopback port.
    pub fn serve(charts: Vec<RepoChart>, options: RepoOptions) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let address = listener.local_addr()?;
        let (tls, ca_pem) = if options.tls {
            let tls = Tls::generate().map_err(std::io::Error::other)?;
            let mut config = (*tls.server_config).clone();
            config.alpn_protocols = vec![b"http/1.1".to_vec()];
            (Some(Arc::new(config)), Some(tls.ca_pem))
        } else {
            (None, None)
        };
        let scheme = if tls.is_some() { "https" } else { "http" };
        let url = format!("{scheme}://{address}");
        let requests = Arc::new(AtomicUsize::new(0));
        let index = index_yaml(&charts, options.archive_base.as_deref());
        let content = Arc::new(Content {
            index: index.clone(),
            archives: charts
                .into_iter()
                .map(|c| (format!("/charts/{}-{}.tgz", c.name, c.version), c.archive))
                .collect(),
            authorization: options.basic_auth.map(|(user, password)| {
                format!(
                    "Basic {}",
                    base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
                )
            }),
            requests: requests.clone(),
        });
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                if stopped.load(Ordering::Relaxed) {
                    break;
                }
                let content = content.clone();
                let tls = tls.clone();
                thread::spawn(move || match tls {
                    Some(config) => {
                        if let Ok(conn) = rustls::ServerConnection::new(config) {
                            respond(rustls::StreamOwned::new(conn, stream), &content);
                        }
                    }
                    None => respond(stream, &content),
                });
            }
        });
        Ok(Self {
            url,
            address,
            ca_pem,
            index,
            requests,
            stop,
        })
    }

    /// The repository URL (`http://127.0.0.1:PORT` or `https://…`), without a trailing slash.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The CA certificate (PEM) of an HTTPS repository.
    pub fn ca_pem(&self) -> Option<&str> {
        self.ca_pem.as_deref()
    }

    /// The `index.yaml` it serves (what `helm repo update` caches).
    pub fn index_yaml(&self) -> &str {
        &self.index
    }

    /// Requests answered so far (any path, any outcome).
    pub fn requests(&self) -> usize {
        self.requests.load(Ordering::Relaxed)
    }
}

impl Drop for ChartRepository {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Wakes the accept loop so it sees the flag.
        let _ = TcpStream::connect(self.address);
    }
}

fn index_yaml(charts: &[RepoChart], archive_base: Option<&str>) -> String {
    let prefix = archive_base.map_or_else(String::new, |base| format!("{base}/"));
    let mut by_name: BTreeMap<&str, Vec<&RepoChart>> = BTreeMap::new();
    for c in charts {
        by_name.entry(&c.name).or_default().push(c);
    }
    let mut out = String::from("apiVersion: v1\nentries:\n");
    for (name, versions) in by_name {
        out.push_str(&format!("  {name}:\n"));
        for c in versions {
            let digest: String = ring::digest::digest(&ring::digest::SHA256, &c.archive)
                .as_ref()
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            out.push_str(&format!(
                "  - name: {name}\n    version: {version}\n    urls: [{prefix}charts/{name}-{version}.tgz]\n    digest: {digest}\n",
                version = c.version
            ));
        }
    }
    out
}

fn respond<S: Read + Write>(stream: S, content: &Content) {
    let mut reader = BufReader::new(stream);
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    let mut authorization = None;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).is_err() || header.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.eq_ignore_ascii_case("authorization")
        {
            authorization = Some(value.trim().to_string());
        }
    }
    content.requests.fetch_add(1, Ordering::Relaxed);
    let path = request_line.split_whitespace().nth(1).unwrap_or("/");
    let authorized = content.authorization.is_none() || content.authorization == authorization;
    let (status, body): (&str, &[u8]) = if !authorized {
        ("401 Unauthorized", b"")
    } else if path == "/index.yaml" {
        ("200 OK", content.index.as_bytes())
    } else if let Some(archive) = content.archives.get(path) {
        ("200 OK", archive)
    } else {
        ("404 Not Found", b"")
    };
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let stream = reader.get_mut();
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body);
    let _ = stream.flush();
}

/// Packs `files` (paths inside the archive, e.g. `demo/Chart.yaml`, and their text) into a
/// chart `.tgz`, as `helm package` would.
pub fn package(files: &[(&str, &str)]) -> Vec<u8> {
    let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::default(),
    ));
    for (path, text) in files {
        let mut header = tar::Header::new_gnu();
        header.set_size(text.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        // Writing to memory cannot fail.
        let _ = builder.append_data(&mut header, path, text.as_bytes());
    }
    builder
        .into_inner()
        .and_then(|gz| gz.finish())
        .unwrap_or_default()
}
