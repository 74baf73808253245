//! Where a chart comes from: the provider configuration's `chart` resolved to a loaded chart.
//! Inline archives (`archive.raw`) are decoded here; remote archives (`archive.remote.url`),
//! Helm repositories (`helmChartRepo`) and OCI references (`ref`) are fetched with
//! `crates/chart`'s fetcher, and resources of components (`fromResource`, or `resourceRef`: a
//! resource key as `getResourceKey` gives it, looked up in the repository of the item's
//! Context) through the blueprint library's component repositories, with credentials from the
//! item's Context. Archives are cached on
//! disk by digest (bounded, shared by every reconcile of the process) and the last loaded
//! charts stay in memory, so unchanged items neither download nor parse again.

use crate::credentials;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use landscaper_api::config::OciConfiguration;
use landscaper_api::deployer::Chart as ChartSource;
use landscaper_blueprint::{
    Descriptor, GlobalResourceIdentity, RegistryAccess, RegistryOptions, Repository,
};
use landscaper_chart::fetch::{self, Cache, FetchError, FetchErrorKind, FetchOptions};
use landscaper_chart::helm::chart::{self, Chart};
use landscaper_deployer::deployer::Job;
use landscaper_deployer::error::Error;
use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

const OPERATION: &str = "ResolveChart";
/// The environment variable naming the archive cache directory.
pub const CACHE_DIR_ENV: &str = "LANDSCAPER_CHART_CACHE_DIR";
/// The environment variable listing registries (`host:port`, comma-separated) spoken to over
/// plain HTTP.
pub const PLAIN_HTTP_REGISTRIES_ENV: &str = "LANDSCAPER_PLAIN_HTTP_REGISTRIES";
/// Default bound of the archive cache on disk.
pub const DEFAULT_CACHE_MAX_BYTES: u64 = 256 * 1024 * 1024;
/// Default number of loaded charts kept in memory.
pub const DEFAULT_LOADED_CHARTS: usize = 16;

/// How charts are fetched and cached.
#[derive(Debug, Clone)]
pub struct SourceSettings {
    /// Where fetched archives are cached by digest; no disk cache when `None`.
    pub cache_dir: Option<PathBuf>,
    /// Bytes the disk cache may hold; least recently used archives are removed beyond it.
    pub cache_max_bytes: u64,
    /// Loaded charts kept in memory, by archive digest.
    pub loaded_charts: usize,
    /// Registries (`host:port`) spoken to over plain HTTP, like Docker's insecure registries.
    pub plain_http_registries: Vec<String>,
    /// Whether a registry that cannot be reached over HTTPS is tried over plain HTTP.
    pub allow_plain_http: bool,
    /// Whether registries' certificates are accepted unverified.
    pub insecure_skip_tls_verify: bool,
    /// Docker config files (`auths`) with registry credentials, used when the item's Context
    /// has none for the registry; the first file naming the registry wins.
    pub registry_config_files: Vec<PathBuf>,
}

impl SourceSettings {
    /// These settings with a Landscaper `oci` configuration section applied, with upstream's
    /// meaning: `allowPlainHttp` lets a registry that does not speak HTTPS be reached over
    /// plain HTTP, `insecureSkipVerify` skips the registries' certificate checks,
    /// `configFiles` are Docker config files with registry credentials, and `cache.path` is
    /// where pulled archives are cached (charts loaded recently always stay in memory, so
    /// `cache.useInMemoryOverlay` changes nothing).
    pub fn with_oci(mut self, oci: &OciConfiguration) -> Self {
        self.allow_plain_http = oci.allow_plain_http.unwrap_or(false);
        self.insecure_skip_tls_verify = oci.insecure_skip_verify.unwrap_or(false);
        self.registry_config_files = oci
            .config_files
            .iter()
            .flatten()
            .map(PathBuf::from)
            .collect();
        if let Some(path) = oci
            .cache
            .as_ref()
            .and_then(|cache| cache.path.as_deref())
            .filter(|path| !path.is_empty())
        {
            self.cache_dir = Some(PathBuf::from(path));
        }
        self
    }
}

