//! The values a template works on, with Go's kinds.
//!
//! Go templates run on `interface{}` data, so a value here is what such an interface can hold in
//! a Helm render: nil, bool, `int`, `int64`, `float64`, string, `[]byte`, `[]interface{}`,
//! `map[string]interface{}` and Helm's structs (as [`Object`]). Integers keep Go's distinction
//! between `int` (template literals, `len`) and `int64` (`--set` values, Sprig math) because
//! `%T`, `typeOf` and `kindIs` show it. Maps are shared by reference, as Go maps are, so Sprig's
//! `set`/`unset`/`merge` change the map the caller holds.

mod compare;
mod convert;
pub mod format;
mod map;
mod object;

pub use compare::{CompareError, equal, less, less_or_equal};
pub use map::Map;
pub use object::{MethodError, Object};

use std::fmt;
use std::rc::Rc;

/// A Go value as a template sees it.
#[derive(Clone, Default)]
pub enum Value {
    /// A nil interface (`<nil>`), e.g. a YAML `null`.
    #[default]
    Nil,
    /// Go `bool`.
    Bool(bool),
    /// Go `int`: template number literals, `len`, `atoi`.
    Int(i64),
    /// Go `int64`: `--set` integers, Sprig math results.
    Int64(i64),
    /// Go `float64`: every number that came from YAML or JSON values.
    Float(f64),
    /// Go `string` holding valid UTF-8 (almost every string).
    String(Rc<str>),
    /// Go `string` whose bytes are not valid UTF-8, e.g. `.Files.Get` of a binary file.
    ///
    /// Go strings are byte strings; this keeps the bytes so `b64enc`, the checksums and `len`
    /// see what Go sees. Built only through [`Value::string_from_bytes`], so it never holds
    /// valid UTF-8 and `String` stays the one form of every text string.
    RawString(Rc<[u8]>),
    /// Go `[]byte`, e.g. from `.Files.GetBytes`.
    Bytes(Rc<[u8]>),
    /// Go `[]interface{}`.
    List(Rc<Vec<Value>>),
    /// Go `map[string]interface{}`, shared by reference.
    Map(Map),
    /// A Go struct or other typed value with fields and methods (Helm's `.Files`, `.Capabilities`).
    Object(Rc<dyn Object>),
}

/// The kind of a value, as Go's `reflect.Kind` names it (what `kindOf` prints).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// No value at all.
    Invalid,
    /// `bool`.
    Bool,
    /// `int`.
    Int,
    /// `int64`.
    Int64,
    /// `float64`.
    Float64,
    /// `string`.
    String,
    /// `slice` (lists and byte slices).
    Slice,
    /// `map`.
    Map,
    /// `struct` or `ptr`, as the object says.
    Struct,
}

impl Kind {
    /// The name Go's `reflect.Kind.String` gives.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Invalid => "invalid",
            Kind::Bool => "bool",
            Kind::Int => "int",
            Kind::Int64 => "int64",
            Kind::Float64 => "float64",
            Kind::String => "string",
            Kind::Slice => "slice",
            Kind::Map => "map",
            Kind::Struct => "struct",
        }
    }
}

impl Value {
    /// A string value.
    pub fn str(s: impl Into<Rc<str>>) -> Value {
        Value::String(s.into())
    }

    /// A Go string made of these bytes: `String` when they are valid UTF-8, `RawString` otherwise.
    pub fn string_from_bytes(bytes: Vec<u8>) -> Value {
        match String::from_utf8(bytes) {
            Ok(text) => Value::String(text.into()),
            Err(error) => Value::RawString(error.into_bytes().into()),
        }
    }

    /// A list value from its elements.
    pub fn list(items: Vec<Value>) -> Value {
        Value::List(Rc::new(items))
    }

    /// A new empty map value.
    pub fn empty_map() -> Value {
        Value::Map(Map::new())
    }

    /// An object value.
    pub fn object(object: impl Object + 'static) -> Value {
        Value::Object(Rc::new(object))
    }

