//! Fetching packaged charts: from a Helm repository (`index.yaml` over HTTP(S), semver range
//! resolution, basic auth, custom CA), from an OCI registry (Helm's media types), or from a
//! plain URL; every archive lands in a local cache keyed by its sha256 digest.

mod cache;
mod oci;
mod repo;

pub use cache::Cache;
pub use oci::{HELM_CHART_CONTENT_MEDIA_TYPE, HELM_CONFIG_MEDIA_TYPE, push};
pub use repo::{IndexEntry, resolve_version};

use std::fmt;
use std::path::PathBuf;

/// How to reach a repository or registry.
#[derive(Debug, Clone, Default)]
pub struct FetchOptions {
    /// Basic-auth user (repositories) or registry user.
    pub username: Option<String>,
    /// Basic-auth password.
    pub password: Option<String>,
    /// A PEM file of extra CA certificates to trust.
    pub ca_file: Option<PathBuf>,
    /// Accept any server certificate (testing only).
    pub insecure_skip_tls_verify: bool,
    /// Talk plain HTTP to an OCI registry.
    pub plain_http: bool,
    /// Where archives are cached by digest; no caching when `None`.
    pub cache_dir: Option<PathBuf>,
}

/// Why a chart could not be fetched; the message names the URL or reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchError(pub String);

impl fmt::Display for FetchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
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
    let cache = options.cache_dir.clone().map(Cache::new);
    if let Some(rest) = reference.strip_prefix("oci://") {
        return oci::pull(rest, version, options, cache.as_ref()).await;
    }
    let client = repo::http_client(options)?;
    if let Some(repo_url) = repo_url {
        return repo::fetch_from_repository(
            &client,
            repo_url,
            reference,
            version,
            options,
            cache.as_ref(),
        )
        .await;
    }
    if reference.starts_with("http://") || reference.starts_with("https://") {
        return repo::download(&client, reference, None, options, cache.as_ref()).await;
    }
    Err(FetchError(format!(
        "non-absolute URLs should be in form of repo_name/path_to_chart, got: {reference}"
    )))
}

/// Reads the extra CA certificates of `--ca-file`.
fn read_ca_file(options: &FetchOptions) -> Result<Option<Vec<u8>>, FetchError> {
    options
        .ca_file
        .as_ref()
        .map(|path| {
            std::fs::read(path)
                .map_err(|e| FetchError(format!("can't read CA file {}: {e}", path.display())))
        })
        .transpose()
}
