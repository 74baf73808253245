//! OCM resource references and resource keys.
//!
//! A blueprint names a resource of its component, or of a component it references, by a
//! *relative reference*: `cd://componentReferences/<ref>/…/resources/<name>`, or OCM's
//! `{resource: {<identity>}, referencePath: [{<identity>}, …]}` as YAML or JSON text. Resolving
//! one follows the component references from the installation's component to the resource.
//! Its *key* is the standard padded base64 of the YAML of its global identity,
//! `{component: {name, version}, resource: <identity>}`; `getResourceKey` gives it to
//! templates, and the helm deployer's `chart.resourceRef` decodes it to fetch the chart.

use std::sync::Arc;

use base64::Engine as _;
use serde_json::{Map, Value as Json};

use crate::Error;
use crate::component::Descriptor;

/// The scheme of path-like relative references.
const SCHEME: &str = "cd://";
/// The longest path-like reference upstream accepts.
const MAX_URI_LENGTH: usize = 2083;
/// The media type whose content `getResourceContent` returns as base64.
const OCTET_STREAM: &str = "application/octet-stream";

/// A relative resource reference: the identities of the component references to follow, then
/// the identity of the resource.
#[derive(Clone, Debug, PartialEq)]
pub struct ResourceReference {
    /// The resource's identity (`name` and extra identity, maybe `version`).
    pub resource: Map<String, Json>,
    /// The identities of the component references leading to the resource's component.
    pub reference_path: Vec<Map<String, Json>>,
}

impl ResourceReference {
    /// Parses a `cd://` path or OCM's `ResourceReference` given as YAML or JSON.
    pub fn parse(text: &str) -> Result<Self, String> {
        if text.starts_with(SCHEME) {
            return parse_uri(text).map_err(|e| format!("failed to parse argument into URI: {e}"));
        }
        let fail = |e: String| {
            format!("failed to unmarshal argument into a relative resource reference: {e}")
        };
        let json = crate::values::parse_yaml(text).map_err(fail)?;
        let identity = |value: &Json, field: &str| -> Result<Map<String, Json>, String> {
            match value {
                Json::Object(map) => Ok(map.clone()),
                Json::Null => Ok(Map::new()),
                _ => Err(fail(format!("{field}: expected a map"))),
            }
        };
        let resource = identity(json.get("resource").unwrap_or(&Json::Null), "resource")?;
        let reference_path = match json.get("referencePath") {
            None | Some(Json::Null) => Vec::new(),
            Some(Json::Array(list)) => list
                .iter()
                .map(|element| identity(element, "referencePath"))
                .collect::<Result<_, _>>()?,
            Some(_) => return Err(fail("referencePath: expected a list".into())),
        };
        if !matches!(&json, Json::Object(_)) {
            return Err(fail("expected a map".into()));
        }
        Ok(Self {
            resource,
            reference_path,
        })
    }
}

/// `cd://<keyword>/<value>/…`: component references, then one resource.
fn parse_uri(text: &str) -> Result<ResourceReference, String> {
    if text.len() > MAX_URI_LENGTH {
        return Err(format!(
            "too long uri, got {} but expected max {MAX_URI_LENGTH}",
            text.len()
        ));
    }
    let path = text[SCHEME.len()..].split(['#', '?']).next().unwrap_or("");
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    if segments.is_empty() {
        return Err("a path must be defined".into());
    }
    if !segments.len().is_multiple_of(2) {
        return Err("even number of path arguments expected".into());
    }
    let mut reference_path = Vec::new();
    let pairs: Vec<&[&str]> = segments.chunks(2).collect();
    for (i, pair) in pairs.iter().enumerate() {
        let is_last = i + 1 == pairs.len();
        let identity = Map::from_iter([("name".to_string(), Json::String(pair[1].to_string()))]);
        match pair[0] {
            "componentReferences" if is_last => {
                return Err(
                    "the selector seems to target a component but a resource is requested".into(),
                );
            }
            "componentReferences" => reference_path.push(identity),
            "resources" if !is_last => {
                return Err(
                    "the selector seems to contain more path segments after a resource".into(),
                );
            }
            "resources" => {
                return Ok(ResourceReference {
                    resource: identity,
                    reference_path,
                });
            }
            other => return Err(format!("unknown keyword {other}")),
        }
    }
    Err(format!("unable to find resource {text:?}"))
}

