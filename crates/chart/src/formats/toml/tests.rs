use super::*;
use crate::formats::tree::Data;
use crate::formats::yaml::parse_value;

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

fn from(src: &str) -> String {
    match from_toml(src) {
        Ok(m) => crate::formats::json::to_json(&Data::Map(m)).unwrap(),
        Err(e) => e.to_string(),
    }
}

#[test]
fn from_toml_reads_values_as_burntsushi_decodes_them() {
    assert_eq!(
        from("a = 1\nb = 1.5\nc = \"x\"\nd = 1979-05-27T07:32:00Z\ne = [1, 2]\n[t]\nx = true\n"),
        r#"{"a":1,"b":1.5,"c":"x","d":"1979-05-27T07:32:00Z","e":[1,2],"t":{"x":true}}"#
    );
    assert_eq!(
        from("hex = 0xDEAD_BEEF\noct = 0o755\nbin = 0b1101\nf = 224_617.445_991\ng = 5e+22\n"),
        r#"{"bin":13,"f":224617.445991,"g":5e+22,"hex":3735928559,"oct":493}"#
    );
    assert_eq!(
        from("a.b.c = 1\n\"q k\" = 'lit\\n'\n[[arr]]\nx = 1\n[[arr]]\nx = 2\n[arr.sub]\nz = 3\n"),
        r#"{"a":{"b":{"c":1}},"arr":[{"x":1},{"sub":{"z":3},"x":2}],"q k":"lit\\n"}"#
    );
}

#[test]
fn from_toml_strings_and_date_times() {
    assert_eq!(
        from(
            "s = \"tab\\tJos\\u00E9 \\e\\x41\"\nm = \"\"\"\nRoses\\\n   are red\"\"\"\nl = '''\nraw \\n'''\n"
        ),
        r#"{"l":"raw \\n","m":"Rosesare red","s":"tab\tJosé \u001bA"}"#
    );
    assert_eq!(
        from(
            "a = 1979-05-27T00:32:00.999999-07:00\nb = 1979-05-27 07:32:00+00:00\nc = 1979-05-27\nd = 07:32\n"
        ),
        r#"{"a":"1979-05-27T00:32:00.999999-07:00","b":"1979-05-27T07:32:00Z","c":"1979-05-27T00:00:00Z","d":"0000-01-01T07:32:00Z"}"#
    );
}

#[test]
fn from_toml_inline_tables_follow_toml_1_1() {
    assert_eq!(
        from("x = {\n  # c\n  a = 1,\n  b.c = 2,\n}\n"),
        r#"{"x":{"a":1,"b":{"c":2}}}"#
    );
}

#[test]
fn from_toml_errors_read_like_burntsushi() {
    let cases = [
        (
            "a = ",
            r#"toml: line 1 (last key "a"): unexpected EOF; expected value"#,
        ),
        (
            "a = 1\na = 2\n",
            r#"toml: line 2 (last key "a"): Key 'a' has already been defined."#,
        ),
        (
            "[a]\n[a]\n",
            "toml: line 2: Key 'a' has already been defined.",
        ),
        (
            "a = 1\n[a]\n",
            "toml: line 2: Key 'a' has already been defined.",
        ),
        (
            "x = [1, 2\n",
            r#"toml: line 1 (last key "x"): expected a comma (',') or array terminator (']'), but got end of file"#,
        ),
        (
            "x = \"a\nb\"\n",
            r#"toml: line 1 (last key "x"): strings cannot contain newlines"#,
        ),
        (
            "x = 01\n",
            r#"toml: line 1 (last key "x"): Invalid integer "01": cannot have leading zeroes"#,
        ),
        (
            "x = 99999999999999999999\n",
            r#"toml: line 1 (last key "x"): 99999999999999999999 is out of range for int64"#,
        ),
        (
            "x = 1 y = 2\n",
            "toml: line 1: expected a top-level item to end with a newline, comment, or EOF, but got 'y' instead",
        ),
        (
            "= 1\n",
            "toml: line 1: unexpected '=': key name appears blank",
        ),
        (
            "x = [1,,2]\n",
            r#"toml: line 1 (last key "x"): unexpected comma"#,
        ),
        (
            "x = tru\n",
            r#"toml: line 1 (last key "x"): expected value but found "tru" instead"#,
        ),
        (
            "a = [1]\n[[a]]\n",
            "toml: line 2: Key 'a' was already created and cannot be used as an array.",
        ),
        (
            "[a\n",
            "toml: line 2: expected '.' or ']' to end table name, but got '\\n' instead",
        ),
    ];
    for (src, want) in cases {
        assert_eq!(from(src), want, "{src:?}");
    }
}

#[test]
fn from_toml_never_panics_on_random_input() {
    let alphabet: Vec<char> = "ab1.=[]{}\"',\n #x-_:+eT\\".chars().collect();
    let mut state: u64 = 0x0BAD_5EED_1234_5678;
    for _ in 0..5000 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let text: String = (0..(state % 24))
            .map(|k| alphabet[((state >> (k * 2)) % alphabet.len() as u64) as usize])
            .collect();
        let _ = from_toml(&text);
    }
}
