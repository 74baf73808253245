use super::*;
use crate::formats::tree::build::{map, s};

fn yaml_of(v: Data) -> String {
    to_yaml(&v)
}

#[test]
fn maps_are_sorted_and_sequences_sit_under_their_key() {
    let v = map(vec![
        (
            "b",
            map(vec![
                ("c", Data::Float(1.0)),
                (
                    "a",
                    Data::List(vec![
                        Data::Float(1.0),
                        s("x"),
                        map(vec![("k", s("v")), ("j", Data::Null)]),
                    ]),
                ),
            ]),
        ),
        ("a", Data::List(vec![])),
        ("e", map(vec![])),
    ]);
    assert_eq!(
        yaml_of(v),
        "a: []\nb:\n  a:\n  - 1\n  - x\n  - j: null\n    k: v\n  c: 1\ne: {}"
    );
}

#[test]
fn nested_sequences_share_the_dash_line() {
    let v = Data::List(vec![
        Data::List(vec![Data::Int(1), Data::Int(2)]),
        Data::List(vec![Data::Int(3)]),
        map(vec![("a", Data::List(vec![s("x")]))]),
    ]);
    assert_eq!(yaml_of(v), "- - 1\n  - 2\n- - 3\n- a:\n  - x");
}

#[test]
fn scalars_at_the_root() {
    assert_eq!(yaml_of(Data::Null), "null");
    assert_eq!(yaml_of(Data::Bool(true)), "true");
    assert_eq!(yaml_of(s("foo")), "foo");
    assert_eq!(yaml_of(Data::List(vec![])), "[]");
    assert_eq!(yaml_of(map(vec![])), "{}");
}

#[test]
fn strings_that_read_back_as_other_types_are_double_quoted() {
    for text in [
        "on",
        "yes",
        "N",
        "true",
        "null",
        "~",
        "123",
        "1e3",
        "0x1F",
        "1.5",
        ".inf",
        "",
        "2001-12-14",
        "1:20",
    ] {
        assert_eq!(yaml_of(s(text)), format!("\"{text}\""), "{text:?}");
    }
    assert_eq!(yaml_of(map(vec![("on", s("off"))])), "\"on\": \"off\"");
    assert_eq!(yaml_of(map(vec![("", s("x"))])), "\"\": x");
}

#[test]
fn indicators_and_edge_spaces_use_single_quotes() {
    let cases = [
        ("a: b", "'a: b'"),
        (" lead", "' lead'"),
        ("trail ", "'trail '"),
        ("- x", "'- x'"),
        ("#c", "'#c'"),
        ("a #c", "'a #c'"),
        ("'q", "'''q'"),
        ("*ref", "'*ref'"),
        ("---", "'---'"),
        ("@at", "'@at'"),
    ];
    for (text, want) in cases {
        assert_eq!(yaml_of(s(text)), want, "{text:?}");
    }
    for plain in [
        "it's",
        "a:b",
        "a#b",
        "-x",
        "a-b",
        "é",
        "<<",
        "hello world",
        "foo: ",
    ] {
        let want = if plain == "foo: " { "'foo: '" } else { plain };
        assert_eq!(yaml_of(s(plain)), want, "{plain:?}");
    }
}

#[test]
fn unprintable_characters_force_double_quotes_with_escapes() {
    assert_eq!(yaml_of(s("a\tb")), "\"a\\tb\"");
    assert_eq!(yaml_of(s("😀")), "\"\\U0001F600\"");
    assert_eq!(yaml_of(s("a\u{1}b")), "\"a\\x01b\"");
    assert_eq!(yaml_of(s("x\u{FEFF}")), "\"x\\uFEFF\"");
    assert_eq!(yaml_of(s("tab\tand\nbreak")), "\"tab\\tand\\nbreak\"");
    assert_eq!(yaml_of(s("a\"b\\")), "a\"b\\");
    assert_eq!(yaml_of(s("\"q\"")), "'\"q\"'");
}

#[test]
fn multi_line_strings_use_literal_blocks_with_chomping() {
    assert_eq!(yaml_of(s("a\nb")), "|-\n  a\n  b");
    assert_eq!(yaml_of(s("a\nb\n")), "|\n  a\n  b");
    assert_eq!(yaml_of(s("a\n\n")), "|+\n  a\n");
    assert_eq!(yaml_of(s(" a\nb")), "|2-\n   a\n  b");
    assert_eq!(yaml_of(s("a\n\nb")), "|-\n  a\n\n  b");
    assert_eq!(
        yaml_of(map(vec![("k", s("x\ny\n")), ("l", s("z"))])),
        "k: |\n  x\n  y\nl: z"
    );
    assert_eq!(
        yaml_of(map(vec![("k", Data::List(vec![s("x\ny")]))])),
        "k:\n- |-\n  x\n  y"
    );
    // A space before a line break cannot survive a block scalar.
    assert_eq!(yaml_of(s("a \nb")), "\"a \\nb\"");
}

