//! The Target a rendered deploy item names, resolved after templating as upstream's
//! `RenderDeployItemTemplates` does: `target.import` names a `target` import, with `index` an
//! element of a `targetList` import, with `key` an entry of a `targetMap` import; a bare
//! `target.name` is a Target in the installation's namespace (legacy).

use landscaper_api::core::{ImportDefinition, ObjectReference};
use serde_json::{Map, Value as Json};

use crate::output::DeployItemSpecification;

/// The Target reference of `item` (none when it names no target), found among `imports`
/// (import name → value; a Target import's value is the Target object) whose types the
/// blueprint's `definitions` give; `namespace` is the installation's. Errors use upstream's
/// words: `invalid deployitem specification "<item>": <problem>`.
pub fn deploy_item_target(
    item: &DeployItemSpecification,
    definitions: &[ImportDefinition],
    imports: &Map<String, Json>,
    namespace: &str,
) -> Result<Option<ObjectReference>, String> {
    let Some(target) = &item.target else {
        return Ok(None);
    };
    let invalid = |problem: String| {
        format!(
            "invalid deployitem specification {:?}: {problem}",
            item.name
        )
    };
    let import = target.import.as_deref().unwrap_or_default();
    let typed = |kind: &str| typed_import(definitions, imports, import, kind);
    let chosen = if let Some(index) = target.index {
        let list = typed("targetList")
            .and_then(Json::as_array)
            .ok_or_else(|| invalid(format!("targetlist import {import:?} not found")))?;
        usize::try_from(index)
            .ok()
            .and_then(|i| list.get(i))
            .ok_or_else(|| invalid(format!("index {index} out of bounds")))?
    } else if let Some(key) = &target.key {
        let map = typed("targetMap")
            .and_then(Json::as_object)
            .ok_or_else(|| invalid(format!("targetmap import {import:?} not found")))?;
        map.get(key).filter(|t| !t.is_null()).ok_or_else(|| {
            invalid(format!(
                "key {key:?} not found in targetmap import {import:?}"
            ))
        })?
    } else if !import.is_empty() {
        typed("target").ok_or_else(|| invalid(format!("target import {import:?} not found")))?
    } else {
        return match target.name.as_deref() {
            Some(name) if !name.is_empty() => Ok(Some(ObjectReference {
                name: name.to_owned(),
                namespace: Some(namespace.to_owned()),
            })),
            _ => Err(invalid("empty target reference".into())),
        };
    };
    let field = |key: &str| chosen["metadata"][key].as_str().filter(|s| !s.is_empty());
    let name = field("name").ok_or_else(|| {
        invalid(format!(
            "import {import:?} holds no Target (metadata.name is missing)"
        ))
    })?;
    Ok(Some(ObjectReference {
        name: name.to_owned(),
        namespace: Some(field("namespace").unwrap_or(namespace).to_owned()),
    }))
}

/// The value of import `name` if the blueprint declares it with type `kind` (conditional
/// imports included) and it is present.
fn typed_import<'a>(
    definitions: &[ImportDefinition],
    imports: &'a Map<String, Json>,
    name: &str,
    kind: &str,
) -> Option<&'a Json> {
    let declared = find_definition(definitions, name)?;
    (declared.type_.as_deref() == Some(kind))
        .then(|| imports.get(name))
        .flatten()
        .filter(|v| !v.is_null())
}

fn find_definition<'a>(
    definitions: &'a [ImportDefinition],
    name: &str,
) -> Option<&'a ImportDefinition> {
    definitions.iter().find_map(|d| {
        if d.name == name {
            Some(d)
        } else {
            find_definition(&d.imports, name)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::TemplateTarget;
    use serde_json::json;

    fn definitions() -> Vec<ImportDefinition> {
        serde_json::from_value(json!([
            {"name": "one", "type": "target", "targetType": "mock"},
            {"name": "list", "type": "targetList", "targetType": "mock"},
            {"name": "cond", "type": "data", "imports": [{"name": "map", "type": "targetMap"}]},
        ]))
        .unwrap()
    }

    fn target(name: &str, namespace: &str) -> Json {
        json!({"kind": "Target", "metadata": {"name": name, "namespace": namespace}})
    }

    fn imports() -> Map<String, Json> {
        json!({
            "one": target("t1", "ns"),
            "list": [target("l0", "ns"), target("l1", "other")],
            "map": {"a": target("m-a", "ns")},
        })
        .as_object()
        .cloned()
        .unwrap()
    }

    fn resolve(target: Json) -> Result<Option<ObjectReference>, String> {
        let item = DeployItemSpecification {
            name: "myDi".into(),
            target: Some(serde_json::from_value::<TemplateTarget>(target).unwrap()),
            ..DeployItemSpecification::default()
        };
        deploy_item_target(&item, &definitions(), &imports(), "inst-ns")
    }

    fn reference(name: &str, namespace: &str) -> Option<ObjectReference> {
        Some(ObjectReference {
            name: name.into(),
            namespace: Some(namespace.into()),
        })
    }

    #[test]
    fn imports_list_elements_map_entries_and_names_resolve_to_targets() {
        assert_eq!(resolve(json!({"import": "one"})), Ok(reference("t1", "ns")));
        assert_eq!(
            resolve(json!({"import": "list", "index": 1})),
            Ok(reference("l1", "other"))
        );
        assert_eq!(
            resolve(json!({"import": "map", "key": "a"})),
            Ok(reference("m-a", "ns"))
        );
        assert_eq!(
            resolve(json!({"name": "legacy"})),
            Ok(reference("legacy", "inst-ns"))
        );
    }

    #[test]
    fn wrong_references_fail_with_upstreams_messages() {
        let cases = [
            (
                json!({"import": "list", "index": 5}),
                "index 5 out of bounds",
            ),
            (
                json!({"import": "list", "index": -1}),
                "index -1 out of bounds",
            ),
            (json!({"import": "foo"}), "target import \"foo\" not found"),
            (
                json!({"import": "one", "index": 0}),
                "targetlist import \"one\" not found",
            ),
            (
                json!({"import": "list"}),
                "target import \"list\" not found",
            ),
            (
                json!({"import": "map", "key": "b"}),
                "key \"b\" not found in targetmap import \"map\"",
            ),
            (
                json!({"import": "one", "key": "a"}),
                "targetmap import \"one\" not found",
            ),
            (json!({}), "empty target reference"),
        ];
        for (target, problem) in cases {
            assert_eq!(
                resolve(target.clone()),
                Err(format!(
                    "invalid deployitem specification \"myDi\": {problem}"
                )),
                "{target}"
            );
        }
    }
}