impl Default for SourceSettings {
    /// The cache in `$LANDSCAPER_CHART_CACHE_DIR`, else `landscaper-charts` in the temporary
    /// directory; 256 MiB on disk, 16 charts in memory; registries over HTTPS except those in
    /// `$LANDSCAPER_PLAIN_HTTP_REGISTRIES`.
    fn default() -> Self {
        let dir = std::env::var_os(CACHE_DIR_ENV)
            .map(PathBuf::from)
            .unwrap_or_else(|| std::env::temp_dir().join("landscaper-charts"));
        Self {
            cache_dir: Some(dir),
            cache_max_bytes: DEFAULT_CACHE_MAX_BYTES,
            loaded_charts: DEFAULT_LOADED_CHARTS,
            plain_http_registries: registry_list(
                &std::env::var(PLAIN_HTTP_REGISTRIES_ENV).unwrap_or_default(),
            ),
            allow_plain_http: false,
            insecure_skip_tls_verify: false,
            registry_config_files: Vec::new(),
        }
    }
}

/// `a:5000, b` → `["a:5000", "b"]`.
fn registry_list(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .map(str::to_string)
        .collect()
}

/// Resolves chart sources; one per deployer, shared by all its workers.
#[derive(Debug, Default)]
pub struct Sources {
    settings: SourceSettings,
    loaded: Mutex<VecDeque<(String, Arc<Chart>)>>,
}

