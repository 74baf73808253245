use super::*;
use crate::yaml::parse_value;

/// Values as Helm reads them from YAML, then toToml.
fn toml_of(yaml: &str) -> String {
    to_toml(&parse_value(yaml).unwrap()).unwrap()
}

#[test]
fn scalars_and_floats_as_burntsushi_writes_them() {
    assert_eq!(
        toml_of("{a: 1, b: 1.5, c: 1e21, d: 1e6, e: 0.000001, f: -0.0, g: 123456789012345678}"),
        "a = 1.0\nb = 1.5\nc = 1e+21\nd = 1e+06\ne = 1e-06\nf = -0.0\ng = 1.2345678901234568e+17\n"
    );
    assert_eq!(to_toml(&Data::Int(3)).unwrap(), "3");
    assert_eq!(toml_of("str"), "\"str\"");
    assert_eq!(toml_of("[1, 2]"), "[1.0, 2.0]");
    assert_eq!(toml_of("{}"), "");
}

#[test]
fn strings_escape_controls_only() {
    assert_eq!(
        toml_of(r#"{s: "q\" b\\ t\t n\n c\r b\b f\f e\u001b d\u007f é 😀 \u0085", e: ""}"#),
        "e = \"\"\ns = \"q\\\" b\\\\ t\\t n\\n c\\r b\\b f\\f e\\u001b d\\u007f é 😀 \u{85}\"\n"
    );
}

#[test]
fn tables_come_after_plain_keys_with_blank_lines_and_indent() {
    assert_eq!(
        toml_of("{b: true, n: null, l: [1, x, true], empty: [], m: {}, z: {y: 1}}"),
        "b = true\nempty = []\nl = [1.0, \"x\", true]\n\n[m]\n\n[z]\n  true = 1.0\n"
    );
    assert_eq!(
        toml_of("{a: {b: {c: {d: 1}, e: 2}, f: [{g: 1}]}, h: 1}"),
        "h = 1.0\n\n[a]\n  [a.b]\n    e = 2.0\n    [a.b.c]\n      d = 1.0\n\n  [[a.f]]\n    g = 1.0\n"
    );
    assert_eq!(toml_of("{m: {a: null}}"), "[m]\n");
    assert_eq!(toml_of("{g: [{}, {}]}"), "[[g]]\n\n[[g]]\n");
}

#[test]
fn arrays_of_tables_and_inline_tables() {
    assert_eq!(
        toml_of("{tables: [{a: 1}, {b: 2, c: {d: 3}}], mixed: [{a: 1}, 2]}"),
        "mixed = [{a = 1.0}, 2.0]\n\n[[tables]]\n  a = 1.0\n\n[[tables]]\n  b = 2.0\n  [tables.c]\n    d = 3.0\n"
    );
    assert_eq!(
        toml_of("{inline: [{a: {b: 1}, c: 2, d: [{e: 1}]}, 1]}"),
        "inline = [{c = 2.0, a = {b = 1.0}, d = [{e = 1.0}]}, 1.0]\n"
    );
    assert_eq!(toml_of("{g: [[{a: 1}]]}"), "g = [[{a = 1.0}]]\n");
}

#[test]
fn keys_are_quoted_unless_bare() {
    assert_eq!(
        toml_of("{\"key with space\": 1, \"dotted.key\": 2, \"ünï\": 3, a-b_C9: 4, \"\": 5}"),
        "\"\" = 5.0\na-b_C9 = 4.0\n\"dotted.key\" = 2.0\n\"key with space\" = 1.0\n\"ünï\" = 3.0\n"
    );
    assert_eq!(
        toml_of("{\"a b\": {\"c.d\": {e: 1}}, \"tab\\tkey\": 1}"),
        "\"tab\\tkey\" = 1.0\n\n[\"a b\"]\n  [\"a b\".\"c.d\"]\n    e = 1.0\n"
    );
}

#[test]
fn encoder_errors_are_returned_as_text_and_nil_fails_the_call() {
    assert_eq!(
        toml_of("{a: [1, null]}"),
        "toml: cannot encode array with nil element"
    );
    assert_eq!(
        toml_of("[{a: 1}]"),
        "toml: top-level values must be Go maps or structs"
    );
    assert!(to_toml(&Data::Null).is_err());
}
