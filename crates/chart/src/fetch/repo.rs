//! Helm chart repositories: `index.yaml`, version resolution as Helm's `IndexFile.Get`, and
//! downloads with basic auth (only to the repository's own host) and extra CAs.

use super::{Cache, FetchError, FetchErrorKind, FetchOptions, read_ca_file};
use crate::formats::tree::Data;
use crate::formats::yaml;
use crate::helm::semver::{parse_constraints, parse_version};

/// Largest `index.yaml` accepted (big public repositories have indexes of tens of MiB).
const MAX_INDEX_SIZE: usize = 64 * 1024 * 1024;
/// Largest chart archive accepted, as Helm's limit on a decompressed chart.
const MAX_ARCHIVE_SIZE: usize = crate::helm::chart::MAX_DECOMPRESSED_CHART_SIZE as usize;

/// One version of a chart in a repository index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexEntry {
    /// The chart version.
    pub version: String,
    /// Where to download it (absolute, or relative to the repository).
    pub urls: Vec<String>,
    /// `sha256` digest of the archive, when the index gives one.
    pub digest: Option<String>,
}

/// Builds the HTTP client for repositories: rustls, extra CA, optional no verification.
fn http_client(options: &FetchOptions) -> Result<reqwest::Client, FetchError> {
    let mut builder = reqwest::Client::builder()
        .user_agent("Helm/4.1.4")
        .danger_accept_invalid_certs(options.insecure_skip_tls_verify);
    if let Some(pem) = read_ca_file(options)? {
        for cert in reqwest::Certificate::from_pem_bundle(&pem)
            .map_err(|e| FetchError::invalid(format!("can't parse CA file: {e}")))?
        {
            builder = builder.add_root_certificate(cert);
        }
    }
    builder
        .build()
        .map_err(|e| FetchError::invalid(format!("can't create HTTP client: {e}")))
}

fn host_of(url: &str) -> Option<String> {
    reqwest::Url::parse(url).ok().map(|u| {
        format!(
            "{}:{:?}",
            u.host_str().unwrap_or(""),
            u.port_or_known_default()
        )
    })
}

/// A client for chart repositories and chart URLs: the HTTP client the options build, the
/// options' credentials, and the archive cache.
pub(super) struct RepoClient<'a> {
    client: reqwest::Client,
    options: &'a FetchOptions,
    cache: Option<&'a Cache>,
}

impl<'a> RepoClient<'a> {
    /// A client for `options`, caching archives in `cache`.
    pub(super) fn new(
        options: &'a FetchOptions,
        cache: Option<&'a Cache>,
    ) -> Result<Self, FetchError> {
        Ok(Self {
            client: http_client(options)?,
            options,
            cache,
        })
    }

