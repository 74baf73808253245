//! Fetching packaged charts: from a Helm repository (`index.yaml` over HTTP(S), semver range
//! resolution, basic auth, custom CA), from an OCI registry (Helm's media types), or from a
//! plain URL; every archive lands in a local cache keyed by its sha256 digest.

mod cache;
mod oci;
mod registry_config;
mod repo;
mod repositories;

pub use cache::Cache;
pub use oci::{HELM_CHART_CONTENT_MEDIA_TYPE, HELM_CONFIG_MEDIA_TYPE, push};
pub use registry_config::registry_credentials;
pub use repo::{IndexEntry, resolve_version};
pub use repositories::{Repository, cached_index, find_repository};

use repo::RepoClient;
use std::fmt;
use std::path::{Path, PathBuf};

/// How to reach a repository or registry. `Debug` shows whether credentials are set, never
/// their values.
#[derive(Clone, Default)]
pub struct FetchOptions {
    /// Basic-auth user (repositories) or registry user.
    pub username: Option<String>,
    /// Basic-auth password.
    pub password: Option<String>,
    /// A complete `Authorization` header for the repository's host (Landscaper's
    /// `authHeader`, e.g. `Basic …` or `Bearer …`); wins over `username`/`password`.
    pub authorization: Option<String>,
    /// A PEM file of extra CA certificates to trust.
    pub ca_file: Option<PathBuf>,
    /// Extra CA certificates (PEM) to trust, in addition to `ca_file`.
    pub ca_pem: Option<Vec<u8>>,
    /// Accept any server certificate (testing only).
    pub insecure_skip_tls_verify: bool,
    /// Talk plain HTTP to an OCI registry.
    pub plain_http: bool,
    /// Try HTTPS first and fall back to plain HTTP when the OCI registry cannot be reached
    /// over HTTPS (it does not speak TLS): Landscaper's `oci.allowPlainHttp`.
    pub plain_http_fallback: bool,
    /// Send repository credentials to every host, not only the repository's (Helm's
    /// `--pass-credentials`).
    pub pass_credentials: bool,
    /// Docker `config.json` with registry credentials, used for OCI registries when no
    /// username is given (Helm's `--registry-config`).
    pub registry_config: Option<PathBuf>,
    /// Where archives are cached by digest; no caching when `None`.
    pub cache_dir: Option<PathBuf>,
    /// Bytes the cache may hold before the least recently used archives are removed;
    /// unbounded when `None`.
    pub cache_max_bytes: Option<u64>,
}

impl fmt::Debug for FetchOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FetchOptions")
            .field("username", &self.username)
            .field("password", &self.password.as_ref().map(|_| "<redacted>"))
            .field(
                "authorization",
                &self.authorization.as_ref().map(|_| "<redacted>"),
            )
            .field("ca_file", &self.ca_file)
            .field("ca_pem", &self.ca_pem.as_ref().map(Vec::len))
            .field("insecure_skip_tls_verify", &self.insecure_skip_tls_verify)
            .field("plain_http", &self.plain_http)
            .field("plain_http_fallback", &self.plain_http_fallback)
            .field("pass_credentials", &self.pass_credentials)
            .field("registry_config", &self.registry_config)
            .field("cache_dir", &self.cache_dir)
            .field("cache_max_bytes", &self.cache_max_bytes)
            .finish()
    }
}

/// What kind of failure a [`FetchError`] is, so callers can tell a retry from a fix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FetchErrorKind {
    /// The server could not be reached or answered with a server error: retrying may help.
    Unreachable,
    /// The repository, chart or version does not exist.
    NotFound,
    /// The server refused the credentials (401, 403).
    Denied,
    /// Anything a retry cannot fix: a malformed reference, index or archive, a digest
    /// mismatch, an unreadable CA.
    Invalid,
}

/// Why a chart could not be fetched; the message names the URL or reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchError {
    /// The classification.
    pub kind: FetchErrorKind,
    /// Helm's wording of the failure.
    pub message: String,
}

