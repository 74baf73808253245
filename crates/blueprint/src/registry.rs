//! Component repositories: where component descriptors and their blobs (blueprints among
//! them) are stored, and a client for them that fetches each thing once.
//!
//! Two kinds of repository are read, as upstream reads them:
//! * `type: ociRegistry` (`baseUrl`): a component version is the OCI manifest
//!   `<baseUrl>/component-descriptors/<component name>:<version>`; its layer 0 is a tar holding
//!   `component-descriptor.yaml`, further layers are the version's local blobs, addressed by
//!   digest. A resource may instead point at an OCI artifact of its own (`ociRegistry` or
//!   `ociArtifact` access), whose first layer is the blob.
//! * `type: local` (`filePath`): a folder in which every plain file is one descriptor, and
//!   blobs are files under `blobs/`.
//! * `type: CommonTransportFormat/v1` (`filePath`, `fileFormat`): OCM's transport format, an
//!   OCI repository kept as files (see [`crate::ctf`]).
//!
//! Descriptors are cached by component version and blobs by digest, in memory and (bounded)
//! on disk, so many installations of one blueprint fetch it once.

use std::collections::HashMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use landscaper_chart::fetch::Cache;
use oci_client::client::{ClientConfig, ClientProtocol, Config, ImageLayer};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference};
use serde_json::{Value as Json, json};

use crate::Error;
pub use crate::archive::archive_blueprint;
use crate::archive::{DESCRIPTOR_FILE, tar_file, tar_of};
use crate::component::{Descriptor, LocalRepository};
use crate::ctf::{Ctf, FileFormat};
use crate::filesystem::{BLUEPRINT_FILE, Filesystem};
use crate::resource_ref::ComponentSource;

/// The config media type of a component version's manifest (OCM's current one).
pub const COMPONENT_CONFIG_MEDIA_TYPE: &str =
    "application/vnd.ocm.software.component.config.v1+json";
/// The media type of the layer holding the descriptor (OCM's current one).
pub const DESCRIPTOR_LAYER_MEDIA_TYPE: &str =
    "application/vnd.ocm.software.component-descriptor.v2+yaml+tar";
/// The media type of a blueprint archive.
pub const BLUEPRINT_MEDIA_TYPE: &str = "application/vnd.gardener.landscaper.blueprint.v1+tar+gzip";
/// The resource types of blueprints.
const BLUEPRINT_TYPES: &[&str] = &["landscaper.gardener.cloud/blueprint", "blueprint"];
/// Blueprints and descriptors larger than this are refused.
const MAX_BLOB_SIZE: u64 = 64 * 1024 * 1024;

/// A component repository, from a repository context.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Repository {
    /// An OCI registry path (`host[:port]/path`).
    Oci {
        /// `baseUrl`, without a scheme.
        base_url: String,
    },
    /// A folder of descriptors.
    Local {
        /// `filePath`.
        path: PathBuf,
    },
    /// An OCM transport archive (CTF).
    Ctf {
        /// `filePath`.
        path: PathBuf,
        /// `fileFormat`; told from the file when the context names none.
        format: Option<FileFormat>,
    },
}

impl Repository {
    /// The repository a repository context (`{type, baseUrl}` or `{type: local, filePath}`)
    /// names.
    pub fn from_context(context: &Json) -> Result<Self, Error> {
        let field = |name: &str| context.get(name).and_then(Json::as_str);
        match field("type") {
            Some("ociRegistry" | "OCIRegistry" | "ociRegistry/v1" | "OCIRegistry/v1") => {
                let base_url = field("baseUrl").filter(|b| !b.is_empty()).ok_or_else(|| {
                    Error::Component("repository context: baseUrl is missing".into())
                })?;
                let base_url = base_url
                    .trim_start_matches("oci://")
                    .trim_start_matches("https://")
                    .trim_start_matches("http://")
                    .trim_end_matches('/');
                Ok(Self::Oci {
                    base_url: base_url.to_string(),
                })
            }
            Some("local") => Ok(Self::Local {
                path: PathBuf::from(field("filePath").unwrap_or(".")),
            }),
            Some("CommonTransportFormat" | "CommonTransportFormat/v1") => {
                let path = field("filePath").filter(|p| !p.is_empty()).ok_or_else(|| {
                    Error::Component("repository context: filePath is missing".into())
                })?;
                Ok(Self::Ctf {
                    path: PathBuf::from(path),
                    format: field("fileFormat").map(FileFormat::parse).transpose()?,
                })
            }
            Some(other) => Err(Error::Component(format!(
                "repository context: unknown type {other:?} (ociRegistry, local or CommonTransportFormat/v1)"
            ))),
            None => Err(Error::Component(
                "repository context: type is missing".into(),
            )),
        }
    }

