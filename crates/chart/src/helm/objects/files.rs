//! Helm's `.Files`: the chart's non-template files by path, with `Get`, `GetBytes`, `Glob`,
//! `Lines`, `AsConfig` and `AsSecrets`.

use std::collections::BTreeMap;
use std::rc::Rc;

use base64::Engine as _;

use super::glob::Glob;
use crate::engine::value::{Map, MethodError, Object, Value};
use crate::formats::tree::{self, Data};
use crate::helm::chart::Contents;

/// The files of a chart, keyed by path relative to the chart root (Go type `engine.files`, a
/// `map[string][]byte`). The contents are the chart's own, shared: a file is copied only when a
/// template reads it, and a file the chart's loading deferred is read then. One that cannot be
/// read reads as empty; the render reports it ([`crate::helm::chart::Chart::deferred_read_failure`]).
#[derive(Clone, Debug, Default)]
pub struct Files(Rc<BTreeMap<String, Contents>>);

impl Files {
    /// Files from `(path, content)` pairs (a chart's [`Contents`], shared [`bytes::Bytes`], or a
    /// `Vec<u8>` or a `String` taken over).
    pub fn new<D: Into<Contents>>(files: impl IntoIterator<Item = (String, D)>) -> Files {
        Files(Rc::new(
            files
                .into_iter()
                .map(|(path, data)| (path, data.into()))
                .collect(),
        ))
    }

    fn bytes(&self, name: &str) -> Rc<[u8]> {
        self.0
            .get(name)
            .map_or_else(|| Rc::from([]), |data| Rc::from(data.bytes_or_empty()))
    }

    /// The files whose path matches `pattern`; a malformed pattern matches everything, as
    /// Helm falls back to `**`.
    pub fn glob(&self, pattern: &str) -> Files {
        let glob = Glob::compile(pattern);
        Files(Rc::new(
            self.0
                .iter()
                .filter(|(name, _)| glob.as_ref().is_none_or(|g| g.matches(name)))
                .map(|(name, data)| (name.clone(), data.clone()))
                .collect(),
        ))
    }

    /// Each line of file `name`, without a final newline's empty line.
    pub fn lines(&self, name: &str) -> Vec<String> {
        let Some(data) = self.0.get(name) else {
            return Vec::new();
        };
        let text = String::from_utf8_lossy(data.bytes_or_empty());
        let text = text.strip_suffix('\n').unwrap_or(&text);
        text.split('\n').map(str::to_string).collect()
    }

    /// The files flattened to base names, rendered as Helm's `toYaml` renders a map.
    fn as_yaml(&self, encode: impl Fn(&[u8]) -> String) -> String {
        let mut map = tree::Map::default();
        for (name, content) in self.0.iter() {
            let base = name.rsplit('/').next().unwrap_or(name);
            map.insert(
                base.to_string(),
                Data::String(encode(content.bytes_or_empty())),
            );
        }
        crate::formats::yaml::to_yaml(&Data::Map(map))
    }

    /// A ConfigMap `data` section: base name to text.
    pub fn as_config(&self) -> String {
        self.as_yaml(|content| String::from_utf8_lossy(content).into_owned())
    }

    /// A Secret `data` section: base name to base64 content.
    pub fn as_secrets(&self) -> String {
        self.as_yaml(|content| base64::engine::general_purpose::STANDARD.encode(content))
    }
}

fn one_string(args: &[Value]) -> Result<String, MethodError> {
    match args {
        [Value::String(s)] => Ok(s.to_string()),
        [_] => Err(MethodError::ArgType {
            index: 0,
            expected: "string".into(),
        }),
        _ => Err(arg_count(args, 1)),
    }
}

fn arg_count(args: &[Value], want: usize) -> MethodError {
    MethodError::ArgCount {
        want,
        got: args.len(),
    }
}

impl Object for Files {
    fn type_name(&self) -> String {
        "engine.files".into()
    }

    /// `.Files.name` indexes the map; a missing name is Go's zero `[]byte` (Helm renders with
    /// `missingkey=zero`).
    fn field(&self, name: &str) -> Option<Value> {
        Some(Value::Bytes(self.bytes(name)))
    }

    fn has_method(&self, name: &str) -> bool {
        matches!(
            name,
            "Get" | "GetBytes" | "Glob" | "Lines" | "AsConfig" | "AsSecrets"
        )
    }

    fn call_method(&self, name: &str, args: &[Value]) -> Result<Value, MethodError> {
        match name {
            "Get" => {
                let path = one_string(args)?;
                let data = self.0.get(&path).map_or(&[][..], Contents::bytes_or_empty);
                Ok(Value::string_from_bytes(data.to_vec()))
            }
            "GetBytes" => Ok(Value::Bytes(self.bytes(&one_string(args)?))),
            "Glob" => Ok(Value::object(self.glob(&one_string(args)?))),
            "Lines" => {
                let lines = self.lines(&one_string(args)?);
                Ok(Value::list(lines.into_iter().map(Value::from).collect()))
            }
            "AsConfig" | "AsSecrets" if !args.is_empty() => Err(arg_count(args, 0)),
            "AsConfig" => Ok(Value::from(self.as_config())),
            "AsSecrets" => Ok(Value::from(self.as_secrets())),
            _ => Err(MethodError::NoSuchMethod),
        }
    }

    fn format(&self) -> String {
        Value::Map(self.to_map()).to_go_string()
    }

    fn as_collection(&self) -> Option<Value> {
        Some(Value::Map(self.to_map()))
    }

    fn to_data(&self) -> Option<Data> {
        Value::Map(self.to_map()).to_data().ok()
    }

    fn kind_name(&self) -> &'static str {
        "map"
    }
}

impl Files {
    fn to_map(&self) -> Map {
        Map::from_entries(
            self.0
                .iter()
                .map(|(name, data)| (name.clone(), Value::Bytes(Rc::from(data.bytes_or_empty())))),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files() -> Files {
        Files::new([
            ("config/a.yaml".to_string(), b"a: 1\n".to_vec()),
            ("config/sub/b.txt".to_string(), b"line1\nline2\n".to_vec()),
            ("README".to_string(), b"read me".to_vec()),
        ])
    }

    #[test]
    fn get_glob_and_lines() {
        let f = files();
        assert_eq!(
            f.call_method("Get", &[Value::from("README")])
                .ok()
                .map(|v| v.to_go_string()),
            Some("read me".into())
        );
        assert_eq!(
            f.call_method("Get", &[Value::from("missing")])
                .ok()
                .map(|v| v.to_go_string()),
            Some(String::new())
        );
        assert_eq!(f.glob("config/*").0.len(), 1);
        assert_eq!(f.glob("config/**").0.len(), 2);
        assert_eq!(f.lines("config/sub/b.txt"), ["line1", "line2"]);
        assert!(f.lines("missing").is_empty());
    }

    #[test]
    fn config_and_secrets_are_yaml_by_base_name() {
        let f = files().glob("config/**");
        assert_eq!(
            f.as_config(),
            "a.yaml: |\n  a: 1\nb.txt: |\n  line1\n  line2"
        );
        assert_eq!(f.as_secrets(), "a.yaml: YTogMQo=\nb.txt: bGluZTEKbGluZTIK");
    }
}
