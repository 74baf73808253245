//! Field selectors (`metadata.name=x,type!=y`) and the fields each kind can be selected by.

use serde_json::Value;

use super::SelectorError;

/// How one term compares the field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldOperator {
    /// `=` or `==`.
    Equals,
    /// `!=`.
    NotEquals,
}

/// One `field<op>value` term.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldTerm {
    /// The selectable field, e.g. `metadata.name`.
    pub field: String,
    /// The comparison.
    pub operator: FieldOperator,
    /// The unescaped value.
    pub value: String,
}

/// A parsed field selector: all terms must hold.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FieldSelector {
    terms: Vec<FieldTerm>,
}

impl FieldSelector {
    /// Parses the `fieldSelector` query parameter syntax, with `\,` `\=` `\\` escapes in values.
    pub fn parse(selector: &str) -> Result<Self, SelectorError> {
        let mut parts = split_terms(selector);
        parts.sort();
        let mut terms = Vec::new();
        for part in parts.into_iter().filter(|p| !p.is_empty()) {
            let Some((field, operator, raw)) = split_term(part) else {
                return Err(SelectorError::new(format!(
                    "invalid selector: '{selector}'; can't understand '{part}'"
                )));
            };
            terms.push(FieldTerm {
                field: field.to_string(),
                operator,
                value: unescape_value(raw)?,
            });
        }
        Ok(Self { terms })
    }

    /// The terms, sorted by their text.
    pub fn terms(&self) -> &[FieldTerm] {
        &self.terms
    }

    /// Whether the selector matches every object.
    pub fn is_everything(&self) -> bool {
        self.terms.is_empty()
    }

    /// Whether an object (as served by the schema's API version) satisfies every term.
    pub fn matches(&self, schema: &FieldSchema, object: &Value) -> bool {
        self.terms.iter().all(|t| {
            let have = schema.value_of(object, &t.field);
            match t.operator {
                FieldOperator::Equals => have == t.value,
                FieldOperator::NotEquals => have != t.value,
            }
        })
    }
}

fn split_terms(selector: &str) -> Vec<&str> {
    if selector.is_empty() {
        return Vec::new();
    }
    let mut terms = Vec::new();
    let mut start = 0;
    let mut escaped = false;
    for (i, c) in selector.char_indices() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == ',' {
            terms.push(&selector[start..i]);
            start = i + 1;
        }
    }
    terms.push(&selector[start..]);
    terms
}

/// Splits at the first operator; `!=` and `==` are tried before `=` at each position.
fn split_term(term: &str) -> Option<(&str, FieldOperator, &str)> {
    for (i, _) in term.char_indices() {
        let rest = &term[i..];
        for (op, operator) in [
            ("!=", FieldOperator::NotEquals),
            ("==", FieldOperator::Equals),
            ("=", FieldOperator::Equals),
        ] {
            if let Some(value) = rest.strip_prefix(op) {
                return Some((&term[..i], operator, value));
            }
        }
    }
    None
}

fn unescape_value(s: &str) -> Result<String, SelectorError> {
    let mut out = String::with_capacity(s.len());
    let mut escaped = false;
    for c in s.chars() {
        if escaped {
            if !matches!(c, '\\' | ',' | '=') {
                return Err(SelectorError::new(format!(
                    "invalid field selector: invalid escape sequence: \\{c}"
                )));
            }
            out.push(c);
            escaped = false;
            continue;
        }
        match c {
            '\\' => escaped = true,
            // Go prints the rune with %v, i.e. as its code point number.
            ',' | '=' => {
                return Err(SelectorError::new(format!(
                    "invalid field selector: unescaped character in value: {}",
                    c as u32
                )));
            }
            _ => out.push(c),
        }
    }
    if escaped {
        return Err(SelectorError::new(
            "invalid field selector: invalid escape sequence: \\",
        ));
    }
    Ok(out)
}

/// How a kind refuses a field it cannot be selected by.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Refusal {
    /// Kinds without their own conversion: `"x" is not a known field selector: only ...`.
    DefaultMeta,
    /// `field label not supported: x`.
    NotSupported,
    /// `field label "x" not supported for <what>`.
    NotSupportedFor(&'static str),
    /// `field label not supported for <what>: x`.
    NotSupportedForPrefix(&'static str),
}

/// The fields one kind (in one API version) can be selected by, and where their values live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldSchema {
    fields: Vec<(String, FieldSource)>,
    refusal: Refusal,
}

/// Where a selectable field's value comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum FieldSource {
    /// A dotted path into the object; missing values read as "".
    Path(Vec<String>),
    /// The core Event `source`: `source.component`, else `reportingComponent`.
    EventSource,
}

impl FieldSchema {
    fn new(fields: &[&str], refusal: Refusal) -> Self {
        let mut all = vec![
            ("metadata.name".to_string(), path("metadata.name")),
            ("metadata.namespace".to_string(), path("metadata.namespace")),
        ];
        all.extend(fields.iter().map(|f| (f.to_string(), path(f))));
        Self {
            fields: all,
            refusal,
        }
    }

