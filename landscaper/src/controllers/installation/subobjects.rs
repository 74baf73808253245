//! The objects an installation's blueprint makes: its Execution (named as the installation,
//! with the deploy items of `deployExecutions`) and its subinstallations (the blueprint's
//! `subinstallations` and `subinstallationExecutions`, named `<template>-<random>` through
//! `generateName` as upstream does and found again by their template-name annotation), created or
//! updated with owner references; obsolete ones are deleted.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::{Resource, ResourceExt};
use landscaper_api::core::{
    DeployItemTemplate, Execution, ImportDefinition, Installation, InstallationTemplate,
    ObjectReference, SubNamePair,
};
use landscaper_blueprint::source::{self, ResolvedBlueprint};
use landscaper_blueprint::{
    ComponentSource, DeployItemSpecification, ExecutionOptions, RepositorySource, StateHandler,
    TargetResolver, Templater, targets,
};
use serde_json::{Map, Value as Json, json};

use super::operations::children;
use super::subinstallation_spec;
use super::targets::ClusterTargets;
use super::{Context, ENCOMPASSED_BY, Error, SUBINSTALLATION_NAME};

/// What an installation's blueprint makes, or why it could not be made.
pub struct Desired {
    /// The Execution's deploy items (none: no Execution).
    pub deploy_items: Vec<DeployItemTemplate>,
    /// The subinstallations: their template's name and their spec.
    pub subinstallations: Vec<(String, Json)>,
}

/// Resolves the blueprint; `Err(message)` names what is wrong with the installation's input.
pub async fn blueprint(
    installation: &Installation,
    context: &Context,
) -> Result<Result<ResolvedBlueprint, String>, Error> {
    let context_name = source::context_name(&installation.spec);
    let ls_context = context.ls_context(installation, context_name).await?;
    Ok(
        source::resolve(&installation.spec, ls_context.as_ref(), &context.registry)
            .await
            .map_err(|e| format!("blueprint: {e}")),
    )
}