    /// GETs `url`, sending the credentials when it is on `auth_host`; more than `limit`
    /// bytes are refused.
    async fn get(
        &self,
        url: &str,
        auth_host: Option<&str>,
        limit: usize,
    ) -> Result<Vec<u8>, FetchError> {
        let options = self.options;
        let mut request = self.client.get(url);
        if let Some(host) = auth_host
            && (options.pass_credentials || host_of(url).as_deref() == Some(host))
        {
            if let Some(header) = &options.authorization {
                request = request.header(reqwest::header::AUTHORIZATION, header);
            } else if let Some(user) = &options.username {
                request = request.basic_auth(user, options.password.as_deref());
            }
        }
        let response = request.send().await.map_err(|e| {
            let kind = if e.is_builder() {
                FetchErrorKind::Invalid
            } else {
                FetchErrorKind::Unreachable
            };
            FetchError::new(kind, format!("failed to fetch {url}: {}", error_chain(&e)))
        })?;
        let status = response.status();
        if !status.is_success() {
            return Err(FetchError::new(
                status_kind(status),
                format!("failed to fetch {url} : {status}"),
            ));
        }
        if response
            .content_length()
            .is_some_and(|n| n as usize > limit)
        {
            return Err(FetchError::invalid(format!(
                "{url} is larger than {limit} bytes"
            )));
        }
        let mut response = response;
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| {
            FetchError::new(
                FetchErrorKind::Unreachable,
                format!("failed to fetch {url}: {}", error_chain(&e)),
            )
        })? {
            if body.len() + chunk.len() > limit {
                return Err(FetchError::invalid(format!(
                    "{url} is larger than {limit} bytes"
                )));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }

    /// Fetches `name` at `range` from the repository at `repo_url`.
    pub(super) async fn fetch_from_repository(
        &self,
        repo_url: &str,
        name: &str,
        range: &str,
    ) -> Result<Vec<u8>, FetchError> {
        let repo_url = repo_url.trim_end_matches('/');
        let index_url = format!("{repo_url}/index.yaml");
        let index = self
            .get(&index_url, host_of(repo_url).as_deref(), MAX_INDEX_SIZE)
            .await
            .map_err(|e| {
                e.context(format!(
                    "looks like \"{repo_url}\" is not a valid chart repository or cannot be reached"
                ))
            })?;
        let index = String::from_utf8_lossy(&index);
        let index = Index {
            text: &index,
            named: None,
        };
        self.download_from_index(repo_url, index, name, range).await
    }

    /// Resolves `name` at `range` in the repository's `index` and downloads that archive.
    pub(super) async fn download_from_index(
        &self,
        repo_url: &str,
        index: Index<'_>,
        name: &str,
        range: &str,
    ) -> Result<Vec<u8>, FetchError> {
        let repo_url = repo_url.trim_end_matches('/');
        let repo_host = host_of(repo_url);
        let Some(entries) = index_entries(index.text, name, repo_url)? else {
            return Err(index.not_found(repo_url, name, range, false));
        };
        let Some(entry) = resolve_version(&entries, range) else {
            return Err(index.not_found(repo_url, name, range, true));
        };
        let Some(url) = entry.urls.first() else {
            return Err(FetchError::invalid(format!(
                "chart \"{name}\" version \"{}\" has no downloadable URLs",
                entry.version
            )));
        };
        let url = join_url(repo_url, url);
        let auth_host = repo_host.as_deref();
        if let (Some(cache), Some(digest)) = (self.cache, &entry.digest)
            && let Some(hit) = cache.get(digest)
        {
            return Ok(hit);
        }
        let data = self.get(&url, auth_host, MAX_ARCHIVE_SIZE).await?;
        if let Some(digest) = &entry.digest {
            let actual = Cache::digest(&data);
            if !digest
                .trim_start_matches("sha256:")
                .eq_ignore_ascii_case(&actual)
            {
                return Err(FetchError::invalid(format!(
                    "{url}: digest sha256:{actual} does not match the repository index ({digest})"
                )));
            }
        }
        self.keep(data)
    }

    /// Downloads an archive from a URL (with basic auth to that URL's host).
    pub(super) async fn download(&self, url: &str) -> Result<Vec<u8>, FetchError> {
        let host = host_of(url);
        let data = self.get(url, host.as_deref(), MAX_ARCHIVE_SIZE).await?;
        self.keep(data)
    }

    /// Puts a downloaded archive into the cache, if there is one, and returns it.
    fn keep(&self, data: Vec<u8>) -> Result<Vec<u8>, FetchError> {
        if let Some(cache) = self.cache {
            cache.put(&data);
        }
        Ok(data)
    }
}

/// What an HTTP error status means for retrying: server errors and throttling may pass.
fn status_kind(status: reqwest::StatusCode) -> FetchErrorKind {
    match status.as_u16() {
        404 | 410 => FetchErrorKind::NotFound,
        401 | 403 => FetchErrorKind::Denied,
        408 | 429 => FetchErrorKind::Unreachable,
        s if s >= 500 => FetchErrorKind::Unreachable,
        _ => FetchErrorKind::Invalid,
    }
}

/// The error and its causes on one line (reqwest hides the useful part in its sources).
pub(super) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

fn join_url(base: &str, reference: &str) -> String {
    if reference.contains("://") {
        return reference.to_string();
    }
    format!(
        "{}/{}",
        base.trim_end_matches('/'),
        reference.trim_start_matches('/')
    )
}

/// Reads the versions of `name` from an `index.yaml` (`None` when it has no such chart).
fn index_entries(
    index: &str,
    name: &str,
    repo_url: &str,
) -> Result<Option<Vec<IndexEntry>>, FetchError> {
    let parsed = yaml::parse_values(index)
        .map_err(|e| FetchError::invalid(format!("{repo_url}/index.yaml: {}", e.helm_message())))?;
    let Some(Data::List(versions)) = parsed
        .get("entries")
        .and_then(Data::as_map)
        .and_then(|e| e.get(name))
    else {
        return Ok(None);
    };
    Ok(Some(
        versions
            .iter()
            .filter_map(Data::as_map)
            .map(|v| IndexEntry {
                version: v
                    .get("version")
                    .and_then(Data::as_str)
                    .unwrap_or("")
                    .to_string(),
                urls: match v.get("urls") {
                    Some(Data::List(urls)) => urls
                        .iter()
                        .filter_map(Data::as_str)
                        .map(str::to_string)
                        .collect(),
                    _ => Vec::new(),
                },
                digest: v.get("digest").and_then(Data::as_str).map(str::to_string),
            })
            .collect(),
    ))
}

/// Helm's `IndexFile.Get`: an exact version match first, otherwise the highest version
/// satisfying the range (`""` means any stable version).
pub fn resolve_version<'e>(entries: &'e [IndexEntry], range: &str) -> Option<&'e IndexEntry> {
    if !range.is_empty()
        && let Some(exact) = entries.iter().find(|e| e.version == range)
    {
        return Some(exact);
    }
    let constraints = parse_constraints(if range.is_empty() { "*" } else { range }).ok()?;
    entries
        .iter()
        .filter_map(|e| parse_version(&e.version).ok().map(|v| (v, e)))
        .filter(|(v, _)| constraints.check(v))
        .max_by(|(a, _), (b, _)| a.compare(b))
        .map(|(_, e)| e)
}

