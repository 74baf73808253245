//! OCM's Common Transport Format (CTF): an OCI repository kept as files, so that component
//! versions can travel to a fenced site as one folder or archive.
//!
//! A CTF holds `artifact-index.json` (`{schemaVersion: 1, artifacts: [{repository, tag,
//! digest}]}`) and `blobs/sha256.<hex>`, one file per blob. A component version is the artifact
//! `component-descriptors/<component name>` tagged with its version; its manifest names a config
//! whose `componentDescriptorLayer` (else layer 0) is the descriptor, as a tar holding
//! `component-descriptor.yaml` or as plain YAML/JSON. Local blobs (`localBlob` access) are blobs
//! of the CTF named by their digest. The three file formats OCM writes are read: `directory`,
//! `tar` and `tgz` (a tar of the directory, gzipped).
//!
//! A CTF is a local, trusted file like a `type: local` folder: its blobs are not checked against
//! their digests.

use std::collections::HashMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use crate::Error;
use crate::component::Descriptor;
use crate::resource_ref::ComponentSource;

/// The file listing a CTF's artifacts.
pub const ARTIFACT_INDEX: &str = "artifact-index.json";
/// The folder holding a CTF's blobs.
pub const BLOBS_DIR: &str = "blobs";
/// The OCI repository prefix of component versions.
const COMPONENT_PREFIX: &str = "component-descriptors/";
/// Archives larger than this are refused.
const MAX_ARCHIVE_SIZE: u64 = 1024 * 1024 * 1024;

/// How a CTF is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FileFormat {
    /// A folder.
    Directory,
    /// A tar archive of the folder.
    Tar,
    /// A gzipped tar archive of the folder.
    Tgz,
}

impl FileFormat {
    /// The format a repository context's `fileFormat` names.
    pub fn parse(name: &str) -> Result<Self, Error> {
        match name {
            "directory" => Ok(Self::Directory),
            "tar" => Ok(Self::Tar),
            "tgz" | "tar+gzip" => Ok(Self::Tgz),
            other => Err(Error::Component(format!(
                "repository context: unknown fileFormat {other:?} (directory, tar or tgz)"
            ))),
        }
    }

    /// The format of what is at `path`: a folder, or an archive told by its first bytes.
    pub fn detect(path: &Path) -> Result<Self, Error> {
        if path.is_dir() {
            return Ok(Self::Directory);
        }
        let mut magic = [0u8; 2];
        std::fs::File::open(path)
            .and_then(|mut f| f.read_exact(&mut magic))
            .map_err(|e| Error::Component(format!("CTF {}: {e}", path.display())))?;
        Ok(if magic == [0x1f, 0x8b] {
            Self::Tgz
        } else {
            Self::Tar
        })
    }
}

/// Where a CTF's files are: on disk, or read into memory from an archive.
#[derive(Debug)]
enum Files {
    Directory(PathBuf),
    Archive(HashMap<String, Vec<u8>>),
}

/// An opened CTF.
#[derive(Debug)]
pub struct Ctf {
    path: PathBuf,
    files: Files,
    /// `(repository, tag)` → manifest digest.
    index: HashMap<(String, String), String>,
}

impl Ctf {
    /// Opens the CTF at `path`, stored in `format` (detected when `None`).
    pub fn open(path: &Path, format: Option<FileFormat>) -> Result<Self, Error> {
        let fail = |what: String| Error::Component(format!("CTF {}: {what}", path.display()));
        let format = match format {
            Some(format) => format,
            None => FileFormat::detect(path)?,
        };
        let files = match format {
            FileFormat::Directory => Files::Directory(path.to_path_buf()),
            FileFormat::Tar | FileFormat::Tgz => {
                let file = std::fs::File::open(path).map_err(|e| fail(e.to_string()))?;
                let reader: Box<dyn std::io::Read> = if format == FileFormat::Tgz {
                    Box::new(flate2::read::GzDecoder::new(file).take(MAX_ARCHIVE_SIZE))
                } else {
                    Box::new(file.take(MAX_ARCHIVE_SIZE))
                };
                Files::Archive(
                    crate::archive::files(reader)
                        .map_err(fail)?
                        .into_iter()
                        .collect(),
                )
            }
        };
        let mut ctf = Self {
            path: path.to_path_buf(),
            files,
            index: HashMap::new(),
        };
        let index = ctf.file(ARTIFACT_INDEX).map_err(fail)?;
        let index: Json = serde_json::from_slice(&index)
            .map_err(|e| fail(format!("{ARTIFACT_INDEX} is not JSON: {e}")))?;
        for artifact in index["artifacts"].as_array().into_iter().flatten() {
            let field = |key: &str| artifact.get(key).and_then(Json::as_str);
            if let (Some(repository), Some(tag), Some(digest)) =
                (field("repository"), field("tag"), field("digest"))
            {
                ctf.index.insert(
                    (repository.to_string(), tag.to_string()),
                    digest.to_string(),
                );
            }
        }
        Ok(ctf)
    }