/// Where component versions and resource contents come from while templates run. Lookups are
/// synchronous, as template functions are.
pub trait ComponentSource: Send + Sync + std::fmt::Debug {
    /// The descriptor of component `name` in `version`.
    fn descriptor(&self, name: &str, version: &str) -> Result<Descriptor, Error>;
    /// The content of `resource`, a resource of `descriptor`.
    fn content(&self, descriptor: &Descriptor, resource: &Json) -> Result<Arc<Vec<u8>>, Error>;
}

/// A resource found by a relative reference.
#[derive(Clone, Debug)]
pub struct Resolved {
    /// The component version holding the resource.
    pub component: Descriptor,
    /// The resource, as its descriptor lists it.
    pub resource: Json,
}

impl Resolved {
    /// The resource's global identity.
    pub fn identity(&self) -> GlobalResourceIdentity {
        GlobalResourceIdentity {
            name: self.component.name().to_string(),
            version: self.component.version().to_string(),
            resource: resource_identity(&self.component, &self.resource),
        }
    }
}

/// Follows `reference` from `root`: each component reference of the path is looked up in
/// `known` (the resolved component versions), else in `source`.
pub fn resolve(
    root: &Descriptor,
    known: &[Descriptor],
    source: Option<&dyn ComponentSource>,
    reference: &ResourceReference,
) -> Result<Resolved, Error> {
    let fail = |what: String| {
        Error::Component(format!(
            "unable to resolve relative resource reference: {what}"
        ))
    };
    let mut current = root.clone();
    for identity in &reference.reference_path {
        let found = current
            .references(&[])
            .into_iter()
            .find(|r| element_matches(r, identity))
            .ok_or_else(|| {
                fail(format!(
                    "component {}:{} has no component reference {}",
                    current.name(),
                    current.version(),
                    Json::Object(identity.clone())
                ))
            })?;
        let field = |key: &str| found.get(key).and_then(Json::as_str).unwrap_or_default();
        let (name, version) = (field("componentName"), field("version"));
        current = match known
            .iter()
            .find(|d| d.name() == name && d.version() == version)
        {
            Some(descriptor) => descriptor.clone(),
            None => source
                .ok_or_else(|| {
                    fail(format!(
                        "component {name}:{version} is not resolved and no repository is known"
                    ))
                })?
                .descriptor(name, version)
                .map_err(|e| fail(e.to_string()))?,
        };
    }
    let resource = current
        .resources(&[])
        .into_iter()
        .find(|r| element_matches(r, &reference.resource))
        .ok_or_else(|| {
            fail(format!(
                "component {}:{} has no resource {}",
                current.name(),
                current.version(),
                Json::Object(reference.resource.clone())
            ))
        })?;
    Ok(Resolved {
        component: current,
        resource,
    })
}

/// Whether an element (resource or reference) has every pair of `identity`: `name`, `version`
/// or an extra identity attribute.
fn element_matches(element: &Json, identity: &Map<String, Json>) -> bool {
    !identity.is_empty()
        && identity.iter().all(|(key, value)| {
            let found = match key.as_str() {
                "name" | "version" => element.get(key),
                _ => element.get("extraIdentity").and_then(|e| e.get(key)),
            };
            found == Some(value)
        })
}

/// An element's identity as OCM gives it: `name` and the extra identity, plus `version` only
/// when another resource of the component has the same name and extra identity.
fn resource_identity(component: &Descriptor, resource: &Json) -> Map<String, Json> {
    let base = |r: &Json| {
        let mut identity = r
            .get("extraIdentity")
            .and_then(Json::as_object)
            .cloned()
            .unwrap_or_default();
        identity.insert("name".into(), r.get("name").cloned().unwrap_or(Json::Null));
        identity
    };
    let mut identity = base(resource);
    let alike = component
        .resources(&[])
        .iter()
        .filter(|r| base(r) == identity)
        .count();
    if alike > 1
        && let Some(version) = resource.get("version")
    {
        identity.insert("version".into(), version.clone());
    }
    identity
}