    fn component_reference(base_url: &str, name: &str, version: &str) -> Result<Reference, Error> {
        format!("{base_url}/component-descriptors/{name}:{version}")
            .parse()
            .map_err(|e| Error::Component(format!("component {name}:{version}: {e}")))
    }
}

/// How to reach registries.
#[derive(Clone, Debug, Default)]
pub struct RegistryOptions {
    /// Registries (`host[:port]`) spoken to over plain HTTP.
    pub plain_http: Vec<String>,
    /// Accept any TLS certificate (testing only).
    pub insecure_skip_tls_verify: bool,
    /// Docker `config.json` documents with registry credentials (a Context's
    /// `registryPullSecrets`), tried in order.
    pub docker_configs: Vec<String>,
    /// Where blobs are cached by digest; memory only when `None`.
    pub cache_dir: Option<PathBuf>,
    /// Bytes the disk cache may hold.
    pub cache_max_bytes: Option<u64>,
}

/// Reads component repositories, fetching each descriptor and blob once.
pub struct RegistryAccess {
    client: Client,
    options: RegistryOptions,
    descriptors: Mutex<HashMap<(Repository, String, String), Descriptor>>,
    blobs: Mutex<HashMap<String, Arc<Vec<u8>>>>,
    /// The first layer (media type, digest, size) of each artifact read, by reference.
    layers: Mutex<HashMap<String, (String, String, i64)>>,
    /// The transport archives opened, by path.
    ctfs: Mutex<HashMap<PathBuf, Arc<Ctf>>>,
    disk: Option<Cache>,
    requests: AtomicUsize,
}

impl RegistryAccess {
    /// A client with `options`.
    pub fn new(options: RegistryOptions) -> Self {
        let protocol = if options.plain_http.is_empty() {
            ClientProtocol::Https
        } else {
            ClientProtocol::HttpsExcept(options.plain_http.clone())
        };
        let client = Client::new(ClientConfig {
            protocol,
            accept_invalid_certificates: options.insecure_skip_tls_verify,
            ..ClientConfig::default()
        });
        let disk = options
            .cache_dir
            .clone()
            .map(|dir| Cache::new(dir).with_max_bytes(options.cache_max_bytes));
        Self {
            client,
            options,
            descriptors: Mutex::default(),
            blobs: Mutex::default(),
            layers: Mutex::default(),
            ctfs: Mutex::default(),
            disk,
            requests: AtomicUsize::new(0),
        }
    }

    /// How many requests went to registries so far (manifests and blobs).
    pub fn registry_requests(&self) -> usize {
        self.requests.load(Ordering::Relaxed)
    }

    fn auth(&self, registry: &str) -> Result<RegistryAuth, Error> {
        for config in &self.options.docker_configs {
            if let Some((user, password)) = docker_credentials(config, registry)? {
                return Ok(RegistryAuth::Basic(user, password));
            }
        }
        Ok(RegistryAuth::Anonymous)
    }

    /// The descriptor of component `name` in `version`.
    pub async fn descriptor(
        &self,
        repository: &Repository,
        name: &str,
        version: &str,
    ) -> Result<Descriptor, Error> {
        let key = (repository.clone(), name.to_string(), version.to_string());
        if let Some(hit) = lock(&self.descriptors).get(&key) {
            return Ok(hit.clone());
        }
        let descriptor = match repository {
            Repository::Local { path } => LocalRepository::open(path)?.get(name, version)?.clone(),
            Repository::Ctf { path, format } => {
                self.ctf(path, *format)?.descriptor(name, version)?
            }
            Repository::Oci { base_url } => self.oci_descriptor(base_url, name, version).await?,
        };
        lock(&self.descriptors).insert(key, descriptor.clone());
        Ok(descriptor)
    }

