//! Helm's `.Capabilities`: the Kubernetes version, the API versions the cluster serves and
//! Helm's own version.

use std::rc::Rc;

use crate::engine::value::format::quote;
use crate::engine::value::{MethodError, Object, Value};
use crate::formats::tree::Data;

/// `.Capabilities.KubeVersion`: `Version` (e.g. `v1.35.0`), `Major`, `Minor`, the
/// deprecated `GitVersion` (the version as given) and `String` (the version without
/// pre-release or build suffix, Helm's unexported `normalizedVersion`).
///
/// `String` has a pointer receiver in Helm, so `{{ .Capabilities.KubeVersion }}` prints the
/// normalized version (text/template takes the field's address) while a copy handed to a
/// function (`printf "%v"`, `quote`) prints the struct `{Version normalized Major Minor}`.
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
    /// Parses a Kubernetes version as Helm's `ParseKubeVersion` does (Kubernetes' generic
    /// version parser): `1.35`, `v1.35.0`, `v1.33.4-gke.1`; `None` when it is not one.
    pub fn parse(text: &str) -> Option<KubeVersion> {
        KubeVersion::parse_generic(text).ok()
    }

    /// Like [`KubeVersion::parse`], with Kubernetes' error message (`illegal version string
    /// "1"`, `could not parse "x" as version`, …).
    pub fn parse_generic(text: &str) -> Result<KubeVersion, String> {
        let components = numeric_components(text)?;
        let unprefixed = text.trim_start();
        let unprefixed = unprefixed.strip_prefix('v').unwrap_or(unprefixed);
        Ok(KubeVersion {
            version: format!("v{unprefixed}"),
            major: components[0].to_string(),
            minor: components[1].to_string(),
        })
    }

    /// Helm's `normalizedVersion`: `v` and the numeric components, without any pre-release
    /// or build suffix.
    pub fn normalized(&self) -> String {
        match numeric_components(&self.version) {
            Ok(components) => {
                let texts: Vec<String> = components.iter().map(u64::to_string).collect();
                format!("v{}", texts.join("."))
            }
            Err(_) => self.version.clone(),
        }
    }
}

