//! Custom readiness requirements: a JSONPath value of each selected object related to given
//! values by a selector operator.

use super::default_checks::Verdict;
use crate::jsonpath;
use landscaper_api::core::SelectorOperator;
use landscaper_api::deployer::ReadinessRequirement;
use serde_json::Value;

/// Checks every requirement against one object; the first unmet one says why.
pub fn check(requirements: &[ReadinessRequirement], obj: &Value) -> Result<Verdict, String> {
    for r in requirements {
        let found = jsonpath::get(obj, &r.json_path)?;
        if !holds(r, found.as_ref())? {
            return Ok(Verdict::NotReady(format!(
                "{} is {} (wants {:?} {})",
                r.json_path,
                found.map_or("missing".to_string(), |v| v.to_string()),
                r.operator,
                Value::Array(r.values.clone())
            )));
        }
    }
    Ok(Verdict::Ready)
}

fn holds(r: &ReadinessRequirement, found: Option<&Value>) -> Result<bool, String> {
    let single = || {
        r.values
            .first()
            .filter(|_| r.values.len() == 1)
            .ok_or_else(|| {
                format!(
                    "{}: operator {:?} needs exactly one value",
                    r.json_path, r.operator
                )
            })
    };
    let number = |v: &Value| -> Option<f64> {
        v.as_f64()
            .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
    };
    Ok(match r.operator {
        SelectorOperator::Exists => found.is_some(),
        SelectorOperator::DoesNotExist => found.is_none(),
        SelectorOperator::In => found.is_some_and(|f| r.values.iter().any(|v| same(f, v))),
        SelectorOperator::NotIn => found.is_none_or(|f| !r.values.iter().any(|v| same(f, v))),
        SelectorOperator::Equals | SelectorOperator::DoubleEquals => {
            let want = single()?;
            found.is_some_and(|f| same(f, want))
        }
        SelectorOperator::NotEquals => {
            let want = single()?;
            found.is_none_or(|f| !same(f, want))
        }
        SelectorOperator::GreaterThan | SelectorOperator::LessThan => {
            let want = number(single()?).ok_or_else(|| {
                format!("{}: operator {:?} needs a number", r.json_path, r.operator)
            })?;
            match found.and_then(number) {
                None => false,
                Some(have) if r.operator == SelectorOperator::GreaterThan => have > want,
                Some(have) => have < want,
            }
        }
    })
}

/// Values compare equal as JSON, or as text when one side is a string (`"1"` and `1`).
fn same(a: &Value, b: &Value) -> bool {
    if a == b {
        return true;
    }
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    text(a) == text(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn req(path: &str, op: SelectorOperator, values: Vec<Value>) -> ReadinessRequirement {
        ReadinessRequirement {
            json_path: path.into(),
            operator: op,
            values,
        }
    }

    #[test]
    fn requirements_with_each_operator() {
        let obj = json!({"status": {"phase": "Ready", "count": 3}, "data": {"k": "1"}});
        let ok = |r: ReadinessRequirement| check(&[r], &obj).unwrap() == Verdict::Ready;
        assert!(ok(req(
            ".status.phase",
            SelectorOperator::Equals,
            vec![json!("Ready")]
        )));
        assert!(!ok(req(
            ".status.phase",
            SelectorOperator::NotEquals,
            vec![json!("Ready")]
        )));
        assert!(ok(req(
            ".status.phase",
            SelectorOperator::In,
            vec![json!("A"), json!("Ready")]
        )));
        assert!(ok(req(
            ".status.phase",
            SelectorOperator::NotIn,
            vec![json!("A")]
        )));
        assert!(ok(req(
            ".status.count",
            SelectorOperator::GreaterThan,
            vec![json!(2)]
        )));
        assert!(!ok(req(
            ".status.count",
            SelectorOperator::LessThan,
            vec![json!(3)]
        )));
        assert!(ok(req(".data.k", SelectorOperator::Equals, vec![json!(1)])));
        assert!(ok(req(
            ".status.gone",
            SelectorOperator::DoesNotExist,
            vec![]
        )));
        assert!(!ok(req(".status.gone", SelectorOperator::Exists, vec![])));
    }

    #[test]
    fn an_unmet_requirement_says_what_it_saw() {
        let got = check(
            &[req(
                ".status.phase",
                SelectorOperator::Equals,
                vec![json!("Ready")],
            )],
            &json!({"status": {"phase": "Pending"}}),
        )
        .unwrap();
        assert!(matches!(got, Verdict::NotReady(m) if m.contains("\"Pending\"")));
    }

    #[test]
    fn malformed_requirements_are_errors() {
        let err = check(&[req(".a", SelectorOperator::Equals, vec![])], &json!({})).unwrap_err();
        assert!(err.contains("exactly one value"));
    }
}