    /// The transport archive at `path`, opened once.
    fn ctf(&self, path: &Path, format: Option<FileFormat>) -> Result<Arc<Ctf>, Error> {
        if let Some(hit) = lock(&self.ctfs).get(path) {
            return Ok(hit.clone());
        }
        let ctf = Arc::new(Ctf::open(path, format)?);
        lock(&self.ctfs).insert(path.to_path_buf(), ctf.clone());
        Ok(ctf)
    }

    async fn oci_descriptor(
        &self,
        base_url: &str,
        name: &str,
        version: &str,
    ) -> Result<Descriptor, Error> {
        let fail = |what: String| {
            Error::Component(format!("component {name}:{version} in {base_url}: {what}"))
        };
        let reference = Repository::component_reference(base_url, name, version)?;
        let (media_type, data) = self.first_layer(&reference).await.map_err(fail)?;
        let text = if media_type.ends_with("+tar") || media_type.ends_with(".tar") {
            tar_file(&data, DESCRIPTOR_FILE).map_err(fail)?
        } else {
            String::from_utf8(data.to_vec())
                .map_err(|_| fail("the descriptor is not UTF-8".into()))?
        };
        let json = crate::values::parse_yaml(&text).map_err(fail)?;
        Descriptor::from_json(json).map_err(|e| fail(e.to_string()))
    }

    /// The media type and content of the first layer of an OCI artifact; the layer an
    /// artifact names is remembered, so a repeated load reads only the blob cache.
    async fn first_layer(&self, reference: &Reference) -> Result<(String, Arc<Vec<u8>>), String> {
        let auth = self.auth(reference.registry()).map_err(|e| e.to_string())?;
        let known = lock(&self.layers).get(&reference.whole()).cloned();
        let (media_type, digest, size) = match known {
            Some(layer) => layer,
            None => {
                self.requests.fetch_add(1, Ordering::Relaxed);
                let (manifest, _) = self
                    .client
                    .pull_image_manifest(reference, &auth)
                    .await
                    .map_err(|e| format!("not found or not readable: {e}"))?;
                let layer = manifest
                    .layers
                    .first()
                    .ok_or_else(|| "the manifest has no layer".to_string())?;
                let entry = (layer.media_type.clone(), layer.digest.clone(), layer.size);
                lock(&self.layers).insert(reference.whole(), entry.clone());
                entry
            }
        };
        let data = self
            .blob(reference, &auth, &digest, size)
            .await
            .map_err(|e| e.to_string())?;
        Ok((media_type, data))
    }

    /// A blob by digest: from memory, the disk cache, or the registry.
    async fn blob(
        &self,
        reference: &Reference,
        auth: &RegistryAuth,
        digest: &str,
        size: i64,
    ) -> Result<Arc<Vec<u8>>, Error> {
        if let Some(hit) = lock(&self.blobs).get(digest) {
            return Ok(hit.clone());
        }
        if let Some(hit) = self.disk.as_ref().and_then(|d| d.get(digest)) {
            let hit = Arc::new(hit);
            lock(&self.blobs).insert(digest.to_string(), hit.clone());
            return Ok(hit);
        }
        if size < 0 || size as u64 > MAX_BLOB_SIZE {
            return Err(Error::Component(format!(
                "blob {digest} of {size} bytes is larger than {MAX_BLOB_SIZE}"
            )));
        }
        let mut data = Vec::new();
        self.client
            .store_auth_if_needed(reference.resolve_registry(), auth)
            .await;
        self.requests.fetch_add(1, Ordering::Relaxed);
        self.client
            .pull_blob(reference, digest, &mut data)
            .await
            .map_err(|e| Error::Component(format!("blob {digest}: {e}")))?;
        if digest.strip_prefix("sha256:") != Some(Cache::digest(&data).as_str()) {
            return Err(Error::Component(format!(
                "blob {digest}: the content does not match its digest"
            )));
        }
        if let Some(disk) = &self.disk {
            disk.put(&data);
        }
        let data = Arc::new(data);
        lock(&self.blobs).insert(digest.to_string(), data.clone());
        Ok(data)
    }