/// Runs the blueprint's deploy and subinstallation executions on `options.imports`, with
/// their stored `state`.
pub fn render(
    installation: &Installation,
    options: &ExecutionOptions,
    state: &dyn StateHandler,
) -> Result<Desired, String> {
    let imports = &options.imports;
    let templater = Templater::new(state);
    let items = templater
        .deploy_executions(options)
        .map_err(|e| e.to_string())?;
    let namespace = installation.namespace().unwrap_or_default();
    let deploy_items = items
        .into_iter()
        .map(|item| deploy_item(item, &options.blueprint.imports, imports, &namespace))
        .collect::<Result<Vec<_>, _>>()?;
    let mut subinstallations = Vec::new();
    for template in &options.blueprint.subinstallations {
        match (&template.file, &template.template) {
            (Some(file), _) => {
                let text = options
                    .filesystem
                    .read_text(file)
                    .map_err(|e| e.to_string())?;
                let decoded: InstallationTemplate = landscaper_api::decode::from_yaml(text, file)
                    .map_err(|e| format!("subinstallation file {file}: {e}"))?
                    .value;
                subinstallations.push(decoded);
            }
            (None, Some(inline)) => subinstallations.push(inline.clone()),
            (None, None) => return Err("a subinstallation has neither file nor template".into()),
        }
    }
    subinstallations.extend(
        templater
            .subinstallation_executions(options)
            .map_err(|e| e.to_string())?,
    );
    let mut names = std::collections::BTreeSet::new();
    for template in &subinstallations {
        if !names.insert(template.name.clone()) {
            return Err(format!(
                "two subinstallations are named {:?}",
                template.name
            ));
        }
    }
    let subinstallations = subinstallations
        .iter()
        .map(|t| {
            Ok((
                t.name.clone(),
                subinstallation_spec::spec(installation, t, options)?,
            ))
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(Desired {
        deploy_items,
        subinstallations,
    })
}

/// The options every execution of the installation's blueprint runs with: components and
/// resource contents the templates ask for (`getComponent`, `getResourceKey`,
/// `getResourceContent`) are looked up in the repository of the installation's component;
/// the kubeconfig functions read Targets and their Secrets in the installation's namespace.
pub fn options(
    installation: &Installation,
    resolved: &ResolvedBlueprint,
    imports: &Map<String, Json>,
    context: &Context,
) -> ExecutionOptions {
    let source = resolved.repository.clone().map(|repository| {
        Arc::new(RepositorySource {
            access: context.registry.clone(),
            repository,
        }) as Arc<dyn ComponentSource>
    });
    let targets = ClusterTargets::new(
        context.client.clone(),
        installation.namespace().unwrap_or_default(),
    );
    ExecutionOptions {
        blueprint: resolved.blueprint.clone(),
        filesystem: Arc::new(resolved.filesystem.clone()),
        installation: serde_json::to_value(installation).ok(),
        component: resolved.component.clone(),
        components: resolved.components.clone(),
        imports: imports.clone(),
        source,
        targets: Some(Arc::new(targets) as Arc<dyn TargetResolver>),
    }
}

/// The item as the Execution lists it, its target resolved among the installation's imports.
fn deploy_item(
    item: DeployItemSpecification,
    definitions: &[ImportDefinition],
    imports: &Map<String, Json>,
    namespace: &str,
) -> Result<DeployItemTemplate, String> {
    let target = targets::deploy_item_target(&item, definitions, imports, namespace)?;
    let mut value = serde_json::to_value(&item).map_err(|e| e.to_string())?;
    value["target"] = json!(target);
    serde_json::from_value(value).map_err(|e| format!("deploy item {}: {e}", item.name))
}

fn owner(installation: &Installation) -> OwnerReference {
    installation
        .controller_owner_ref(&())
        .expect("an Installation read from the API has a name and uid")
}

/// Creates, updates or (with no deploy items) deletes the installation's Execution.
pub async fn apply_execution(
    installation: &Installation,
    context: &Context,
    items: &[DeployItemTemplate],
) -> Result<Option<ObjectReference>, Error> {
    let name = installation.name_any();
    let api = context.executions(&installation.namespace().unwrap_or_default());
    let existing = context.execution(installation);
    if items.is_empty() {
        if existing.is_some() {
            api.delete(&name, &DeleteParams::default())
                .await
                .map_err(|source| {
                    Error::api(
                        installation,
                        format!("delete Execution {name}, which has no deploy items now"),
                        source,
                    )
                })?;
        }
        return Ok(None);
    }
    let spec = json!({"context": installation.spec.context, "deployItems": items});
    let update = || async {
        api.patch(
            &name,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": spec})),
        )
        .await
        .map_err(|source| Error::api(installation, format!("update Execution {name}"), source))
    };
    match existing {
        Some(current)
            if current.spec.deploy_items == items
                && current.spec.context == installation.spec.context => {}
        Some(_) => {
            update().await?;
        }
        None => {
            let execution: Execution = serde_json::from_value(json!({
                "metadata": {
                    "name": name,
                    "namespace": installation.namespace(),
                    "labels": {ENCOMPASSED_BY: name},
                    "ownerReferences": [owner(installation)],
                },
                "spec": spec,
            }))
            .expect("an Execution from its fields");
            match api.create(&PostParams::default(), &execution).await {
                Ok(_) => {}
                // The cache had not seen it yet.
                Err(kube::Error::Api(status)) if status.code == 409 => {
                    update().await?;
                }
                Err(source) => {
                    return Err(Error::api(
                        installation,
                        format!("create Execution {name}"),
                        source,
                    ));
                }
            }
        }
    }
    Ok(Some(ObjectReference {
        name,
        namespace: installation.namespace(),
    }))
}

/// Creates or updates the subinstallations and deletes those no template names any more;
/// returns the subinstallations now in use (object name, template name).
pub async fn apply_subinstallations(
    installation: &Installation,
    context: &Context,
    templates: &[(String, Json)],
) -> Result<Vec<SubNamePair>, Error> {
    let api = context.installations(&installation.namespace().unwrap_or_default());
    // Children are created with generated names: only the API server's list guarantees that
    // one created a moment ago is updated, not created twice. Without templates, the cache
    // serves to find obsolete ones.
    let children: Vec<Installation> = if templates.is_empty() {
        context
            .children(installation)
            .into_iter()
            .map(|child| (*child).clone())
            .collect()
    } else {
        children(installation, context).await?
    };
    let existing: BTreeMap<String, Installation> = children
        .into_iter()
        .filter_map(|child| {
            child
                .annotations()
                .get(SUBINSTALLATION_NAME)
                .cloned()
                .map(|n| (n, child))
        })
        .collect();
    let mut active = Vec::new();
    for (template_name, spec) in templates {
        let object_name = match existing.get(template_name) {
            Some(child) => {
                api.patch(
                    &child.name_any(),
                    &PatchParams::default(),
                    &Patch::Merge(json!({"spec": spec})),
                )
                .await
                .map_err(|source| {
                    Error::api(
                        installation,
                        format!("update subinstallation {}", child.name_any()),
                        source,
                    )
                })?;
                child.name_any()
            }
            None => {
                let child: Installation = serde_json::from_value(json!({
                    "metadata": {
                        "generateName": format!("{template_name}-"),
                        "namespace": installation.namespace(),
                        "labels": {ENCOMPASSED_BY: installation.name_any()},
                        "annotations": {SUBINSTALLATION_NAME: template_name},
                        "ownerReferences": [owner(installation)],
                    },
                    "spec": spec,
                }))
                .expect("an Installation from a decoded template's fields");
                api.create(&PostParams::default(), &child)
                    .await
                    .map_err(|source| {
                        Error::api(
                            installation,
                            format!("create subinstallation {template_name}"),
                            source,
                        )
                    })?
                    .name_any()
            }
        };
        active.push(SubNamePair {
            object_name: Some(object_name),
            spec_name: Some(template_name.clone()),
        });
    }
    for (template_name, child) in &existing {
        if !templates.iter().any(|(name, _)| name == template_name) {
            api.delete(&child.name_any(), &DeleteParams::default())
                .await
                .map_err(|source| {
                    Error::api(
                        installation,
                        format!("delete obsolete subinstallation {}", child.name_any()),
                        source,
                    )
                })?;
        }
    }
    Ok(active)
}