/// A repository index and how Helm names it in errors.
pub(super) struct Index<'a> {
    /// The `index.yaml` text.
    pub text: &'a str,
    /// The repository's name when the index is the one `helm repo update` cached for a
    /// `repo/chart` reference (Helm words "not found" differently then).
    pub named: Option<&'a str>,
}

impl Index<'_> {
    /// Helm's error for a chart name or version the index lacks.
    fn not_found(&self, repo_url: &str, name: &str, range: &str, name_found: bool) -> FetchError {
        let message = match (self.named, name_found) {
            (Some(repo), false) => format!(
                "chart \"{name}\" matching {range} not found in {repo} index. (try 'helm repo update'): no chart name found"
            ),
            (Some(repo), true) => format!(
                "chart \"{name}\" matching {range} not found in {repo} index. (try 'helm repo update'): no chart version found for {name}-{range}"
            ),
            (None, false) => format!("chart \"{name}\" not found in {repo_url} repository"),
            (None, true) => {
                format!("chart \"{name}\" version \"{range}\" not found in {repo_url} repository")
            }
        };
        FetchError::new(FetchErrorKind::NotFound, message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const INDEX: &str = "apiVersion: v1\nentries:\n  demo:\n  - version: 1.2.0\n    urls: [demo-1.2.0.tgz]\n  - version: 2.0.0-rc.1\n    urls: [demo-2.0.0-rc.1.tgz]\n  - version: 1.10.1\n    urls: [https://cdn.example/demo-1.10.1.tgz]\n    digest: abc\n";

    #[test]
    fn versions_resolve_like_helm() {
        let entries = index_entries(INDEX, "demo", "http://repo")
            .unwrap()
            .unwrap();
        assert_eq!(
            resolve_version(&entries, "").map(|e| e.version.as_str()),
            Some("1.10.1")
        );
        assert_eq!(
            resolve_version(&entries, "~1.2").map(|e| e.version.as_str()),
            Some("1.2.0")
        );
        assert_eq!(
            resolve_version(&entries, "2.0.0-rc.1").map(|e| e.version.as_str()),
            Some("2.0.0-rc.1")
        );
        assert!(resolve_version(&entries, ">=3").is_none());
        assert_eq!(index_entries(INDEX, "other", "http://repo").unwrap(), None);
    }

    #[test]
    fn missing_charts_are_worded_as_helm_words_them() {
        let by_url = Index {
            text: INDEX,
            named: None,
        };
        let named = Index {
            text: INDEX,
            named: Some("myrepo"),
        };
        let message =
            |index: &Index, found| index.not_found("http://repo", "demo", "9", found).message;
        assert_eq!(
            message(&by_url, false),
            "chart \"demo\" not found in http://repo repository"
        );
        assert_eq!(
            message(&by_url, true),
            "chart \"demo\" version \"9\" not found in http://repo repository"
        );
        assert_eq!(
            message(&named, false),
            "chart \"demo\" matching 9 not found in myrepo index. (try 'helm repo update'): no chart name found"
        );
        assert_eq!(
            message(&named, true),
            "chart \"demo\" matching 9 not found in myrepo index. (try 'helm repo update'): no chart version found for demo-9"
        );
    }

    #[test]
    fn urls_resolve_against_the_repository() {
        assert_eq!(
            join_url("http://r/charts/", "a.tgz"),
            "http://r/charts/a.tgz"
        );
        assert_eq!(join_url("http://r", "https://x/a.tgz"), "https://x/a.tgz");
    }
}