    /// The content of a resource of `descriptor` (stored in `repository`).
    pub async fn resource_content(
        &self,
        repository: &Repository,
        descriptor: &Descriptor,
        resource: &Json,
    ) -> Result<Arc<Vec<u8>>, Error> {
        let name = resource
            .get("name")
            .and_then(Json::as_str)
            .unwrap_or_default();
        let fail = |what: String| {
            Error::Component(format!(
                "resource {name:?} of component {}:{}: {what}",
                descriptor.name(),
                descriptor.version()
            ))
        };
        let access = resource.get("access").cloned().unwrap_or(Json::Null);
        let field = |key: &str| access.get(key).and_then(Json::as_str);
        match (field("type").unwrap_or_default(), repository) {
            ("localFilesystemBlob" | "localFilesystemBlob/v1", Repository::Local { path }) => {
                let filename =
                    field("filename").ok_or_else(|| fail("access.filename is missing".into()))?;
                LocalRepository::open(path)?
                    .blob(filename)
                    .map(Arc::new)
                    .map_err(|e| fail(e.to_string()))
            }
            (
                "localBlob" | "localBlob/v1" | "localOciBlob" | "localOciBlob/v1",
                Repository::Ctf { path, format },
            ) => self
                .ctf(path, *format)?
                .local_blob(descriptor, resource)
                .map(Arc::new),
            (
                "localBlob"
                | "localBlob/v1"
                | "localOciBlob"
                | "localOciBlob/v1"
                | "localFilesystemBlob"
                | "localFilesystemBlob/v1",
                Repository::Oci { base_url },
            ) => {
                let digest = field("localReference")
                    .or_else(|| field("digest"))
                    .or_else(|| field("filename"))
                    .ok_or_else(|| fail("access names no digest".into()))?;
                let reference = Repository::component_reference(
                    base_url,
                    descriptor.name(),
                    descriptor.version(),
                )?;
                let auth = self.auth(reference.registry())?;
                self.blob(&reference, &auth, digest, 0.max(resource_size(&access)))
                    .await
                    .map_err(|e| fail(e.to_string()))
            }
            ("ociRegistry" | "ociRegistry/v1" | "ociArtifact" | "ociArtifact/v1", _) => {
                let image = field("imageReference")
                    .ok_or_else(|| fail("access.imageReference is missing".into()))?;
                let reference: Reference =
                    image.parse().map_err(|e| fail(format!("{image}: {e}")))?;
                self.first_layer(&reference)
                    .await
                    .map(|(_, data)| data)
                    .map_err(|e| fail(format!("{image}: {e}")))
            }
            (other, _) => Err(fail(format!("access type {other:?} is not supported here"))),
        }
    }

    /// The blueprint that resource `resource_name` of `descriptor` holds.
    pub async fn blueprint(
        &self,
        repository: &Repository,
        descriptor: &Descriptor,
        resource_name: &str,
    ) -> Result<Filesystem, Error> {
        let selector = [("name".to_string(), resource_name.to_string())];
        let resource = descriptor
            .resources(&selector)
            .into_iter()
            .next()
            .ok_or_else(|| {
                Error::Component(format!(
                    "component {}:{} has no resource {resource_name:?}",
                    descriptor.name(),
                    descriptor.version()
                ))
            })?;
        let type_ = resource
            .get("type")
            .and_then(Json::as_str)
            .unwrap_or_default();
        if !BLUEPRINT_TYPES.contains(&type_) {
            return Err(Error::Component(format!(
                "resource {resource_name:?} of component {}:{} is of type {type_:?}, not a blueprint",
                descriptor.name(),
                descriptor.version()
            )));
        }
        if let Some(dir) = local_blob_dir(repository, &resource) {
            return Filesystem::from_dir(&dir);
        }
        let data = self
            .resource_content(repository, descriptor, &resource)
            .await?;
        blueprint_from_archive(&data).map_err(|e| {
            Error::Component(format!(
                "resource {resource_name:?} of component {}:{}: {e}",
                descriptor.name(),
                descriptor.version()
            ))
        })
    }

    /// `root` and every component it references, transitively, each once (what templates see
    /// as `.components`), in the order they are first reached.
    pub async fn transitive_components(
        &self,
        repository: &Repository,
        root: &Descriptor,
    ) -> Result<Vec<Descriptor>, Error> {
        let mut found = vec![root.clone()];
        let mut next = 0;
        while next < found.len() {
            let references = found[next].references(&[]);
            next += 1;
            for reference in references {
                let field = |key: &str| reference.get(key).and_then(Json::as_str).unwrap_or("");
                let (name, version) = (field("componentName"), field("version"));
                if found
                    .iter()
                    .any(|d| d.name() == name && d.version() == version)
                {
                    continue;
                }
                found.push(self.descriptor(repository, name, version).await?);
            }
        }
        Ok(found)
    }

