//! `Chart.yaml` (and a v1 chart's `requirements.yaml`): the typed model, read as
//! sigs.k8s.io/yaml and Go's `encoding/json` read it (a number or boolean in a string field is
//! its text, keys match case-insensitively, `null` leaves a field alone, any other value of
//! the wrong type is an error), Helm's validation, and the `.Chart` map templates see.

use std::collections::BTreeMap;

use crate::engine::value::{self, Value};
use crate::formats::tree::{Data, Map};
use crate::formats::yaml::{self, Yaml, YamlError};
use crate::helm::semver::{parse_constraints, parse_version};

/// Chart API version 1 (Helm 2 charts; dependencies in `requirements.yaml`).
pub const API_VERSION_V1: &str = "v1";
/// Chart API version 2.
pub const API_VERSION_V2: &str = "v2";

/// A maintainer entry.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Maintainer {
    /// `name`.
    pub name: String,
    /// `email`.
    pub email: String,
    /// `url`.
    pub url: String,
}

/// A dependency entry of `Chart.yaml` (or `requirements.yaml`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Dependency {
    /// `name`: the subchart's name.
    pub name: String,
    /// `version`: a semver range the subchart's version must satisfy.
    pub version: String,
    /// `repository`: where `helm dependency` fetches it from.
    pub repository: String,
    /// `condition`: comma-separated values paths; the first boolean found decides.
    pub condition: String,
    /// `tags`: names under `.Values.tags` that enable or disable it.
    pub tags: Vec<String>,
    /// `enabled`: set while processing conditions and tags.
    pub enabled: bool,
    /// `import-values`: strings (`exports.X`) or `{child, parent}` maps.
    pub import_values: Vec<Data>,
    /// `alias`: the name the subchart is used under.
    pub alias: String,
}

/// The contents of `Chart.yaml`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Metadata {
    /// `name`.
    pub name: String,
    /// `home`.
    pub home: String,
    /// `sources`.
    pub sources: Vec<String>,
    /// `version`: the chart's semantic version.
    pub version: String,
    /// `description`.
    pub description: String,
    /// `keywords`.
    pub keywords: Vec<String>,
    /// `maintainers`.
    pub maintainers: Vec<Maintainer>,
    /// `icon`.
    pub icon: String,
    /// `apiVersion`: `v1` or `v2`.
    pub api_version: String,
    /// `condition` (unused by Helm 3+ but kept).
    pub condition: String,
    /// `tags` (unused by Helm 3+ but kept).
    pub tags: String,
    /// `appVersion`.
    pub app_version: String,
    /// `deprecated`.
    pub deprecated: bool,
    /// `annotations`.
    pub annotations: BTreeMap<String, String>,
    /// `kubeVersion`: a semver range of supported Kubernetes versions.
    pub kube_version: String,
    /// `dependencies`.
    pub dependencies: Vec<Dependency>,
    /// `type`: `application` (or empty) or `library`.
    pub chart_type: String,
}

