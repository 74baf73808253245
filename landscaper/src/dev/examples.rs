//! Applying the example manifests in dev mode: the DeployerRegistrations of
//! `deployer-registrations/` first, then the files at the top of the examples folder (the user's
//! Installations and DeployItems), each document server-side applied so a re-run is harmless.

use std::path::{Path, PathBuf};

use k8s_openapi::api::core::v1::Namespace;
use kube::ResourceExt;
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use kube::core::GroupVersionKind;
use kube::discovery::{Scope, pinned_kind};
use landscaper_api::decode::yaml_documents;
use serde_json::Value;
use tracing::info;

use super::DevError;

/// Field manager of the manifests dev mode applies.
const MANAGER: &str = "landscaper-dev";
/// The subfolder of the examples holding DeployerRegistrations, applied before the rest.
pub const REGISTRATIONS: &str = "deployer-registrations";

/// An object dev mode applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Applied {
    /// Its kind.
    pub kind: String,
    /// Its namespace; empty for cluster-scoped objects.
    pub namespace: String,
    /// Its name.
    pub name: String,
}

/// Creates the namespace `name` unless it exists.
pub async fn ensure_namespace(client: &kube::Client, name: &str) -> Result<(), DevError> {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let namespace = serde_json::json!({ "apiVersion": "v1", "kind": "Namespace", "metadata": { "name": name } });
    namespaces
        .patch(
            name,
            &PatchParams::apply(MANAGER).force(),
            &Patch::Apply(namespace),
        )
        .await
        .map_err(super::api(&format!("creating namespace {name}")))?;
    Ok(())
}

/// The example files at `path` (a folder, or one file), in the order they are applied: the
/// registrations of [`REGISTRATIONS`] first, then the top-level files, each group by name.
pub fn files(path: &Path) -> Result<Examples, DevError> {
    if !path.is_dir() {
        return Ok(Examples {
            registrations: Vec::new(),
            user: vec![path.to_owned()],
        });
    }
    let registrations = path.join(REGISTRATIONS);
    Ok(Examples {
        registrations: if registrations.is_dir() {
            yaml_files(&registrations)?
        } else {
            Vec::new()
        },
        user: yaml_files(path)?,
    })
}

/// The example files, by when dev mode applies them.
#[derive(Clone, Debug, Default)]
pub struct Examples {
    /// DeployerRegistrations, applied first.
    pub registrations: Vec<PathBuf>,
    /// The user's manifests, applied once every environment is registered (their imports
    /// name the environments' Targets).
    pub user: Vec<PathBuf>,
}

/// Applies every document of `files`. Relative `filePath`s of `type: local` repository
/// contexts are resolved against `base` (the repository root the examples name them from).
pub async fn apply(
    client: &kube::Client,
    files: &[PathBuf],
    base: &Path,
) -> Result<Vec<Applied>, DevError> {
    let mut applied = Vec::new();
    for file in files {
        let name = file.display().to_string();
        let text = std::fs::read_to_string(file).map_err(|e| DevError::Example {
            file: name.clone(),
            message: e.to_string(),
        })?;
        let documents = yaml_documents(&text, &name).map_err(|e| DevError::Example {
            file: name.clone(),
            message: e.to_string(),
        })?;
        for mut document in documents {
            resolve_local_repositories(&mut document, base);
            applied.push(apply_document(client, document, &name).await?);
        }
    }
    Ok(applied)
}

/// The YAML files directly in `folder`, sorted by name.
fn yaml_files(folder: &Path) -> Result<Vec<PathBuf>, DevError> {
    let entries = std::fs::read_dir(folder).map_err(|e| DevError::Example {
        file: folder.display().to_string(),
        message: e.to_string(),
    })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .collect();
    files.sort();
    Ok(files)
}

/// Makes the relative `filePath` of a local repository context absolute under `base`: the
/// examples name their component folder relative to the repository root, and the landscaper
/// reads it relative to its working directory, which in a test is not that root.
fn resolve_local_repositories(document: &mut Value, base: &Path) {
    let descriptor = match document["kind"].as_str() {
        Some("DeployerRegistration") => {
            &mut document["spec"]["installationTemplate"]["componentDescriptor"]
        }
        Some("Installation") => &mut document["spec"]["componentDescriptor"],
        _ => return,
    };
    let Some(context) = descriptor
        .pointer_mut("/ref/repositoryContext")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    if context.get("type").and_then(Value::as_str) != Some("local") {
        return;
    }
    if let Some(Value::String(file_path)) = context.get_mut("filePath")
        && Path::new(file_path.as_str()).is_relative()
    {
        *file_path = base.join(file_path.as_str()).display().to_string();
    }
}

async fn apply_document(
    client: &kube::Client,
    document: Value,
    file: &str,
) -> Result<Applied, DevError> {
    let fail = |message: String| DevError::Example {
        file: file.to_owned(),
        message,
    };
    let object: DynamicObject =
        serde_json::from_value(document.clone()).map_err(|e| fail(e.to_string()))?;
    let types = object
        .types
        .as_ref()
        .ok_or_else(|| fail("a document has no apiVersion/kind".into()))?;
    let gvk = GroupVersionKind::try_from(types).map_err(|e| fail(e.to_string()))?;
    let (resource, capabilities) = pinned_kind(client, &gvk)
        .await
        .map_err(|e| fail(format!("{}: {e}", types.kind)))?;
    let name = object.name_any();
    let (objects, namespace): (Api<DynamicObject>, String) = match capabilities.scope {
        Scope::Namespaced => {
            let namespace = object.namespace().unwrap_or_else(|| "default".to_owned());
            ensure_namespace(client, &namespace).await?;
            (
                Api::namespaced_with(client.clone(), &namespace, &resource),
                namespace,
            )
        }
        Scope::Cluster => (Api::all_with(client.clone(), &resource), String::new()),
    };
    objects
        .patch(
            &name,
            &PatchParams::apply(MANAGER).force(),
            &Patch::Apply(document),
        )
        .await
        .map_err(super::api(&format!(
            "applying {} {name} from {file}",
            types.kind
        )))?;
    info!(kind = %types.kind, name = %name, file = %file, "applied example");
    Ok(Applied {
        kind: types.kind.clone(),
        namespace,
        name,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn relative_local_repositories_are_resolved_against_the_base() {
        let mut registration = json!({
            "kind": "DeployerRegistration",
            "spec": {"installationTemplate": {"componentDescriptor": {"ref": {
                "repositoryContext": {"type": "local", "filePath": "examples/components"}
            }}}}
        });
        resolve_local_repositories(&mut registration, Path::new("/repo"));
        assert_eq!(
            registration.pointer(
                "/spec/installationTemplate/componentDescriptor/ref/repositoryContext/filePath"
            ),
            Some(&json!("/repo/examples/components"))
        );

        let mut absolute = json!({
            "kind": "Installation",
            "spec": {"componentDescriptor": {"ref": {
                "repositoryContext": {"type": "local", "filePath": "/elsewhere"}
            }}}
        });
        let before = absolute.clone();
        resolve_local_repositories(&mut absolute, Path::new("/repo"));
        assert_eq!(absolute, before);

        let mut registry = json!({
            "kind": "Installation",
            "spec": {"componentDescriptor": {"ref": {
                "repositoryContext": {"type": "ociRegistry", "filePath": "x"}
            }}}
        });
        let before = registry.clone();
        resolve_local_repositories(&mut registry, Path::new("/repo"));
        assert_eq!(registry, before);
    }
}