    /// Go's type name as `%T` prints it, e.g. `map[string]interface {}` or `<nil>`.
    pub fn type_name(&self) -> String {
        match self {
            Value::Nil => "<nil>".to_string(),
            Value::Bool(_) => "bool".to_string(),
            Value::Int(_) => "int".to_string(),
            Value::Int64(_) => "int64".to_string(),
            Value::Float(_) => "float64".to_string(),
            Value::String(_) | Value::RawString(_) => "string".to_string(),
            Value::Bytes(_) => "[]uint8".to_string(),
            Value::List(_) => "[]interface {}".to_string(),
            Value::Map(_) => "map[string]interface {}".to_string(),
            Value::Object(o) => o.type_name(),
        }
    }

    /// Go's kind of this value.
    pub fn kind(&self) -> Kind {
        match self {
            Value::Nil => Kind::Invalid,
            Value::Bool(_) => Kind::Bool,
            Value::Int(_) => Kind::Int,
            Value::Int64(_) => Kind::Int64,
            Value::Float(_) => Kind::Float64,
            Value::String(_) | Value::RawString(_) => Kind::String,
            Value::Bytes(_) | Value::List(_) => Kind::Slice,
            Value::Map(_) => Kind::Map,
            Value::Object(_) => Kind::Struct,
        }
    }

    /// Whether `if` takes this value as true (Go's `template.IsTrue`): non-zero numbers,
    /// non-empty strings, lists and maps, `true`, and any object.
    pub fn is_true(&self) -> bool {
        match self {
            Value::Nil => false,
            Value::Bool(b) => *b,
            Value::Int(i) | Value::Int64(i) => *i != 0,
            Value::Float(f) => *f != 0.0,
            Value::String(s) => !s.is_empty(),
            Value::RawString(b) | Value::Bytes(b) => !b.is_empty(),
            Value::List(l) => !l.is_empty(),
            Value::Map(m) => !m.is_empty(),
            Value::Object(_) => true,
        }
    }

    /// Whether this is the nil interface.
    pub fn is_nil(&self) -> bool {
        matches!(self, Value::Nil)
    }

    /// The string inside, if this is a Go string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The bytes of a Go string, valid UTF-8 or not.
    pub fn as_string_bytes(&self) -> Option<&[u8]> {
        match self {
            Value::String(s) => Some(s.as_bytes()),
            Value::RawString(b) => Some(b),
            _ => None,
        }
    }

    /// The integer inside, if this is a Go `int` or `int64`.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(i) | Value::Int64(i) => Some(*i),
            _ => None,
        }
    }

    /// The map inside, if this is a map.
    pub fn as_map(&self) -> Option<&Map> {
        match self {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }

    /// The elements, if this is a list.
    pub fn as_list(&self) -> Option<&[Value]> {
        match self {
            Value::List(l) => Some(l),
            _ => None,
        }
    }

    /// Go's `len` for strings (bytes), byte slices, lists and maps; `None` for other kinds.
    pub fn length(&self) -> Option<usize> {
        match self {
            Value::String(s) => Some(s.len()),
            Value::RawString(b) | Value::Bytes(b) => Some(b.len()),
            Value::List(l) => Some(l.len()),
            Value::Map(m) => Some(m.len()),
            _ => None,
        }
    }

    /// The value as `fmt.Sprint` prints it alone (`%v`).
    pub fn to_go_string(&self) -> String {
        format::sprint(std::slice::from_ref(self))
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Nil => f.write_str("Nil"),
            Value::Bool(b) => write!(f, "Bool({b})"),
            Value::Int(i) => write!(f, "Int({i})"),
            Value::Int64(i) => write!(f, "Int64({i})"),
            Value::Float(x) => write!(f, "Float({x:?})"),
            Value::String(s) => write!(f, "String({s:?})"),
            Value::RawString(b) => write!(f, "RawString({:?})", String::from_utf8_lossy(b)),
            Value::Bytes(b) => write!(f, "Bytes({b:?})"),
            Value::List(l) => f.debug_list().entries(l.iter()).finish(),
            Value::Map(m) => m.fmt(f),
            Value::Object(o) => write!(f, "Object({})", o.type_name()),
        }
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}

impl From<i64> for Value {
    fn from(i: i64) -> Self {
        Value::Int64(i)
    }
}

impl From<f64> for Value {
    fn from(f: f64) -> Self {
        Value::Float(f)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::String(s.into())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::String(s.into())
    }
}

impl From<Vec<Value>> for Value {
    fn from(items: Vec<Value>) -> Self {
        Value::list(items)
    }
}

impl From<Map> for Value {
    fn from(m: Map) -> Self {
        Value::Map(m)
    }
}
