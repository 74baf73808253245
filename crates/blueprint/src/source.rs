//! Where an installation's blueprint comes from: inline (`spec.blueprint.inline.filesystem`),
//! or a resource of its component (`spec.blueprint.ref.resourceName`), the component given
//! inline (`spec.componentDescriptor.inline`) or by reference (`spec.componentDescriptor.ref`)
//! in the repository of the reference or else of the installation's Context.

use landscaper_api::core::{Blueprint, Context, InstallationSpec};
use serde_json::Value as Json;

use crate::component::Descriptor;
use crate::filesystem::Filesystem;
use crate::registry::{RegistryAccess, Repository};
use crate::{Error, load};

/// The Context an installation uses when `spec.context` is empty.
pub const DEFAULT_CONTEXT: &str = "default";

/// The name of the Context an installation uses.
pub fn context_name(spec: &InstallationSpec) -> &str {
    spec.context
        .as_deref()
        .filter(|name| !name.is_empty())
        .unwrap_or(DEFAULT_CONTEXT)
}

/// The names of the docker config Secrets a Context gives for registries.
pub fn pull_secret_names(context: &Context) -> Vec<String> {
    context
        .registry_pull_secrets
        .iter()
        .map(|secret| secret.name.clone())
        .collect()
}

/// A blueprint ready to run, with the component it came from.
#[derive(Clone, Debug)]
pub struct ResolvedBlueprint {
    /// The blueprint.
    pub blueprint: Blueprint,
    /// Its filesystem.
    pub filesystem: Filesystem,
    /// The installation's component descriptor, if it has one.
    pub component: Option<Descriptor>,
    /// The repository the component is stored in, if it came from one.
    pub repository: Option<Repository>,
    /// The component and every component it references, transitively (what templates see as
    /// `.components` and `getComponent` looks in), when it came from a repository.
    pub components: Option<Vec<Descriptor>>,
}

/// Resolves an installation's blueprint and component descriptor; `context` is the
/// installation's Context, if it exists. Errors name the installation field at fault.
pub async fn resolve(
    spec: &InstallationSpec,
    context: Option<&Context>,
    access: &RegistryAccess,
) -> Result<ResolvedBlueprint, Error> {
    let (component, repository) = component(spec, context, access).await?;
    let filesystem = match (&spec.blueprint.inline, &spec.blueprint.reference) {
        (Some(inline), _) => Filesystem::from_inline(&inline.filesystem)?,
        (None, Some(reference)) => {
            let (Some(descriptor), Some(repository)) = (&component, &repository) else {
                return Err(Error::Blueprint(format!(
                    "spec.blueprint.ref.resourceName {:?}: the installation has no component descriptor in a repository (spec.componentDescriptor.ref)",
                    reference.resource_name
                )));
            };
            access
                .blueprint(repository, descriptor, &reference.resource_name)
                .await?
        }
        (None, None) => {
            return Err(Error::Blueprint(
                "spec.blueprint: neither inline nor ref is set".into(),
            ));
        }
    };
    let blueprint = load::load(&filesystem)?.blueprint;
    let components = match (&component, &repository) {
        (Some(descriptor), Some(repository)) => Some(
            access
                .transitive_components(repository, descriptor)
                .await
                .map_err(|e| {
                    Error::Component(format!(
                        "the component references of {}:{}: {e}",
                        descriptor.name(),
                        descriptor.version()
                    ))
                })?,
        ),
        _ => None,
    };
    Ok(ResolvedBlueprint {
        blueprint,
        filesystem,
        component,
        repository,
        components,
    })
}

async fn component(
    spec: &InstallationSpec,
    context: Option<&Context>,
    access: &RegistryAccess,
) -> Result<(Option<Descriptor>, Option<Repository>), Error> {
    let Some(definition) = &spec.component_descriptor else {
        return Ok((None, None));
    };
    if let Some(inline) = &definition.inline {
        let descriptor = Descriptor::from_json(inline.clone())
            .map_err(|e| Error::Component(format!("spec.componentDescriptor.inline: {e}")))?;
        let repository = descriptor
            .repository_context()
            .and_then(|c| Repository::from_context(&c).ok());
        return Ok((Some(descriptor), repository));
    }
    let Some(reference) = &definition.reference else {
        return Ok((None, None));
    };
    let repository_context: Json = reference
        .repository_context
        .clone()
        .or_else(|| context.and_then(|c| c.repository_context.clone()))
        .ok_or_else(|| {
            Error::Component(format!(
                "spec.componentDescriptor.ref: no repositoryContext, and the Context {:?} gives none",
                context_name(spec)
            ))
        })?;
    let repository = Repository::from_context(&repository_context)?;
    let descriptor = access
        .descriptor(&repository, &reference.component_name, &reference.version)
        .await?;
    Ok((Some(descriptor), Some(repository)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::RegistryOptions;
    use serde_json::json;

    fn spec_of(value: Json) -> InstallationSpec {
        serde_json::from_value(value).unwrap()
    }

    #[tokio::test]
    async fn inline_blueprints_resolve_without_a_registry() {
        let spec = spec_of(json!({"blueprint": {"inline": {"filesystem": {
            "blueprint.yaml": "kind: Blueprint\nimports:\n- name: a\n  type: data\n"
        }}}}));
        let access = RegistryAccess::new(RegistryOptions::default());
        let resolved = resolve(&spec, None, &access).await.unwrap();
        assert_eq!(resolved.blueprint.imports[0].name, "a");
        assert!(resolved.component.is_none());
    }

    #[tokio::test]
    async fn a_reference_without_a_repository_names_the_field() {
        let access = RegistryAccess::new(RegistryOptions::default());
        let spec = spec_of(json!({
            "blueprint": {"ref": {"resourceName": "bp"}},
            "componentDescriptor": {"ref": {"componentName": "c", "version": "1"}}
        }));
        let err = resolve(&spec, None, &access).await.unwrap_err().to_string();
        assert_eq!(
            err,
            "component: spec.componentDescriptor.ref: no repositoryContext, and the Context \"default\" gives none"
        );
        let no_component = spec_of(json!({"blueprint": {"ref": {"resourceName": "bp"}}}));
        let err = resolve(&no_component, None, &access)
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("spec.blueprint.ref.resourceName \"bp\""),
            "{err}"
        );
    }

    #[tokio::test]
    async fn the_context_gives_the_repository_of_a_reference() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("c.yaml"),
            "meta: {schemaVersion: v2}\ncomponent: {name: c, version: '1', provider: internal, repositoryContexts: [], sources: [], componentReferences: [], resources: []}\n",
        )
        .unwrap();
        let context: Context = serde_json::from_value(json!({
            "metadata": {"name": "default"},
            "repositoryContext": {"type": "local", "filePath": dir.path().to_string_lossy()}
        }))
        .unwrap();
        let spec = spec_of(json!({
            "blueprint": {"inline": {"filesystem": {"blueprint.yaml": "kind: Blueprint\n"}}},
            "componentDescriptor": {"ref": {"componentName": "c", "version": "1"}}
        }));
        let access = RegistryAccess::new(RegistryOptions::default());
        let resolved = resolve(&spec, Some(&context), &access).await.unwrap();
        assert_eq!(resolved.component.unwrap().name(), "c");
        assert!(matches!(
            resolved.repository,
            Some(Repository::Local { .. })
        ));
    }
}
