use super::*;
use crate::formats::tree::build::{map, s};

#[test]
fn marshal_sorts_keys_and_formats_numbers_like_go() {
    let v = map(vec![
        ("string", s("test")),
        ("number", Data::Float(42.0)),
        ("bool", Data::Bool(true)),
        ("big", Data::Float(1e21)),
        ("small", Data::Float(1e-7)),
        ("int", Data::Int(-3)),
        ("list", Data::List(vec![Data::Null, Data::Float(0.5)])),
    ]);
    assert_eq!(
        to_json(&v).unwrap(),
        r#"{"big":1e+21,"bool":true,"int":-3,"list":[null,0.5],"number":42,"small":1e-7,"string":"test"}"#
    );
}

#[test]
fn strings_escape_as_go_does() {
    let v = s("<a href=\"x\">&</a>\n\t\u{1}\u{8}\u{c}\u{2028}é\\");
    assert_eq!(
        to_json(&v).unwrap(),
        r#""\u003ca href=\"x\"\u003e\u0026\u003c/a\u003e\n\t\u0001\b\f\u2028é\\""#
    );
    assert_eq!(to_raw_json(&s("<HEAD>&")).unwrap(), r#""<HEAD>&""#);
}

#[test]
fn pretty_json_indents_two_spaces_and_keeps_empty_collections_compact() {
    let v = map(vec![
        ("bool", Data::Bool(true)),
        ("empty", map(vec![])),
        ("list", Data::List(vec![Data::Int(1), Data::List(vec![])])),
    ]);
    assert_eq!(
        to_pretty_json(&v).unwrap(),
        "{\n  \"bool\": true,\n  \"empty\": {},\n  \"list\": [\n    1,\n    []\n  ]\n}"
    );
}

#[test]
fn non_finite_floats_cannot_be_marshalled() {
    let err = to_json(&Data::Float(f64::NEG_INFINITY)).unwrap_err();
    assert_eq!(err.message, "json: unsupported value: -Inf");
}

#[test]
fn parse_gives_float64_numbers_and_last_duplicate_wins() {
    let v = parse(r#" {"a": 1, "b": [true, null, "x\u00e9\ud83d\ude00"], "a": 2.5e1} "#).unwrap();
    assert_eq!(
        v,
        map(vec![
            ("a", Data::Float(25.0)),
            (
                "b",
                Data::List(vec![Data::Bool(true), Data::Null, s("xé😀")])
            ),
        ])
    );
    assert_eq!(parse(r#""\ud800x""#).unwrap(), s("\u{FFFD}x"));
}

#[test]
fn helm_from_json_wrong_kinds() {
    assert_eq!(
        parse_object(r#"["one", "two"]"#).unwrap_err().message,
        "json: cannot unmarshal array into Go value of type map[string]interface {}"
    );
    assert_eq!(
        parse_array(r#"{"hello": "world"}"#).unwrap_err().message,
        "json: cannot unmarshal object into Go value of type []interface {}"
    );
    assert!(parse_object("null").unwrap().is_empty());
}

#[test]
fn syntax_errors_read_like_go() {
    let cases = [
        ("", "unexpected end of JSON input"),
        ("{", "unexpected end of JSON input"),
        ("x", "invalid character 'x' looking for beginning of value"),
        (
            "{1}",
            "invalid character '1' looking for beginning of object key string",
        ),
        (r#"{"a" 1}"#, "invalid character '1' after object key"),
        (
            r#"{"a":1 "b"}"#,
            "invalid character '\"' after object key:value pair",
        ),
        ("[1 2]", "invalid character '2' after array element"),
        ("1 2", "invalid character '2' after top-level value"),
        ("tru", "unexpected end of JSON input"),
        (
            "trux",
            "invalid character 'x' in literal true (expecting 'e')",
        ),
        ("-x", "invalid character 'x' in numeric literal"),
        (
            "1.x",
            "invalid character 'x' after decimal point in numeric literal",
        ),
        (
            "1ex",
            "invalid character 'x' in exponent of numeric literal",
        ),
        ("\"a\nb\"", "invalid character '\\n' in string literal"),
        (r#""\x""#, "invalid character 'x' in string escape code"),
        (
            r#""\u12x4""#,
            "invalid character 'x' in \\u hexadecimal character escape",
        ),
        (
            "[1e400, x]",
            "invalid character 'x' looking for beginning of value",
        ),
        (
            "1e400",
            "json: cannot unmarshal number 1e400 into Go value of type float64",
        ),
    ];
    for (src, want) in cases {
        assert_eq!(parse(src).unwrap_err().message, want, "{src:?}");
    }
}

#[test]
fn deep_nesting_is_an_error() {
    let deep = "[".repeat(MAX_DEPTH + 10);
    assert_eq!(parse(&deep).unwrap_err().message, "exceeded max depth");
}

#[test]
fn random_input_never_panics_and_output_reparses() {
    let alphabet: Vec<char> = "{}[]\":,0123456789.eE+-tfnrulasx\\ é\u{1}"
        .chars()
        .collect();
    let mut state: u64 = 0x2545_F491_4F6C_DD1D;
    for _ in 0..5000 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let len = (state % 24) as usize;
        let text: String = (0..len)
            .map(|k| alphabet[((state >> (k % 50)) as usize + k * 7) % alphabet.len()])
            .collect();
        if let Ok(v) = parse(&text) {
            let out = to_json(&v).unwrap();
            assert_eq!(parse(&out).unwrap(), v, "{text:?}");
        }
    }
}

#[test]
fn nesting_just_below_the_limit_is_fine() {
    let src = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
    assert!(parse(&src).is_ok());
}
