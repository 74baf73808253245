//! The deploy items of an installation's Execution: each `DeployItemSpecification` a deploy
//! execution rendered becomes a `DeployItemTemplate` whose target reference is resolved from
//! the installation's imports, as upstream's `RenderDeployItemTemplates` resolves it, with
//! upstream's `invalid deployitem specification` messages.

use landscaper_api::core::{DeployItemTemplate, ImportDefinition, ObjectReference};
use landscaper_blueprint::{DeployItemSpecification, ExecutionOptions, TemplateTarget};
use serde_json::{Value as Json, json};

/// The deploy item template of `item`, its target resolved as upstream resolves it: a
/// `target` import to the imported Target, a `targetList` import with `index` to that element,
/// a `targetMap` import with `key` to that entry, a plain `name` to the Target of that name in
/// the installation's namespace.
pub fn deploy_item(
    item: DeployItemSpecification,
    options: &ExecutionOptions,
    namespace: &str,
) -> Result<DeployItemTemplate, String> {
    let target = match &item.target {
        None => None,
        Some(target) => Some(
            target_reference(target, options, namespace)
                .map_err(|e| format!("invalid deployitem specification {:?}: {e}", item.name))?,
        ),
    };
    let mut value = serde_json::to_value(&item).map_err(|e| e.to_string())?;
    value["target"] = json!(target);
    serde_json::from_value(value).map_err(|e| format!("deploy item {}: {e}", item.name))
}

fn target_reference(
    target: &TemplateTarget,
    options: &ExecutionOptions,
    namespace: &str,
) -> Result<ObjectReference, String> {
    let import = target.import.as_deref().unwrap_or_default();
    let imported = |kind: &str| {
        import_type(&options.blueprint.imports, import)
            .filter(|t| *t == kind)
            .and_then(|_| options.imports.get(import))
            .filter(|v| !v.is_null())
    };
    let chosen = if let Some(index) = target.index {
        let list = imported("targetList")
            .and_then(Json::as_array)
            .ok_or_else(|| format!("targetlist import {import:?} not found"))?;
        usize::try_from(index)
            .ok()
            .and_then(|i| list.get(i))
            .ok_or_else(|| format!("index {index} out of bounds"))?
    } else if let Some(key) = &target.key {
        let map = imported("targetMap")
            .and_then(Json::as_object)
            .ok_or_else(|| format!("targetmap import {import:?} not found"))?;
        map.get(key)
            .filter(|v| !v.is_null())
            .ok_or_else(|| format!("key {key:?} not found in targetmap import {import:?}"))?
    } else if !import.is_empty() {
        imported("target").ok_or_else(|| format!("target import {import:?} not found"))?
    } else {
        return match target.name.as_deref().filter(|n| !n.is_empty()) {
            Some(name) => Ok(ObjectReference {
                name: name.to_owned(),
                namespace: Some(namespace.to_owned()),
            }),
            None => Err("empty target reference".into()),
        };
    };
    let name = chosen["metadata"]["name"]
        .as_str()
        .ok_or_else(|| format!("import {import:?} holds no Target with a name"))?;
    let target_namespace = chosen["metadata"]["namespace"]
        .as_str()
        .filter(|ns| !ns.is_empty())
        .unwrap_or(namespace);
    Ok(ObjectReference {
        name: name.to_owned(),
        namespace: Some(target_namespace.to_owned()),
    })
}

/// The type (`data`, `target`, `targetList`, `targetMap`) of the import `name`, among the
/// definitions and their nested conditional imports.
fn import_type<'a>(definitions: &'a [ImportDefinition], name: &str) -> Option<&'a str> {
    definitions.iter().find_map(|definition| {
        if definition.name == name {
            // Upstream defaults a definition without a type to a target when it names a
            // target type.
            Some(
                definition
                    .type_
                    .as_deref()
                    .unwrap_or(if definition.target_type.is_some() {
                        "target"
                    } else {
                        "data"
                    }),
            )
        } else {
            import_type(&definition.imports, name)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> ExecutionOptions {
        let target = |name: &str| json!({"metadata": {"name": name, "namespace": "ns"}, "spec": {"type": "t"}});
        ExecutionOptions {
            blueprint: serde_json::from_value(json!({"imports": [
                {"name": "one", "targetType": "t"},
                {"name": "list", "type": "targetList", "targetType": "t"},
                {"name": "map", "type": "targetMap", "targetType": "t"},
                {"name": "data", "schema": {"type": "string"}},
            ]}))
            .unwrap(),
            imports: json!({
                "one": target("a"),
                "list": [target("b"), target("c")],
                "map": {"x": target("d")},
                "data": "text",
            })
            .as_object()
            .cloned()
            .unwrap(),
            ..Default::default()
        }
    }

    fn item(target: Json) -> DeployItemSpecification {
        serde_json::from_value(json!({"name": "di", "type": "mock", "target": target})).unwrap()
    }

    fn resolved(target: Json) -> Result<Option<ObjectReference>, String> {
        deploy_item(item(target), &options(), "ns").map(|t| t.target)
    }

    fn reference(name: &str) -> Option<ObjectReference> {
        Some(ObjectReference {
            name: name.into(),
            namespace: Some("ns".into()),
        })
    }

    #[test]
    fn every_kind_of_target_import_resolves_to_its_target() {
        assert_eq!(resolved(json!({"import": "one"})), Ok(reference("a")));
        assert_eq!(
            resolved(json!({"import": "list", "index": 1})),
            Ok(reference("c"))
        );
        assert_eq!(
            resolved(json!({"import": "map", "key": "x"})),
            Ok(reference("d"))
        );
        assert_eq!(resolved(json!({"name": "legacy"})), Ok(reference("legacy")));
    }

    #[test]
    fn wrong_references_are_named_as_upstream_names_them() {
        let cases = [
            (
                json!({"import": "list", "index": 2}),
                "index 2 out of bounds",
            ),
            (
                json!({"import": "one", "index": 0}),
                "targetlist import \"one\" not found",
            ),
            (
                json!({"import": "list"}),
                "target import \"list\" not found",
            ),
            (
                json!({"import": "data"}),
                "target import \"data\" not found",
            ),
            (
                json!({"import": "one", "key": "x"}),
                "targetmap import \"one\" not found",
            ),
            (
                json!({"import": "map", "key": "y"}),
                "key \"y\" not found in targetmap import \"map\"",
            ),
            (json!({}), "empty target reference"),
        ];
        for (target, message) in cases {
            assert_eq!(
                resolved(target.clone()),
                Err(format!(
                    "invalid deployitem specification \"di\": {message}"
                )),
                "{target}"
            );
        }
    }
}