/// A resource's global identity: its component version and its identity in it.
#[derive(Clone, Debug, PartialEq)]
pub struct GlobalResourceIdentity {
    /// The component's name.
    pub name: String,
    /// The component's version.
    pub version: String,
    /// The resource's identity.
    pub resource: Map<String, Json>,
}

impl GlobalResourceIdentity {
    /// The key: standard padded base64 of the identity's YAML, keys sorted.
    pub fn key(&self) -> Result<String, Error> {
        let json = serde_json::json!({
            "component": {"name": self.name, "version": self.version},
            "resource": self.resource,
        });
        let yaml = crate::values::to_yaml(&json)
            .map_err(|e| Error::Component(format!("encoding a resource key: {e}")))?;
        Ok(base64::engine::general_purpose::STANDARD.encode(format!("{yaml}\n")))
    }

    /// Reads a key back.
    pub fn from_key(key: &str) -> Result<Self, Error> {
        let fail = |what: String| Error::Component(format!("resource key: {what}"));
        let compact: String = key.chars().filter(|c| !c.is_ascii_whitespace()).collect();
        let yaml = base64::engine::general_purpose::STANDARD
            .decode(compact)
            .map_err(|e| fail(format!("not base64: {e}")))?;
        let yaml = String::from_utf8(yaml).map_err(|_| fail("not UTF-8 text".into()))?;
        let json = crate::values::parse_yaml(&yaml).map_err(fail)?;
        let text = |pointer: &str| {
            json.pointer(pointer)
                .and_then(Json::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .ok_or_else(|| fail(format!("{} is missing", &pointer[1..].replace('/', "."))))
        };
        let resource = json
            .get("resource")
            .and_then(Json::as_object)
            .filter(|r| r.contains_key("name"))
            .cloned()
            .ok_or_else(|| fail("resource.name is missing".into()))?;
        Ok(Self {
            name: text("/component/name")?,
            version: text("/component/version")?,
            resource,
        })
    }

    /// The resource this identity names in `component` (its component version).
    pub fn find_in(&self, component: &Descriptor) -> Result<Json, Error> {
        component
            .resources(&[])
            .into_iter()
            .find(|r| element_matches(r, &self.resource))
            .ok_or_else(|| {
                Error::Component(format!(
                    "component {}:{} has no resource {}",
                    self.name,
                    self.version,
                    Json::Object(self.resource.clone())
                ))
            })
    }
}

/// The resource `argument` (a relative reference) names, from the installation's component
/// `root`: what `getResourceKey` and `getResourceContent` share, with upstream's messages.
pub fn resolve_argument(
    root: Option<&Descriptor>,
    known: &[Descriptor],
    source: Option<&dyn ComponentSource>,
    argument: &str,
) -> Result<Resolved, String> {
    let root = root.ok_or("unable to use this function without ocm component version")?;
    let reference = ResourceReference::parse(argument)?;
    resolve(root, known, source, &reference).map_err(|e| match e {
        Error::Component(message) => message,
        other => other.to_string(),
    })
}

/// The content of `resolved` through `source`.
pub fn resolved_content(
    source: Option<&dyn ComponentSource>,
    resolved: &Resolved,
) -> Result<Arc<Vec<u8>>, String> {
    let source = source.ok_or_else(|| {
        format!(
            "unable to read resource content: the repository of component {}:{} is not known",
            resolved.component.name(),
            resolved.component.version()
        )
    })?;
    source
        .content(&resolved.component, &resolved.resource)
        .map_err(|e| format!("unable to read resource content: {e}"))
}

/// The content of a resource as `getResourceContent` gives it: base64 for
/// `application/octet-stream` (the media type when the access names none), text otherwise.
pub fn content_text(resource: &Json, data: &[u8]) -> String {
    let media_type = resource
        .pointer("/access/mediaType")
        .and_then(Json::as_str)
        .unwrap_or(OCTET_STREAM);
    if media_type == OCTET_STREAM {
        base64::engine::general_purpose::STANDARD.encode(data)
    } else {
        String::from_utf8_lossy(data).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn name(n: &str) -> Map<String, Json> {
        Map::from_iter([("name".to_string(), json!(n))])
    }

    #[test]
    fn paths_and_yaml_give_the_same_reference() {
        let from_path =
            ResourceReference::parse("cd://componentReferences/leaf/resources/chart").unwrap();
        let from_yaml =
            ResourceReference::parse("resource:\n  name: chart\nreferencePath:\n- name: leaf\n")
                .unwrap();
        assert_eq!(from_path, from_yaml);
        assert_eq!(from_path.reference_path, vec![name("leaf")]);
        let json = ResourceReference::parse(r#"{"resource": {"name": "chart"}}"#).unwrap();
        assert!(json.reference_path.is_empty());
    }

    #[test]
    fn malformed_paths_are_refused_with_upstreams_messages() {
        let error = |text: &str| ResourceReference::parse(text).unwrap_err();
        assert!(
            error("cd://componentReferences/leaf")
                .ends_with("the selector seems to target a component but a resource is requested")
        );
        assert!(
            error("cd://resources/a/componentReferences/b")
                .ends_with("the selector seems to contain more path segments after a resource")
        );
        assert!(error("cd://sources/a").ends_with("unknown keyword sources"));
        assert!(error("cd://resources").ends_with("even number of path arguments expected"));
        assert!(error("[1]").starts_with("failed to unmarshal argument"));
    }

    #[test]
    fn keys_round_trip_and_name_the_version_only_when_it_is_needed() {
        let component = Descriptor::from_json(json!({"meta": {"schemaVersion": "v2"}, "component": {
            "name": "github.com/leaf", "version": "1.0.0", "provider": "p", "repositoryContexts": [],
            "sources": [], "componentReferences": [], "resources": [
                {"name": "mychart", "version": "1.0.0", "type": "helmChart", "relation": "local", "access": {"type": "localBlob"}},
                {"name": "img", "version": "1", "type": "ociImage", "relation": "external", "access": {"type": "localBlob"}},
                {"name": "img", "version": "2", "type": "ociImage", "relation": "external", "access": {"type": "localBlob"}}
            ]}}))
        .unwrap();
        let resolved = resolve(
            &component,
            &[],
            None,
            &ResourceReference {
                resource: name("mychart"),
                reference_path: Vec::new(),
            },
        )
        .unwrap();
        let identity = resolved.identity();
        // The key upstream's Go test data gives for this identity.
        assert_eq!(
            identity.key().unwrap(),
            "Y29tcG9uZW50OgogIG5hbWU6IGdpdGh1Yi5jb20vbGVhZgogIHZlcnNpb246IDEuMC4wCnJlc291cmNlOgogIG5hbWU6IG15Y2hhcnQK"
        );
        assert_eq!(
            GlobalResourceIdentity::from_key(&identity.key().unwrap()).unwrap(),
            identity
        );
        let second = Resolved {
            component: component.clone(),
            resource: component.resources(&[])[2].clone(),
        };
        assert_eq!(
            Json::Object(second.identity().resource),
            json!({"name": "img", "version": "2"})
        );
        assert_eq!(
            second.identity().find_in(&component).unwrap()["version"],
            "2"
        );
        assert!(GlobalResourceIdentity::from_key("bm9uZQ==").is_err());
    }

    #[test]
    fn content_is_base64_only_for_octet_streams() {
        let yaml = json!({"access": {"mediaType": "application/yaml"}});
        assert_eq!(content_text(&yaml, b"a: 1"), "a: 1");
        assert_eq!(content_text(&json!({}), b"a"), "YQ==");
    }
}