impl Metadata {
    /// Reads the fields of a decoded `Chart.yaml` into `self`, as Go's `json.Unmarshal` into
    /// an existing struct does (fields absent or null keep their value).
    pub fn merge_from(&mut self, map: &Map) -> Result<(), String> {
        for (key, value) in map {
            if value == &Data::Null {
                continue;
            }
            let Some((field, _)) = find_field(METADATA_FIELDS, key) else {
                continue;
            };
            let at = |ty: &str| type_error(value, &format!("Metadata.{field}"), ty);
            match field {
                "name" => self.name = string(value).ok_or_else(|| at("string"))?,
                "home" => self.home = string(value).ok_or_else(|| at("string"))?,
                "sources" => self.sources = strings(value, "Metadata.sources")?,
                "version" => self.version = string(value).ok_or_else(|| at("string"))?,
                "description" => self.description = string(value).ok_or_else(|| at("string"))?,
                "keywords" => self.keywords = strings(value, "Metadata.keywords")?,
                "maintainers" => self.maintainers = maintainers(value)?,
                "icon" => self.icon = string(value).ok_or_else(|| at("string"))?,
                "apiVersion" => self.api_version = string(value).ok_or_else(|| at("string"))?,
                "condition" => self.condition = string(value).ok_or_else(|| at("string"))?,
                "tags" => self.tags = string(value).ok_or_else(|| at("string"))?,
                "appVersion" => self.app_version = string(value).ok_or_else(|| at("string"))?,
                "deprecated" => match value {
                    Data::Bool(b) => self.deprecated = *b,
                    _ => return Err(at("bool")),
                },
                "annotations" => self.annotations = annotations(value)?,
                "kubeVersion" => self.kube_version = string(value).ok_or_else(|| at("string"))?,
                "dependencies" => self.dependencies = dependencies(value)?,
                "type" => self.chart_type = string(value).ok_or_else(|| at("string"))?,
                _ => {}
            }
        }
        Ok(())
    }

    /// Helm's `Metadata.Validate`: sanitizes free text and checks required fields, the
    /// version, the type, maintainers and dependency names. Messages start `validation: `.
    pub fn validate(&mut self) -> Result<(), String> {
        for s in [
            &mut self.name,
            &mut self.description,
            &mut self.home,
            &mut self.icon,
            &mut self.condition,
            &mut self.tags,
            &mut self.app_version,
            &mut self.kube_version,
        ] {
            *s = sanitize(s);
        }
        for s in self.sources.iter_mut().chain(self.keywords.iter_mut()) {
            *s = sanitize(s);
        }
        let fail = |m: String| Err(format!("validation: {m}"));
        if self.api_version.is_empty() {
            return fail("chart.metadata.apiVersion is required".into());
        }
        if self.name.is_empty() {
            return fail("chart.metadata.name is required".into());
        }
        // Helm compares the name with its `filepath.Base`, which only differs when it has a `/`.
        if self.name.contains('/') {
            return fail(format!(
                "chart.metadata.name {} is invalid",
                value::format::quote(&self.name)
            ));
        }
        if self.version.is_empty() {
            return fail("chart.metadata.version is required".into());
        }
        if parse_version(&self.version).is_err() {
            return fail(format!(
                "chart.metadata.version {} is invalid",
                value::format::quote(&self.version)
            ));
        }
        if !matches!(self.chart_type.as_str(), "" | "application" | "library") {
            return fail("chart.metadata.type must be application or library".into());
        }
        for m in &mut self.maintainers {
            m.name = sanitize(&m.name);
            if m.name.is_empty() {
                return fail("each maintainer requires a name".into());
            }
            m.email = sanitize(&m.email);
            m.url = sanitize(&m.url);
        }
        let mut seen = std::collections::HashSet::new();
        for d in &mut self.dependencies {
            d.name = sanitize(&d.name);
            d.version = sanitize(&d.version);
            d.repository = sanitize(&d.repository);
            d.condition = sanitize(&d.condition);
            for t in &mut d.tags {
                *t = sanitize(t);
            }
            if !d.alias.is_empty()
                && !d
                    .alias
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            {
                return fail(format!(
                    "dependency {} has disallowed characters in the alias",
                    value::format::quote(&d.name)
                ));
            }
            let key = if d.alias.is_empty() {
                &d.name
            } else {
                &d.alias
            };
            if !seen.insert(key.clone()) {
                return fail(format!(
                    "more than one dependency with name or alias {}",
                    value::format::quote(key)
                ));
            }
        }
        Ok(())
    }

    /// Whether this is a library chart (templates define only).
    pub fn is_library(&self) -> bool {
        self.chart_type == "library"
    }

