//! `importDataMappings` and `exportDataMappings`: each entry is a Spiff template evaluated with
//! the installation's imports (or exports) as values, as upstream does.

use std::collections::BTreeMap;

use landscaper_spiff::{Spiff, Template};
use serde_json::{Map, Value as Json};

use super::DataflowError;

/// Evaluates every mapping of `mappings` with `values`; `field` names the spec field for
/// messages (`spec.importDataMappings`) and `owner` the installation (`Installation ns/x`).
pub fn evaluate(
    owner: &str,
    field: &str,
    mappings: &BTreeMap<String, Json>,
    values: &Map<String, Json>,
) -> Result<Map<String, Json>, DataflowError> {
    let spiff = Spiff::new()
        .with_features(&std::env::var(landscaper_spiff::FEATURES_ENV).unwrap_or_default())
        .with_values(Json::Object(values.clone()));
    let mut out = Map::new();
    for (key, mapping) in mappings {
        let fail =
            |message: String| DataflowError::Mapping(format!("{owner}: {field}.{key}: {message}"));
        // Upstream parses the mapping's raw JSON as YAML once, so a JSON string stays a
        // string. `Template::from_yaml` parses a document that is a single string a second
        // time (the text form of templates), so a string is encoded twice to survive it.
        let mut text = serde_json::to_string(mapping).map_err(|e| fail(e.to_string()))?;
        if mapping.is_string() {
            text = serde_json::to_string(&text).map_err(|e| fail(e.to_string()))?;
        }
        let template = Template::from_yaml(&text)
            .map_err(|e| fail(format!("unable to parse the mapping: {e}")))?;
        let output = spiff
            .cascade(&template, &[], None)
            .map_err(|e| fail(format!("unable to template the mapping: {e}")))?;
        out.insert(key.clone(), output.document);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn mappings(v: Json) -> BTreeMap<String, Json> {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn plain_values_and_expressions_evaluate_with_the_values() {
        let values = json!({"a": {"b": 2}, "s": "x"});
        let out = evaluate(
            "Installation ns/x",
            "spec.importDataMappings",
            &mappings(json!({"plain": "1", "expr": "(( a.b + 1 ))", "nested": {"v": "(( s ))"}})),
            values.as_object().unwrap(),
        )
        .unwrap();
        assert_eq!(
            Json::Object(out),
            json!({"plain": "1", "expr": 3, "nested": {"v": "x"}})
        );
    }

    #[test]
    fn an_unresolved_expression_names_the_installation_and_the_mapping() {
        let err = evaluate(
            "Installation ns/x",
            "spec.importDataMappings",
            &mappings(json!({"m": "(( missing.value ))"})),
            &Map::new(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with(
                "Installation ns/x: spec.importDataMappings.m: unable to template the mapping:"
            ),
            "{err}"
        );
    }
}
