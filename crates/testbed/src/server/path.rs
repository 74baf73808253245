//! Parsing a request path into what it addresses.

/// A path naming objects of a resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourcePath {
    /// API group (`""` for core).
    pub group: String,
    /// API version.
    pub version: String,
    /// Namespace from the path.
    pub namespace: Option<String>,
    /// Plural resource name.
    pub plural: String,
    /// Object name.
    pub name: Option<String>,
    /// Subresource (`status`, `scale`, `token`, ...).
    pub subresource: Option<String>,
}

/// What a request path addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// `/version`.
    Version,
    /// `/healthz`, `/readyz`, `/livez` (and their sub-checks).
    Health,
    /// `/api`.
    Api,
    /// `/apis`.
    Apis,
    /// `/apis/<group>`.
    Group(String),
    /// `/api/v1` or `/apis/<group>/<version>`.
    GroupVersion(String, String),
    /// `/openapi/v2`, `/openapi/v3`, `/openapi/v3/<gv path>`.
    OpenApi(String),
    /// `/.well-known/openid-configuration`: the ServiceAccount issuer's discovery document.
    OpenIdConfiguration,
    /// `/openid/v1/jwks`: the keys that verify ServiceAccount tokens.
    Jwks,
    /// Objects of a resource.
    Resource(ResourcePath),
    /// Anything else: `404 page not found`.
    Unknown,
}

/// Parses a path (without query).
pub fn parse(path: &str) -> Route {
    let parts: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    match parts.as_slice() {
        ["version"] => Route::Version,
        [h, ..] if matches!(*h, "healthz" | "readyz" | "livez") => Route::Health,
        ["openapi", rest @ ..] if !rest.is_empty() => Route::OpenApi(rest.join("/")),
        [".well-known", "openid-configuration"] => Route::OpenIdConfiguration,
        ["openid", "v1", "jwks"] => Route::Jwks,
        ["api"] => Route::Api,
        ["apis"] => Route::Apis,
        ["apis", group] => Route::Group(group.to_string()),
        ["api", version] => Route::GroupVersion(String::new(), version.to_string()),
        ["apis", group, version] => Route::GroupVersion(group.to_string(), version.to_string()),
        ["api", version, rest @ ..] => resource("", version, rest),
        ["apis", group, version, rest @ ..] => resource(group, version, rest),
        _ => Route::Unknown,
    }
}

fn resource(group: &str, version: &str, rest: &[&str]) -> Route {
    // `namespaces/<ns>/<resource>...` scopes a resource to a namespace, except that
    // `namespaces/<name>/status` and `/finalize` are subresources of the namespace itself.
    let (namespace, rest) = match rest {
        ["namespaces", ns, next, tail @ ..] if !matches!(*next, "status" | "finalize") => {
            (Some(ns.to_string()), {
                let mut v = vec![*next];
                v.extend_from_slice(tail);
                v
            })
        }
        _ => (None, rest.to_vec()),
    };
    let (plural, name, subresource) = match rest.as_slice() {
        [plural] => (plural, None, None),
        [plural, name] => (plural, Some(name.to_string()), None),
        [plural, name, sub] => (plural, Some(name.to_string()), Some(sub.to_string())),
        _ => return Route::Unknown,
    };
    Route::Resource(ResourcePath {
        group: group.into(),
        version: version.into(),
        namespace,
        plural: plural.to_string(),
        name,
        subresource,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn res(path: &str) -> ResourcePath {
        match parse(path) {
            Route::Resource(r) => r,
            other => panic!("{path}: {other:?}"),
        }
    }

    #[test]
    fn namespaced_object_paths() {
        let r = res("/apis/apps/v1/namespaces/ns1/deployments/web/status");
        assert_eq!(r.group, "apps");
        assert_eq!(r.namespace.as_deref(), Some("ns1"));
        assert_eq!(r.plural, "deployments");
        assert_eq!(r.name.as_deref(), Some("web"));
        assert_eq!(r.subresource.as_deref(), Some("status"));
    }

    #[test]
    fn namespace_itself_and_its_subresources() {
        let r = res("/api/v1/namespaces/ns1");
        assert_eq!(
            (r.plural.as_str(), r.name.as_deref(), r.namespace),
            ("namespaces", Some("ns1"), None)
        );
        let r = res("/api/v1/namespaces/ns1/finalize");
        assert_eq!(r.subresource.as_deref(), Some("finalize"));
        let r = res("/api/v1/namespaces/ns1/configmaps");
        assert_eq!(
            (r.plural.as_str(), r.namespace.as_deref()),
            ("configmaps", Some("ns1"))
        );
    }

    #[test]
    fn discovery_paths() {
        assert_eq!(parse("/apis/apps"), Route::Group("apps".into()));
        assert_eq!(
            parse("/api/v1"),
            Route::GroupVersion(String::new(), "v1".into())
        );
        assert_eq!(parse("/nope"), Route::Unknown);
    }
}