impl FetchError {
    /// An error of `kind`.
    pub fn new(kind: FetchErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }

    /// An error no retry can fix.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(FetchErrorKind::Invalid, message)
    }

    /// Whether retrying the same fetch may succeed.
    pub fn is_transient(&self) -> bool {
        self.kind == FetchErrorKind::Unreachable
    }

    /// The same error with `context` in front of the message.
    fn context(self, context: impl fmt::Display) -> Self {
        Self {
            message: format!("{context}: {}", self.message),
            ..self
        }
    }
}

impl fmt::Display for FetchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for FetchError {}

/// Fetches the archive of a chart: `oci://REGISTRY/PATH/NAME` (with `version` as tag or
/// range), `NAME` from the repository at `repo_url`, or a direct `http(s)://…/x.tgz` URL.
pub async fn fetch_chart(
    reference: &str,
    repo_url: Option<&str>,
    version: &str,
    options: &FetchOptions,
) -> Result<Vec<u8>, FetchError> {
    let cache = cache_of(options);
    if let Some(rest) = reference.strip_prefix("oci://") {
        return oci::pull(rest, version, options, cache.as_ref()).await;
    }
    let repos = RepoClient::new(options, cache.as_ref())?;
    if let Some(repo_url) = repo_url {
        return repos
            .fetch_from_repository(repo_url, reference, version)
            .await;
    }
    if reference.starts_with("http://") || reference.starts_with("https://") {
        return repos.download(reference).await;
    }
    Err(FetchError::invalid(format!(
        "non-absolute URLs should be in form of repo_name/path_to_chart, got: {reference}"
    )))
}

/// Downloads a file given by URL where Helm takes a file (`-f https://…/values.yaml`,
/// `--set-file`): Helm's HTTP getter, without repository credentials.
pub async fn fetch_url(url: &str) -> Result<Vec<u8>, FetchError> {
    let options = FetchOptions::default();
    RepoClient::new(&options, None)?.download(url).await
}

/// Fetches chart `name` of the named repository `repository` (a `repo/chart` reference) as
/// Helm does: the index is the one `helm repo update` cached in `index_cache`, the download
/// uses the repository's credentials and TLS settings (the command line's win).
pub async fn fetch_from_named_repository(
    repository: &Repository,
    index_cache: &Path,
    name: &str,
    version: &str,
    options: &FetchOptions,
) -> Result<Vec<u8>, FetchError> {
    let index = cached_index(index_cache, &repository.name)?;
    let options = repository.options(options);
    if repository.cert_file.is_some() {
        return Err(FetchError::invalid(format!(
            "repository {} uses a client certificate (certFile), which is not supported",
            repository.name
        )));
    }
    let cache = cache_of(&options);
    let index = repo::Index {
        text: &index,
        named: Some(&repository.name),
    };
    RepoClient::new(&options, cache.as_ref())?
        .download_from_index(&repository.url, index, name, version)
        .await
}

/// The archive cache the options name, if any.
fn cache_of(options: &FetchOptions) -> Option<Cache> {
    options
        .cache_dir
        .clone()
        .map(|dir| Cache::new(dir).with_max_bytes(options.cache_max_bytes))
}

/// The extra CA certificates of `--ca-file` and of `ca_pem`, as one PEM bundle.
fn read_ca_file(options: &FetchOptions) -> Result<Option<Vec<u8>>, FetchError> {
    let mut pem = options
        .ca_file
        .as_ref()
        .map(|path| {
            std::fs::read(path).map_err(|e| {
                FetchError::invalid(format!("can't read CA file {}: {e}", path.display()))
            })
        })
        .transpose()?;
    if let Some(extra) = &options.ca_pem {
        let bundle = pem.get_or_insert_with(Vec::new);
        if !bundle.is_empty() && !bundle.ends_with(b"\n") {
            bundle.push(b'\n');
        }
        bundle.extend_from_slice(extra);
    }
    Ok(pem)
}