    /// Where the CTF is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A file of the CTF by its path inside it.
    fn file(&self, name: &str) -> Result<Vec<u8>, String> {
        match &self.files {
            Files::Directory(root) => {
                let path = root.join(name);
                std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))
            }
            Files::Archive(files) => files
                .get(name)
                .cloned()
                .ok_or_else(|| format!("the archive has no {name}")),
        }
    }

    /// A blob by digest (`sha256:<hex>`).
    pub fn blob(&self, digest: &str) -> Result<Vec<u8>, Error> {
        let (algorithm, hex) = digest.split_once(':').ok_or_else(|| {
            Error::Component(format!(
                "CTF {}: {digest:?} is not a digest",
                self.path.display()
            ))
        })?;
        if hex.is_empty() || !hex.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return Err(Error::Component(format!(
                "CTF {}: {digest:?} is not a digest",
                self.path.display()
            )));
        }
        self.file(&format!("{BLOBS_DIR}/{algorithm}.{hex}"))
            .map_err(|e| {
                Error::Component(format!("CTF {}: blob {digest}: {e}", self.path.display()))
            })
    }

    /// The descriptor of component `name` in `version`.
    pub fn descriptor(&self, name: &str, version: &str) -> Result<Descriptor, Error> {
        let fail = |what: String| {
            Error::Component(format!(
                "component {name}:{version} in CTF {}: {what}",
                self.path.display()
            ))
        };
        let repository = format!("{COMPONENT_PREFIX}{name}");
        // OCI tags cannot hold `+`; OCM writes a version's build metadata as `.build-`.
        let digest = [version.to_string(), version.replace('+', ".build-")]
            .iter()
            .find_map(|tag| self.index.get(&(repository.clone(), tag.clone())))
            .ok_or_else(|| fail("not found in the artifact index".into()))?;
        let manifest: Json = serde_json::from_slice(&self.blob(digest)?)
            .map_err(|e| fail(format!("manifest {digest} is not JSON: {e}")))?;
        let layer = self.descriptor_layer(&manifest).map_err(fail)?;
        let field = |key: &str| layer.get(key).and_then(Json::as_str).unwrap_or_default();
        let data = self.blob(field("digest"))?;
        let text = if field("mediaType").ends_with("tar") {
            crate::archive::tar_file(&data, crate::archive::DESCRIPTOR_FILE).map_err(fail)?
        } else {
            String::from_utf8(data).map_err(|_| fail("the descriptor is not UTF-8".into()))?
        };
        let json = crate::values::parse_yaml(&text).map_err(fail)?;
        Descriptor::from_json(json).map_err(|e| fail(e.to_string()))
    }

    /// The content of a resource of `descriptor` stored in the CTF: a local blob named by its
    /// access's `localReference`.
    pub fn local_blob(&self, descriptor: &Descriptor, resource: &Json) -> Result<Vec<u8>, Error> {
        let field = |key: &str| {
            resource
                .pointer(&format!("/access/{key}"))
                .and_then(Json::as_str)
        };
        let fail = |what: String| {
            Error::Component(format!(
                "resource {:?} of component {}:{}: {what}",
                resource
                    .get("name")
                    .and_then(Json::as_str)
                    .unwrap_or_default(),
                descriptor.name(),
                descriptor.version()
            ))
        };
        match field("type").unwrap_or_default() {
            "localBlob" | "localBlob/v1" | "localOciBlob" | "localOciBlob/v1" => {
                let digest = field("localReference")
                    .or_else(|| field("digest"))
                    .ok_or_else(|| fail("access.localReference is missing".into()))?;
                self.blob(digest).map_err(|e| fail(e.to_string()))
            }
            other => Err(fail(format!(
                "access type {other:?} is not stored in a transport archive"
            ))),
        }
    }

    /// The layer holding the descriptor: the config's `componentDescriptorLayer`, else layer 0.
    fn descriptor_layer(&self, manifest: &Json) -> Result<Json, String> {
        if let Some(config) = manifest.pointer("/config/digest").and_then(Json::as_str) {
            let config = self.blob(config).map_err(|e| e.to_string())?;
            if let Ok(config) = serde_json::from_slice::<Json>(&config)
                && let Some(layer) = config.get("componentDescriptorLayer")
            {
                return Ok(layer.clone());
            }
        }
        manifest
            .pointer("/layers/0")
            .cloned()
            .ok_or_else(|| "the manifest has no layer".to_string())
    }
}