/// Which source a configuration names, with what it needs.
enum Source<'a> {
    Raw(&'a str),
    Remote(Remote<'a>),
    /// `fromResource`: a resource of a component, inline or in a repository.
    Component(&'a serde_json::Value),
    /// `resourceRef`: a resource key, decoded.
    ResourceKey(GlobalResourceIdentity),
}

/// A source that is fetched.
enum Remote<'a> {
    Url(&'a str),
    Repository {
        url: &'a str,
        name: &'a str,
        version: &'a str,
    },
    Oci(&'a str),
}

impl Sources {
    /// Sources with these settings.
    pub fn new(settings: SourceSettings) -> Self {
        Self {
            settings,
            loaded: Mutex::default(),
        }
    }

    /// Loads the chart the configuration points at.
    pub async fn resolve(&self, job: &Job, source: &ChartSource) -> Result<Arc<Chart>, Error> {
        let item = job.item_name();
        let archive = match classify(source, &item)? {
            Source::Raw(raw) => decode_raw(raw, &item)?,
            Source::Remote(remote) => self.fetch(job, &remote, source, &item).await?,
            Source::Component(spec) => self.fetch_resource(job, spec, &item).await?,
            Source::ResourceKey(identity) => self.fetch_resource_key(job, &identity, &item).await?,
        };
        self.load(&archive, source, &item)
    }

    fn options(&self) -> FetchOptions {
        FetchOptions {
            cache_dir: self.settings.cache_dir.clone(),
            cache_max_bytes: Some(self.settings.cache_max_bytes),
            ..FetchOptions::default()
        }
    }

    async fn fetch(
        &self,
        job: &Job,
        remote: &Remote<'_>,
        source: &ChartSource,
        item: &str,
    ) -> Result<Vec<u8>, Error> {
        let context = credentials::context(job).await?;
        let mut options = self.options();
        let (field, result) = match remote {
            Remote::Url(url) => {
                apply_repository(
                    &mut options,
                    credentials::for_repository(job, context.as_ref(), url).await?,
                );
                (
                    "archive.remote.url",
                    fetch::fetch_chart(url, None, "", &options).await,
                )
            }
            Remote::Repository { url, name, version } => {
                apply_repository(
                    &mut options,
                    credentials::for_repository(job, context.as_ref(), url).await?,
                );
                (
                    "helmChartRepo",
                    fetch::fetch_chart(name, Some(url), version, &options).await,
                )
            }
            Remote::Oci(reference) => {
                let reference = reference.strip_prefix("oci://").unwrap_or(reference);
                let registry = reference.split('/').next().unwrap_or_default();
                options.plain_http = self
                    .settings
                    .plain_http_registries
                    .iter()
                    .any(|r| r == registry);
                options.plain_http_fallback = self.settings.allow_plain_http;
                options.insecure_skip_tls_verify = self.settings.insecure_skip_tls_verify;
                if let Some(login) =
                    credentials::for_registry(job, context.as_ref(), registry).await?
                {
                    options.username = Some(login.username);
                    options.password = Some(login.password);
                } else if let Some((username, password)) = self.config_file_login(registry, item)? {
                    options.username = Some(username);
                    options.password = Some(password);
                }
                (
                    "ref",
                    fetch::fetch_chart(&format!("oci://{reference}"), None, "", &options).await,
                )
            }
        };
        result.map_err(|e| fetch_failed(item, field, source, e))
    }

    /// The chart that a resource of a component holds (`fromResource`: `resourceName` and the
    /// component `inline` or by `ref`, its repository from the reference or else the item's
    /// Context), read with the blueprint library's component repositories.
    async fn fetch_resource(
        &self,
        job: &Job,
        spec: &serde_json::Value,
        item: &str,
    ) -> Result<Vec<u8>, Error> {
        let field = "fromResource";
        let resource_name = spec
            .get("resourceName")
            .and_then(serde_json::Value::as_str)
            .filter(|name| !name.is_empty())
            .ok_or_else(|| invalid(item, "fromResource.resourceName", "is required"))?;
        let context = credentials::context(job).await?;
        let failed = |e| resource_unavailable(item, field, e);
        let (descriptor, repository) = if let Some(inline) = spec.get("inline") {
            let descriptor = Descriptor::from_json(inline.clone()).map_err(failed)?;
            let repository = descriptor
                .repository_context()
                .and_then(|c| Repository::from_context(&c).ok());
            (descriptor, repository)
        } else {
            let reference = spec
                .get("ref")
                .ok_or_else(|| invalid(item, field, "one of inline or ref is required"))?;
            let text = |key: &str| {
                reference
                    .get(key)
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or_default()
            };
            let repository_context = reference
                .get("repositoryContext")
                .cloned()
                .or_else(|| context.as_ref().and_then(|c| c.repository_context.clone()))
                .ok_or_else(|| {
                    invalid(
                        item,
                        "fromResource.ref.repositoryContext",
                        "is required when the item's Context gives none",
                    )
                })?;
            let (descriptor, repository) = self
                .component(
                    job,
                    context.as_ref(),
                    &repository_context,
                    text("componentName"),
                    text("version"),
                )
                .await?
                .map_err(failed)?;
            (descriptor, Some(repository))
        };
        let resource = descriptor
            .resources(&[("name".to_string(), resource_name.to_string())])
            .into_iter()
            .next()
            .ok_or_else(|| {
                invalid(
                    item,
                    "fromResource.resourceName",
                    &format!(
                        "component {}:{} has no resource {resource_name:?}",
                        descriptor.name(),
                        descriptor.version()
                    ),
                )
            })?;
        self.resource_content(job, context.as_ref(), repository, &descriptor, &resource)
            .await?
            .map_err(failed)
    }

    /// The chart a resource key (`resourceRef`, as `getResourceKey` gives it) names: the
    /// resource of the component version it names, looked up in the repository of the item's
    /// Context, as upstream's helm deployer resolves it.
    async fn fetch_resource_key(
        &self,
        job: &Job,
        identity: &GlobalResourceIdentity,
        item: &str,
    ) -> Result<Vec<u8>, Error> {
        let context = credentials::context(job).await?;
        let failed = |e| resource_unavailable(item, "resourceRef", e);
        let repository_context = context
            .as_ref()
            .and_then(|c| c.repository_context.clone())
            .ok_or_else(|| {
                invalid(
                    item,
                    "resourceRef",
                    &format!(
                        "the item's Context {:?} gives no repositoryContext to look component {}:{} up in",
                        job.item.spec.context.as_deref().unwrap_or("default"),
                        identity.name,
                        identity.version
                    ),
                )
            })?;
        let (descriptor, repository) = self
            .component(
                job,
                context.as_ref(),
                &repository_context,
                &identity.name,
                &identity.version,
            )
            .await?
            .map_err(failed)?;
        let resource = identity.find_in(&descriptor).map_err(failed)?;
        self.resource_content(
            job,
            context.as_ref(),
            Some(repository),
            &descriptor,
            &resource,
        )
        .await?
        .map_err(failed)
    }

    /// The component version `name:version` in the repository `repository_context` names, and
    /// that repository, read with the item's registry logins for it. The outer error is the
    /// logins', the inner one the repository's.
    async fn component(
        &self,
        job: &Job,
        context: Option<&landscaper_api::core::Context>,
        repository_context: &serde_json::Value,
        name: &str,
        version: &str,
    ) -> Result<Result<(Descriptor, Repository), landscaper_blueprint::Error>, Error> {
        let repository = match Repository::from_context(repository_context) {
            Ok(repository) => repository,
            Err(e) => return Ok(Err(e)),
        };
        let access = self.registry_access(job, context, &[&repository]).await?;
        Ok(access
            .descriptor(&repository, name, version)
            .await
            .map(|descriptor| (descriptor, repository)))
    }

    /// The content of `resource`, a resource of `descriptor` stored in `repository`, with the
    /// item's registry logins for the repository and for the image the access names. The outer
    /// error is the logins', the inner one the repository's.
    async fn resource_content(
        &self,
        job: &Job,
        context: Option<&landscaper_api::core::Context>,
        repository: Option<Repository>,
        descriptor: &Descriptor,
        resource: &serde_json::Value,
    ) -> Result<Result<Vec<u8>, landscaper_blueprint::Error>, Error> {
        let image = resource
            .pointer("/access/imageReference")
            .and_then(serde_json::Value::as_str)
            .map(|reference| Repository::Oci {
                base_url: reference.to_string(),
            });
        let repositories: Vec<&Repository> = repository.iter().chain(image.iter()).collect();
        let access = self.registry_access(job, context, &repositories).await?;
        let local = Repository::Local {
            path: PathBuf::from("."),
        };
        Ok(access
            .resource_content(repository.as_ref().unwrap_or(&local), descriptor, resource)
            .await
            .map(|content| content.to_vec()))
    }

    /// A component repository client with the item's registry logins for `repositories`.
    async fn registry_access(
        &self,
        job: &Job,
        context: Option<&landscaper_api::core::Context>,
        repositories: &[&Repository],
    ) -> Result<RegistryAccess, Error> {
        let mut auths = serde_json::Map::new();
        for repository in repositories {
            let Repository::Oci { base_url } = repository else {
                continue;
            };
            let registry = base_url.split('/').next().unwrap_or_default();
            if let Some(login) = credentials::for_registry(job, context, registry).await? {
                auths.insert(
                    registry.to_string(),
                    serde_json::json!({"username": login.username, "password": login.password}),
                );
            }
        }
        Ok(RegistryAccess::new(RegistryOptions {
            plain_http: self.settings.plain_http_registries.clone(),
            insecure_skip_tls_verify: self.settings.insecure_skip_tls_verify,
            docker_configs: vec![serde_json::json!({"auths": auths}).to_string()],
            ..RegistryOptions::default()
        }))
    }

    /// The registry's login from the first configured Docker config file that has one.
    fn config_file_login(
        &self,
        registry: &str,
        item: &str,
    ) -> Result<Option<(String, String)>, Error> {
        for file in &self.settings.registry_config_files {
            let unreadable = |why: String| {
                Error::config(
                    OPERATION,
                    "RegistryConfigUnreadable",
                    format!(
                        "DeployItem {item}: the deployer's oci.configFiles entry {}: {why}",
                        file.display()
                    ),
                )
            };
            if !file.is_file() {
                return Err(unreadable("no such file".into()));
            }
            let login =
                fetch::registry_credentials(file, registry).map_err(|e| unreadable(e.message))?;
            if login.is_some() {
                return Ok(login);
            }
        }
        Ok(None)
    }

    /// The chart of an archive, from memory when the same archive was loaded recently.
    fn load(&self, archive: &[u8], source: &ChartSource, item: &str) -> Result<Arc<Chart>, Error> {
        let digest = Cache::digest(archive);
        {
            let mut loaded = self.loaded.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(pos) = loaded.iter().position(|(d, _)| *d == digest) {
                let hit = loaded.remove(pos).map(|(_, c)| c);
                if let Some(chart) = hit {
                    loaded.push_back((digest, chart.clone()));
                    return Ok(chart);
                }
            }
        }
        let chart = Arc::new(chart::load_archive(archive).map_err(|e| {
            // The archive's folder names a chart whose Chart.yaml cannot be read.
            let folder = chart::archive_folder(archive)
                .map(|f| format!(" (chart folder {f})"))
                .unwrap_or_default();
            Error::config(
                OPERATION,
                "InvalidChart",
                format!(
                    "DeployItem {item} spec.config.chart: {}{folder}: loading the chart: {e}",
                    describe(source)
                ),
            )
        })?);
        if self.settings.loaded_charts > 0 {
            let mut loaded = self.loaded.lock().unwrap_or_else(|e| e.into_inner());
            if loaded.len() >= self.settings.loaded_charts {
                loaded.pop_front();
            }
            loaded.push_back((digest, chart.clone()));
        }
        Ok(chart)
    }
}

fn apply_repository(options: &mut FetchOptions, auth: credentials::RepositoryAuth) {
    options.authorization = auth.header;
    options.ca_pem = auth.ca_pem;
}

fn invalid(item: &str, field: &str, why: &str) -> Error {
    Error::config(
        OPERATION,
        "InvalidChartSource",
        format!("DeployItem {item} spec.config.chart.{field}: {why}"),
    )
}

/// The error for a chart resource the component repository could not give.
fn resource_unavailable(item: &str, field: &str, e: landscaper_blueprint::Error) -> Error {
    Error::config(
        OPERATION,
        "ChartResourceUnavailable",
        format!("DeployItem {item} spec.config.chart.{field}: {e}"),
    )
}

/// The source the configuration names; checks what each one requires.
fn classify<'a>(source: &'a ChartSource, item: &str) -> Result<Source<'a>, Error> {
    if let Some(reference) = source.reference.as_deref() {
        if reference.trim().is_empty() {
            return Err(invalid(item, "ref", "the OCI reference is empty"));
        }
        return Ok(Source::Remote(Remote::Oci(reference.trim())));
    }
    if let Some(repo) = &source.helm_chart_repo {
        let url = repo.helm_chart_repo_url.as_deref().unwrap_or_default();
        let name = repo.helm_chart_name.as_deref().unwrap_or_default();
        if url.trim().is_empty() {
            return Err(invalid(
                item,
                "helmChartRepo.helmChartRepoUrl",
                "is required",
            ));
        }
        if name.trim().is_empty() {
            return Err(invalid(item, "helmChartRepo.helmChartName", "is required"));
        }
        return Ok(Source::Remote(Remote::Repository {
            url: url.trim(),
            name: name.trim(),
            version: repo
                .helm_chart_version
                .as_deref()
                .unwrap_or_default()
                .trim(),
        }));
    }
    if let Some(archive) = &source.archive {
        if let Some(raw) = archive.raw.as_deref() {
            return Ok(Source::Raw(raw));
        }
        return match archive.remote.as_ref().and_then(|r| r.url.as_deref()) {
            Some(url) if !url.trim().is_empty() => Ok(Source::Remote(Remote::Url(url.trim()))),
            _ => Err(invalid(
                item,
                "archive",
                "one of raw or remote.url is required",
            )),
        };
    }
    if let Some(spec) = &source.from_resource {
        return Ok(Source::Component(spec));
    }
    match source.resource_ref.as_deref().map(str::trim) {
        Some(key) if !key.is_empty() => GlobalResourceIdentity::from_key(key)
            .map(Source::ResourceKey)
            .map_err(|e| {
                let message = match e {
                    landscaper_blueprint::Error::Component(message) => message,
                    other => other.to_string(),
                };
                invalid(item, "resourceRef", &message)
            }),
        _ => Err(Error::config(
            OPERATION,
            "InvalidChartSource",
            format!(
                "DeployItem {item} spec.config.chart: one of ref, archive, helmChartRepo, resourceRef or fromResource is required"
            ),
        )),
    }
}

fn decode_raw(raw: &str, item: &str) -> Result<Vec<u8>, Error> {
    // Upstream accepts base64 with line breaks (as `base64` wraps it).
    let compact: String = raw.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    STANDARD.decode(compact.as_bytes()).map_err(|e| {
        Error::config(
            OPERATION,
            "InvalidChartArchive",
            format!("DeployItem {item} spec.config.chart.archive.raw is not base64: {e}"),
        )
    })
}

/// A fetch failure as the item reports it: unreachable servers are retried with backoff
/// (until the item's timeout), everything else needs a change of the item or the source.
fn fetch_failed(item: &str, field: &str, source: &ChartSource, e: FetchError) -> Error {
    let message = format!(
        "DeployItem {item} spec.config.chart.{field}: {}: {}",
        describe(source),
        redact_urls(&e.message)
    );
    match e.kind {
        FetchErrorKind::Unreachable => {
            Error::transient(OPERATION, "ChartSourceUnreachable", message)
        }
        FetchErrorKind::NotFound => Error::config(OPERATION, "ChartNotFound", message),
        FetchErrorKind::Denied => Error::config(OPERATION, "ChartAccessDenied", message),
        FetchErrorKind::Invalid => Error::config(OPERATION, "InvalidChart", message),
    }
}

/// `url` without user information (`https://user:password@host/…` → `https://host/…`).
fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{scheme}://{}", &rest[at + 1..]),
        None => url.to_string(),
    }
}

