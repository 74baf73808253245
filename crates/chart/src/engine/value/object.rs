//! Typed Go values with fields and methods: Helm's `.Files`, `.Capabilities`, semver versions.

use super::Value;

/// Why calling an object's method failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MethodError {
    /// The object has no method of that name.
    NoSuchMethod,
    /// Called with the wrong number of arguments (Go: `wrong number of args for NAME: want W got G`).
    ArgCount {
        /// How many the method takes.
        want: usize,
        /// How many it got.
        got: usize,
    },
    /// An argument has the wrong type; the engine phrases Go's message from the argument.
    ArgType {
        /// Which argument (0-based).
        index: usize,
        /// The Go type the method wanted, e.g. `string`.
        expected: String,
    },
    /// The method ran and returned an error (Go: `error calling NAME: MESSAGE`).
    Failed(String),
}

/// A Go value with named fields and methods, as templates reach them by `.Name`.
///
/// Go looks a name up as a method first, then as a field. A method named last in a chain
/// receives the command's arguments (`.Files.Get "a"`); earlier in a chain it is called with
/// none (`.Capabilities.KubeVersion.Major`).
pub trait Object {
    /// Go's type name, as `%T` and error messages print it, e.g. `chart.Files` or `*semver.Version`.
    fn type_name(&self) -> String;

    /// The field `name`, if the type has one.
    fn field(&self, name: &str) -> Option<Value>;

    /// Whether the type has a method `name`.
    fn has_method(&self, name: &str) -> bool {
        let _ = name;
        false
    }

    /// Calls method `name` with already evaluated arguments.
    fn call_method(&self, name: &str, args: &[Value]) -> Result<Value, MethodError> {
        let _ = args;
        let _ = name;
        Err(MethodError::NoSuchMethod)
    }

    /// The value as `%v` prints it (Go prints a struct as `{field1 field2}`; a type with a
    /// `String` method prints what it returns).
    fn format(&self) -> String;

    /// The value as `%+v` prints it: a struct's fields with their names (`{Name:value}`).
    fn format_verbose(&self) -> String {
        self.format()
    }

    /// What an action (`{{ x }}`) prints. text/template prints what a pointer points to and
    /// takes an addressable field's address to find a pointer-receiver `String` method, so
    /// this can differ from [`Object::format`], which is what a function such as `printf`
    /// receives (a copy).
    fn template_print(&self) -> String {
        self.format()
    }

    /// For a Go struct: its exported fields with their `encoding/json` names in declaration
    /// order, which `toJson` keeps (unlike map keys, which it sorts).
    fn json_fields(&self) -> Option<Vec<(&'static str, Value)>> {
        None
    }

    /// The list or map this value is, for a Go type defined over a slice or map (Helm's
    /// `chart.Files` is a map, `APIVersions` a slice): `range`, `len` and `index` use it.
    fn as_collection(&self) -> Option<Value> {
        None
    }

    /// The data Go's `json.Marshal` produces for this value (`None`: it cannot be encoded).
    fn to_data(&self) -> Option<crate::formats::tree::Data> {
        None
    }

    /// The object as `Any`, for functions whose parameter is one concrete Go type (Sprig's date
    /// functions take a `time.Time`); `None` for types no function needs to recognise.
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        None
    }

    /// The Go kind of this type (`struct` by default; `ptr` types still print as structs).
    fn kind_name(&self) -> &'static str {
        "struct"
    }
}
