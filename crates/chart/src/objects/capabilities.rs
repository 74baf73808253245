//! Helm's `.Capabilities`: the Kubernetes version, the API versions the cluster serves and
//! Helm's own version.

use std::rc::Rc;

use crate::value::{MethodError, Object, Value};

/// `.Capabilities.KubeVersion`: `Version` (e.g. `v1.35.0`), `Major`, `Minor`, and the
/// deprecated `GitVersion`; prints as its version.
#[derive(Clone, Debug)]
pub struct KubeVersion {
    /// The full version, with a leading `v`.
    pub version: String,
    /// The major version number as text.
    pub major: String,
    /// The minor version number as text.
    pub minor: String,
}

impl KubeVersion {
    /// Parses `1.35.0` or `v1.35.0-gke.1`; `None` when it is not a version.
    pub fn parse(text: &str) -> Option<KubeVersion> {
        let trimmed = text.trim_start_matches('v');
        let mut parts = trimmed.splitn(3, '.');
        let major = parts
            .next()
            .filter(|p| p.chars().all(|c| c.is_ascii_digit()) && !p.is_empty())?;
        let minor = parts.next().unwrap_or("0");
        let minor_digits: String = minor.chars().take_while(char::is_ascii_digit).collect();
        if minor_digits.is_empty() {
            return None;
        }
        Some(KubeVersion {
            version: format!("v{trimmed}"),
            major: major.to_string(),
            minor: minor_digits,
        })
    }
}

impl Object for KubeVersion {
    fn type_name(&self) -> String {
        "common.KubeVersion".into()
    }

    fn field(&self, name: &str) -> Option<Value> {
        match name {
            "Version" => Some(Value::from(self.version.as_str())),
            "Major" => Some(Value::from(self.major.as_str())),
            "Minor" => Some(Value::from(self.minor.as_str())),
            _ => None,
        }
    }

    fn has_method(&self, name: &str) -> bool {
        matches!(name, "String" | "GitVersion")
    }

    fn call_method(&self, name: &str, args: &[Value]) -> Result<Value, MethodError> {
        if !args.is_empty() {
            return Err(MethodError::ArgCount {
                want: 0,
                got: args.len(),
            });
        }
        match name {
            "String" | "GitVersion" => Ok(Value::from(self.version.as_str())),
            _ => Err(MethodError::NoSuchMethod),
        }
    }

    fn format(&self) -> String {
        self.version.clone()
    }
}

/// `.Capabilities.APIVersions`: a list of `group/version` (and `group/version/Kind`) strings
/// with `Has`.
#[derive(Clone, Debug, Default)]
pub struct ApiVersions(pub Vec<String>);

impl Object for ApiVersions {
    fn type_name(&self) -> String {
        "common.VersionSet".into()
    }

    fn field(&self, _name: &str) -> Option<Value> {
        None
    }

    fn has_method(&self, name: &str) -> bool {
        name == "Has"
    }

    fn call_method(&self, name: &str, args: &[Value]) -> Result<Value, MethodError> {
        if name != "Has" {
            return Err(MethodError::NoSuchMethod);
        }
        match args {
            [Value::String(wanted)] => Ok(Value::Bool(self.0.iter().any(|v| **v == **wanted))),
            [_] => Err(MethodError::ArgType {
                index: 0,
                expected: "string".into(),
            }),
            _ => Err(MethodError::ArgCount {
                want: 1,
                got: args.len(),
            }),
        }
    }

    fn format(&self) -> String {
        self.list().to_go_string()
    }

    fn as_collection(&self) -> Option<Value> {
        Some(self.list())
    }

    fn to_data(&self) -> Option<crate::data::Data> {
        self.list().to_data().ok()
    }

    fn kind_name(&self) -> &'static str {
        "slice"
    }
}

impl ApiVersions {
    fn list(&self) -> Value {
        Value::list(self.0.iter().map(|v| Value::from(v.as_str())).collect())
    }
}

/// `.Capabilities.HelmVersion`: the build information of the Helm being imitated.
#[derive(Clone, Debug)]
pub struct HelmVersion {
    /// E.g. `v4.1.4`.
    pub version: String,
    /// The git commit of that build.
    pub git_commit: String,
    /// `clean` or `dirty`.
    pub git_tree_state: String,
    /// The Go version of that build.
    pub go_version: String,
}

impl Object for HelmVersion {
    fn type_name(&self) -> String {
        "version.BuildInfo".into()
    }

    fn field(&self, name: &str) -> Option<Value> {
        let text = match name {
            "Version" => &self.version,
            "GitCommit" => &self.git_commit,
            "GitTreeState" => &self.git_tree_state,
            "GoVersion" => &self.go_version,
            _ => return None,
        };
        Some(Value::from(text.as_str()))
    }

    fn format(&self) -> String {
        format!(
            "{{{} {} {} {}}}",
            self.version, self.git_commit, self.git_tree_state, self.go_version
        )
    }
}

/// `.Capabilities` itself.
#[derive(Clone, Debug)]
pub struct Capabilities {
    /// The cluster's Kubernetes version.
    pub kube_version: Rc<KubeVersion>,
    /// The API versions the cluster serves.
    pub api_versions: Rc<ApiVersions>,
    /// The Helm build being imitated.
    pub helm_version: Rc<HelmVersion>,
}

impl Object for Capabilities {
    fn type_name(&self) -> String {
        "*common.Capabilities".into()
    }

    fn field(&self, name: &str) -> Option<Value> {
        match name {
            "KubeVersion" => Some(Value::Object(self.kube_version.clone())),
            "APIVersions" => Some(Value::Object(self.api_versions.clone())),
            "HelmVersion" => Some(Value::Object(self.helm_version.clone())),
            _ => None,
        }
    }

    fn format(&self) -> String {
        format!(
            "&{{{} {} {}}}",
            self.kube_version.format(),
            self.api_versions.format(),
            self.helm_version.format()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kube_versions_parse_with_or_without_v() {
        let v = KubeVersion::parse("1.20.0").map(|v| (v.version, v.major, v.minor));
        assert_eq!(v, Some(("v1.20.0".into(), "1".into(), "20".into())));
        let gke = KubeVersion::parse("v1.33.4-gke.1").map(|v| v.minor);
        assert_eq!(gke.as_deref(), Some("33"));
        assert!(KubeVersion::parse("latest").is_none());
    }

    #[test]
    fn api_versions_answer_has() {
        let set = ApiVersions(vec!["v1".into(), "apps/v1".into()]);
        assert_eq!(
            set.call_method("Has", &[Value::from("apps/v1")])
                .ok()
                .map(|v| v.is_true()),
            Some(true)
        );
        assert_eq!(
            set.call_method("Has", &[Value::from("batch/v1")])
                .ok()
                .map(|v| v.is_true()),
            Some(false)
        );
    }
}
