//! The BurntSushi/toml encoder's output for template data.
//!
//! Plain keys of a table come first, then sub-tables (`[a.b]`, indented two spaces per level)
//! and arrays of tables (`[[a]]`), each group in key order; top-level tables are separated by
//! a blank line; nil values are skipped; floats always show a decimal point or exponent.

use crate::formats::gofloat::format_g;
use crate::formats::json::MAX_DEPTH;
use crate::formats::tree::Data;

use super::TomlCallError;

const NIL_ELEMENT: &str = "toml: cannot encode array with nil element";
const NO_KEY: &str = "toml: top-level values must be Go maps or structs";
const INDENT: &str = "  ";

/// Helm's `toToml`. Encoder errors come back as their message, as Helm returns them in
/// place of the output; only a nil argument is an error of the call itself.
pub fn to_toml(data: &Data) -> Result<String, TomlCallError> {
    if *data == Data::Null {
        return Err(TomlCallError(
            "reflect: call of reflect.Value.Type on zero Value".into(),
        ));
    }
    if data.nests_deeper_than(MAX_DEPTH) {
        return Err(TomlCallError(format!("exceeded max depth of {MAX_DEPTH}")));
    }
    let mut e = Encoder::default();
    Ok(match e.encode(&[], data) {
        Ok(()) => e.out,
        Err(message) => message.to_owned(),
    })
}

#[derive(Default)]
struct Encoder {
    out: String,
    has_written: bool,
}

/// Whether a value is written as a table (`[k]`) or an array of tables (`[[k]]`).
#[derive(PartialEq)]
enum Shape {
    Plain,
    Table,
    TableArray,
}

/// The encoder's classification; any array holding a nil, at any depth, is refused here.
fn shape(d: &Data) -> Result<Shape, &'static str> {
    match d {
        Data::Map(_) => Ok(Shape::Table),
        Data::List(items) if items.is_empty() => Ok(Shape::Plain),
        Data::List(items) => {
            let mut all_tables = true;
            for item in items {
                if *item == Data::Null {
                    return Err(NIL_ELEMENT);
                }
                all_tables &= shape(item)? == Shape::Table;
            }
            Ok(if all_tables {
                Shape::TableArray
            } else {
                Shape::Plain
            })
        }
        _ => Ok(Shape::Plain),
    }
}

fn is_bare_key(k: &str) -> bool {
    !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

fn quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn key_part(k: &str) -> String {
    if is_bare_key(k) {
        k.to_owned()
    } else {
        quoted(k)
    }
}

fn key_path(key: &[&str]) -> String {
    key.iter()
        .map(|k| key_part(k))
        .collect::<Vec<_>>()
        .join(".")
}

fn indent(key: &[&str]) -> String {
    INDENT.repeat(key.len().saturating_sub(1))
}

fn float_text(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf" } else { "-inf" }.into();
    }
    let s = format_g(f, false);
    if s.contains(['.', 'e']) { s } else { s + ".0" }
}

impl Encoder {
    fn write(&mut self, s: &str) {
        self.out.push_str(s);
        self.has_written = true;
    }

    fn newline(&mut self) {
        if self.has_written {
            self.write("\n");
        }
    }

    fn encode(&mut self, key: &[&str], value: &Data) -> Result<(), &'static str> {
        match shape(value)? {
            Shape::Table => self.table(key, value),
            Shape::TableArray => self.table_array(key, value),
            Shape::Plain => self.key_value(key, value, false),
        }
    }

    fn key_value(&mut self, key: &[&str], value: &Data, inline: bool) -> Result<(), &'static str> {
        if let Some(last) = key.last() {
            let head = format!("{}{} = ", indent(key), key_part(last));
            self.write(&head);
        }
        self.element(value)?;
        if !key.is_empty() && !inline {
            self.newline();
        }
        Ok(())
    }

    fn table(&mut self, key: &[&str], value: &Data) -> Result<(), &'static str> {
        if key.len() == 1 {
            self.newline();
        }
        if !key.is_empty() {
            let header = format!("{}[{}]", indent(key), key_path(key));
            self.write(&header);
            self.newline();
        }
        self.map_body(key, value, false)
    }

    fn table_array(&mut self, key: &[&str], value: &Data) -> Result<(), &'static str> {
        if key.is_empty() {
            return Err(NO_KEY);
        }
        let Data::List(items) = value else {
            return Ok(());
        };
        for item in items {
            self.newline();
            let header = format!("{}[[{}]]", indent(key), key_path(key));
            self.write(&header);
            self.newline();
            self.map_body(key, item, false)?;
        }
        Ok(())
    }

    /// The entries of a map: plain values first, then tables, each group sorted by key.
    fn map_body(&mut self, key: &[&str], value: &Data, inline: bool) -> Result<(), &'static str> {
        let Data::Map(map) = value else {
            return Ok(());
        };
        let mut direct = Vec::new();
        let mut sub = Vec::new();
        for (k, v) in map {
            if shape(v)? == Shape::Plain {
                direct.push((k.as_str(), v));
            } else {
                sub.push((k.as_str(), v));
            }
        }
        direct.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        sub.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        if inline {
            self.write("{");
        }
        let trailing_comma = !sub.is_empty();
        self.entries(key, &direct, inline, trailing_comma)?;
        self.entries(key, &sub, inline, false)?;
        if inline {
            self.write("}");
        }
        Ok(())
    }

    fn entries(
        &mut self,
        key: &[&str],
        entries: &[(&str, &Data)],
        inline: bool,
        trailing_comma: bool,
    ) -> Result<(), &'static str> {
        for (i, (k, v)) in entries.iter().enumerate() {
            if **v == Data::Null {
                continue;
            }
            if inline {
                self.key_value(&[k], v, true)?;
                if trailing_comma || i + 1 != entries.len() {
                    self.write(", ");
                }
            } else {
                let mut path = key.to_vec();
                path.push(k);
                self.encode(&path, v)?;
            }
        }
        Ok(())
    }

    fn element(&mut self, value: &Data) -> Result<(), &'static str> {
        match value {
            Data::Null => return Err(NIL_ELEMENT),
            Data::Bool(b) => self.write(if *b { "true" } else { "false" }),
            Data::Int(i) => self.write(&i.to_string()),
            Data::Uint(u) => self.write(&u.to_string()),
            Data::Float(f) => self.write(&float_text(*f)),
            Data::String(s) => self.write(&quoted(s)),
            Data::List(items) => {
                self.write("[");
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.write(", ");
                    }
                    self.element(item)?;
                }
                self.write("]");
            }
            Data::Map(_) => self.map_body(&[], value, true)?,
        }
        Ok(())
    }
}