    /// The schema of a built-in kind, e.g. `("", "Secret")` or `("events.k8s.io", "Event")`.
    pub fn builtin(group: &str, kind: &str) -> Self {
        match (group, kind) {
            ("", "Pod") => Self::new(
                &[
                    "spec.nodeName",
                    "spec.restartPolicy",
                    "spec.schedulerName",
                    "spec.serviceAccountName",
                    "spec.hostNetwork",
                    "status.phase",
                    "status.podIP",
                    "status.nominatedNodeName",
                ],
                Refusal::NotSupported,
            ),
            ("", "Event") => {
                let mut schema = Self::new(
                    &[
                        "involvedObject.kind",
                        "involvedObject.namespace",
                        "involvedObject.name",
                        "involvedObject.uid",
                        "involvedObject.apiVersion",
                        "involvedObject.resourceVersion",
                        "involvedObject.fieldPath",
                        "reason",
                        "reportingComponent",
                        "type",
                    ],
                    Refusal::NotSupported,
                );
                schema
                    .fields
                    .push(("source".to_string(), FieldSource::EventSource));
                schema
            }
            ("events.k8s.io", "Event") => Self::new(
                &[
                    "regarding.kind",
                    "regarding.namespace",
                    "regarding.name",
                    "regarding.uid",
                    "regarding.apiVersion",
                    "regarding.resourceVersion",
                    "regarding.fieldPath",
                    "reason",
                    "reportingController",
                    "type",
                ],
                Refusal::NotSupported,
            ),
            ("", "Namespace") => Self::new(&["status.phase"], Refusal::NotSupported),
            ("", "Secret") => Self::new(&["type"], Refusal::NotSupported),
            ("", "Service") => Self::new(&["spec.clusterIP", "spec.type"], Refusal::NotSupported),
            ("", "ReplicationController") => Self::new(&["status.replicas"], Refusal::NotSupported),
            ("apps", "StatefulSet") => Self::new(
                &["status.successful"],
                Refusal::NotSupportedForPrefix("appsv1.StatefulSet"),
            ),
            ("batch", "Job") => Self::new(
                &["status.successful"],
                Refusal::NotSupportedFor("batchv1.Job"),
            ),
            _ => Self::new(&[], Refusal::DefaultMeta),
        }
    }

    /// The schema of a custom resource, given its CRD version's `selectableFields[].jsonPath`.
    pub fn custom_resource(selectable_json_paths: &[String]) -> Self {
        let extra: Vec<&str> = selectable_json_paths
            .iter()
            .map(|p| p.trim_start_matches('.'))
            .collect();
        Self::new(&extra, Refusal::NotSupported)
    }

    /// Refuses a selector naming a field this kind cannot be selected by.
    pub fn check(&self, selector: &FieldSelector) -> Result<(), SelectorError> {
        for term in selector.terms() {
            if self.fields.iter().any(|(name, _)| *name == term.field) {
                continue;
            }
            let f = &term.field;
            let message = match &self.refusal {
                Refusal::DefaultMeta => format!(
                    "{} is not a known field selector: only \"metadata.name\", \"metadata.namespace\"",
                    super::label::go_quote(f)
                ),
                Refusal::NotSupported => format!("field label not supported: {f}"),
                Refusal::NotSupportedFor(what) => {
                    format!(
                        "field label {} not supported for {what}",
                        super::label::go_quote(f)
                    )
                }
                Refusal::NotSupportedForPrefix(what) => {
                    format!("field label not supported for {what}: {f}")
                }
            };
            return Err(SelectorError::new(message));
        }
        Ok(())
    }

    /// The string value of a selectable field; absent fields read as "" like in kube-apiserver.
    pub fn value_of(&self, object: &Value, field: &str) -> String {
        let Some((_, source)) = self.fields.iter().find(|(name, _)| name == field) else {
            return String::new();
        };
        match source {
            FieldSource::Path(segments) => scalar_at(object, segments),
            FieldSource::EventSource => {
                let component = scalar_at(object, &["source".into(), "component".into()]);
                if component.is_empty() {
                    scalar_at(object, &["reportingComponent".into()])
                } else {
                    component
                }
            }
        }
    }
}

fn path(field: &str) -> FieldSource {
    FieldSource::Path(field.split('.').map(str::to_string).collect())
}

