//! Sprig's `semver` and `semverCompare`, on the crate's Masterminds semver module. `semver`
//! returns a `*semver.Version` object whose methods templates call (`.Major`, `.Prerelease`,
//! `.Compare`, `.IncPatch`, …).

use std::any::Any;

use super::{FuncError, FuncMap, args};
use crate::engine::value::{MethodError, Object, Value};
use crate::formats::tree::Data;
use crate::helm::semver::{Version, parse_version, semver_compare};

/// Registers the semver functions.
pub fn install(funcs: &mut FuncMap) {
    funcs.add("semver", |a: &[Value]| {
        args::count(a, 1)?;
        let version =
            parse_version(args::string(a, 0)?).map_err(|e| FuncError::failed(e.to_string()))?;
        Ok(Value::object(SemverVersion {
            version,
            pointer: true,
        }))
    });
    funcs.add("semverCompare", |a: &[Value]| {
        args::count(a, 2)?;
        let matches = semver_compare(args::string(a, 0)?, args::string(a, 1)?)
            .map_err(|e| FuncError::failed(e.to_string()))?;
        Ok(Value::Bool(matches))
    });
}

/// A Masterminds `semver.Version`, as a pointer (what `semver` returns) or a value (what the
/// `Inc…` methods return).
#[derive(Debug)]
struct SemverVersion {
    version: Version,
    pointer: bool,
}

const METHODS: &[&str] = &[
    "Original",
    "String",
    "Major",
    "Minor",
    "Patch",
    "Prerelease",
    "Metadata",
    "Compare",
    "Equal",
    "LessThan",
    "LessThanEqual",
    "GreaterThan",
    "GreaterThanEqual",
    "IncMajor",
    "IncMinor",
    "IncPatch",
];

impl SemverVersion {
    /// The argument of a comparison method: another `*semver.Version`.
    fn other(args: &[Value]) -> Result<&Version, MethodError> {
        if args.len() != 1 {
            return Err(MethodError::ArgCount {
                want: 1,
                got: args.len(),
            });
        }
        let wrong_type = MethodError::ArgType {
            index: 0,
            expected: "*semver.Version".to_string(),
        };
        let Value::Object(object) = &args[0] else {
            return Err(wrong_type);
        };
        match object
            .as_any()
            .and_then(|any| any.downcast_ref::<SemverVersion>())
        {
            Some(other) if other.pointer => Ok(&other.version),
            _ => Err(wrong_type),
        }
    }

    /// A method result that is a new version value (Go returns `semver.Version`, no pointer).
    fn value(version: Version) -> Value {
        Value::object(SemverVersion {
            version,
            pointer: false,
        })
    }
}

impl Object for SemverVersion {
    fn type_name(&self) -> String {
        if self.pointer {
            "*semver.Version".to_string()
        } else {
            "semver.Version".to_string()
        }
    }

    fn field(&self, _name: &str) -> Option<Value> {
        None
    }

    fn has_method(&self, name: &str) -> bool {
        METHODS.contains(&name)
    }

    fn call_method(&self, name: &str, args: &[Value]) -> Result<Value, MethodError> {
        let v = &self.version;
        let no_args = |value: Value| {
            if args.is_empty() {
                Ok(value)
            } else {
                Err(MethodError::ArgCount {
                    want: 0,
                    got: args.len(),
                })
            }
        };
        let number = |n: u64| Value::Int64(i64::try_from(n).unwrap_or(i64::MAX));
        match name {
            "Original" => no_args(Value::from(v.original.as_str())),
            "String" => no_args(Value::from(v.to_string())),
            "Major" => no_args(number(v.major)),
            "Minor" => no_args(number(v.minor)),
            "Patch" => no_args(number(v.patch)),
            "Prerelease" => no_args(Value::from(v.prerelease.as_str())),
            "Metadata" => no_args(Value::from(v.metadata.as_str())),
            "Compare" => Ok(Value::Int(v.compare(Self::other(args)?) as i64)),
            "Equal" => Ok(Value::Bool(v.compare(Self::other(args)?).is_eq())),
            "LessThan" => Ok(Value::Bool(v.compare(Self::other(args)?).is_lt())),
            "LessThanEqual" => Ok(Value::Bool(v.compare(Self::other(args)?).is_le())),
            "GreaterThan" => Ok(Value::Bool(v.compare(Self::other(args)?).is_gt())),
            "GreaterThanEqual" => Ok(Value::Bool(v.compare(Self::other(args)?).is_ge())),
            "IncMajor" => no_args(Self::value(v.inc_major())),
            "IncMinor" => no_args(Self::value(v.inc_minor())),
            "IncPatch" => no_args(Self::value(v.inc_patch())),
            _ => Err(MethodError::NoSuchMethod),
        }
    }

    fn format(&self) -> String {
        self.version.to_string()
    }

    fn to_data(&self) -> Option<Data> {
        Some(Data::String(self.version.to_string()))
    }

    fn as_any(&self) -> Option<&dyn Any> {
        Some(self)
    }

    fn kind_name(&self) -> &'static str {
        if self.pointer { "ptr" } else { "struct" }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Engine;

    fn render(template: &str) -> String {
        let mut engine = Engine::new(crate::helm::funcs::helm_funcs());
        engine.add_template("t", template).unwrap();
        match engine.render("t", &Value::Nil) {
            Ok(out) => out,
            Err(e) => format!("ERROR: {e}"),
        }
    }

    #[test]
    fn versions_answer_masterminds_methods() {
        assert_eq!(
            render(
                r#"{{ $s := semver "v1.2.3-beta.1+c0ff33" }}{{ $s.Major }}.{{ $s.Minor }} {{ $s.Prerelease }} {{ $s.Metadata }} {{ $s }} {{ $s.Original }}"#
            ),
            "1.2 beta.1 c0ff33 1.2.3-beta.1+c0ff33 v1.2.3-beta.1+c0ff33"
        );
        assert_eq!(
            render(r#"{{ semver "1.4.3" | (semver "1.2.3").Compare }}"#),
            "-1"
        );
        assert_eq!(
            render(
                r#"{{ (semver "v1.2.3-rc.1").IncPatch.Original }} {{ (semver "1.2.3").IncMinor }}"#
            ),
            "v1.2.3 1.3.0"
        );
        assert_eq!(
            render(
                r#"{{ typeOf (semver "1.0.0") }} {{ kindOf (semver "1.0.0") }} {{ semver "2.0.0" | toJson }}"#
            ),
            "*semver.Version ptr \"2.0.0\""
        );
    }

    #[test]
    fn bad_versions_and_constraints_are_errors() {
        assert!(render(r#"{{ semver "bad" }}"#).starts_with("ERROR:"));
        assert!(render(r#"{{ semverCompare "badConstraint" "1.2.3" }}"#).starts_with("ERROR:"));
        assert_eq!(render(r#"{{ semverCompare "^1.2.0" "1.2.3" }}"#), "true");
    }
}
