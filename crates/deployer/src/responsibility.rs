//! Which DeployItems a deployer is responsible for: its own `spec.type`, and a Target that one
//! of its target selectors matches (by name, annotations or labels with Kubernetes selector
//! operators). A deployer without selectors is responsible for every target. Items of an
//! excluded namespace are never its own, whatever their Target.

use landscaper_api::core::{DeployItem, Requirement, SelectorOperator, Target, TargetSelector};
use std::collections::BTreeMap;

/// Whether the item lives in one of the `excluded` namespaces.
pub fn excluded(excluded: &[String], item: &DeployItem) -> bool {
    item.metadata
        .namespace
        .as_deref()
        .is_some_and(|ns| excluded.iter().any(|e| e == ns))
}

/// Whether any selector matches the target; no selectors match everything.
pub fn matches_any(selectors: &[TargetSelector], target: &Target) -> Result<bool, String> {
    if selectors.is_empty() {
        return Ok(true);
    }
    for s in selectors {
        if matches(s, target)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Whether one selector matches: all of its criteria must hold.
pub fn matches(selector: &TargetSelector, target: &Target) -> Result<bool, String> {
    let name = target.metadata.name.as_deref().unwrap_or_default();
    let namespace = target.metadata.namespace.as_deref().unwrap_or_default();
    if !selector.targets.is_empty()
        && !selector
            .targets
            .iter()
            .any(|r| r.name == name && r.namespace.as_deref().is_none_or(|ns| ns == namespace))
    {
        return Ok(false);
    }
    let empty = BTreeMap::new();
    let annotations = target.metadata.annotations.as_ref().unwrap_or(&empty);
    let labels = target.metadata.labels.as_ref().unwrap_or(&empty);
    for r in &selector.annotations {
        if !requirement_holds(r, annotations).map_err(|e| format!("annotations: {e}"))? {
            return Ok(false);
        }
    }
    for r in &selector.labels {
        if !requirement_holds(r, labels).map_err(|e| format!("labels: {e}"))? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Evaluates one requirement against a map, as Kubernetes' label selector requirements.
pub fn requirement_holds(r: &Requirement, map: &BTreeMap<String, String>) -> Result<bool, String> {
    let op = r
        .operator
        .ok_or_else(|| format!("requirement on key {:?} has no operator", r.key))?;
    let value = map.get(&r.key);
    let single = || {
        r.values
            .first()
            .filter(|_| r.values.len() == 1)
            .ok_or_else(|| format!("operator {op:?} on key {:?} needs exactly one value", r.key))
    };
    Ok(match op {
        SelectorOperator::In => value.is_some_and(|v| r.values.contains(v)),
        SelectorOperator::NotIn => value.is_none_or(|v| !r.values.contains(v)),
        SelectorOperator::Equals | SelectorOperator::DoubleEquals => {
            let want = single()?;
            value.is_some_and(|v| v == want)
        }
        SelectorOperator::NotEquals => {
            let want = single()?;
            value.is_none_or(|v| v != want)
        }
        SelectorOperator::Exists => value.is_some(),
        SelectorOperator::DoesNotExist => value.is_none(),
        SelectorOperator::GreaterThan | SelectorOperator::LessThan => {
            let want: i64 = single()?
                .parse()
                .map_err(|_| format!("operator {op:?} on key {:?} needs an integer", r.key))?;
            match value.and_then(|v| v.parse::<i64>().ok()) {
                None => false,
                Some(have) if op == SelectorOperator::GreaterThan => have > want,
                Some(have) => have < want,
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use landscaper_api::core::{ObjectReference, TargetSpec};

    fn target(name: &str, annotations: &[(&str, &str)], labels: &[(&str, &str)]) -> Target {
        let mut t = Target::new(name, TargetSpec::default());
        t.metadata.namespace = Some("ns".into());
        let map = |kv: &[(&str, &str)]| {
            kv.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        t.metadata.annotations = Some(map(annotations));
        t.metadata.labels = Some(map(labels));
        t
    }

    fn req(key: &str, op: SelectorOperator, values: &[&str]) -> Requirement {
        Requirement {
            key: key.into(),
            operator: Some(op),
            values: values.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn items_of_an_excluded_namespace_are_excluded_and_others_not() {
        let mut item = DeployItem::new("i", Default::default());
        item.metadata.namespace = Some("ls-system".into());
        let excluded_namespaces = ["team-a".to_owned(), "ls-system".to_owned()];
        assert!(excluded(&excluded_namespaces, &item));
        item.metadata.namespace = Some("team-b".into());
        assert!(!excluded(&excluded_namespaces, &item));
        assert!(!excluded(&[], &item));
    }

    #[test]
    fn no_selectors_match_every_target() {
        assert!(matches_any(&[], &target("x", &[], &[])).unwrap());
    }

    #[test]
    fn selectors_by_name_and_namespace() {
        let sel = TargetSelector {
            targets: vec![ObjectReference {
                name: "a".into(),
                namespace: Some("ns".into()),
            }],
            ..Default::default()
        };
        assert!(matches(&sel, &target("a", &[], &[])).unwrap());
        assert!(!matches(&sel, &target("b", &[], &[])).unwrap());
    }

    #[test]
    fn the_environment_annotation_selects_its_targets_only() {
        let sel = TargetSelector {
            annotations: vec![req(
                "landscaper.gardener.cloud/environment",
                SelectorOperator::Equals,
                &["a"],
            )],
            ..Default::default()
        };
        let ours = target("t", &[("landscaper.gardener.cloud/environment", "a")], &[]);
        let theirs = target("t", &[("landscaper.gardener.cloud/environment", "b")], &[]);
        assert!(matches_any(std::slice::from_ref(&sel), &ours).unwrap());
        assert!(!matches_any(&[sel], &theirs).unwrap());
    }

    #[test]
    fn every_operator_behaves_as_kubernetes_selectors() {
        let labels: BTreeMap<String, String> = [
            ("env".to_string(), "prod".to_string()),
            ("n".to_string(), "5".to_string()),
        ]
        .into();
        let cases = [
            (req("env", SelectorOperator::In, &["prod", "dev"]), true),
            (req("env", SelectorOperator::In, &["dev"]), false),
            (req("env", SelectorOperator::NotIn, &["dev"]), true),
            (req("missing", SelectorOperator::NotIn, &["dev"]), true),
            (req("env", SelectorOperator::DoubleEquals, &["prod"]), true),
            (req("env", SelectorOperator::NotEquals, &["prod"]), false),
            (req("missing", SelectorOperator::NotEquals, &["prod"]), true),
            (req("env", SelectorOperator::Exists, &[]), true),
            (req("env", SelectorOperator::DoesNotExist, &[]), false),
            (req("n", SelectorOperator::GreaterThan, &["4"]), true),
            (req("n", SelectorOperator::LessThan, &["5"]), false),
            (req("env", SelectorOperator::GreaterThan, &["1"]), false),
        ];
        for (r, want) in cases {
            assert_eq!(requirement_holds(&r, &labels).unwrap(), want, "{r:?}");
        }
    }

    #[test]
    fn malformed_requirements_are_errors() {
        let map = BTreeMap::new();
        let no_op = Requirement {
            key: "k".into(),
            operator: None,
            values: vec![],
        };
        assert!(
            requirement_holds(&no_op, &map)
                .unwrap_err()
                .contains("no operator")
        );
        let two = req("k", SelectorOperator::Equals, &["a", "b"]);
        assert!(
            requirement_holds(&two, &map)
                .unwrap_err()
                .contains("exactly one")
        );
        let nan = req("k", SelectorOperator::GreaterThan, &["x"]);
        assert!(
            requirement_holds(&nan, &map)
                .unwrap_err()
                .contains("integer")
        );
    }
}