/// The dot-separated numbers a Kubernetes version starts with (after blanks and a `v`), at
/// least two, the first without a leading zero.
fn numeric_components(text: &str) -> Result<Vec<u64>, String> {
    let body = text.trim_start();
    let body = body.strip_prefix('v').unwrap_or(body);
    let mut end = 0;
    let bytes = body.as_bytes();
    while end < bytes.len() {
        let digits = bytes[end..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if digits == 0 {
            break;
        }
        end += digits;
        if end + 1 < bytes.len() && bytes[end] == b'.' && bytes[end + 1].is_ascii_digit() {
            end += 1;
        } else {
            break;
        }
    }
    if end == 0 {
        return Err(format!("could not parse {} as version", quote(text)));
    }
    let parts: Vec<&str> = body[..end].split('.').collect();
    if parts.len() < 2 {
        return Err(format!("illegal version string {}", quote(text)));
    }
    if parts[0].len() > 1 && parts[0].starts_with('0') {
        return Err(format!(
            "illegal zero-prefixed version component {} in {}",
            quote(parts[0]),
            quote(text)
        ));
    }
    parts
        .iter()
        .map(|p| {
            p.parse::<u64>().map_err(|_| {
                format!(
                    "illegal non-numeric version component {} in {}: strconv.ParseUint: parsing {}: value out of range",
                    quote(p),
                    quote(text),
                    quote(p)
                )
            })
        })
        .collect()
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
            "String" => Ok(Value::from(self.normalized().as_str())),
            "GitVersion" => Ok(Value::from(self.version.as_str())),
            _ => Err(MethodError::NoSuchMethod),
        }
    }

    fn format(&self) -> String {
        format!(
            "{{{} {} {} {}}}",
            self.version,
            self.normalized(),
            self.major,
            self.minor
        )
    }

    fn format_verbose(&self) -> String {
        format!(
            "{{Version:{} normalizedVersion:{} Major:{} Minor:{}}}",
            self.version,
            self.normalized(),
            self.major,
            self.minor
        )
    }

    fn template_print(&self) -> String {
        self.normalized()
    }

    fn to_data(&self) -> Option<Data> {
        Some(struct_data(&self.json_fields()?))
    }

    fn json_fields(&self) -> Option<Vec<(&'static str, Value)>> {
        Some(vec![
            ("Version", Value::from(self.version.as_str())),
            ("Major", Value::from(self.major.as_str())),
            ("Minor", Value::from(self.minor.as_str())),
        ])
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

    fn to_data(&self) -> Option<Data> {
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
    /// The Kubernetes client library version it was built with, e.g. `v1.35`.
    pub kube_client_version: String,
}

impl HelmVersion {
    /// The build this crate imitates: helm v4.1.4 as released (`helm version` prints it).
    pub fn helm_v4_1_4() -> HelmVersion {
        HelmVersion {
            version: "v4.1.4".to_string(),
            git_commit: "05fa37973dc9e42b76e1d2883494c87174b6074f".to_string(),
            git_tree_state: "clean".to_string(),
            go_version: "go1.25.9".to_string(),
            kube_client_version: "v1.35".to_string(),
        }
    }

    /// The fields with their `encoding/json` names (Helm's `BuildInfo` tags), in order.
    fn fields(&self) -> [(&'static str, &'static str, &str); 5] {
        [
            ("Version", "version", &self.version),
            ("GitCommit", "git_commit", &self.git_commit),
            ("GitTreeState", "git_tree_state", &self.git_tree_state),
            ("GoVersion", "go_version", &self.go_version),
            (
                "KubeClientVersion",
                "kube_client_version",
                &self.kube_client_version,
            ),
        ]
    }
}

impl Object for HelmVersion {
    fn type_name(&self) -> String {
        "version.BuildInfo".into()
    }

    fn field(&self, name: &str) -> Option<Value> {
        self.fields()
            .into_iter()
            .find(|(field, _, _)| *field == name)
            .map(|(_, _, text)| Value::from(text))
    }

    fn format(&self) -> String {
        let texts: Vec<&str> = self.fields().iter().map(|(_, _, text)| *text).collect();
        format!("{{{}}}", texts.join(" "))
    }

    fn format_verbose(&self) -> String {
        let texts: Vec<String> = self
            .fields()
            .iter()
            .map(|(field, _, text)| format!("{field}:{text}"))
            .collect();
        format!("{{{}}}", texts.join(" "))
    }

    fn to_data(&self) -> Option<Data> {
        Some(struct_data(&self.json_fields()?))
    }

    fn json_fields(&self) -> Option<Vec<(&'static str, Value)>> {
        Some(
            self.fields()
                .into_iter()
                .map(|(_, json, text)| (json, Value::from(text)))
                .collect(),
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
        format!("&{}", self.template_print())
    }

    fn format_verbose(&self) -> String {
        format!(
            "&{{KubeVersion:{} APIVersions:{} HelmVersion:{}}}",
            self.kube_version.format_verbose(),
            self.api_versions.format(),
            self.helm_version.format_verbose()
        )
    }

    /// text/template prints what a pointer points to, so `{{ .Capabilities }}` has no `&`.
    fn template_print(&self) -> String {
        format!(
            "{{{} {} {}}}",
            self.kube_version.format(),
            self.api_versions.format(),
            self.helm_version.format()
        )
    }

    fn to_data(&self) -> Option<Data> {
        Some(struct_data(&self.json_fields()?))
    }

    fn json_fields(&self) -> Option<Vec<(&'static str, Value)>> {
        Some(vec![
            ("KubeVersion", Value::Object(self.kube_version.clone())),
            ("APIVersions", Value::Object(self.api_versions.clone())),
            ("HelmVersion", Value::Object(self.helm_version.clone())),
        ])
    }

    fn kind_name(&self) -> &'static str {
        "ptr"
    }
}

/// A struct's JSON fields as a data map (for `toYaml`, which sorts keys anyway).
fn struct_data(fields: &[(&'static str, Value)]) -> Data {
    let mut map = crate::formats::tree::Map::default();
    for (name, value) in fields {
        map.insert((*name).to_string(), value.to_data().unwrap_or_default());
    }
    Data::Map(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kube_versions_parse_with_or_without_v() {
        let v = KubeVersion::parse("1.20.0").map(|v| (v.version, v.major, v.minor));
        assert_eq!(v, Some(("v1.20.0".into(), "1".into(), "20".into())));
        let gke = KubeVersion::parse("v1.33.4-gke.1");
        assert_eq!(gke.as_ref().map(|v| v.minor.as_str()), Some("33"));
        // Helm's normalizedVersion, as `.Capabilities.KubeVersion.String` prints it.
        assert_eq!(
            gke.as_ref().map(KubeVersion::normalized).as_deref(),
            Some("v1.33.4")
        );
        let k3s = KubeVersion::parse("1.35.0+k3s1");
        assert_eq!(
            k3s.as_ref().map(KubeVersion::normalized).as_deref(),
            Some("v1.35.0")
        );
        let rc = KubeVersion::parse("1.20.3rc1").map(|v| (v.version.clone(), v.normalized()));
        assert_eq!(rc, Some(("v1.20.3rc1".into(), "v1.20.3".into())));
        // Kubernetes' messages, as helm v4.1.4 prints them for --kube-version.
        let errors: Vec<String> = ["1", "latest", "v01.2.3", "1.x"]
            .iter()
            .map(|v| KubeVersion::parse_generic(v).err().unwrap_or_default())
            .collect();
        assert_eq!(
            errors,
            [
                "illegal version string \"1\"",
                "could not parse \"latest\" as version",
                "illegal zero-prefixed version component \"01\" in \"v01.2.3\"",
                "illegal version string \"1.x\"",
            ]
        );
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