    /// Pushes a component version to an OCI repository: `descriptor` (v2) in layer 0 and
    /// `blobs` (media type and content) as further layers, as the OCM tooling lays them out.
    pub async fn push_component(
        &self,
        base_url: &str,
        descriptor: &Descriptor,
        blobs: Vec<(String, Vec<u8>)>,
    ) -> Result<(), Error> {
        let reference =
            Repository::component_reference(base_url, descriptor.name(), descriptor.version())?;
        let auth = self.auth(reference.registry())?;
        let yaml = crate::values::to_yaml(descriptor.v2())
            .map_err(|e| Error::Component(format!("encoding the descriptor: {e}")))?;
        let descriptor_tar = tar_of(DESCRIPTOR_FILE, yaml.as_bytes())?;
        let descriptor_digest = format!("sha256:{}", Cache::digest(&descriptor_tar));
        let config = json!({"componentDescriptorLayer": {
            "mediaType": DESCRIPTOR_LAYER_MEDIA_TYPE,
            "digest": descriptor_digest,
            "size": descriptor_tar.len(),
        }});
        let mut layers = vec![ImageLayer::new(
            descriptor_tar,
            DESCRIPTOR_LAYER_MEDIA_TYPE.to_string(),
            None,
        )];
        layers.extend(
            blobs
                .into_iter()
                .map(|(media_type, data)| ImageLayer::new(data, media_type, None)),
        );
        let config = Config::new(
            config.to_string().into_bytes(),
            COMPONENT_CONFIG_MEDIA_TYPE.to_string(),
            None,
        );
        self.client
            .push(&reference, &layers, config, &auth, None)
            .await
            .map(|_| ())
            .map_err(|e| {
                Error::Component(format!(
                    "pushing component {}:{} to {base_url}: {e}",
                    descriptor.name(),
                    descriptor.version()
                ))
            })
    }
}

impl RegistryAccess {
    /// Publishes every component version of a `type: local` folder to the OCI repository
    /// `base_url`, as [`push_component`](Self::push_component) lays one out: each
    /// `localFilesystemBlob` becomes a layer of the version, its access a `localBlob` naming the
    /// layer's digest, and the repository joins the end of `repositoryContexts` (the one
    /// templates see as the component's). Returns the versions pushed, as stored.
    pub async fn push_local_repository(
        &self,
        local: &LocalRepository,
        base_url: &str,
    ) -> Result<Vec<Descriptor>, Error> {
        let mut pushed = Vec::new();
        for descriptor in local.descriptors() {
            let (stored, blobs) = localize(local, descriptor, base_url)?;
            self.push_component(base_url, &stored, blobs).await?;
            pushed.push(stored);
        }
        Ok(pushed)
    }
}

/// A component repository read through a shared [`RegistryAccess`], for template functions
/// (`getResourceKey`, `getResourceContent`) that look components up while they run.
pub struct RepositorySource {
    /// The client, with its caches.
    pub access: Arc<RegistryAccess>,
    /// The repository components are looked up in.
    pub repository: Repository,
}

impl std::fmt::Debug for RepositorySource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RepositorySource")
            .field("repository", &self.repository)
            .finish_non_exhaustive()
    }
}

impl ComponentSource for RepositorySource {
    fn descriptor(&self, name: &str, version: &str) -> Result<Descriptor, Error> {
        block_on(self.access.descriptor(&self.repository, name, version))?
    }

    fn content(&self, descriptor: &Descriptor, resource: &Json) -> Result<Arc<Vec<u8>>, Error> {
        block_on(
            self.access
                .resource_content(&self.repository, descriptor, resource),
        )?
    }
}

/// Runs a lookup from synchronous code (a template function).
fn block_on<F: std::future::Future>(future: F) -> Result<F::Output, Error> {
    crate::blocking::block_on(future)
        .map_err(|e| Error::Component(format!("a component lookup: {e}")))
}

/// A blob pushed as a layer: its media type and content.
type Layer = (String, Vec<u8>);