fn scalar_at(object: &Value, segments: &[String]) -> String {
    let mut cur = object;
    for s in segments {
        match cur.get(s) {
            Some(next) => cur = next,
            None => return String::new(),
        }
    }
    match cur {
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cm(name: &str, ns: &str) -> Value {
        json!({"metadata": {"name": name, "namespace": ns}, "data": {"a": "1"}})
    }

    #[test]
    fn name_and_namespace_terms_match() {
        let schema = FieldSchema::builtin("", "ConfigMap");
        let sel = FieldSelector::parse("metadata.name=cm1,metadata.namespace==ns").unwrap();
        schema.check(&sel).unwrap();
        assert!(sel.matches(&schema, &cm("cm1", "ns")));
        assert!(!sel.matches(&schema, &cm("cm1", "other")));
        let neq = FieldSelector::parse("metadata.name!=cm1").unwrap();
        assert!(!neq.matches(&schema, &cm("cm1", "ns")));
        assert!(neq.matches(&schema, &cm("cm2", "ns")));
    }

    #[test]
    fn unsupported_fields_are_worded_per_kind() {
        let sel = FieldSelector::parse("data.a=1").unwrap();
        assert_eq!(
            FieldSchema::builtin("", "ConfigMap")
                .check(&sel)
                .unwrap_err()
                .message,
            "\"data.a\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
        );
        let sel = FieldSelector::parse("note=x").unwrap();
        assert_eq!(
            FieldSchema::builtin("", "Event")
                .check(&sel)
                .unwrap_err()
                .message,
            "field label not supported: note"
        );
        let sel = FieldSelector::parse("spec.size=4").unwrap();
        assert_eq!(
            FieldSchema::custom_resource(&[])
                .check(&sel)
                .unwrap_err()
                .message,
            "field label not supported: spec.size"
        );
        assert!(
            FieldSchema::custom_resource(&[".spec.size".to_string()])
                .check(&sel)
                .is_ok()
        );
        let sel = FieldSelector::parse("spec.x=1").unwrap();
        assert_eq!(
            FieldSchema::builtin("batch", "Job")
                .check(&sel)
                .unwrap_err()
                .message,
            "field label \"spec.x\" not supported for batchv1.Job"
        );
    }

    #[test]
    fn secret_type_and_event_fields_select() {
        let schema = FieldSchema::builtin("", "Secret");
        let sel = FieldSelector::parse("type=kubernetes.io/tls").unwrap();
        schema.check(&sel).unwrap();
        assert!(sel.matches(
            &schema,
            &json!({"metadata": {"name": "t"}, "type": "kubernetes.io/tls"})
        ));
        assert!(!sel.matches(
            &schema,
            &json!({"metadata": {"name": "o"}, "type": "Opaque"})
        ));

        let events = FieldSchema::builtin("", "Event");
        let ev = json!({
            "metadata": {"name": "cm1.17a", "namespace": "ns"},
            "involvedObject": {"kind": "ConfigMap", "name": "cm1", "uid": "u1"},
            "reason": "Synced", "type": "Normal",
            "source": {"component": "my-controller"}
        });
        for s in [
            "involvedObject.name=cm1",
            "involvedObject.kind=ConfigMap,involvedObject.uid=u1",
            "source=my-controller",
            "reason=Synced,type=Normal",
        ] {
            let sel = FieldSelector::parse(s).unwrap();
            events.check(&sel).unwrap();
            assert!(sel.matches(&events, &ev), "{s}");
        }
        let reporting = json!({"metadata": {"name": "x"}, "reportingComponent": "rc"});
        assert!(
            FieldSelector::parse("source=rc")
                .unwrap()
                .matches(&events, &reporting)
        );

        let v1 = FieldSchema::builtin("events.k8s.io", "Event");
        let sel = FieldSelector::parse("regarding.name=cm2").unwrap();
        v1.check(&sel).unwrap();
        assert!(sel.matches(
            &v1,
            &json!({"metadata": {"name": "e"}, "regarding": {"name": "cm2"}})
        ));
    }

    #[test]
    fn pod_fields_read_booleans_and_missing_values() {
        let pods = FieldSchema::builtin("", "Pod");
        let pod =
            json!({"metadata": {"name": "p"}, "spec": {"nodeName": "n1", "hostNetwork": true}});
        assert!(
            FieldSelector::parse("spec.nodeName=n1,spec.hostNetwork=true")
                .unwrap()
                .matches(&pods, &pod)
        );
        assert!(
            FieldSelector::parse("status.phase=")
                .unwrap()
                .matches(&pods, &pod)
        );
        assert!(
            FieldSelector::parse("status.phase!=Running")
                .unwrap()
                .matches(&pods, &pod)
        );
    }

    #[test]
    fn escapes_and_syntax_errors() {
        let sel = FieldSelector::parse(r"metadata.name=a\,b\=c\\d").unwrap();
        assert_eq!(sel.terms()[0].value, r"a,b=c\d");
        let err = |s: &str| FieldSelector::parse(s).unwrap_err().message;
        assert_eq!(
            err("metadata.name"),
            "invalid selector: 'metadata.name'; can't understand 'metadata.name'"
        );
        assert_eq!(
            err(r"a=\x"),
            r"invalid field selector: invalid escape sequence: \x"
        );
        assert_eq!(
            err("a=b=c"),
            "invalid field selector: unescaped character in value: 61"
        );
        assert_eq!(
            err(r"a=b\"),
            r"invalid field selector: invalid escape sequence: \"
        );
        assert!(FieldSelector::parse("").unwrap().is_everything());
        assert!(FieldSelector::parse(",,").unwrap().is_everything());
    }

    #[test]
    fn terms_are_sorted_so_the_first_refused_field_is_stable() {
        let sel = FieldSelector::parse("z=1,b=2").unwrap();
        assert_eq!(
            FieldSchema::builtin("", "Secret")
                .check(&sel)
                .unwrap_err()
                .message,
            "field label not supported: b"
        );
    }
}