    /// The `.Chart` map templates see: the metadata under Go's field names plus `IsRoot`.
    pub fn to_value(&self, is_root: bool) -> Value {
        let strings =
            |v: &[String]| Value::list(v.iter().map(|s| Value::from(s.as_str())).collect());
        let m = value::Map::new();
        m.insert("Name", Value::from(self.name.as_str()));
        m.insert("Home", Value::from(self.home.as_str()));
        m.insert("Sources", strings(&self.sources));
        m.insert("Version", Value::from(self.version.as_str()));
        m.insert("Description", Value::from(self.description.as_str()));
        m.insert("Keywords", strings(&self.keywords));
        m.insert(
            "Maintainers",
            Value::list(
                self.maintainers
                    .iter()
                    .map(|x| {
                        let mm = value::Map::new();
                        mm.insert("Name", Value::from(x.name.as_str()));
                        mm.insert("Email", Value::from(x.email.as_str()));
                        mm.insert("URL", Value::from(x.url.as_str()));
                        Value::Map(mm)
                    })
                    .collect(),
            ),
        );
        m.insert("Icon", Value::from(self.icon.as_str()));
        m.insert("APIVersion", Value::from(self.api_version.as_str()));
        m.insert("Condition", Value::from(self.condition.as_str()));
        m.insert("Tags", Value::from(self.tags.as_str()));
        m.insert("AppVersion", Value::from(self.app_version.as_str()));
        m.insert("Deprecated", Value::Bool(self.deprecated));
        m.insert(
            "Annotations",
            Value::Map(value::Map::from_entries(
                self.annotations
                    .iter()
                    .map(|(k, v)| (k.clone(), Value::from(v.as_str()))),
            )),
        );
        m.insert("KubeVersion", Value::from(self.kube_version.as_str()));
        m.insert(
            "Dependencies",
            Value::list(self.dependencies.iter().map(Dependency::to_value).collect()),
        );
        m.insert("Type", Value::from(self.chart_type.as_str()));
        m.insert("IsRoot", Value::Bool(is_root));
        Value::Map(m)
    }
}

impl Dependency {
    fn to_value(&self) -> Value {
        let m = value::Map::new();
        m.insert("Name", Value::from(self.name.as_str()));
        m.insert("Version", Value::from(self.version.as_str()));
        m.insert("Repository", Value::from(self.repository.as_str()));
        m.insert("Condition", Value::from(self.condition.as_str()));
        m.insert(
            "Tags",
            Value::list(self.tags.iter().map(|s| Value::from(s.as_str())).collect()),
        );
        m.insert("Enabled", Value::Bool(self.enabled));
        m.insert(
            "ImportValues",
            Value::list(self.import_values.iter().map(Value::from_data).collect()),
        );
        m.insert("Alias", Value::from(self.alias.as_str()));
        Value::Map(m)
    }
}

/// Whether `version` satisfies the semver range `range` (Helm's `IsCompatibleRange`); a
/// range or version that does not parse never matches.
pub fn is_compatible_range(range: &str, version: &str) -> bool {
    match (parse_constraints(range), parse_version(version)) {
        (Ok(c), Ok(v)) => c.check(&v),
        _ => false,
    }
}

/// What a field of Helm's `Metadata` (or of a struct in it) is in Go, as far as reading
/// `Chart.yaml` depends on it.
#[derive(Clone, Copy)]
enum Shape {
    /// `string`.
    Text,
    /// `[]string`.
    Texts,
    /// `map[string]string`.
    TextMap,
    /// A list of structs with these fields.
    Structs(&'static [(&'static str, Shape)]),
    /// Anything else (`bool`, `[]interface{}`).
    Other,
}

const METADATA_FIELDS: &[(&str, Shape)] = &[
    ("name", Shape::Text),
    ("home", Shape::Text),
    ("sources", Shape::Texts),
    ("version", Shape::Text),
    ("description", Shape::Text),
    ("keywords", Shape::Texts),
    ("maintainers", Shape::Structs(MAINTAINER_FIELDS)),
    ("icon", Shape::Text),
    ("apiVersion", Shape::Text),
    ("condition", Shape::Text),
    ("tags", Shape::Text),
    ("appVersion", Shape::Text),
    ("deprecated", Shape::Other),
    ("annotations", Shape::TextMap),
    ("kubeVersion", Shape::Text),
    ("dependencies", Shape::Structs(DEPENDENCY_FIELDS)),
    ("type", Shape::Text),
];

