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

use std::fmt;
use std::path::{Path, PathBuf};

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
    /// Send repository credentials to every host, not only the repository's (Helm's
    /// `--pass-credentials`).
    pub pass_credentials: bool,
    /// Docker `config.json` with registry credentials, used for OCI registries when no
    /// username is given (Helm's `--registry-config`).
    pub registry_config: Option<PathBuf>,
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
        return Err(FetchError(format!(
            "repository {} uses a client certificate (certFile), which is not supported",
            repository.name
        )));
    }
    let client = repo::http_client(&options)?;
    let cache = options.cache_dir.clone().map(Cache::new);
    repo::download_from_index(
        &client,
        &repository.url,
        &index,
        name,
        version,
        &options,
        cache.as_ref(),
    )
    .await
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