/// The folder of a local repository's `localFilesystemBlob` that is a directory rather than
/// an archive: upstream's local registries keep blueprints unpacked under `blobs/<filename>/`.
fn local_blob_dir(repository: &Repository, resource: &Json) -> Option<PathBuf> {
    let Repository::Local { path } = repository else {
        return None;
    };
    let access = resource.get("access")?;
    let type_ = access.get("type").and_then(Json::as_str)?;
    if !matches!(type_, "localFilesystemBlob" | "localFilesystemBlob/v1") {
        return None;
    }
    let dir = path
        .join("blobs")
        .join(access.get("filename").and_then(Json::as_str)?);
    dir.is_dir().then_some(dir)
}

/// The descriptor as it is stored in the OCI repository `base_url`, and its local blobs as
/// layers.
fn localize(
    local: &LocalRepository,
    descriptor: &Descriptor,
    base_url: &str,
) -> Result<(Descriptor, Vec<Layer>), Error> {
    let mut v2 = descriptor.v2().clone();
    let mut blobs = Vec::new();
    let name = format!("{}:{}", descriptor.name(), descriptor.version());
    let resources = v2
        .pointer_mut("/component/resources")
        .and_then(Json::as_array_mut);
    for resource in resources.into_iter().flatten() {
        let access = resource.get("access").cloned().unwrap_or(Json::Null);
        let field = |key: &str| access.get(key).and_then(Json::as_str);
        if !matches!(
            field("type"),
            Some("localFilesystemBlob" | "localFilesystemBlob/v1")
        ) {
            continue;
        }
        let resource_name = resource.get("name").and_then(Json::as_str).unwrap_or("");
        let fail = |what: String| {
            Error::Component(format!(
                "resource {resource_name:?} of component {name}: {what}"
            ))
        };
        let filename =
            field("filename").ok_or_else(|| fail("access.filename is missing".into()))?;
        let data = local.blob(filename).map_err(|e| fail(e.to_string()))?;
        let media_type = field("mediaType")
            .unwrap_or("application/octet-stream")
            .to_string();
        resource["access"] = json!({
            "type": "localBlob",
            "localReference": digest_of(&data),
            "mediaType": media_type,
            "size": data.len(),
        });
        blobs.push((media_type, data));
    }
    let component = v2
        .get_mut("component")
        .and_then(Json::as_object_mut)
        .ok_or_else(|| Error::Component(format!("component {name}: no component section")))?;
    let contexts = component
        .entry("repositoryContexts")
        .or_insert_with(|| json!([]));
    if !contexts.is_array() {
        *contexts = json!([]);
    }
    if let Some(list) = contexts.as_array_mut() {
        list.push(json!({"type": "ociRegistry", "baseUrl": base_url}));
    }
    Ok((Descriptor::from_json(v2)?, blobs))
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

fn resource_size(access: &Json) -> i64 {
    access.get("size").and_then(Json::as_i64).unwrap_or(0)
}

/// The sha256 digest (`sha256:HEX`) of a blob, as its layer is addressed.
pub fn digest_of(data: &[u8]) -> String {
    format!("sha256:{}", Cache::digest(data))
}

/// User and password for `registry` from a Docker `config.json` document.
fn docker_credentials(config: &str, registry: &str) -> Result<Option<(String, String)>, Error> {
    let config: Json = serde_json::from_str(config).map_err(|e| {
        Error::Component(format!(
            "a registry pull secret is not a docker config: {e}"
        ))
    })?;
    let Some(auths) = config.get("auths").and_then(Json::as_object) else {
        return Ok(None);
    };
    let entry = auths.iter().find_map(|(key, entry)| {
        let host = key
            .trim_start_matches("https://")
            .trim_start_matches("http://");
        (host.split('/').next() == Some(registry)).then_some(entry)
    });
    let Some(entry) = entry else {
        return Ok(None);
    };
    let field = |key: &str| entry.get(key).and_then(Json::as_str).unwrap_or("");
    if !field("auth").is_empty() {
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(field("auth"))
            .ok()
            .and_then(|d| String::from_utf8(d).ok())
            .and_then(|d| {
                d.split_once(':')
                    .map(|(u, p)| (u.to_string(), p.to_string()))
            });
        return decoded.map(Some).ok_or_else(|| {
            Error::Component(format!(
                "the pull secret's auth for {registry} is not base64 of user:password"
            ))
        });
    }
    Ok((!field("username").is_empty())
        .then(|| (field("username").to_string(), field("password").to_string())))
}

/// A blueprint filesystem from a tar or tar+gzip archive.
pub fn blueprint_from_archive(data: &[u8]) -> Result<Filesystem, String> {
    let mut fs = Filesystem::new();
    let plain: Box<dyn std::io::Read + '_> = if data.starts_with(&[0x1f, 0x8b]) {
        Box::new(flate2::read::GzDecoder::new(data).take(MAX_BLOB_SIZE))
    } else {
        Box::new(data)
    };
    for (path, content) in crate::archive::files(plain)? {
        fs.insert(&path, content);
    }
    if fs.read(BLUEPRINT_FILE).is_none() {
        return Err(format!("the archive has no {BLUEPRINT_FILE}"));
    }
    Ok(fs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repository_contexts_name_their_repository() {
        assert_eq!(
            Repository::from_context(
                &json!({"type": "ociRegistry", "baseUrl": "oci://r.example/x/"})
            )
            .unwrap(),
            Repository::Oci {
                base_url: "r.example/x".into()
            }
        );
        assert!(Repository::from_context(&json!({"type": "s3"})).is_err());
    }

    #[test]
    fn blueprints_round_trip_through_archives() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("blueprint.yaml"), "kind: Blueprint\n").unwrap();
        std::fs::create_dir(dir.path().join("t")).unwrap();
        std::fs::write(dir.path().join("t/a.yaml"), "a").unwrap();
        let archive = archive_blueprint(dir.path()).unwrap();
        let fs = blueprint_from_archive(&archive).unwrap();
        assert_eq!(fs.read("t/a.yaml"), Some(&b"a"[..]));
        assert!(blueprint_from_archive(&tar_of("x", b"y").unwrap()).is_err());
    }

    #[test]
    fn local_blobs_become_layers_named_by_digest_and_the_registry_the_last_context() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("blobs")).unwrap();
        std::fs::write(dir.path().join("blobs/chart.tgz"), b"chart bytes").unwrap();
        std::fs::write(
            dir.path().join("c.yaml"),
            "meta: {schemaVersion: v2}\ncomponent: {name: example.test/c, version: v1, provider: internal, repositoryContexts: [{type: local, filePath: here}], sources: [], componentReferences: [], resources: [{name: chart, version: v1, type: helmChart, relation: local, access: {type: localFilesystemBlob, filename: chart.tgz, mediaType: application/x-tgz}}, {name: image, version: v1, type: ociImage, relation: external, access: {type: ociRegistry, imageReference: 'x:1'}}]}\n",
        )
        .unwrap();
        let local = LocalRepository::open(dir.path()).unwrap();
        let (stored, layers) = localize(&local, &local.descriptors()[0], "r.test/p").unwrap();
        assert_eq!(
            layers,
            vec![("application/x-tgz".to_string(), b"chart bytes".to_vec())]
        );
        let resources = stored.resources(&[]);
        assert_eq!(
            resources[0]["access"],
            json!({"type": "localBlob", "localReference": digest_of(b"chart bytes"),
                "mediaType": "application/x-tgz", "size": 11})
        );
        assert_eq!(resources[1]["access"]["type"], "ociRegistry");
        assert_eq!(
            stored.repository_context().unwrap(),
            json!({"type": "ociRegistry", "baseUrl": "r.test/p"})
        );

        std::fs::remove_file(dir.path().join("blobs/chart.tgz")).unwrap();
        let error = localize(&local, &local.descriptors()[0], "r.test/p")
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("resource \"chart\" of component example.test/c:v1"),
            "{error}"
        );
    }

    #[test]
    fn pull_secrets_give_credentials_by_host() {
        let config = r#"{"auths": {"https://r.example:5000": {"auth": "dTpw"}, "o.example": {"username": "a", "password": "b"}}}"#;
        assert_eq!(
            docker_credentials(config, "r.example:5000").unwrap(),
            Some(("u".into(), "p".into()))
        );
        assert_eq!(
            docker_credentials(config, "o.example").unwrap(),
            Some(("a".into(), "b".into()))
        );
        assert_eq!(docker_credentials(config, "x").unwrap(), None);
    }
}