const DEPENDENCY_FIELDS: &[(&str, Shape)] = &[
    ("name", Shape::Text),
    ("version", Shape::Text),
    ("repository", Shape::Text),
    ("condition", Shape::Text),
    ("tags", Shape::Texts),
    ("enabled", Shape::Other),
    ("import-values", Shape::Other),
    ("alias", Shape::Text),
];

const MAINTAINER_FIELDS: &[(&str, Shape)] = &[
    ("name", Shape::Text),
    ("email", Shape::Text),
    ("url", Shape::Text),
];

/// Go's `encoding/json` field lookup: exact name first, then case-insensitive.
fn find_field(fields: &[(&'static str, Shape)], key: &str) -> Option<(&'static str, Shape)> {
    fields
        .iter()
        .find(|(f, _)| *f == key)
        .or_else(|| fields.iter().find(|(f, _)| f.eq_ignore_ascii_case(key)))
        .copied()
}

/// Reads a `Chart.yaml` (or `requirements.yaml`) document as Helm does: sigs.k8s.io/yaml
/// converts it to JSON aimed at `Metadata`, so a number or boolean where Go has a string
/// becomes its text (`appVersion: 1.10` is `1.1`, a dependency `name: off` is `false`).
pub(crate) fn parse_metadata(src: &str) -> Result<Map, YamlError> {
    yaml::values_of(&fields_shaped(yaml::parse_yaml(src)?, METADATA_FIELDS))
}

/// `y` with each value of a known field shaped as that field.
fn fields_shaped(y: Yaml, fields: &'static [(&'static str, Shape)]) -> Yaml {
    let Yaml::Map(entries) = y else {
        return y;
    };
    let entries = entries
        .into_iter()
        .map(|(key, value)| {
            let shape = yaml::key_string(&key, &value)
                .ok()
                .and_then(|name| find_field(fields, &name))
                .map_or(Shape::Other, |(_, shape)| shape);
            (key, shaped(value, shape))
        })
        .collect();
    Yaml::Map(entries)
}

fn shaped(y: Yaml, shape: Shape) -> Yaml {
    match (shape, y) {
        (Shape::Text, y) => match y.scalar_text() {
            Some(text) => Yaml::String(text),
            None => y,
        },
        (Shape::Texts, Yaml::Seq(items)) => Yaml::Seq(
            items
                .into_iter()
                .map(|item| shaped(item, Shape::Text))
                .collect(),
        ),
        (Shape::TextMap, Yaml::Map(entries)) => Yaml::Map(
            entries
                .into_iter()
                .map(|(key, value)| (key, shaped(value, Shape::Text)))
                .collect(),
        ),
        (Shape::Structs(fields), Yaml::Seq(items)) => Yaml::Seq(
            items
                .into_iter()
                .map(|item| fields_shaped(item, fields))
                .collect(),
        ),
        (_, y) => y,
    }
}

fn string(d: &Data) -> Option<String> {
    d.as_str().map(str::to_owned)
}

fn type_error(value: &Data, field: &str, ty: &str) -> String {
    format!(
        "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go struct field {field} of type {ty}",
        value.json_kind()
    )
}

fn strings(value: &Data, field: &str) -> Result<Vec<String>, String> {
    let Data::List(items) = value else {
        return Err(type_error(value, field, "[]string"));
    };
    // A null element is Go's zero value, as `encoding/json` leaves it.
    items
        .iter()
        .map(|d| match d {
            Data::Null => Ok(String::new()),
            d => string(d).ok_or_else(|| type_error(d, field, "string")),
        })
        .collect()
}