#[test]
fn floats_take_the_json_round_trip() {
    let cases: &[(f64, &str)] = &[
        (1.5, "1.5"),
        (3.0, "3"),
        (-0.0, "0"),
        (1e6, "1000000"),
        (1234567.5, "1.2345675e+06"),
        (0.000001, "1e-06"),
        (1e19, "10000000000000000000"),
        (1e20, "1e+20"),
        (1e21, "1e+21"),
    ];
    for (f, want) in cases {
        assert_eq!(yaml_of(Data::Float(*f)), *want, "{f}");
    }
    assert_eq!(yaml_of(Data::Int(-7)), "-7");
    assert_eq!(yaml_of(Data::Uint(u64::MAX)), "18446744073709551615");
}

#[test]
fn nan_and_control_characters_make_to_yaml_print_nothing() {
    assert_eq!(yaml_of(Data::Float(f64::NAN)), "");
    assert_eq!(yaml_of(s("del\u{7f}")), "");
    let err = marshal(&Data::List(vec![Data::Float(f64::INFINITY)])).unwrap_err();
    assert_eq!(
        err.0,
        "error marshaling into JSON: json: unsupported value: +Inf"
    );
}

#[test]
fn long_plain_strings_fold_past_column_80() {
    let text = ["word"; 20].join(" ");
    let want = format!("k: {}\n  word word word word", ["word"; 16].join(" "));
    assert_eq!(yaml_of(map(vec![("k", s(&text))])), want);
    let quoted = format!("{text}: x");
    let out = yaml_of(s(&quoted));
    assert!(out.starts_with('\'') && out.contains("\n  "), "{out}");
}

#[test]
fn long_keys_become_complex_keys() {
    let key = "k".repeat(129);
    assert_eq!(
        yaml_of(map(vec![(key.as_str(), s("v"))])),
        format!("? {key}\n: v")
    );
}

#[test]
fn nel_folds_like_go_yaml_reading_the_json_text() {
    assert_eq!(yaml_of(s("a\u{85}b")), "a b");
    assert_eq!(yaml_of(s("a \u{85}\u{85} b")), "|-\n  a\n  b");
    assert_eq!(yaml_of(s("a\u{85}")), "'a '");
}

#[test]
fn pretty_yaml_indents_sequences_and_keeps_go_floats() {
    let v = map(vec![
        ("f", Data::Float(1e6)),
        ("g", Data::Float(1.5)),
        (
            "l",
            Data::List(vec![
                Data::Float(1.0),
                Data::List(vec![Data::Float(2.0), Data::Float(3.0)]),
                map(vec![
                    ("a", Data::Float(1.0)),
                    ("b", Data::List(vec![s("x")])),
                ]),
            ]),
        ),
        ("m", s("a\nb")),
        ("on", s("on")),
        ("tab", s("a\tb")),
        ("tabs", s("a\tb\nc")),
        ("long", s(&["word"; 20].join(" "))),
    ]);
    assert_eq!(
        to_yaml_pretty(&v),
        format!(
            "f: 1e+06\ng: 1.5\nl:\n  - 1\n  - - 2\n    - 3\n  - a: 1\n    b:\n      - x\nlong: {}\nm: |-\n  a\n  b\n\"on\": \"on\"\ntab: \"a\\tb\"\ntabs: |-\n  a\tb\n  c",
            ["word"; 20].join(" ")
        )
    );
    assert_eq!(to_yaml_pretty(&Data::Float(f64::NAN)), ".nan");
}

#[test]
fn for_every_reader_the_value_and_merge_keys_are_quoted_and_nothing_else_changes() {
    let v = map(vec![
        ("<<", s("=")),
        (
            "operators",
            Data::List(vec![s("="), s("!="), s("<<"), s("in")]),
        ),
        ("on", s("yes")),
    ]);
    assert_eq!(
        marshal_for_every_reader(&v).unwrap(),
        "\"<<\": \"=\"\n\"on\": \"yes\"\noperators:\n- \"=\"\n- '!='\n- \"<<\"\n- in\n"
    );
    // Helm's toYaml keeps go-yaml's plain `=` and `<<`.
    assert_eq!(
        marshal(&v).unwrap(),
        "<<: =\n\"on\": \"yes\"\noperators:\n- =\n- '!='\n- <<\n- in\n"
    );
}