/// Every URL in `text` without user information.
fn redact_urls(text: &str) -> String {
    text.split(' ')
        .map(redact_url)
        .collect::<Vec<_>>()
        .join(" ")
}

/// A short description of the source, for messages (`inline chart archive`, `OCI chart …`);
/// URLs lose their user information.
pub fn describe(source: &ChartSource) -> String {
    if let Some(r) = &source.reference {
        return format!("OCI chart {}", redact_url(r));
    }
    if let Some(repo) = &source.helm_chart_repo {
        let version = repo.helm_chart_version.as_deref().unwrap_or_default();
        return format!(
            "chart {}{} of repository {}",
            repo.helm_chart_name.as_deref().unwrap_or_default(),
            if version.is_empty() {
                String::new()
            } else {
                format!(" {version}")
            },
            redact_url(repo.helm_chart_repo_url.as_deref().unwrap_or_default())
        );
    }
    if let Some(url) = source
        .archive
        .as_ref()
        .and_then(|a| a.remote.as_ref())
        .and_then(|r| r.url.as_deref())
    {
        return format!("chart archive {}", redact_url(url));
    }
    if source.archive.is_some() {
        return "inline chart archive".into();
    }
    "chart resource reference".into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use landscaper_api::deployer::{ArchiveAccess, HelmChartRepo, RemoteArchiveAccess};

    #[test]
    fn the_oci_section_sets_plain_http_tls_credential_files_and_the_cache() {
        let oci: OciConfiguration = serde_json::from_value(serde_json::json!({
            "allowPlainHttp": true,
            "insecureSkipVerify": true,
            "configFiles": ["/etc/ls/a.json", "/etc/ls/b.json"],
            "cache": {"path": "/var/cache/ls", "useInMemoryOverlay": true},
        }))
        .unwrap();
        let settings = SourceSettings::default().with_oci(&oci);
        assert!(settings.allow_plain_http && settings.insecure_skip_tls_verify);
        assert_eq!(
            settings.registry_config_files,
            [
                PathBuf::from("/etc/ls/a.json"),
                PathBuf::from("/etc/ls/b.json")
            ]
        );
        assert_eq!(settings.cache_dir, Some(PathBuf::from("/var/cache/ls")));
        // An empty section changes nothing.
        let unchanged = SourceSettings::default().with_oci(&OciConfiguration::default());
        assert!(!unchanged.allow_plain_http && !unchanged.insecure_skip_tls_verify);
        assert_eq!(unchanged.cache_dir, SourceSettings::default().cache_dir);
    }

    #[test]
    fn messages_never_show_url_credentials() {
        assert_eq!(
            redact_url("https://alice:s3cret@charts.example/x.tgz"),
            "https://charts.example/x.tgz"
        );
        assert_eq!(redact_url("http://h/a@b"), "http://h/a@b");
        assert_eq!(
            redact_urls("failed to fetch https://a:b@h/i.yaml : 404"),
            "failed to fetch https://h/i.yaml : 404"
        );
        let source = ChartSource {
            archive: Some(ArchiveAccess {
                remote: Some(RemoteArchiveAccess {
                    url: Some("https://u:p@h/c.tgz".into()),
                }),
                ..Default::default()
            }),
            ..Default::default()
        };
        assert_eq!(describe(&source), "chart archive https://h/c.tgz");
    }

    #[test]
    fn plain_http_registries_are_a_comma_separated_list() {
        assert_eq!(
            registry_list(" 127.0.0.1:5000,,registry.local "),
            vec!["127.0.0.1:5000", "registry.local"]
        );
        assert!(registry_list("").is_empty());
    }

    #[test]
    fn each_source_names_what_it_misses() {
        let repo = ChartSource {
            helm_chart_repo: Some(HelmChartRepo {
                helm_chart_repo_url: Some("https://charts.example".into()),
                ..Default::default()
            }),
            ..Default::default()
        };
        let Err(e) = classify(&repo, "ns/web") else {
            panic!("a repository chart without a name is invalid");
        };
        assert_eq!(
            e.message,
            "DeployItem ns/web spec.config.chart.helmChartRepo.helmChartName: is required"
        );
        let archive = ChartSource {
            archive: Some(ArchiveAccess::default()),
            ..Default::default()
        };
        let Err(e) = classify(&archive, "ns/web") else {
            panic!("an empty archive is invalid");
        };
        assert!(
            e.message.contains("chart.archive: one of raw"),
            "{}",
            e.message
        );
        let resource = ChartSource {
            resource_ref: Some("cd://resources/chart".into()),
            ..Default::default()
        };
        let Err(e) = classify(&resource, "ns/web") else {
            panic!("a relative reference is no resource key");
        };
        assert_eq!(e.reason, "InvalidChartSource");
        assert!(
            e.message.starts_with(
                "DeployItem ns/web spec.config.chart.resourceRef: resource key: not base64"
            ),
            "{}",
            e.message
        );
    }
}
