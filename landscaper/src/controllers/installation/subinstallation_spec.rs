//! The spec of a subinstallation from its template: the blueprint inline, or a resource of the
//! parent's component (`cd://resources/<name>`) or of a component it references
//! (`cd://componentReferences/<reference>/resources/<name>`); the parent's context; and the
//! template's imports, without those that read an optional import of the parent that is not
//! set (upstream removes them, so a subinstallation of an optional feature still runs).

use std::collections::BTreeSet;

use landscaper_api::core::{ImportDefinition, Installation, InstallationTemplate};
use landscaper_blueprint::ExecutionOptions;
use serde_json::{Value as Json, json};

const RESOURCES: &str = "cd://resources/";
const REFERENCES: &str = "cd://componentReferences/";

/// The subinstallation spec `template` makes under `parent`, whose blueprint runs with
/// `options`; `Err` names the template and what is wrong with its blueprint reference.
pub fn spec(
    parent: &Installation,
    template: &InstallationTemplate,
    options: &ExecutionOptions,
) -> Result<Json, String> {
    let unset = unset_imports(&options.blueprint.imports, options);
    let mut spec = json!({
        "context": parent.spec.context,
        "imports": without_unset(template, &unset),
        "importDataMappings": template.import_data_mappings,
        "exports": template.exports,
        "exportDataMappings": template.export_data_mappings,
    });
    if let Some(filesystem) = &template.blueprint.filesystem {
        spec["blueprint"] = json!({"inline": {"filesystem": filesystem}});
    } else if let Some(reference) = &template.blueprint.reference {
        let (resource, component) = blueprint_source(parent, reference, options).map_err(|e| {
            format!(
                "subinstallation {}: blueprint.ref {reference:?}: {e}",
                template.name
            )
        })?;
        spec["blueprint"] = json!({"ref": {"resourceName": resource}});
        spec["componentDescriptor"] = component;
    }
    Ok(spec)
}

/// The resource name and the component descriptor definition a `cd://` reference names.
fn blueprint_source(
    parent: &Installation,
    reference: &str,
    options: &ExecutionOptions,
) -> Result<(String, Json), String> {
    if let Some(resource) = reference.strip_prefix(RESOURCES) {
        return Ok((resource.to_owned(), json!(parent.spec.component_descriptor)));
    }
    let Some(rest) = reference.strip_prefix(REFERENCES) else {
        return Err(format!(
            "neither {RESOURCES}<name> nor {REFERENCES}<reference>/resources/<name>"
        ));
    };
    let (name, resource) = rest
        .split_once("/resources/")
        .filter(|(name, resource)| !name.contains('/') && !resource.is_empty())
        .ok_or_else(|| {
            format!("{REFERENCES}<reference>/resources/<name> with one reference only")
        })?;
    let component = options
        .component
        .as_ref()
        .ok_or("the parent has no component descriptor")?;
    let selector = [("name".to_owned(), name.to_owned())];
    let referenced = component
        .references(&selector)
        .into_iter()
        .next()
        .ok_or_else(|| {
            format!(
                "component {}:{} has no component reference {name:?}",
                component.name(),
                component.version()
            )
        })?;
    let repository_context = parent
        .spec
        .component_descriptor
        .as_ref()
        .and_then(|c| c.reference.as_ref())
        .and_then(|r| r.repository_context.clone());
    let definition = json!({"ref": {
        "repositoryContext": repository_context,
        "componentName": referenced["componentName"],
        "version": referenced["version"],
    }});
    Ok((resource.to_owned(), definition))
}

/// The names of the blueprint's optional imports (and of the conditional imports below them)
/// that the running job does not have.
fn unset_imports(definitions: &[ImportDefinition], options: &ExecutionOptions) -> BTreeSet<String> {
    let mut unset = BTreeSet::new();
    for definition in definitions {
        if !options.imports.contains_key(&definition.name) {
            unset.insert(definition.name.clone());
        }
        unset.extend(unset_imports(&definition.imports, options));
    }
    unset
}

/// The template's imports without those that read an unset import of the parent.
fn without_unset(template: &InstallationTemplate, unset: &BTreeSet<String>) -> Json {
    let Some(imports) = &template.imports else {
        return Json::Null;
    };
    let mut imports = imports.clone();
    if let Some(data) = imports.data.as_mut() {
        data.retain(|import| import.data_ref.as_ref().is_none_or(|r| !unset.contains(r)));
    }
    if let Some(targets) = imports.targets.as_mut() {
        targets.retain(|import| import.target.as_ref().is_none_or(|t| !unset.contains(t)));
    }
    json!(imports)
}