fn annotations(value: &Data) -> Result<BTreeMap<String, String>, String> {
    let Data::Map(map) = value else {
        return Err(type_error(
            value,
            "Metadata.annotations",
            "map[string]string",
        ));
    };
    let mut out = BTreeMap::new();
    for (k, v) in map {
        if *v == Data::Null {
            out.insert(k.clone(), String::new());
            continue;
        }
        let s = string(v).ok_or_else(|| type_error(v, "Metadata.annotations", "string"))?;
        out.insert(k.clone(), s);
    }
    Ok(out)
}

fn maintainers(value: &Data) -> Result<Vec<Maintainer>, String> {
    let Data::List(items) = value else {
        return Err(type_error(
            value,
            "Metadata.maintainers",
            "[]*chart.Maintainer",
        ));
    };
    let mut out = Vec::new();
    for item in items {
        let mut m = Maintainer::default();
        match item {
            Data::Null => {}
            Data::Map(map) => {
                for (k, v) in map {
                    if *v == Data::Null {
                        continue;
                    }
                    let Some((field, _)) = find_field(MAINTAINER_FIELDS, k) else {
                        continue;
                    };
                    let s = string(v).ok_or_else(|| {
                        type_error(v, &format!("Maintainer.maintainers.{field}"), "string")
                    })?;
                    match field {
                        "name" => m.name = s,
                        "email" => m.email = s,
                        _ => m.url = s,
                    }
                }
            }
            other => {
                return Err(type_error(
                    other,
                    "Metadata.maintainers",
                    "chart.Maintainer",
                ));
            }
        }
        out.push(m);
    }
    Ok(out)
}

fn dependencies(value: &Data) -> Result<Vec<Dependency>, String> {
    let Data::List(items) = value else {
        return Err(type_error(
            value,
            "Metadata.dependencies",
            "[]*chart.Dependency",
        ));
    };
    let mut out = Vec::new();
    for item in items {
        let Data::Map(map) = item else {
            if *item == Data::Null {
                continue;
            }
            return Err(type_error(
                item,
                "Metadata.dependencies",
                "chart.Dependency",
            ));
        };
        let mut d = Dependency::default();
        for (k, v) in map {
            if *v == Data::Null {
                continue;
            }
            let Some((field, _)) = find_field(DEPENDENCY_FIELDS, k) else {
                continue;
            };
            let path = format!("Dependency.dependencies.{field}");
            let text = || string(v).ok_or_else(|| type_error(v, &path, "string"));
            match field {
                "name" => d.name = text()?,
                "version" => d.version = text()?,
                "repository" => d.repository = text()?,
                "condition" => d.condition = text()?,
                "alias" => d.alias = text()?,
                "tags" => d.tags = strings(v, &path)?,
                "enabled" => match v {
                    Data::Bool(b) => d.enabled = *b,
                    _ => return Err(type_error(v, &path, "bool")),
                },
                "import-values" => match v {
                    Data::List(items) => d.import_values = items.clone(),
                    _ => return Err(type_error(v, &path, "[]interface {}")),
                },
                _ => {}
            }
        }
        out.push(d);
    }
    Ok(out)
}

