//! What executions render, decoded as upstream decodes it: through JSON into Go structs, so
//! field names match case-insensitively (`deployitems` is `deployItems`), while the keys of
//! free maps (`exports`, `bindings`, `config`) stay as written.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};

/// One deploy item a deploy execution renders.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct DeployItemSpecification {
    /// Unique name of the item within the execution.
    pub name: String,
    /// The deployer type.
    #[serde(rename = "type")]
    pub type_: String,
    /// The Target the item deploys to, resolved after templating.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<TemplateTarget>,
    /// Labels of the deploy item.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<std::collections::BTreeMap<String, String>>,
    /// The deployer's configuration.
    #[serde(default)]
    pub config: Json,
    /// Items of the same execution that must be deployed first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depends_on: Option<Vec<String>>,
    /// The item's progressing timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
    /// Whether the item is only reconciled when its spec changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_on_change_only: Option<bool>,
    /// What happens to the item's objects when it is deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_delete: Option<Json>,
}

/// How a deploy item names its Target: an import (optionally an element of a target list or
/// map), or a Target by name (legacy).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct TemplateTarget {
    /// A target, targetList or targetMap import.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub import: Option<String>,
    /// The element of a targetList import.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<i64>,
    /// The element of a targetMap import.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// A Target in the installation's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

const DEPLOY_ITEM_FIELDS: &[&str] = &[
    "name",
    "type",
    "target",
    "labels",
    "config",
    "dependsOn",
    "timeout",
    "updateOnChangeOnly",
    "onDelete",
];

const TARGET_FIELDS: &[&str] = &["import", "index", "key", "name"];

/// Renames the keys of `map` that match one of `fields` case-insensitively to that field,
/// as Go's decoder matches them (an exact match wins).
fn canonical(map: &Map<String, Json>, fields: &[&str]) -> Map<String, Json> {
    let mut out = Map::new();
    for (key, value) in map {
        let field = fields
            .iter()
            .find(|f| **f == key)
            .or_else(|| fields.iter().find(|f| f.eq_ignore_ascii_case(key)));
        match field {
            Some(field) if *field != key && map.contains_key(*field) => {}
            Some(field) => {
                out.insert((*field).to_string(), value.clone());
            }
            None => {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    out
}

/// The value of a top-level field of a rendered document, matched case-insensitively.
pub fn field<'a>(doc: &'a Map<String, Json>, name: &str) -> Option<&'a Json> {
    doc.get(name).or_else(|| {
        doc.iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v)
    })
}

/// The deploy items of a rendered deploy execution.
pub fn deploy_items(doc: &Map<String, Json>) -> Result<Vec<DeployItemSpecification>, String> {
    let Some(items) = field(doc, "deployItems").filter(|v| !v.is_null()) else {
        return Ok(Vec::new());
    };
    let Json::Array(items) = items else {
        return Err("deployItems: expected a list".into());
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let Json::Object(item) = item else {
                return Err(format!("deployItems[{i}]: expected a map"));
            };
            let mut item = canonical(item, DEPLOY_ITEM_FIELDS);
            if let Some(Json::Object(target)) = item.get("target") {
                let target = canonical(target, TARGET_FIELDS);
                item.insert("target".into(), Json::Object(target));
            }
            serde_json::from_value(Json::Object(item)).map_err(|e| format!("deployItems[{i}]: {e}"))
        })
        .collect()
}

/// Deep merge of export maps: nested maps merge, anything else is replaced by the later value.
pub fn merge_exports(into: &mut Map<String, Json>, from: &Map<String, Json>) {
    for (key, value) in from {
        match (into.get_mut(key), value) {
            (Some(Json::Object(existing)), Json::Object(incoming)) => {
                merge_exports(existing, incoming);
            }
            _ => {
                into.insert(key.clone(), value.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn field_names_match_case_insensitively_but_map_keys_stay() {
        let doc = json!({"deployitems": [{"Name": "a", "TYPE": "t", "config": {"Key": 1},
            "target": {"Import": "cluster"}, "ondelete": {"skipUninstallIfClusterRemoved": true}}]});
        let items = deploy_items(doc.as_object().unwrap()).unwrap();
        assert_eq!(items[0].name, "a");
        assert_eq!(items[0].type_, "t");
        assert_eq!(items[0].config, json!({"Key": 1}));
        assert_eq!(
            items[0].target.as_ref().unwrap().import.as_deref(),
            Some("cluster")
        );
        assert!(items[0].on_delete.is_some());
    }

    #[test]
    fn exports_merge_deeply() {
        let mut a = json!({"x": {"a": 1, "b": {"c": 1}}, "y": 1});
        let b = json!({"x": {"b": {"d": 2}}, "y": [1]});
        merge_exports(a.as_object_mut().unwrap(), b.as_object().unwrap());
        assert_eq!(a, json!({"x": {"a": 1, "b": {"c": 1, "d": 2}}, "y": [1]}));
    }
}