impl ComponentSource for Ctf {
    fn descriptor(&self, name: &str, version: &str) -> Result<Descriptor, Error> {
        Ctf::descriptor(self, name, version)
    }

    fn content(
        &self,
        descriptor: &Descriptor,
        resource: &Json,
    ) -> Result<std::sync::Arc<Vec<u8>>, Error> {
        self.local_blob(descriptor, resource)
            .map(std::sync::Arc::new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::digest_of;

    /// Writes a CTF folder holding one component version with one local blob.
    fn write_ctf(root: &Path, descriptor_yaml: &str, blob: &[u8]) {
        std::fs::create_dir_all(root.join(BLOBS_DIR)).unwrap();
        let put = |data: &[u8]| {
            let digest = digest_of(data);
            let name = digest.replace(':', ".");
            std::fs::write(root.join(BLOBS_DIR).join(name), data).unwrap();
            digest
        };
        let layer =
            crate::archive::tar_of(crate::archive::DESCRIPTOR_FILE, descriptor_yaml.as_bytes())
                .unwrap();
        let layer_digest = put(&layer);
        put(blob);
        let config = serde_json::json!({"componentDescriptorLayer": {
            "mediaType": "application/vnd.ocm.software.component-descriptor.v2+yaml+tar",
            "digest": layer_digest, "size": layer.len()}});
        let config_digest = put(config.to_string().as_bytes());
        let manifest = serde_json::json!({"schemaVersion": 2,
            "config": {"mediaType": "application/vnd.ocm.software.component.config.v1+json", "digest": config_digest},
            "layers": [{"mediaType": "application/vnd.ocm.software.component-descriptor.v2+yaml+tar", "digest": layer_digest}]});
        let manifest_digest = put(manifest.to_string().as_bytes());
        let index = serde_json::json!({"schemaVersion": 1, "artifacts": [
            {"repository": "component-descriptors/example.test/c", "tag": "1.0.0.build-7", "digest": manifest_digest}]});
        std::fs::write(root.join(ARTIFACT_INDEX), index.to_string()).unwrap();
    }

    const DESCRIPTOR: &str = "meta: {schemaVersion: v2}\ncomponent: {name: example.test/c, version: 1.0.0+7, provider: internal, repositoryContexts: [], sources: [], componentReferences: [], resources: []}\n";

    #[test]
    fn folders_and_archives_of_a_ctf_are_read_alike() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("ctf");
        write_ctf(&root, DESCRIPTOR, b"blob");
        let ctf = Ctf::open(&root, None).unwrap();
        let descriptor = ctf.descriptor("example.test/c", "1.0.0+7").unwrap();
        assert_eq!(descriptor.version(), "1.0.0+7");
        assert_eq!(ctf.blob(&digest_of(b"blob")).unwrap(), b"blob");

        let archive = dir.path().join("ctf.tgz");
        let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
            std::fs::File::create(&archive).unwrap(),
            flate2::Compression::default(),
        ));
        builder.append_dir_all(".", &root).unwrap();
        builder.into_inner().unwrap().finish().unwrap();
        let packed = Ctf::open(&archive, None).unwrap();
        assert_eq!(
            packed.descriptor("example.test/c", "1.0.0+7").unwrap(),
            descriptor
        );
    }

    #[test]
    fn missing_versions_and_bad_digests_name_what_is_missing() {
        let dir = tempfile::tempdir().unwrap();
        write_ctf(dir.path(), DESCRIPTOR, b"blob");
        let ctf = Ctf::open(dir.path(), Some(FileFormat::Directory)).unwrap();
        let error = ctf
            .descriptor("example.test/c", "2.0.0")
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("component example.test/c:2.0.0 in CTF")
                && error.ends_with("not found in the artifact index"),
            "{error}"
        );
        assert!(ctf.blob("sha256:../../etc").is_err());
        assert!(FileFormat::parse("zip").is_err());
    }
}