/// Helm's `sanitizeString`: whitespace becomes a space, other unprintable characters go.
fn sanitize(s: &str) -> String {
    s.chars()
        .filter_map(|c| {
            if c.is_whitespace() {
                Some(' ')
            } else if c.is_control() {
                None
            } else {
                Some(c)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(src: &str) -> Result<Metadata, String> {
        let mut m = Metadata::default();
        m.merge_from(&parse_metadata(src).unwrap())?;
        m.validate()?;
        Ok(m)
    }

    #[test]
    fn reads_fields_case_insensitively_and_validates() {
        let m = meta("apiVersion: v2\nName: demo\nversion: 1.2.3\ndependencies:\n- name: a\n  version: ~1\n  import-values: [x]\n").unwrap();
        assert_eq!(m.name, "demo");
        assert_eq!(m.dependencies[0].import_values, vec![Data::from("x")]);
    }

    #[test]
    fn helm_validation_messages() {
        assert_eq!(
            meta("apiVersion: v2\nname: a\nversion: 1.0.0\ntype: Library\n").unwrap_err(),
            "validation: chart.metadata.type must be application or library"
        );
        assert_eq!(
            meta("apiVersion: v2\nname: a\nversion: x\n").unwrap_err(),
            "validation: chart.metadata.version \"x\" is invalid"
        );
        assert_eq!(
            meta("apiVersion: v2\nversion: 1.0.0\n").unwrap_err(),
            "validation: chart.metadata.name is required"
        );
        assert!(
            meta("apiVersion: v2\nname: a\nversion: 1.0.0\ndependencies:\n- name: b\n  alias: 'x y'\n")
                .unwrap_err()
                .contains("disallowed characters in the alias")
        );
    }

    #[test]
    fn wrong_types_are_json_errors() {
        assert_eq!(
            meta("apiVersion: v2\nname: a\nversion: [1]\n").unwrap_err(),
            "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go struct field Metadata.version of type string"
        );
        assert_eq!(
            meta("apiVersion: v2\nname: a\nversion: 1.0.0\ndeprecated: 1\n").unwrap_err(),
            "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal number into Go struct field Metadata.deprecated of type bool"
        );
        assert_eq!(
            meta("apiVersion: v2\nname: a\nversion: 1.0.0\nmaintainers: [{name: [1]}]\n")
                .unwrap_err(),
            "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go struct field Maintainer.maintainers.name of type string"
        );
        assert_eq!(
            parse_metadata("apiVersion: v2\nname: a\nversion: 1.0.0\nhome: .inf\n")
                .unwrap_err()
                .helm_message(),
            "error converting YAML to JSON: json: unsupported value: +Inf"
        );
    }

    #[test]
    fn numbers_and_booleans_in_string_fields_become_their_text_as_in_helm() {
        let m = meta(concat!(
            "apiVersion: v2\nNAME: 12\nname: c\nversion: 1.0\nappVersion: 1.10\n",
            "home: 0x1F\nicon: 1e7\ndescription: 1.123456789\nkubeVersion: 123456789\n",
            "keywords: [a, null, 3, true]\nsources: [2]\n",
            "annotations: {a: null, b: 2, 3: yes}\n",
            "maintainers: [{name: 1, email: true}]\n",
            "dependencies:\n- name: off\n  version: 0.1\n  alias: 123\n  tags: [yes, 1]\n",
            "  enabled: false\n  import-values: [1]\n",
        ))
        .unwrap();
        assert_eq!(m.name, "c");
        assert_eq!(m.version, "1");
        assert_eq!(m.app_version, "1.1");
        assert_eq!(m.home, "31");
        assert_eq!(m.icon, "1e+07");
        assert_eq!(m.description, "1.1234568");
        assert_eq!(m.kube_version, "123456789");
        assert_eq!(m.keywords, ["a", "", "3", "true"]);
        assert_eq!(m.sources, ["2"]);
        let annotations: Vec<_> = m
            .annotations
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(annotations, [("3", "true"), ("a", ""), ("b", "2")]);
        assert_eq!(
            (
                m.maintainers[0].name.as_str(),
                m.maintainers[0].email.as_str()
            ),
            ("1", "true")
        );
        let d = &m.dependencies[0];
        assert_eq!(
            (d.name.as_str(), d.version.as_str(), d.alias.as_str()),
            ("false", "0.1", "123")
        );
        assert_eq!(d.tags, ["true", "1"]);
        assert!(!d.enabled);
        assert_eq!(d.import_values, vec![Data::Float(1.0)]);
    }

    #[test]
    fn compatible_ranges() {
        assert!(is_compatible_range("~0.1.0", "0.1.5"));
        assert!(!is_compatible_range("^2", "1.0.0"));
        assert!(!is_compatible_range("not a range", "1.0.0"));
    }
}
